#!/usr/bin/env python3
"""Recompute HTA 0.5.0's temporal breakdown from the raw trace JSON, stdlib only.

An independent check of the goldens in testdata/hta/: it re-implements (without
pandas or HTA) the preprocessing that changes numbers and the temporal
breakdown, then compares with the "temporal" rows stored in the golden files.

    python3 scripts/hta_verify_by_hand.py --corpus /work/shared/corpus --goldens testdata/hta

Preprocessing re-implemented (HTA 0.5.0, json backend):
  * rounding: only if the ts column is float (any event with a non-integer
    JSON ts or no ts): ts = ceil(ts), end = floor(ts + dur), dur = end - ts,
    all in IEEE double like pandas;
  * drop events with null/missing dur or cat, and cat == "Trace";
  * stream = int(args.stream) or -1 (missing, or not int()-able like "0x0");
    correlation = args.correlation or -1;
  * "GPU kernel" filter = (stream >= 0 and correlation >= 0) or name in
    {"Event Sync", "Context Sync"}; every other row is a "CPU op";
  * if >= 2 distinct names contain "ProfilerStep" (and the default
    include_last_profiler_step=False): keep CPU ops with
    ts < max ts of the ProfilerStep CPU ops, and GPU kernels whose correlation
    equals the correlation of a kept CPU op (inner join: one copy per match);
  * temporal breakdown uses every remaining row with stream != -1.
"""

import argparse
import glob
import gzip
import json
import math
import os
import re

COMM = re.compile(r"^nccl.*Kernel")
MEM = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
NOT_COMP = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")


def kernel_type(name):
    if COMM.match(name):
        return "COMMUNICATION"
    if MEM.match(name):
        return "MEMORY"
    if not NOT_COMP.match(name):
        return "COMPUTATION"
    return "OTHER"


def as_int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return -1


def load_rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    float_ts = any(not isinstance(e.get("ts"), int) or isinstance(e.get("ts"), bool) for e in events)
    rows = []
    for e in events:
        dur, cat = e.get("dur"), e.get("cat")
        if dur is None or cat is None or cat == "Trace" or e.get("ts") is None:
            continue
        ts = e["ts"]
        if float_ts:
            end = math.floor(float(ts) + float(dur))
            ts = math.ceil(float(ts))
            dur = end - ts
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        rows.append(
            {
                "name": e.get("name"),
                "ts": ts,
                "dur": dur,
                "stream": as_int(args.get("stream", -1)),
                "correlation": args.get("correlation", -1),
            }
        )
    return rows, float_ts


def step_filter(rows):
    steps = {r["name"] for r in rows if "ProfilerStep" in str(r["name"])}
    if len(steps) < 2:
        return rows, False
    is_gpu = lambda r: (r["stream"] >= 0 and r["correlation"] >= 0) or r["name"] in (
        "Event Sync",
        "Context Sync",
    )
    cpu = [r for r in rows if not is_gpu(r)]
    gpu = [r for r in rows if is_gpu(r)]
    last_start = max(r["ts"] for r in cpu if r["name"] in steps)
    cpu = [r for r in cpu if r["ts"] < last_start]
    mult = {}
    for r in cpu:
        mult[r["correlation"]] = mult.get(r["correlation"], 0) + 1
    kept_gpu = []
    for r in gpu:
        kept_gpu.extend([r] * mult.get(r["correlation"], 0))
    return kept_gpu + cpu, True


def union(intervals):
    merged = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged


def temporal(rows):
    gpu = [r for r in rows if r["stream"] != -1]
    m = union([(r["ts"], r["ts"] + r["dur"]) for r in gpu])
    kernel_time = m[-1][1] - m[0][0]
    idle = kernel_time - sum(e - s for s, e in m)
    comp = union([(r["ts"], r["ts"] + r["dur"]) for r in gpu if kernel_type(r["name"]) == "COMPUTATION"])
    compute = sum(e - s for s, e in comp)
    return {
        "idle_time(us)": idle,
        "compute_time(us)": compute,
        "non_compute_time(us)": kernel_time - compute - idle,
        "kernel_time(us)": kernel_time,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--goldens", default=os.path.join(os.path.dirname(__file__), "..", "testdata", "hta"))
    a = ap.parse_args()
    ok = bad = 0
    for g in sorted(glob.glob(os.path.join(a.goldens, "*.json"))):
        doc = json.load(open(g))
        # include_last_profiler_step=True: HTA 0.5.0 compares CPU ts (shifted to start
        # at 0) with the ProfilerStep "end" column (not shifted), so nothing is dropped.
        include_last = bool(doc.get("include_last_profiler_step"))
        inputs = doc["input"] if isinstance(doc["input"], list) else [doc["input"]]
        gold = doc["analyses"]["temporal"]
        if not isinstance(gold, list):
            continue
        # note: the step filter's symbol set is global across ranks in HTA
        per_file = [load_rows(os.path.join(a.corpus, p)) for p in inputs]
        all_steps = {r["name"] for rows, _ in per_file for r in rows if "ProfilerStep" in str(r["name"])}
        for (rows, float_ts), grow in zip(per_file, gold):
            if len(all_steps) >= 2 and not include_last:
                rows, _ = step_filter(rows)
            mine = temporal(rows)
            theirs = {k: grow[k] for k in mine}
            same = all(abs(mine[k] - theirs[k]) < 1e-9 for k in mine)
            ok += same
            bad += not same
            print(f"{'OK ' if same else 'BAD'} {os.path.basename(g)} rank {grow['rank']} float_ts={float_ts} mine={mine}"
                  + ("" if same else f" hta={theirs}"))
    print(f"{ok} passed, {bad} failed")
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
