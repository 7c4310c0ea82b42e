#!/usr/bin/env python3
"""Golden outputs for grove's Caliper reader, computed by Hatchet itself.

For every Caliper file in the shared corpus (``.cali`` text streams, json-split files) this
script loads the file with the reference implementation (``llnl-hatchet``) and writes
``testdata/caliper/<name>.json``.  grove's tests (``crates/core/src/readers/caliper.rs``) compare node
counts, call paths and root metric values against these files, so CI needs neither Python nor
Hatchet.

Usage (see ``testdata/caliper/README.md`` for the exact environment)::

    /tmp/calvenv/bin/python scripts/caliper_goldens.py [--corpus DIR] [--out DIR]

Defaults: ``--corpus /work/shared/corpus``, ``--out testdata/caliper`` (relative to the
repository root, i.e. the parent of this script's folder).  Output is deterministic.

Which Hatchet reader
--------------------
* ``.cali``: ``GraphFrame.from_caliperreader(path)`` (Hatchet's native reader on top of
  Caliper's ``caliperreader`` package).  ``GraphFrame.from_caliper`` would need the
  ``cali-query`` binary for ``.cali`` input, which is not installed here.
* json-split: ``GraphFrame.from_caliper(path)``.
* Both are first called with Hatchet's default ``node_ordering=True``; when that raises (Hatchet
  2026.x needs a "Node order" column for it) the call is repeated with ``node_ordering=False``
  and ``node_ordering`` in the golden says which one produced it.  When both raise, the
  golden records ``error`` and nothing else.

What is recorded
----------------
* ``nodes``: ``len(gf.graph)`` (every node of Hatchet's graph, implicit parents and
  statement children included).
* ``ranks``: the values of the ``rank`` index level, or ``null`` when the frame has none.
* ``exc_metrics`` / ``inc_metrics``: Hatchet's lists, after the step below.
* ``paths``: one entry per graph node, sorted: ``{"path": [names from the root], "metrics":
  {column: value}}`` where names come from the data frame's ``name`` column (statement nodes
  have no frame name) and values are rounded to 12 significant digits (``null`` for NaN).
  Multi-rank frames are first collapsed with ``gf.drop_index_levels()`` (Hatchet's default
  ``function=np.mean``): values are **means over ranks**, where Hatchet has zero-filled the
  rows of (node, rank) pairs absent from the file.  For such frames each path also records
  ``rows`` (the node's row count before collapsing: normally the number of ranks), and
  ``root_ranks`` lists, for every root and rank, the **sum** of the rows of that (root, rank)
  pair per metric (computed before ``drop_index_levels``).
* ``time (inc)``: when Hatchet gives ``time`` but no ``time (inc)`` (region profiles), the
  script calls Hatchet's own ``gf.update_inclusive_columns()`` after collapsing the ranks, so
  ``time (inc)`` (and ``<m> (inc)`` for every other exclusive metric) are Hatchet's subtree
  sums; ``derived_inclusive`` is then true.  Metrics Hatchet lists but has dropped from the
  frame (json-split "Node order") are removed from its metric lists first, or that call fails.
"""

import argparse
import glob
import json
import math
import os
import sys
import warnings

warnings.filterwarnings("ignore")

import hatchet  # noqa: E402
import hatchet as ht  # noqa: E402


def files_of(corpus):
    pats = [
        "hatchet/hatchet/tests/data/caliper-*/*.cali",
        "hatchet/hatchet/tests/data/caliper-*-json/*.json",
        "hatchet/hatchet/tests/data/spotdb/*.cali",
        "thicket/thicket/tests/data/**/*.cali",
        "caliper/doc/sphinx/examples/*.cali",
        "caliper/python/caliper-reader/*.cali",
    ]
    out = set()
    for p in pats:
        out.update(glob.glob(os.path.join(corpus, p), recursive=True))
    return sorted(os.path.relpath(f, corpus) for f in out)


def golden_name(rel):
    stem = rel
    for ext in (".cali", ".json"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
    return stem.replace("/", "__")


def r12(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    if math.isnan(v) or math.isinf(v):
        return None
    return float("%.12g" % v)


def load(path):
    """(graphframe, reader name, node_ordering, first error or None)."""
    if path.endswith(".cali"):
        reader = "from_caliperreader"
        fn = ht.GraphFrame.from_caliperreader
    else:
        reader = "from_caliper"
        fn = ht.GraphFrame.from_caliper
    first = None
    for ordering in (True, False):
        try:
            return fn(path, node_ordering=ordering), reader, ordering, first
        except Exception as e:  # noqa: BLE001 - any Hatchet failure is recorded
            if first is None:
                first = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    return None, reader, None, first


def golden(corpus, rel):
    path = os.path.join(corpus, rel)
    gf, reader, ordering, err = load(path)
    out = {
        "file": rel,
        "hatchet_version": hatchet.__version__,
        "reader": reader,
    }
    if gf is None:
        out["error"] = err
        return out
    out["node_ordering"] = ordering
    if err is not None:
        out["node_ordering_true_error"] = err
    df = gf.dataframe
    ranks = None
    if "rank" in df.index.names:
        ranks = sorted(int(r) for r in set(df.index.get_level_values("rank")) if r == r)
    # Rows per node before collapsing, and per-rank sums at the roots (Hatchet can hold
    # two rows for one (node, rank): see README.md).
    rows_of = {}
    root_ranks = []
    if len(df.index.names) > 1:
        for node, n in df.groupby(level="node").size().items():
            rows_of[node] = int(n)
        metric_cols = [m for m in gf.exc_metrics + gf.inc_metrics if m in df.columns]
        sums = df[metric_cols].groupby(level=["node", "rank"]).sum()
        for root in gf.graph.roots:
            if root not in sums.index.get_level_values("node"):
                continue
            for rank, row in sums.loc[root].iterrows():
                root_ranks.append(
                    {
                        "root": str(root.frame.get("name")),
                        "rank": int(rank),
                        "metrics": {m: r12(row[m]) for m in metric_cols},
                    }
                )
        gf.drop_index_levels()
    # Hatchet's json-split reader lists "Node order" as an exclusive metric and then drops
    # the column; keep update_inclusive_columns() from looking for it.
    gf.exc_metrics = [m for m in gf.exc_metrics if m in gf.dataframe.columns]
    gf.inc_metrics = [m for m in gf.inc_metrics if m in gf.dataframe.columns]
    derived = False
    if "time" in gf.exc_metrics and "time (inc)" not in gf.dataframe.columns:
        gf.update_inclusive_columns()
        derived = True
    df = gf.dataframe
    metrics = [m for m in gf.exc_metrics + gf.inc_metrics if m in df.columns]
    out["nodes"] = len(gf.graph)
    out["ranks"] = ranks
    # Sorted: update_inclusive_columns() returns its list in set order (varies per run).
    out["exc_metrics"] = sorted(m for m in gf.exc_metrics if m in df.columns)
    out["inc_metrics"] = sorted(m for m in gf.inc_metrics if m in df.columns)
    out["derived_inclusive"] = derived
    out["default_metric"] = gf.default_metric

    names = {}
    for node in gf.graph.traverse():
        name = None
        if node in df.index and "name" in df.columns:
            v = df.loc[node, "name"]
            if hasattr(v, "iloc"):
                v = v.iloc[0]
            name = v
        if name is None or (isinstance(name, float) and math.isnan(name)):
            name = node.frame.get("name")
        names[node] = str(name)

    # Paths by walking children from the roots: Hatchet's json-split reader links children
    # to parents but not parents to children, so node.paths() is wrong on its graphs.
    paths = {}
    stack = [(r, [names[r]]) for r in gf.graph.roots]
    while stack:
        node, path = stack.pop()
        if node in paths:
            continue
        paths[node] = path
        for c in node.children:
            stack.append((c, path + [names.get(c, str(c.frame.get("name")))]))
    rows = []
    for node in gf.graph.traverse():
        path = paths[node]
        vals = {}
        if node in df.index:
            row = df.loc[node]
            for m in metrics:
                v = row[m]
                if hasattr(v, "iloc"):
                    v = v.iloc[0]
                vals[m] = r12(v)
        row = {"path": path, "type": node.frame.get("type"), "metrics": vals}
        if rows_of:
            row["rows"] = rows_of.get(node, 0)
        rows.append(row)
    rows.sort(key=lambda r: (r["path"], json.dumps(r["metrics"], sort_keys=True)))
    out["roots"] = sorted(names[r] for r in gf.graph.roots)
    out["paths"] = rows
    if root_ranks:
        root_ranks.sort(key=lambda r: (r["root"], r["rank"]))
        out["root_ranks"] = root_ranks
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--out", default=os.path.join(root, "testdata", "caliper"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    index = []
    for rel in files_of(a.corpus):
        g = golden(a.corpus, rel)
        name = golden_name(rel)
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump(g, f, indent=1, sort_keys=True)
            f.write("\n")
        index.append({"file": rel, "golden": name + ".json", "error": g.get("error")})
        status = "ERROR " + g["error"] if "error" in g else "%d nodes" % g["nodes"]
        print("%-100s %s" % (rel, status), file=sys.stderr)
    with open(os.path.join(a.out, "index.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
