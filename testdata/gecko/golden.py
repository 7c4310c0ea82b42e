#!/usr/bin/env python3
"""Independent decode of a Firefox Profiler file (processed or raw Gecko, gzip or not)
into per-thread sample counts per function: self (the leaf's function) and
inclusive (each function once per sample's stack), as the Firefox Profiler's call
tree counts them. Written from the format docs (docs-developer/gecko-profile-format.md,
processed-profile-format.md), not from grove's reader.

Usage: golden.py PROFILE [OUT.json]
Output: {"threads": {thread_index: {"name":..., "samples": n, "no_stack": n,
          "bad_stack": n, "self": {func: n}, "inclusive": {func: n}}}}
"""
import gzip, json, re, sys

# How the Firefox Profiler's processing names a raw frame: `name (url:line:col)` (JS)
# and `name (in lib)` (native) give the function `name`; other locations are names.
LOCATION = re.compile(r"^(.*) \((?:in .*|.*:\d+(?::\d+)?)\)$")


def func_of_location(loc):
    m = LOCATION.match(loc)
    return m.group(1) if m else loc


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def rows(table):
    """Raw format table -> list of dicts."""
    schema = table["schema"]
    return [{k: (r[i] if i < len(r) else None) for k, i in schema.items()} for r in table["data"]]


def processed_threads(doc):
    shared = doc.get("shared", {})
    for t in doc["threads"]:
        strings = t.get("stringArray") or shared.get("stringArray") or t.get("stringTable")
        get = lambda k: t.get(k) or shared.get(k)
        stack, frame, func = get("stackTable"), get("frameTable"), get("funcTable")
        def func_name(f):
            return strings[func["name"][frame["func"][f]]]
        stacks = [(stack["prefix"][i], func_name(stack["frame"][i])) for i in range(stack["length"])]
        s = t["samples"]
        yield t.get("name"), stacks, s["stack"]


def raw_threads(doc):
    for t in doc.get("threads", []):
        if isinstance(t, str):
            t = json.loads(t)
        strings = t["stringTable"]
        frames = [func_of_location(strings[r["location"]]) for r in rows(t["frameTable"])]
        stacks = [(r["prefix"], frames[r["frame"]]) for r in rows(t["stackTable"])]
        yield t.get("name"), stacks, [r["stack"] for r in rows(t["samples"])]
    for p in doc.get("processes", []):
        yield from raw_threads(p)


def main():
    doc = load(sys.argv[1])
    processed = "preprocessedProfileVersion" in doc["meta"]
    out = {}
    for n, (name, stacks, samples) in enumerate((processed_threads if processed else raw_threads)(doc)):
        selfc, inc, no_stack, bad = {}, {}, 0, 0
        for st in samples:
            if st is None:
                no_stack += 1
                continue
            if not 0 <= st < len(stacks):
                bad += 1
                continue
            funcs = []
            while st is not None:
                prefix, f = stacks[st]
                funcs.append(f)
                st = prefix
            selfc[funcs[0]] = selfc.get(funcs[0], 0) + 1
            for f in set(funcs):
                inc[f] = inc.get(f, 0) + 1
        out[str(n)] = {"name": name, "samples": len(samples), "no_stack": no_stack, "bad_stack": bad,
                       "self": dict(sorted(selfc.items())), "inclusive": dict(sorted(inc.items()))}
    text = json.dumps({"threads": out}, indent=1, sort_keys=True)
    if len(sys.argv) > 2:
        open(sys.argv[2], "w").write(text + "\n")
    else:
        print(text)


main()
