#!/usr/bin/env python3
"""Independent decode of the CPU samples in a Chrome trace file: Profile/ProfileChunk
events (grouped by pid and id; the Profile event's thread) and top-level samples +
stackFrames. Per sampled thread: sample count and sample time (µs until the thread's
next sample, the last one 0) per leaf function name, the way speedscope and DevTools
weigh them.

Usage: golden.py TRACE.json > NAME.golden.json
"""
import json, sys
from collections import defaultdict

doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"] if isinstance(doc, dict) else doc
out = defaultdict(lambda: {"samples": defaultdict(float), "time_us": defaultdict(float), "skipped": 0})


def leaf_name(cf):
    return (cf or {}).get("functionName") or "(anonymous)"


heads = {}
chunks = defaultdict(list)
for e in events:
    if e.get("ph") != "P":
        continue
    key = (str(e.get("pid")), str(e.get("id")))
    data = (e.get("args") or {}).get("data") or {}
    if e.get("name") == "Profile":
        heads[key] = (str(e.get("tid")), data.get("startTime", 0))
    elif e.get("name") == "ProfileChunk":
        chunks[key].append((str(e.get("tid")), data))
for key, lst in chunks.items():
    tid, t = heads.get(key, (lst[0][0], 0))
    names, samples = {}, []
    for _, data in lst:
        cp = data.get("cpuProfile") or {}
        for n in cp.get("nodes") or []:
            names[n["id"]] = leaf_name(n.get("callFrame"))
        deltas = data.get("timeDeltas") or []
        for i, s in enumerate(cp.get("samples") or []):
            t += deltas[i] if i < len(deltas) else 0
            samples.append((s, t))
    th = out[f"{key[0]}/{tid}"]
    for i, (s, t0) in enumerate(samples):
        if s not in names:
            th["skipped"] += 1
            continue
        nxt = samples[i + 1][1] if i + 1 < len(samples) else t0
        th["samples"][names[s]] += 1
        th["time_us"][names[s]] += max(nxt - t0, 0)

if isinstance(doc, dict) and "samples" in doc:
    frames = doc.get("stackFrames") or {}
    per = defaultdict(list)
    for s in doc["samples"]:
        per[(str(s.get("pid")), str(s.get("tid")))].append(s)
    for (pid, tid), lst in per.items():
        lst.sort(key=lambda s: float(s["ts"]))
        th = out[f"{pid}/{tid}"]
        for i, s in enumerate(lst):
            sf = str(s.get("sf"))
            if sf not in frames:
                th["skipped"] += 1
                continue
            ts = float(s["ts"])
            nxt = float(lst[i + 1]["ts"]) if i + 1 < len(lst) else ts
            name = frames[sf].get("name", "(unnamed)")
            th["samples"][name] += float(s.get("weight", 1))
            th["time_us"][name] += nxt - ts

print(json.dumps(out, indent=1, sort_keys=True))
