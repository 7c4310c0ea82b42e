#!/usr/bin/env python3
"""Golden for tests/et.rs: HTA 0.5.0's correlate_execution_trace on the corpus pair
hta/tests/data/execution_trace/benchmark_simple_add_{trace,et}.json.gz.

Writes testdata/et/hta_correlation.json: for every trace event HTA correlated, its
name, External id and ET node id, plus HTA's rf_id ranges. Needs
`pip install holistictraceanalysis==0.5.0` (it ships et_replay in param_bench).

    python3 scripts/et_hta_golden.py ../shared/corpus > testdata/et/hta_correlation.json
"""
import json
import os
import sys

import hta

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(hta.__file__)), "param_bench"))

from hta.common.execution_trace import (  # noqa: E402
    correlate_execution_trace,
    load_execution_trace,
)
from hta.common.trace import Trace  # noqa: E402

corpus = sys.argv[1] if len(sys.argv) > 1 else "../shared/corpus"
d = os.path.join(corpus, "hta/tests/data/execution_trace")
t = Trace(trace_files={0: "benchmark_simple_add_trace.json.gz"}, trace_dir=d)
t.parse_traces()
et = load_execution_trace(os.path.join(d, "benchmark_simple_add_et.json.gz"))
correlate_execution_trace(t, 0, et)
df = t.get_trace(0)
m = df[df.et_node.notna()]
names = t.symbol_table.get_sym_table()
rows = [
    {"name": names[int(r["name"])], "external_id": int(r["external_id"]), "et_node": int(r["et_node"])}
    for _, r in m.iterrows()
]
ops = [
    n.rf_id
    for n in et.nodes.values()
    if n.rf_id is not None
    and "execution_trace|thread" not in n.name
    and "execution_trace|process" not in n.name
]
print(
    json.dumps(
        {
            "trace_ids": [int(df.external_id.min()), int(df.external_id.max())],
            "et_rf_ids": [min(ops), max(ops)],
            "correlated": rows,
        },
        indent=1,
    )
)
