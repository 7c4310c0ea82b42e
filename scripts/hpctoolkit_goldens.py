#!/usr/bin/env python3
"""Golden files for grove's HPCToolkit reader (crates/core/src/readers/hpctoolkit.rs).

Two kinds of goldens are written to ``testdata/hpctoolkit/`` (see the README there):

``yaml``
    Converts HPCToolkit's own YAML dumps of the v4 test databases
    (``<corpus>/hpctoolkit/tests/data/dbase/small{,.nostruct}.yaml``, written by
    HPCToolkit's hpctesttool) into compact JSON: metric descriptions, the context
    tree in pre-order (with parent ctx ids and resolved function / file / module
    names), every profile's id tuple and sparse values, and the trace lines.
    Needs PyYAML.

``hatchet``
    Loads every database of the corpus with Hatchet (``llnl-hatchet``):
    ``GraphFrame.from_hpctoolkit_latest`` for v4 databases and
    ``GraphFrame.from_hpctoolkit`` for the old experiment.xml databases, and
    writes one JSON per database: the node count and, per node, Hatchet's
    node id (the v4 ctx id / the XML ``i``), name, type and the ``time`` /
    ``time (inc)`` values (the summary profile for v4; rank 0 thread 0 for the
    old format).

Usage::

    python3.11 -m venv /tmp/hpcvenv && /tmp/hpcvenv/bin/pip install llnl-hatchet
    /tmp/hpcvenv/bin/python scripts/hpctoolkit_goldens.py yaml hatchet \
        [--corpus /work/shared/corpus] [--out testdata/hpctoolkit]

The output is deterministic (sorted keys, fixed order).
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

V4_DBS = [
    "hpctoolkit/tests/data/dbase/" + d
    for d in [
        "small.d",
        "small.nostruct.d",
        "loops-cputime-t.d",
        "loops-cputime-t.nostruct.d",
        "loops-perf.d",
        "loops-perf.nostruct.d",
        "loops-cuda-nvidia-t.d",
        "loops-cuda-nvidia-t.nostruct.d",
        "loops-cuda-nvidiapc-t.d",
        "loops-cuda-nvidiapc-t.nostruct.d",
        "loops-hip-amd-t.d",
        "loops-hip-amd-t.nostruct.d",
        "recursion-cuda-nvidiapc-t.d",
        "recursion-cuda-nvidiapc-t.nostruct.d",
    ]
] + ["pipit/pipit/tests/data/ping-pong-hpctoolkit"]

OLD_DBS = [
    "hatchet/hatchet/tests/data/hpctoolkit-cpi-database",
    "hatchet/hatchet/tests/data/hpctoolkit-allgather-database",
]


def golden_name(rel):
    base = os.path.basename(rel.rstrip("/"))
    if base.endswith(".d"):
        base = base[:-2]
    return base


def num(v):
    if v is None:
        return None
    v = float(v)
    if math.isnan(v):
        return None
    return v


# --------------------------------------------------------------------------------------
# YAML dumps -> JSON


def load_yaml(path):
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def generic(loader, tag_suffix, node):
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("!", generic)
    with open(path) as f:
        return yaml.load(f, Loader=Loader)


def convert_yaml(path):
    d = load_yaml(path)
    meta = d["meta"]
    out = {
        "source": os.path.relpath(path, ARGS.corpus),
        "title": meta["general"]["title"],
        "id_names": meta["id_names"]["names"],
    }
    metrics = []
    for m in meta["metrics"]["metrics"]:
        metrics.append(
            {
                "name": m["name"],
                "scopes": [
                    [si["scope"]["scope_name"], int(si["prop_metric_id"])]
                    for si in m["scope_insts"]
                ],
                "summaries": [
                    [
                        s["scope"]["scope_name"],
                        s["formula"],
                        str(s["combine"]),
                        int(s["stat_metric_id"]),
                    ]
                    for s in m["summaries"]
                ],
            }
        )
    out["metrics"] = metrics

    contexts = []

    def walk(ctx, parent, depth):
        func = ctx.get("function")
        fl = ctx.get("file")
        mod = ctx.get("module")
        contexts.append(
            {
                "ctx_id": int(ctx["ctx_id"]),
                "parent": parent,
                "depth": depth,
                "relation": None if ctx.get("relation") is None else str(ctx["relation"]),
                "lexical_type": None
                if ctx.get("lexical_type") is None
                else str(ctx["lexical_type"]),
                "function": None if not func else func.get("name"),
                "file": None if not fl else fl["path"],
                "line": None if ctx.get("line") is None else int(ctx["line"]),
                "module": None if not mod else mod["path"],
                "offset": None if ctx.get("offset") is None else int(ctx["offset"]),
            }
        )
        for c in ctx.get("children") or []:
            walk(c, int(ctx["ctx_id"]), depth + 1)

    entries = []
    for e in meta["context"]["entry_points"]:
        entries.append(
            {
                "ctx_id": int(e["ctx_id"]),
                "entry_point": str(e["entry_point"]),
                "pretty_name": e["pretty_name"],
            }
        )
        contexts.append(
            {
                "ctx_id": int(e["ctx_id"]),
                "parent": None,
                "depth": 0,
                "relation": None,
                "lexical_type": "entry",
                "function": None,
                "file": None,
                "line": None,
                "module": None,
                "offset": None,
                "pretty_name": e["pretty_name"],
            }
        )
        for c in e.get("children") or []:
            walk(c, int(e["ctx_id"]), 1)
    out["entry_points"] = entries
    out["contexts"] = contexts

    profiles = []
    for p in d["profile"]["profile_infos"]["profiles"]:
        tup = p.get("id_tuple")
        ids = []
        if tup:
            for i in tup["ids"]:
                ids.append(
                    {
                        "kind": int(i["kind"]),
                        "is_physical": "is_physical" in (i.get("flags") or []),
                        "logical_id": int(i["logical_id"]),
                        "physical_id": int(i["physical_id"]),
                    }
                )
        values = {}
        for ctx, mv in (p.get("values") or {}).items():
            values[str(int(ctx))] = {str(int(m)): num(v) for m, v in (mv or {}).items()}
        profiles.append(
            {
                "is_summary": "is_summary" in (p.get("flags") or []),
                "id_tuple": ids if tup else None,
                "values": values,
            }
        )
    out["profiles"] = profiles

    traces = []
    tr = d.get("trace")
    if tr:
        th = tr["ctx_traces"]
        out["timestamp_range"] = [
            int(th["timestamp_range"]["min"]),
            int(th["timestamp_range"]["max"]),
        ]
        for t in th["traces"]:
            traces.append(
                {
                    "prof_index": int(t["prof_index"]),
                    "samples": [[int(e["timestamp"]), int(e["ctx_id"])] for e in t["line"]],
                }
            )
    out["traces"] = traces
    return out


def do_yaml():
    for stem in ["small", "small.nostruct"]:
        src = os.path.join(ARGS.corpus, "hpctoolkit/tests/data/dbase", stem + ".yaml")
        if not os.path.exists(src):
            print("missing", src, file=sys.stderr)
            continue
        out = convert_yaml(src)
        dst = os.path.join(ARGS.out, stem + ".yaml.json")
        write_json(dst, out)


# --------------------------------------------------------------------------------------
# Hatchet


def do_hatchet():
    import hatchet as ht

    for rel in V4_DBS:
        path = os.path.join(ARGS.corpus, rel)
        if not os.path.isdir(path):
            print("missing", path, file=sys.stderr)
            continue
        res = {"source": rel, "reader": "GraphFrame.from_hpctoolkit_latest", "version": ht.__version__}
        try:
            gf = ht.GraphFrame.from_hpctoolkit_latest(path)
            df = gf.dataframe
            nodes = []
            for node in gf.graph.traverse():
                row = df.loc[node]
                nodes.append(
                    {
                        "nid": int(node._hatchet_nid),
                        "name": str(row["name"]),
                        "type": str(node.frame.get("type")),
                        "depth": int(node._depth),
                        "time": num(row["time"]) if "time" in row else None,
                        "time (inc)": num(row["time (inc)"]) if "time (inc)" in row else None,
                    }
                )
            nodes.sort(key=lambda n: n["nid"])
            res["node_count"] = len(nodes)
            res["nodes"] = nodes
        except Exception as e:  # record what Hatchet says
            res["error"] = f"{type(e).__name__}: {e}"
        write_json(os.path.join(ARGS.out, "hatchet-" + golden_name(rel) + ".json"), res)

    for rel in OLD_DBS:
        path = os.path.join(ARGS.corpus, rel)
        if not os.path.isdir(path):
            print("missing", path, file=sys.stderr)
            continue
        res = {"source": rel, "reader": "GraphFrame.from_hpctoolkit", "version": ht.__version__}
        gf = ht.GraphFrame.from_hpctoolkit(path)
        df = gf.dataframe.reset_index()
        if "thread" in df.columns:
            df = df[(df["rank"] == 0) & (df["thread"] == 0)]
            res["profile"] = "rank 0 thread 0"
        else:
            df = df[df["rank"] == 0]
            res["profile"] = "rank 0"
        nodes = []
        seen = set()
        for node in gf.graph.traverse():
            if id(node) in seen:
                continue
            seen.add(id(node))
            rows = df[df["node"] == node]
            assert len(rows) == 1, (node, len(rows))
            row = rows.iloc[0]
            nodes.append(
                {
                    "nid": int(row["nid"]),
                    "name": str(row["name"]),
                    "type": str(row["type"]),
                    "depth": int(node._depth),
                    "time": num(row["time"]),
                    "time (inc)": num(row["time (inc)"]),
                }
            )
        nodes.sort(key=lambda n: n["nid"])
        res["node_count"] = len(nodes)
        res["nodes"] = nodes
        write_json(os.path.join(ARGS.out, "hatchet-" + golden_name(rel) + ".json"), res)


def dumps(obj, indent=0):
    """JSON with sorted keys: objects and lists of containers one item per line, the
    innermost objects and lists on one line (small diffs, compact files)."""
    compact = lambda o: json.dumps(o, sort_keys=True, separators=(", ", ": "))
    pad = " " * (indent + 1)
    if isinstance(obj, dict) and any(isinstance(v, (dict, list)) and v for v in obj.values()):
        items = [f"{pad}{json.dumps(k)}: {dumps(obj[k], indent + 1)}" for k in sorted(obj)]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        items = [pad + dumps(v, indent + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    return compact(obj)


def write_json(dst, obj):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    text = dumps(obj) + "\n"
    assert json.loads(text) == obj
    with open(dst, "w") as f:
        f.write(text)
    print("wrote", os.path.relpath(dst, ROOT))


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", nargs="+", choices=["yaml", "hatchet"])
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--out", default=os.path.join(ROOT, "testdata", "hpctoolkit"))
    ARGS = ap.parse_args()
    if "yaml" in ARGS.what:
        do_yaml()
    if "hatchet" in ARGS.what:
        do_hatchet()


if __name__ == "__main__":
    main()
