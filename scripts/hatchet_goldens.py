#!/usr/bin/env python3
"""Golden outputs for grove's Hatchet query language, computed by Hatchet itself.

For every Hatchet literal file in ``<corpus>/hatchet-exports/*.literal.json`` and every query
listed in ``CASES`` below, this script runs the reference implementation (``llnl-hatchet``)
and writes ``testdata/hatchet_queries/<stem>.json``.  grove's tests compare its own query
engine, ``filter`` and ``squash`` against these files, so CI never needs Python or Hatchet.

Usage (see ``testdata/hatchet_queries/README.md`` for the exact environment)::

    /tmp/hvenv/bin/python scripts/hatchet_goldens.py [--corpus DIR] [--out DIR]

Defaults: ``--corpus /work/shared/corpus``, ``--out testdata/hatchet_queries`` (relative to the
repository root, i.e. the parent of this script's folder).  The output is deterministic: two
runs give byte-identical files.

What is computed for each case
------------------------------
The graph frame is loaded fresh for every call with
``hatchet.GraphFrame.from_literal(json.load(f))``.  Then

* ``gf.filter(q, squash=False, num_procs=1)`` -> the kept nodes (the rows left in the data
  frame).  Reported as ``kept_count`` (number of rows = distinct nodes), ``kept_nids`` (their
  ``_hatchet_nid`` from the file, sorted) and ``kept_paths`` (every call path of every kept
  node, sorted).
* ``gf.filter(q, squash=True, num_procs=1)`` (``update_inc_cols=True``, Hatchet's default) ->
  the squashed graph, reported as ``squashed``: one row per call path in the *new* graph,
  ``{"path": [...], "time": v, "time (inc)": v}``, sorted by path.

Three kinds of ``q`` (``dialect``): ``"string"`` (the Cypher-like ``MATCH ... WHERE ...``
dialect, passed as a str), ``"object"`` (a Python list, passed as a list; the JSON form is in
``object``; a 2-element JSON array ``[quantifier, {..}]`` inside it stands for the Python tuple
``(quantifier, {..})``) and ``"predicate"`` (a row predicate
``lambda row: row["time (inc)"] > threshold``; ``threshold`` holds the number).

If Hatchet raises, ``error`` is ``"<ExceptionType>: <message>"`` and the result fields are
null.  (If only the squash step raised, ``squash_error`` says so.)

Call paths
----------
A call path is the list of node names from a root to the node.  The name of a node is the
``name`` column of Hatchet's data frame (= the literal's ``frame.name``, else the node's
``name``; e.g. HPCToolkit statement nodes are named ``"<unknown file>:0"``).  When several
siblings (children of one parent, or the roots) have the same name, *each* of them gets the
suffix ``"#k"``, k = 0-based index among the same-named siblings in child order; names that are
unique among their siblings are left alone.  Child order is Hatchet's ``node.children`` order,
which for the original graph is the order of ``children`` in the literal file.  In the squashed
graph Hatchet merges siblings with equal frames, so same-named siblings can only remain when
their frames differ in another attribute; none of the current goldens has any (the script
prints a warning if that changes).

In a DAG (gprof2dot-cpi: a node listed again under another parent with the same
``_hatchet_nid`` is one shared node) a node reached through several parents has several call
paths: ``kept_paths`` lists all of them, ``kept_count`` counts the node once, and ``squashed``
has one row per path (with the same metric values).  Paths are found by walking ``children``
from the roots, as Hatchet's query engine does.  The second listing of a shared node in the
literal file carries no children, but Hatchet's node has the children of its first listing, so
those appear under every parent.

Paths are sorted with Python's list ordering (element-wise, names compared by code point,
a prefix before its extensions).  Numbers are JSON floats rounded to 12 significant digits
(see ``num``; NaN would be null).
"""

import argparse
import io
import json
import math
import os
import sys
import warnings
from contextlib import redirect_stdout

with redirect_stdout(io.StringIO()):  # the import prints nothing today; be safe
    import hatchet as ht

# --------------------------------------------------------------------------------------------
# Queries.  ("string", text) | ("object", python list) | ("predicate", threshold).
# Comments say what each case is there for.  Object-dialect tuples are written as tuples here;
# they are stored as JSON arrays.
# --------------------------------------------------------------------------------------------

CASES = {
    "graph-literal": [
        # string operators on one node after a leading "*": matched nodes plus all ancestors
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" STARTS WITH "gr"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" ENDS WITH "ux"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" CONTAINS "a"'),
        # =~ is re.match: anchored at the start only (bar, baz; full match would find nothing)
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" =~ "ba"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "thud"'),
        # looks anchored at a root, is not: both waldo nodes, no ancestors
        ("string", 'MATCH (".", p) WHERE p."name" = "waldo"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time (inc)" > 50'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time" >= 10'),
        ("string", 'MATCH ("*", p) WHERE p IS LEAF'),
        ("string", 'MATCH (".", p) WHERE p."time" > 0 AND p IS NOT LEAF'),
        # Hatchet bug: a variable whose first condition has no type check (IS LEAF, IS NOT LEAF,
        # IS NONE) followed by one that has (string/number) builds the type-check expression
        # " and isinstance(...)" -> SyntaxError when the predicate runs
        ("string", 'MATCH (".", p) WHERE p IS NOT LEAF AND p."time" > 0'),
        # Hatchet bug: a named variable without any condition gives "lambda df_row: " -> SyntaxError
        ("string", 'MATCH (".", a)->(".", b) WHERE a."name" = "bar"'),
        # "+" = at least one node in between: foo->qux->quux->corge->bar, not foo->bar
        ("string", 'MATCH (".", a)->("+")->(".", b) WHERE a."name" = "foo" AND b."name" = "bar"'),
        # exactly two nodes in between
        ("string", 'MATCH (".", a)->(2)->(".", b) WHERE a."name" = "waldo" AND b."name" = "thud"'),
        ("string", 'MATCH (".", a)->("*")->(".", b) WHERE a."name" = "foo" AND b."name" = "grault"'),
        ("string", 'MATCH (".", a)->(".", b) WHERE a."name" = "bar" AND NOT b."name" = "baz"'),
        # OR inside one variable
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "baz" OR p."name" = "plugh"'),
        # Python precedence inside one variable: baz OR (garply AND time > 100)
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "baz" OR p."name" = "garply" AND p."time" > 100'),
        # cross-variable OR is silently an AND: only corge->garply
        ("string", 'MATCH (".", a)->(".", b) WHERE a."name" = "corge" OR b."name" = "garply"'),
        # unknown column: the per-variable type check raises KeyError -> predicate False everywhere
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "baz" OR p."nosuch" > 1'),
        # numeric operator on a string column -> InvalidQueryFilter (type mismatch)
        ("string", 'MATCH (".", p) WHERE p."name" > 5'),
        # compound (brace) query: intersection of the two node sets
        ("string", '{MATCH ("*", p) WHERE p."time" >= 5} AND {MATCH ("*")->(".", q) WHERE q."name" =~ "ga"}'),
        ("object", [{"name": "waldo"}, "*", {"name": "ga.*"}]),
        ("object", ["*", {"time (inc)": "> 50"}]),
        # object dialect appends \Z: "ba|grault\Z" -> names starting with "ba", or exactly grault
        ("object", [{"name": "ba|grault"}]),
        # full match: "ba" alone matches nothing -> EmptyFilter
        ("object", [{"name": "ba"}]),
        ("object", [{"name": "fred"}, ("+", {"time": [">= 5", "< 10"]})]),
        ("predicate", 17.5),
        ("predicate", 40.0),
    ],
    "hpctoolkit-cpi": [
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" STARTS WITH "PMPI_"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" ENDS WITH ":0"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" CONTAINS "MPI_"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" =~ "[0-9]+:MPI"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" =~ ".*psm"'),
        ("string", 'MATCH (".", p) WHERE p."name" = "main"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time (inc)" > 100000'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time" >= 40000'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time" > 0 AND p IS LEAF'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" CONTAINS "psm" AND p IS NOT LEAF'),
        ("string", 'MATCH (".", a)->("+")->(".", b) WHERE a."name" = "62:MPI_Finalize" AND b."name" = "interp.c:0"'),
        # non-greedy "*": stops at the first <unknown procedure> on each branch
        ("string", 'MATCH (".", a)->("*")->(".", b) WHERE a."name" = "main" AND b."name" = "<unknown procedure>"'),
        ("string", 'MATCH (".", a)->(3)->(".", b) WHERE a."name" = "PMPI_Finalize" AND b."name" = "36:<unknown procedure>"'),
        # NOT binds to one condition: (NOT contains "unknown") AND leaf
        ("string", 'MATCH ("*")->(".", p) WHERE NOT p."name" CONTAINS "unknown" AND p IS LEAF'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" STARTS WITH "24:" OR p."name" STARTS WITH "230:"'),
        ("object", [{"name": "[0-9]+:MPI_.*"}, "*"]),
        ("object", ["*", {"time (inc)": "> 300000"}]),
        ("object", [{"name": "PMPI_.*"}, "*", {"name": "<unknown file>:0"}]),
        ("object", [{"name": "<unknown procedure>"}, ("+", {"time (inc)": [">= 30000", "< 300000"]})]),
        ("predicate", 100000.0),
        ("predicate", 300000.0),
    ],
    "caliper-lulesh": [
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" STARTS WITH "Lagrange"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" ENDS WITH "ForNodes"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" CONTAINS "Hourglass"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" =~ "Calc[A-Z][a-z]+For"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "CalcQForElems"'),
        ("string", 'MATCH (".", p) WHERE p."name" = "LagrangeNodal"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time (inc)" > 700000'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time" >= 250000'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time" < 20000 AND p IS LEAF'),
        # "+" then non-greedy "*": nested *Elems under a matched *Elems are not reached
        ("string", 'MATCH (".", a)->("+")->(".", b) WHERE a."name" = "LagrangeLeapFrog" AND b."name" ENDS WITH "Elems"'),
        ("string", 'MATCH (".", a)->(2)->(".", b) WHERE a."name" = "LagrangeNodal" AND b IS LEAF'),
        ("string", 'MATCH ("*")->(".", p) WHERE NOT p."name" STARTS WITH "Calc" AND p IS LEAF'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "TimeIncrement" OR p."time (inc)" > 2000000'),
        # cross-variable OR acts as AND -> nothing -> EmptyFilter
        ("string", 'MATCH (".", a)->(".", b) WHERE a."name" = "CalcQForElems" OR b."name" = "CalcKinematicsForElems"'),
        ("object", [{"name": "Lagrange.*"}, "*", {"name": "Calc.*Elems"}]),
        ("object", ["*", {"time": "> 500000"}]),
        ("object", [{"name": ".*ForNodes"}, ".", {"time (inc)": ["> 1000000", "<= 3000000"]}]),
        ("object", [("+", {"time (inc)": "> 1000000"})]),
        ("predicate", 700000.0),
        ("predicate", 2000000.0),
    ],
    "pyinstrument": [
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" STARTS WITH "_format"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" ENDS WITH "_axis"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" CONTAINS "take"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" =~ "to_"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "pprint_thing"'),
        ("string", 'MATCH (".", p) WHERE p."name" = "take"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time (inc)" > 0.05'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time" >= 0.01'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "<module>" AND p IS LEAF'),
        # non-greedy "*": take -> take (inner take) is not kept
        ("string", 'MATCH (".", a)->("*")->(".", b) WHERE a."name" = "from_caliper_json" AND b."name" STARTS WITH "take"'),
        # "+" with a predicate: the chain of time == 0 nodes below __repr__
        ("string", 'MATCH (".", a)->("+", b) WHERE a."name" = "__repr__" AND b."time" = 0'),
        ("string", 'MATCH (".", a)->(3)->(".", c) WHERE a."name" = "read" AND c."name" = "_take_with_is_copy"'),
        ("string", 'MATCH (".", p) WHERE NOT p."name" = "<module>" AND p IS LEAF'),
        # cross-variable OR acts as AND: <module> -> loads pairs only
        ("string", 'MATCH (".", a)->(".", b) WHERE a."name" = "<module>" OR b."name" = "loads"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "compile" OR p."name" = "loads" AND p."time" > 0.01'),
        ("object", [{"name": "<module>"}, {"name": "decorator"}]),
        ("object", [{"name": "from_caliper_json"}, "*", {"name": "take.*"}]),
        # "format|pprint\Z": names starting with "format", or exactly "pprint" (none)
        ("object", ["*", {"name": "format|pprint"}]),
        ("object", [("+", {"name": "<module>", "time (inc)": "> 0.05"})]),
        ("predicate", 0.01),
        ("predicate", 0.03),
    ],
    "gprof2dot-cpi": [
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" STARTS WITH "PMPI_"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" ENDS WITH "_MV2"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" CONTAINS "memcpy"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" =~ "psm2?_"'),
        # malloc is one node with three parents
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "malloc"'),
        ("string", 'MATCH (".", p) WHERE p."name" = "MPIUI_Memcpy"'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time (inc)" > 5'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."time" >= 1.0'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" STARTS WITH "0x" AND p IS LEAF'),
        ("string", 'MATCH (".", a)->("*")->(".", b) WHERE a."name" = "PMPI_Reduce" AND b."name" = "malloc"'),
        ("string", 'MATCH (".", a)->("+")->(".", b) WHERE a."name" = "PMPI_Bcast" AND b."name" = "PMPI_Comm_rank"'),
        ("string", 'MATCH (".", a)->(2)->(".", b) WHERE a."name" = "hwloc_topology_load" AND b."name" = "look_sysfscpu"'),
        ("string", 'MATCH (".", p)->(".", q) WHERE p."name" = "MPIR_Reduce_knomial_MV2" AND NOT q IS LEAF'),
        ("string", 'MATCH ("*")->(".", p) WHERE p."name" = "free" OR p."name" = "_int_free"'),
        ("object", [{"name": "MPI.*"}, "*", {"name": "psm2_.*"}]),
        # the value is a regex: parentheses must be escaped to match "(below main)"
        ("object", [{"name": "\\(below main\\)"}, ".", {"time (inc)": "> 30"}]),
        ("object", [{"name": "0x.*"}, ("+", {"name": "0x.*"})]),
        ("predicate", 0.78),
        ("predicate", 5.0),
    ],
}

# Columns reported in "squashed" (Hatchet also treats "_hatchet_nid" as an exclusive metric
# of literal files and sums it in squash; it is left out).
METRICS = ["time", "time (inc)"]


def load_gf(path):
    with open(path) as f:
        data = json.load(f)
    return ht.GraphFrame.from_literal(data)


def num(v):
    """Metric value for the JSON: rounded to 12 significant digits.

    Hatchet's squash sums floats in an order that depends on set iteration and on id()
    (which node of a merge survives), so the last bits of a sum can differ between runs
    (seen: 0.046515 vs 0.046514999999999994).  Rounding makes the files reproducible; compare
    with a relative tolerance of about 1e-9.
    """
    v = float(v)
    return None if math.isnan(v) else float("%.12g" % v)


def paths_by_node(roots, name_of):
    """Map id(node) -> list of call paths (lists of labelled names), walking children.

    Sibling labelling: a name shared by several siblings gets "#k" on each of them.
    Returns (paths, dup_seen) where dup_seen says whether any "#k" label was needed.
    """
    paths = {}
    dup_seen = False

    def labels(nodes):
        nonlocal dup_seen
        names = [name_of[id(n)] for n in nodes]
        seen = {}
        out = []
        for n, nm in zip(nodes, names):
            if names.count(nm) > 1:
                dup_seen = True
                k = seen.get(nm, 0)
                seen[nm] = k + 1
                out.append((n, "%s#%d" % (nm, k)))
            else:
                out.append((n, nm))
        return out

    def walk(node, label, prefix, on_path):
        if id(node) in on_path:
            raise RuntimeError("cycle in graph at %r" % label)
        path = prefix + [label]
        paths.setdefault(id(node), []).append(path)
        on_path.add(id(node))
        for child, clabel in labels(node.children):
            walk(child, clabel, path, on_path)
        on_path.discard(id(node))

    for root, label in labels(list(roots)):
        walk(root, label, [], set())
    return paths, dup_seen


def names_from_frame(gf):
    df = gf.dataframe
    return {id(node): str(name) for node, name in zip(df.index, df["name"])}


def run_case(path, kind, q):
    """Run one case; returns the dict of result fields."""
    if kind == "string":
        arg = q
    elif kind == "object":
        arg = list(q)
    else:
        threshold = q
        arg = lambda row: row["time (inc)"] > threshold  # noqa: E731

    res = {
        "kept_count": None,
        "kept_nids": None,
        "kept_paths": None,
        "squashed": None,
        "error": None,
    }
    # a) squash=False: same graph object, fewer rows
    gf = load_gf(path)
    orig_paths, _ = paths_by_node(gf.graph.roots, names_from_frame(gf))
    try:
        kept = gf.filter(arg, squash=False, num_procs=1)
    except Exception as e:  # record Hatchet's own exception
        res["error"] = "%s: %s" % (type(e).__name__, e)
        return res
    nodes = list(kept.dataframe.index)
    res["kept_count"] = len(nodes)
    res["kept_nids"] = sorted(int(n) for n in kept.dataframe["_hatchet_nid"])
    res["kept_paths"] = sorted(p for n in nodes for p in orig_paths[id(n)])

    # b) squash=True on a fresh frame
    gf = load_gf(path)
    try:
        sq = gf.filter(arg, squash=True, num_procs=1)
    except Exception as e:
        res["squash_error"] = "%s: %s" % (type(e).__name__, e)
        return res
    sq_names = names_from_frame(sq)
    sq_paths, dup = paths_by_node(sq.graph.roots, sq_names)
    if dup:
        print("warning: same-named siblings after squash in %s for %r" % (path, q), file=sys.stderr)
    rows = []
    df = sq.dataframe
    for node in df.index:
        for p in sq_paths[id(node)]:
            row = {"path": p}
            for m in METRICS:
                row[m] = num(df.loc[node, m])
            rows.append(row)
    rows.sort(key=lambda r: r["path"])
    res["squashed"] = rows
    return res


def jsonable_object(q):
    """Object-dialect query as JSON: tuples become 2-element arrays."""
    return [list(e) if isinstance(e, tuple) else e for e in q]


def _compact(v):
    return json.dumps(v, ensure_ascii=False)


def to_json(v, indent=0):
    """Stable JSON text: objects and lists one item per line, except that lists of scalars,
    call paths and ``squashed`` rows are written on one line each.  Still plain JSON."""
    pad, pad1 = " " * indent, " " * (indent + 1)
    scalar = (str, int, float, bool, type(None))
    if isinstance(v, scalar) or (isinstance(v, list) and all(isinstance(x, scalar) for x in v)):
        return _compact(v)
    if isinstance(v, dict) and "path" in v:
        return _compact(v)
    if isinstance(v, list):
        if not v:
            return "[]"
        return "[\n" + ",\n".join(pad1 + to_json(x, indent + 1) for x in v) + "\n" + pad + "]"
    items = ["%s%s: %s" % (pad1, _compact(k), to_json(x, indent + 1)) for k, x in v.items()]
    return "{\n" + ",\n".join(items) + "\n" + pad + "}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--out", default=os.path.join(repo, "testdata", "hatchet_queries"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    os.makedirs(args.out, exist_ok=True)

    for stem, cases in CASES.items():
        rel = "hatchet-exports/%s.literal.json" % stem
        path = os.path.join(args.corpus, rel)
        gf = load_gf(path)
        out_cases = []
        for kind, q in cases:
            if kind == "string":
                case = {"query": q, "dialect": kind}
            elif kind == "object":
                obj = jsonable_object(q)
                case = {"query": json.dumps(obj, ensure_ascii=False), "dialect": kind, "object": obj}
            else:
                case = {"query": 'row["time (inc)"] > %r' % q, "dialect": kind, "threshold": float(q)}
            case.update(run_case(path, kind, q))
            out_cases.append(case)
        doc = {
            "hatchet_version": ht.__version__,
            "input": rel,
            "node_count": len(gf.dataframe),
            "metrics": METRICS,
            "cases": out_cases,
        }
        out = os.path.join(args.out, stem + ".json")
        with open(out, "w", encoding="utf-8") as f:
            f.write(to_json(doc) + "\n")
        errs = sum(1 for c in out_cases if c["error"] or c.get("squash_error"))
        print("%s: %d cases (%d errors) -> %s" % (stem, len(out_cases), errs, out))


if __name__ == "__main__":
    main()
