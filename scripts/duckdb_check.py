#!/usr/bin/env python3
"""DuckDB over a directory of grove summaries reproduces grove's per-rank totals.

Summarizes the given traces with ``grove summarize`` into a temporary directory, then
queries the Parquet files with DuckDB alone (no grove code) and compares, per rank:

* ``sum(time)`` and ``sum(gpu_time)`` over the CCT table (exclusive columns) with the sum
  of the roots' ``time (inc)`` / ``gpu_time (inc)`` in ``grove tree TRACE --format csv``;
* ``sum(total_ns)`` over the kernel table with ``gpu_time_ns`` of ``grove info --format
  json``;
* ``kernel_time_ns`` of the temporal table (stream ``all``) with ``grove summary TRACE
  --format csv``.

Usage (DuckDB from PyPI: ``pip install duckdb``)::

    python3 scripts/duckdb_check.py [--grove PATH] [TRACE ...]

Defaults: ``--grove`` is ``$CARGO_TARGET_DIR/debug/grove`` (else ``target/debug/grove``);
the traces are ``testdata/rank0.trace.json.gz`` and ``testdata/rank1.trace.json.gz``.
Exit status 0 when every number matches, 1 otherwise.
"""

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(grove, *args):
    return subprocess.run([grove, *args], check=True, capture_output=True, text=True).stdout


def grove_totals(grove, trace):
    rows = list(csv.DictReader(io.StringIO(run(grove, "tree", trace, "--format", "csv"))))
    roots = [r for r in rows if r["depth"] == "0"]
    info = json.loads(run(grove, "info", trace, "--format", "json"))
    temporal = list(csv.DictReader(io.StringIO(run(grove, "summary", trace, "--format", "csv"))))
    return {
        "time": sum(float(r["time (inc)"] or 0) for r in roots),
        "gpu_time": sum(float(r["gpu_time (inc)"] or 0) for r in roots),
        "kernels_total_ns": info["gpu_time_ns"],
        "kernel_time_ns": next(int(r["kernel_time_ns"]) for r in temporal if r["stream"] == "all"),
        "rank": info.get("rank"),
    }


def duckdb_totals(out):
    con = duckdb.connect()
    q = lambda sql: {r[0]: r[1:] for r in con.execute(sql).fetchall()}
    cct = q(f"select input, sum(time), sum(gpu_time) from '{out}/*.cct.parquet' group by input")
    kern = q(f"select input, sum(total_ns) from '{out}/*.kernels.parquet' group by input")
    temp = q(
        f"select input, kernel_time_ns from '{out}/*.temporal.parquet' where stream = 'all'"
    )
    return {
        i: {
            "time": cct[i][0],
            "gpu_time": cct[i][1],
            "kernels_total_ns": kern[i][0],
            "kernel_time_ns": temp[i][0],
        }
        for i in cct
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    ap.add_argument("--grove", default=os.path.join(target, "debug", "grove"))
    ap.add_argument(
        "traces",
        nargs="*",
        default=[
            os.path.join(ROOT, "testdata", "rank0.trace.json.gz"),
            os.path.join(ROOT, "testdata", "rank1.trace.json.gz"),
        ],
    )
    a = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([a.grove, "summarize", *a.traces, "-o", out], check=True)
        db = duckdb_totals(out)
        for trace in a.traces:
            want = grove_totals(a.grove, trace)
            name = f"rank{want['rank']}" if want["rank"] is not None else None
            got = db.get(name)
            if got is None:
                print(f"{trace}: no summary named {name} in {sorted(db)}")
                ok = False
                continue
            for k in ("time", "gpu_time", "kernels_total_ns", "kernel_time_ns"):
                same = abs(float(got[k]) - float(want[k])) <= 1e-9 * max(1.0, abs(float(want[k])))
                ok &= same
                print(f"{name:8} {k:17} duckdb {got[k]:>16} grove {want[k]:>16} {'ok' if same else 'DIFFERS'}")
    print("all totals match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
