#!/usr/bin/env python3
"""Thicket JSON test data and goldens for grove's Thicket/Hatchet ``to_json`` reader.

1. Builds a Thicket from three of the corpus's ``thicket/.../mpi_scaling_cali/*.cali``
   files with ``Thicket.from_caliperreader`` and writes its ``to_json()`` to
   ``testdata/thicket/mpi_scaling.thicket.json`` (``profile_mapping`` paths are made
   relative to the corpus so the file does not depend on where the corpus lives).
2. Loads that file back with ``Thicket.from_json`` and the corpus's Hatchet
   ``json/hatchet-graph-literal.json`` with ``GraphFrame.from_json``, and records in
   ``testdata/thicket/goldens.json``: ``nodes`` (``len(graph)``), ``profiles`` (the
   number of Thicket profiles, 1 for a GraphFrame), ``totals`` (the sum over every
   dataframe row of each exclusive and inclusive metric) and, for the Thicket, the
   metadata value of ``mpi.world.size`` per profile label.

``tests/hpc_python_readers.rs`` checks grove against these.

Usage: ``python3 scripts/thicket_goldens.py [--corpus DIR]`` (``pip install llnl-thicket``).
"""

import argparse
import json
import math
import os
import warnings

warnings.filterwarnings("ignore")

import hatchet as ht  # noqa: E402
import thicket as th  # noqa: E402

CALI = "thicket/thicket/tests/data/mpi_scaling_cali"
LITERAL = "hatchet/hatchet/tests/data/json/hatchet-graph-literal.json"


def totals(df, metrics):
    out = {}
    for m in metrics:
        if m in df.columns:
            s = float(df[m].astype(float).sum())
            out[m] = None if math.isnan(s) else float("%.12g" % s)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpus")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = os.path.join(here, "testdata/thicket")
    a = ap.parse_args()
    files = [os.path.join(a.corpus, CALI, f) for f in ("27_cores.cali", "64_cores.cali", "125_cores.cali")]
    tk = th.Thicket.from_caliperreader(files, disable_tqdm=True)
    d = json.loads(tk.to_json())
    d["profile_mapping"] = {k: os.path.relpath(v, a.corpus) for k, v in d["profile_mapping"].items()}
    path = os.path.join(out_dir, "mpi_scaling.thicket.json")
    with open(path, "w") as f:
        json.dump(d, f)
        f.write("\n")

    goldens = {}
    back = th.Thicket.from_json(open(path).read())
    metrics = list(back.exc_metrics) + list(back.inc_metrics)
    sizes = {}
    for prof, p in d["profile_mapping"].items():
        label = os.path.basename(p).split(".")[0]
        row = back.metadata.loc[int(prof)]
        sizes[label] = int(row["mpi.world.size"])
    goldens["testdata/thicket/mpi_scaling.thicket.json"] = {
        "nodes": len(back.graph),
        "profiles": len(back.profile),
        "totals": totals(back.dataframe, metrics),
        "mpi.world.size": sizes,
    }
    gf = ht.GraphFrame.from_json(open(os.path.join(a.corpus, LITERAL)).read())
    goldens["corpus:" + LITERAL] = {
        "nodes": len(gf.graph),
        "profiles": 1,
        "totals": totals(gf.dataframe, list(gf.exc_metrics) + list(gf.inc_metrics)),
    }
    with open(os.path.join(out_dir, "goldens.json"), "w") as f:
        json.dump(goldens, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
