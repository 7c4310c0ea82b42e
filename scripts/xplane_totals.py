#!/usr/bin/env python3
"""Independent totals of an XSpace (.xplane.pb) for tests/xplane.rs, with a protobuf
wire-format decoder of its own (no protobuf package): field numbers from tsl's
xplane.proto. For each device plane, the events of its stream lines (derived lines
such as "XLA Ops" left out) by kind and their summed duration in ns (each event's
duration_ps // 1000, as grove stores ns); for host planes, events and duration.

    python3 scripts/xplane_totals.py FILE.xplane.pb > testdata/xplane/totals.json
"""
import json
import sys

DERIVED = {
    "Steps", "TensorFlow Ops", "TensorFlow Name Scope", "XLA Ops", "XLA Modules",
    "Framework Ops", "Framework Name Scope", "Source code", "XLA TraceMe", "Launch Stats",
    "SparseCore Steps", "SparseCore XLA Ops", "SparseCore XLA Modules",
}


def varint(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0:
            v, i = varint(b, i)
        elif t == 1:
            v, i = b[i:i + 8], i + 8
        elif t == 5:
            v, i = b[i:i + 4], i + 4
        elif t == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % t)
        yield f, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def main(path):
    data = open(path, "rb").read()
    out = {"planes": {}, "aggregated": 0}
    for f, plane in fields(data):
        if f != 1:
            continue
        name, lines, meta = "", [], {}
        for pf, pv in fields(plane):
            if pf == 2:
                name = pv.decode()
            elif pf == 3:
                lines.append(pv)
            elif pf == 4:
                for ef, ev in fields(pv):
                    if ef == 2:
                        d = dict(fields(ev))
                        meta[signed(d.get(1, 0))] = d.get(2, b"").decode()
        device = name.startswith("/device:")
        tot = {"kernel": 0, "memcpy": 0, "memset": 0, "cpu": 0, "derived": 0, "dur_ns": 0}
        for line in lines:
            lname, events = "", []
            for lf, lv in fields(line):
                if lf == 2:
                    lname = lv.decode()
                elif lf == 4:
                    events.append(lv)
            for e in events:
                d = {}
                for ef, ev in fields(e):
                    d[ef] = ev
                if 2 not in d:
                    out["aggregated"] += 1
                    continue
                if device and lname in DERIVED:
                    tot["derived"] += 1
                    continue
                ev_name = meta.get(signed(d.get(1, 0)), "")
                if not device:
                    kind = "cpu"
                elif ev_name.startswith(("Memcpy", "memcpy")):
                    kind = "memcpy"
                elif ev_name.startswith(("Memset", "memset")):
                    kind = "memset"
                else:
                    kind = "kernel"
                tot[kind] += 1
                tot["dur_ns"] += signed(d.get(3, 0)) // 1000
        if lines:
            out["planes"][name] = tot
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


main(sys.argv[1])
