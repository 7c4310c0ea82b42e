#!/usr/bin/env python3
"""Writes legacy rocprof (v1) `--hip-trace` outputs without a kernel table, for the
reader of rocprof's SQLite `results.db` when its dispatches are in `OPS`:

  DIR/v1_hip_trace.db      the layout of rocprofiler's `bin/tblextr.py` (current master):
                           tables HIP, COPY, OPS (with `DurationNs` added by
                           `dform.post_process_data`) and an empty KERN (tblextr creates
                           it with only `Index`, `KernelName` when no counters were read)
  DIR/v1_hip_trace_old.db  the older tblextr layout (ROCm 3.x-4.x): OPS without
                           `roctx-range`/`stream-id`, the kernel table named `A`, no KERN
  DIR/v1_hip_trace.stats.csv
                           `results.stats.csv` as that older rocprof wrote it from OPS:
                           `dform.gen_table_bins` (the SQL below is its view, by column)
                           dumped by the older `sqlitedb.dump_csv`, which did not quote
                           text, so kernel names with commas come out unquoted

No AMD GPU here: the rows are made up (one process, 3 kernels of 7 dispatches, 2 copies
and their HIP calls, correlated as tblextr correlates them: a HIP call's `Index` is its
correlation id within its process, and the op it started carries the same `Index`).
The SQL and Python are this script's own, written from tblextr's column lists.

Usage: make_rocprof_v1_db.py testdata/rocm
"""

import os
import sqlite3
import sys

PID, TID = 4242, 4243
K1 = "void vector_add<float, 256>(float const*, float const*, float*, int)"
K2 = "void reduce<double, 4>(double const*, double*, unsigned long)"
K3 = "fill_kernel"

# (name, args, begin, end); the kernel name of a launch is in its args, as tblextr
# reads it (`kernel(...)`).
CALLS = [
    ("hipMalloc", "ptr(0x7f00) size(4096)", 1_000, 9_000),
    ("hipMemcpy", "dst(0x7f00) src(0x5500) sizeBytes(4096) kind(1)", 10_000, 30_000),
    ("hipLaunchKernel", f"kernel({K1}) stream(0)", 31_000, 35_000),
    ("hipLaunchKernel", f"kernel({K1}) stream(0)", 36_000, 38_000),
    ("hipLaunchKernel", f"kernel({K2}) stream(0)", 39_000, 41_000),
    ("hipLaunchKernel", f"kernel({K3}) stream(0)", 42_000, 43_000),
    ("hipLaunchKernel", f"kernel({K1}) stream(0)", 44_000, 45_500),
    ("hipLaunchKernel", f"kernel({K2}) stream(0)", 46_000, 47_000),
    ("hipLaunchKernel", f"kernel({K1}) stream(0)", 48_000, 49_000),
    ("hipDeviceSynchronize", "", 49_500, 120_000),
    ("hipMemcpy", "dst(0x5500) src(0x7f00) sizeBytes(4096) kind(2)", 121_000, 140_000),
]
# Device ops by the correlation id (1-based index into CALLS) that launched them.
OPS = [
    (3, K1, 36_000, 52_000),
    (4, K1, 52_500, 60_100),
    (5, K2, 60_300, 81_700),
    (6, K3, 82_000, 83_250),
    (7, K1, 83_400, 97_900),
    (8, K2, 98_000, 113_000),
    (9, K1, 113_200, 119_900),
]
COPIES = [(2, "CopyHostToDevice", 12_000, 28_000), (11, "CopyDeviceToHost", 123_000, 138_500)]


def write_db(path, old):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    ops_cols = '"BeginNs" INTEGER, "EndNs" INTEGER, "dev-id" INTEGER, "queue-id" INTEGER, "Name" TEXT, "pid" INTEGER, "tid" INTEGER'
    if not old:
        ops_cols += ', "roctx-range" TEXT, "stream-id" INTEGER'
    ops_cols += ', "Index" INTEGER'
    if not old:
        ops_cols += ', "Data" TEXT, "__section" INTEGER, "__lane" INTEGER'
    api_cols = '"BeginNs" INTEGER, "EndNs" INTEGER, "pid" INTEGER, "tid" INTEGER, "Name" TEXT, "args" TEXT, "Index" INTEGER'
    if not old:
        api_cols += ', "Data" TEXT, "__section" INTEGER, "__lane" INTEGER'
    # tblextr's creation order: HIP, then OPS and COPY, then the kernel table.
    db.execute(f"CREATE TABLE HIP ({api_cols})")
    db.execute(f"CREATE TABLE OPS ({ops_cols})")
    db.execute(f"CREATE TABLE COPY ({ops_cols})")
    db.execute(f'CREATE TABLE {"A" if old else "KERN"} ("Index" INTEGER, "KernelName" TEXT)')
    for i, (name, args, b, e) in enumerate(CALLS, start=1):
        row = [b, e, PID, TID, name, f"({args})", i]
        if not old:
            row += ["", 2, TID]
        db.execute(f"INSERT INTO HIP VALUES ({','.join('?' * len(row))})", row)
    for table, rows in (("OPS", OPS), ("COPY", COPIES)):
        for corr, name, b, e in rows:
            row = [b, e, 0, 0, name, PID, TID]
            if not old:
                row += [name, 0]
            row += [corr]
            if not old:
                row += ["", 6 if table == "OPS" else 1, 0]
            db.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(row))})", row)
    for table in ("HIP", "OPS", "COPY"):
        db.execute(f'ALTER TABLE {table} ADD COLUMN "DurationNs" INTEGER')
        db.execute(f"UPDATE {table} SET DurationNs = (EndNs - BeginNs)")
    db.commit()
    return db


def write_stats(db, path):
    # dform.gen_table_bins + gen_data_bins, then the old unquoted dump.
    rows = db.execute(
        "SELECT Name, Calls, TotalDurationNs, TotalDurationNs/Calls AS AverageNs,"
        " TotalDurationNs*100.0/(SELECT sum(DurationNs) FROM OPS) AS Percentage FROM"
        " (SELECT Name, count(Name) AS Calls, sum(DurationNs) AS TotalDurationNs FROM OPS"
        " GROUP BY Name) ORDER BY TotalDurationNs DESC"
    ).fetchall()
    with open(path, "w") as f:
        f.write('"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n')
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")


out = sys.argv[1]
db = write_db(os.path.join(out, "v1_hip_trace.db"), old=False)
write_stats(db, os.path.join(out, "v1_hip_trace.stats.csv"))
db.close()
write_db(os.path.join(out, "v1_hip_trace_old.db"), old=True).close()
