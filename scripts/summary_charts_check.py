#!/usr/bin/env python3
"""Recomputes, straight from a Kineto trace's JSON, the figures the summary panel's
charts show that no HTA table gives: the kernel-duration and launch-delay histograms
(1-2-5 bins from 1 us) and the device time per operator (outermost cpu_op enclosing the
launch call). Compare with the panel (snapshots/h100_summary_charts_*.snap):

    python3 scripts/summary_charts_check.py \
        ../shared/corpus/tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz
"""
import bisect
import collections
import gzip
import json
import sys

LAUNCH = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
          "hipLaunchKernel", "hipExtLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync",
          "hipMemcpyAsync", "hipMemsetAsync"}
GPU = ("kernel", "gpu_memcpy", "gpu_memset")
EDGES = [0] + [m * 10 ** e for e in range(0, 7) for m in (1, 2, 5)]  # us


def hist(values):
    c = collections.Counter()
    for x in values:
        i = bisect.bisect_right(EDGES, x) - 1
        c[(EDGES[i], EDGES[i + 1])] += 1
    return sorted(c.items())


def main(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    durs = [e["dur"] for e in kernels]
    print("kernel duration: n", len(durs), "bins", hist(durs))
    rt = {e["args"]["correlation"]: e for e in ev
          if e.get("cat") in ("cuda_runtime", "cuda_driver")
          and "correlation" in e.get("args", {})}
    delays = []
    ops = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") == "cpu_op" and e.get("ph") == "X":
            ops[(e["pid"], e["tid"])].append(e)
    per_op = collections.Counter()
    for e in ev:
        if e.get("cat") not in GPU:
            continue
        r = rt.get(e.get("args", {}).get("correlation"))
        if r and (r["name"] in LAUNCH or r["name"].startswith("runFunction")):
            delays.append(max(0.0, e["ts"] - (r["ts"] + r["dur"])))
        name = "(none)"
        if r:
            enc = [o for o in ops[(r["pid"], r["tid"])]
                   if o["ts"] <= r["ts"] and o["ts"] + o["dur"] >= r["ts"] + r["dur"]]
            if enc:
                name = max(enc, key=lambda o: (o["dur"], -o["ts"]))["name"]
        per_op[name] += e["dur"]
    s = sorted(delays)
    print("launch delay: n", len(s), "median", s[(len(s) - 1) // 2] if s else 0,
          "max", s[-1] if s else 0, "bins", hist(s))
    for name, t in per_op.most_common(10):
        print(f"op {t:10.2f} us  {name}")


if __name__ == "__main__":
    main(sys.argv[1])
