#!/usr/bin/env python3
"""Writes a large Firefox Profiler (processed, samply's layout) profile for the loading-speed
figure of docs/performance.md (issue 29: 100 MB at >= 300 MB/s). The layout is samply's own
(testdata/gecko/spin.samply.json.gz: `meta` and `libs` are taken from it): per thread a
`stringArray`, `funcTable`, `frameTable`, `stackTable` and a `samples` table with `stack`,
`time` (ms, 6 decimals), `weight` and `threadCPUDelta` columns, plus markers (intervals,
start/end pairs and instants). 8 threads, a random call tree of 20,000 stacks per thread.

    python3 scripts/gen_gecko_bench.py OUT.json [MEGABYTES]   # default 100

    python3 scripts/gen_gecko_bench.py --raw OUT.json [MEGABYTES]   # the raw Gecko layout

`--raw` writes the same threads in the raw Gecko layout (what Firefox's own profiler and
`perf script report gecko` write: `meta.version` without `preprocessedProfileVersion`,
per thread a `stringTable` and `schema`/`data` tables, frames by location string); it
checks that the raw path does not get slower (its rows are longer: ~33 bytes a sample).

Deterministic (a fixed seed). The per-function sample counts can be checked with
testdata/gecko/golden.py.
"""
import gzip
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS, STACKS, FUNCS = 8, 20000, 3000


def thread(rng, n_samples, k):
    names = [f"0x{0x1000 + i * 16:x}" if i % 3 else f"ns{k}::mod{i % 50}::fn{i}(int, double*)" for i in range(FUNCS)]
    strings = ["mmap", "GC", "Paint", "lib.so", "prog"] + names
    funcs = {"length": FUNCS, "name": list(range(5, 5 + FUNCS)), "isJS": [False] * FUNCS,
             "relevantForJS": [False] * FUNCS, "resource": [i % 2 for i in range(FUNCS)],
             "fileName": [None] * FUNCS, "lineNumber": [None] * FUNCS, "columnNumber": [None] * FUNCS}
    nframes = FUNCS + 2000
    frames = {"length": nframes, "address": [rng.randrange(1 << 20) for _ in range(nframes)],
              "inlineDepth": [0] * nframes, "category": [2] * nframes, "subcategory": [0] * nframes,
              "func": [i % FUNCS for i in range(nframes)], "nativeSymbol": [None] * nframes,
              "innerWindowID": [None] * nframes, "implementation": [None] * nframes,
              "line": [None] * nframes, "column": [None] * nframes}
    prefix = [None] + [rng.randrange(i) for i in range(1, STACKS)]
    stacks = {"length": STACKS, "prefix": prefix, "frame": [rng.randrange(nframes) for _ in range(STACKS)],
              "category": [2] * STACKS, "subcategory": [0] * STACKS}
    t, time, cpu = 14351068.233943 + k, [], []
    for _ in range(n_samples):
        t += 0.9 + rng.random() * 0.2
        time.append(round(t, 6))
        cpu.append(900 + rng.randrange(100))
    samples = {"length": n_samples, "weightType": "samples",
               "stack": [rng.randrange(STACKS) for _ in range(n_samples)], "time": time,
               "weight": [1] * n_samples, "threadCPUDelta": cpu}
    m = {"length": 0, "category": [], "data": [], "endTime": [], "name": [], "phase": [], "startTime": []}
    for i in range(3000):
        s = time[rng.randrange(n_samples)]
        kind = i % 4
        rows = [(1, s, s + rng.random() * 5)] if kind < 2 else [(2, s, None), (3, None, s + 3)] if kind == 2 else [(0, s, None)]
        for phase, a, b in rows:
            m["name"].append(kind % 3)
            m["category"].append(0)
            m["data"].append({"type": "GCMajor"} if kind == 1 else None)
            m["phase"].append(phase)
            m["startTime"].append(a)
            m["endTime"].append(b)
            m["length"] += 1
    return {"frameTable": frames, "funcTable": funcs, "markers": m, "name": f"worker-{k}",
            "isMainThread": k == 0, "nativeSymbols": {"length": 0, "address": [], "functionSize": [],
                                                       "libIndex": [], "name": []},
            "pausedRanges": [], "pid": "24091", "processName": "bench", "processType": "default",
            "resourceTable": {"length": 2, "lib": [0, 1], "name": [3, 4], "host": [None, None], "type": [1, 1]},
            "samples": samples, "stackTable": stacks, "stringArray": strings, "tid": f"24091.{k + 1}",
            "showMarkersInTimeline": True}


def raw_thread(t):
    """The processed thread `t` in the raw Gecko layout (schema + data rows)."""
    strings = t["stringArray"]
    funcs, res = t["funcTable"], t["resourceTable"]

    def location(f):
        name = strings[funcs["name"][f]]
        r = funcs["resource"][f]
        return f"{name} (in {strings[res['name'][r]]})" if r is not None and r >= 0 else name

    frames = t["frameTable"]
    table = list(strings)
    index = {s: i for i, s in enumerate(table)}
    loc = []
    for f in frames["func"]:
        s = location(f)
        if s not in index:
            index[s] = len(table)
            table.append(s)
        loc.append(index[s])
    st, s, m = t["stackTable"], t["samples"], t["markers"]
    return {"name": t["name"], "processName": t["processName"], "pid": t["pid"], "tid": t["tid"],
            "registerTime": 0, "unregisterTime": None, "stringTable": table,
            "frameTable": {"schema": {"location": 0, "relevantForJS": 1, "innerWindowID": 2,
                                      "implementation": 3, "line": 4, "column": 5, "category": 6,
                                      "subcategory": 7},
                           "data": [[l, False, None, None, None, None, 2, 0] for l in loc]},
            "stackTable": {"schema": {"prefix": 0, "frame": 1},
                           "data": [list(r) for r in zip(st["prefix"], st["frame"])]},
            "samples": {"schema": {"stack": 0, "time": 1, "eventDelay": 2, "threadCPUDelta": 3},
                        "data": [[a, b, 0, c] for a, b, c in zip(s["stack"], s["time"], s["threadCPUDelta"])]},
            "markers": {"schema": {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5},
                        "data": [list(r) for r in zip(m["name"], m["startTime"], m["endTime"], m["phase"],
                                                      m["category"], m["data"])]}}


def main():
    args = sys.argv[1:]
    raw = "--raw" in args
    args = [a for a in args if a != "--raw"]
    out = args[0]
    target = float(args[1]) * 1e6 if len(args) > 1 else 100e6
    with gzip.open(os.path.join(HERE, "../testdata/gecko/spin.samply.json.gz")) as f:
        base = json.load(f)
    rng = random.Random(29)
    # ~30 bytes a sample; the tables of a thread add ~0.6 MB.
    per_thread = int((target / THREADS - 600_000) / 30.5)
    doc = {"meta": base["meta"], "libs": base["libs"],
           "threads": [thread(rng, per_thread, k) for k in range(THREADS)],
           "pages": [], "profilerOverhead": [], "counters": []}
    if raw:
        meta = {k: v for k, v in base["meta"].items() if k not in ("preprocessedProfileVersion",)}
        meta["stackwalk"] = 1
        doc = {"meta": meta, "libs": base["libs"], "threads": [raw_thread(t) for t in doc["threads"]],
               "processes": [], "pausedRanges": []}
    with open(out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    print(out, os.path.getsize(out), "bytes,", per_thread * THREADS, "samples")


if __name__ == "__main__":
    main()
