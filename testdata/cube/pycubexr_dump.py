#!/usr/bin/env python3
"""Dumps pycubexr's figures for a .cubex file: for every metric pycubexr reduces to a
number, every call path's exclusive and inclusive value summed over all locations and
at two locations (the second-lowest and the highest location id). The golden files beside this script are its
output (pip install pycubexr==2.1.1):

    for f in call_tree_test/call_tree_test kripke.p8.d2.g32.r1/profile \
             time.p4.n2000.x1.r0/profile test_only_files/cube-values_example; do
        python3 testdata/cube/pycubexr_dump.py ../shared/corpus/pycubexr/data/$f.cubex \
            > testdata/cube/$(basename $(dirname $f)).golden
    done

Line format (tab-separated): metric, location ("sum" or "loc<id>"), call path (region
names joined by "/", the cnode id after "#"), exclusive, inclusive (repr of a float).
A metric pycubexr cannot reduce to a float is one line: metric, "unsupported", reason.
"""
import sys

import numpy as np
from pycubexr import CubexParser
from pycubexr.classes.metric import MetricType


def path(cube, cnode):
    names = []
    n = cnode
    while n is not None:
        names.append(cube.get_region(n).name)
        n = n.parent
    return "/".join(reversed(names)) + f"#{cnode.id}"


def both(values, metric, cnode, loc):
    """(exclusive, inclusive) at location index loc, or summed when loc is None."""
    excl_conv = metric.metric_type == MetricType.INCLUSIVE
    if loc is None:
        e = values.value(cnode, convert_to_exclusive=excl_conv)
        i = values.value(cnode, convert_to_inclusive=not excl_conv)
    else:
        e = values.location_value(cnode, loc, convert_to_exclusive=excl_conv)
        i = values.location_value(cnode, loc, convert_to_inclusive=not excl_conv)
    return as_float(e), as_float(i)


def as_float(v):
    # pycubexr's value classes (min, max, complex) convert through astype; TAU_ATOMIC
    # and RATE raise NotImplementedError there.
    if hasattr(v, "astype"):
        v = v.astype(float)
    return float(v)


def main(fname):
    with CubexParser(fname) as cube:
        # location_value takes a data column, which is the location id (pycubexr's
        # README: offset = cnode row * locations + location id); get_locations() is
        # in system-tree order, which may differ (cube-values_example: ids 0, 2, 1, 3).
        ids = sorted(loc.id for loc in cube.get_locations())
        picks = [(None, "sum")]
        if len(ids) > 1:
            picks += [(ids[1], f"loc{ids[1]}"), (ids[-1], f"loc{ids[-1]}")]
        for metric in cube.all_metrics():
            try:
                values = cube.get_metric_values(metric)
                rows = []
                for cnode in cube.all_cnodes():
                    for loc, label in picks:
                        e, i = both(values, metric, cnode, loc)
                        rows.append(f"{metric.name}\t{label}\t{path(cube, cnode)}\t{e!r}\t{i!r}")
            except Exception as ex:  # pycubexr refuses some value types
                print(f"{metric.name}\tunsupported\t{type(ex).__name__}")
                continue
            print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1])
