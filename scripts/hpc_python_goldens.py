#!/usr/bin/env python3
"""Goldens for grove's cProfile/pstats, pyinstrument, TAU, gprof2dot and timemory
readers, by Hatchet.

For each corpus file of those formats this script loads it with the reference reader of
``llnl-hatchet`` (``GraphFrame.from_cprofile``, ``from_pyinstrument``, ``from_tau``,
``from_gprof_dot``, ``from_timemory``) and
records, in ``testdata/hpc_python/goldens.json``:

* ``nodes``: ``len(gf.graph)``;
* ``totals``: for every numeric metric column grove also has, the sum over all rows of
  Hatchet's data frame (for TAU: over every (node, rank) row, i.e. summed over ranks);
* ``profiles``: the number of ranks (TAU) or 1.

``tests/hpc_python_readers.rs`` compares grove against these, so CI needs no Python.

Python 2 pstats: Hatchet under Python 3 refuses the file (``pstats`` cannot unmarshal
Python 2's interned strings). The script decodes it with the small independent decoder
below and hands the dict to Hatchet's own ``CProfileReader`` in place of ``pstats.Stats``,
so the graph is still built by Hatchet.

Usage: ``python3 scripts/hpc_python_goldens.py [--corpus DIR]`` (``pip install llnl-hatchet``).
"""

import argparse
import json
import math
import os
import struct
import warnings

warnings.filterwarnings("ignore")

import hatchet as ht  # noqa: E402
import hatchet.readers.cprofile_reader as cpr  # noqa: E402

DATA = "hatchet/hatchet/tests/data"
FILES = {
    "cprofile": [
        DATA + "/cprofile-hatchet-pstats/cprofile-cycle.pstats",
        DATA + "/cprofile-hatchet-pstats/cprofile-cycle-py2.pstats",
    ],
    "pyinstrument": [DATA + "/pyinstrument-hatchet-json/pyinstrument-hatchet-profile.json"],
    "tau": [DATA + "/tau-cpi-mpi"],
    "gprof2dot": [DATA + "/gprof2dot-cpi/callgrind.dot.64042.0.1"],
    "timemory": [DATA + "/timemory/wall.tree.json"],
}
METRICS = {
    "cprofile": ["time", "time (inc)", "numcalls", "nativecalls"],
    "pyinstrument": ["time", "time (inc)"],
    "tau": ["time", "time (inc)", "Calls", "Subrs"],
    "gprof2dot": ["time", "time (inc)"],
    "timemory": ["count"]
    + [s + ".wall_clock" + i for s in ("sum", "min", "max", "sqr", "mean", "stddev") for i in ("", " (inc)")],
}


def marshal_py2(buf):
    """Decodes the Python 2 marshal subset of a pstats file (dicts, tuples, str, int, float)."""
    pos = 0
    interned = []

    def val():
        nonlocal pos
        c = chr(buf[pos])
        pos += 1
        if c == "{":
            d = {}
            while chr(buf[pos]) != "0":
                k = val()
                d[k] = val()
            pos += 1
            return d
        if c == "(":
            (n,) = struct.unpack_from("<i", buf, pos)
            pos += 4
            return tuple(val() for _ in range(n))
        if c in "st":
            (n,) = struct.unpack_from("<i", buf, pos)
            pos += 4
            s = buf[pos : pos + n].decode("utf-8", "replace")
            pos += n
            if c == "t":
                interned.append(s)
            return s
        if c == "R":
            (i,) = struct.unpack_from("<i", buf, pos)
            pos += 4
            return interned[i]
        if c == "i":
            (i,) = struct.unpack_from("<i", buf, pos)
            pos += 4
            return i
        if c == "g":
            (f,) = struct.unpack_from("<d", buf, pos)
            pos += 8
            return f
        raise ValueError("type code %r at %d" % (c, pos - 1))

    return val()


def from_py2_pstats(path):
    stats = marshal_py2(open(path, "rb").read())

    class FakeStats:
        def __init__(self, _):
            self.stats = stats

    real = cpr.pstats.Stats
    cpr.pstats.Stats = FakeStats
    try:
        return ht.GraphFrame.from_cprofile(path)
    finally:
        cpr.pstats.Stats = real


def load(fmt, path):
    if fmt == "cprofile":
        try:
            return ht.GraphFrame.from_cprofile(path), "hatchet"
        except ValueError:
            return from_py2_pstats(path), "hatchet on the script's Python 2 marshal decoding"
    if fmt == "pyinstrument":
        return ht.GraphFrame.from_pyinstrument(path), "hatchet"
    if fmt == "timemory":
        return ht.GraphFrame.from_timemory(path), "hatchet"
    if fmt == "gprof2dot":
        return ht.GraphFrame.from_gprof_dot(path), "hatchet"
    return ht.GraphFrame.from_tau(path), "hatchet"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpus")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--out", default=os.path.join(here, "testdata/hpc_python/goldens.json"))
    a = ap.parse_args()
    out = {}
    for fmt, files in FILES.items():
        for rel in files:
            gf, how = load(fmt, os.path.join(a.corpus, rel))
            df = gf.dataframe
            totals = {}
            for m in METRICS[fmt]:
                s = float(df[m].astype(float).sum())
                totals[m] = None if math.isnan(s) else float("%.12g" % s)
            ranks = 1
            if "rank" in (df.index.names or []):
                ranks = len(set(df.index.get_level_values("rank")))
            out[rel] = {
                "format": fmt,
                "nodes": len(gf.graph),
                "profiles": ranks,
                "totals": totals,
                "reader": how,
            }
    with open(a.out, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
