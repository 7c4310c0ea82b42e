#!/usr/bin/env python3
"""Independent check of grove's PlaidML reader: per-kernel count and total device time
of `tile::hal::opencl::Executing` activities, as PlaidML's tools/analysis/kernel_times.py
computes them (elapsed = end - start of the activity, grouped by the KernelInfo.kname of
the activity that RunInfo.kernel_id names). Decodes the protobuf wire format by hand, so
it needs neither PlaidML nor the protobuf package.

Usage: plaidml_kernel_times.py EVENTLOG.gz  -> JSON on stdout
"""
import gzip
import json
import sys


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        if not c & 0x80:
            return r, i
        s += 7


def fields(b):
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.append((f, v))
    return out


def first(fs, n, default=None):
    for f, v in fs:
        if f == n:
            return v
    return default


def duration_ns(b):
    fs = fields(b)
    return first(fs, 1, 0) * 1_000_000_000 + first(fs, 2, 0)


def main(path):
    data = gzip.open(path, "rb").read()
    i = 0
    acts = {}  # (stream, index) -> dict
    last_stream = None
    while i < len(data):
        n, i = varint(data, i)
        if n == 0:
            break
        rec, i = data[i:i + n], i + n
        for f, ev in fields(rec):
            if f != 2:
                continue
            fs = fields(ev)
            aid = fields(first(fs, 2, b""))
            idx = first(aid, 1, 0)
            if not idx:
                continue
            su = first(aid, 2, b"")
            if su or last_stream is None:
                last_stream = su
            key = (last_stream, idx)
            a = acts.setdefault(key, {"verb": "", "start": 0, "end": 0, "meta": [], "parent": None})
            par = first(fs, 1)
            if par is not None:
                pf = fields(par)
                a["parent"] = (first(pf, 2, b"") or last_stream, first(pf, 1, 0))
            verb = first(fs, 3)
            if verb:
                a["verb"] = verb.decode()
            st = first(fs, 5)
            if st is not None:
                a["start"] = duration_ns(st)
            en = first(fs, 6)
            if en is not None:
                a["end"] = duration_ns(en)
            for f2, m in fs:
                if f2 == 7:
                    mf = fields(m)
                    a["meta"].append((first(mf, 1, b"").decode(), first(mf, 2, b"")))
    kernels = {}
    for (stream, _), a in acts.items():
        if a["verb"] != "tile::hal::opencl::Executing":
            continue
        # RunInfo sits on an enclosing activity (Kernel::Run), as in PlaidML's
        # Activity.enclosing_metadata().
        run, up = None, a
        while run is None and up is not None:
            run = next((v for t, v in up["meta"] if t.endswith(".RunInfo")), None)
            up = acts.get(up["parent"]) if up["parent"] else None
        kid = fields(first(fields(run), 1))
        ks = first(kid, 2, b"") or stream
        comp = acts[(ks, first(kid, 1, 0))]
        kinfo = [v for t, v in comp["meta"] if t.endswith(".KernelInfo")][0]
        name = first(fields(kinfo), 1).decode()
        k = kernels.setdefault(name, {"count": 0, "total_ns": 0})
        k["count"] += 1
        k["total_ns"] += a["end"] - a["start"]
    verbs = {}
    for a in acts.values():
        verbs[a["verb"]] = verbs.get(a["verb"], 0) + 1
    out = {
        "executions": sum(k["count"] for k in kernels.values()),
        "total_ns": sum(k["total_ns"] for k in kernels.values()),
        "kernels": kernels,
        "verbs": verbs,
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
