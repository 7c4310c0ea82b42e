#!/usr/bin/env python3
"""The longest idle gaps of each GPU stream of a Kineto/Chrome trace, stdlib only.

An independent check of `grove tree TRACE --cmd 'gaps N'` (tests/gaps.rs): it reads
the raw JSON, keeps the GPU activities (kernel, memcpy, memset rows), groups them by
(args.device, args.stream), merges each stream's intervals into a union and prints
the N longest holes between them, longest first:

    python3 scripts/gaps_check.py TRACE.json[.gz] N

Output, one line per gap: `GPU<device> s<stream> <TAB> start_ns <TAB> length_ns`,
streams in (device, stream) order; times are absolute ns (ts and dur in us times
1000, rounded).
"""

import gzip
import json
import sys
from decimal import ROUND_HALF_EVEN, Decimal

GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset",
            "mtia_ccp_events"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        # Decimal: epoch microseconds times 1000 do not fit a double exactly.
        doc = json.load(f, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def ns(us):
    return int((Decimal(us) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    streams = {}
    for e in load(path):
        if e.get("ph") != "X":
            continue
        cats = [c.strip() for c in str(e.get("cat", "")).split(",")]
        if not any(c in GPU_CATS for c in cats):
            continue
        args = e.get("args") or {}
        key = (int(args.get("device", -1)), int(args.get("stream", -1)))
        s = ns(e["ts"])
        d = ns(e.get("dur", 0))
        streams.setdefault(key, []).append((s, s + d))
    for key in sorted(streams):
        spans = sorted(streams[key])
        gaps = []
        end = None
        for s, e in spans:
            if end is not None and s > end:
                gaps.append((end, s - end))
            end = e if end is None else max(end, e)
        gaps.sort(key=lambda g: (-g[1], g[0]))
        for start, length in gaps[:n]:
            print(f"GPU{key[0]} s{key[1]}\t{start}\t{length}")


if __name__ == "__main__":
    main()
