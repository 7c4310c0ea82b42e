#!/usr/bin/env python3
"""Independent totals of the pprof protobuf files of ../shared/corpus, for tests/cpu_readers.rs.

A minimal protobuf wire-format decoder (no protobuf package, no grove code): reads
profile.proto's Profile message fields 1 (sample_type), 2 (sample), 6 (string_table) and
14 (default_sample_type), sums every sample's values per sample type, and writes
testdata/pprof_totals.json: {path: {"types": ["samples/count", ...], "totals": [...],
"samples": n, "default": "cpu"}}. The default is default_sample_type, else the last
type (pprof's rule). Run from the repository root: python3 scripts/pprof_totals.py
"""
import gzip
import json
import os
import sys

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpus")
FILES = [
    "parca/pkg/normalizer/node-profile.pb.gz",
    "parca/pkg/normalizer/profile.pb.gz",
    "parca/pkg/query/testdata/alloc_space_delta.pb.gz",
    "parca/pkg/query/testdata/fgprof.pb.gz",
    "parca/pkg/query/testdata/fib.pb.gz",
    "parca/pkg/query/testdata/many/1644509299337903000.pb.gz",
    "parca/pkg/query/testdata/no-python.pb.gz",
    "parca/pkg/query/testdata/profile-with-labels.pb.gz",
    "parca/pkg/query/testdata/profile1.pb.gz",
    "parca/pkg/query/testdata/single-stack.pb.gz",
    "parca/pkg/query/testdata/two-stacks.pb.gz",
    "pprof/internal/report/testdata/sample.cpu",
    "speedscope/sample/profiles/pprof/simple.prof",
]


def varint(b, i):
    v = shift = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return v, i


def fields(b):
    """Yields (field number, wire type, value) of one message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def ints(wt, v):
    """A repeated int64 field: packed (wire type 2) or one varint."""
    if wt == 0:
        return [signed(v)]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(signed(x))
    return out


def totals(data):
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    types, strings, samples, default = [], [], [], 0
    for num, wt, v in fields(data):
        if num == 1:
            t = dict((n, x) for n, _, x in fields(v))
            types.append((t.get(1, 0), t.get(2, 0)))
        elif num == 2:
            vals = []
            for n, w, x in fields(v):
                if n == 2:
                    vals.extend(ints(w, x))
            samples.append(vals)
        elif num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 14:
            default = v
    names = [strings[t] for t, _ in types]
    sums = [sum(s[k] for s in samples if k < len(s)) for k in range(len(types))]
    return {
        "types": ["%s/%s" % (strings[t], strings[u]) for t, u in types],
        "totals": sums,
        "samples": len(samples),
        "default": strings[default] if default else names[-1],
    }


def main():
    out = {}
    for rel in FILES:
        with open(os.path.join(CORPUS, rel), "rb") as f:
            out[rel] = totals(f.read())
    dest = os.path.join(os.path.dirname(__file__), "..", "testdata", "pprof_totals.json")
    with open(dest, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
