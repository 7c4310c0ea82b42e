#!/usr/bin/env python3
"""Produce golden outputs of HolisticTraceAnalysis (HTA) on real Kineto traces.

Run with the interpreter of a virtualenv that has HTA installed, e.g.

    python3.11 -m venv /tmp/htavenv
    /tmp/htavenv/bin/pip install HolisticTraceAnalysis==0.5.0 'pandas<3'
    /tmp/htavenv/bin/python scripts/hta_goldens.py \
        --corpus /work/shared/corpus --out testdata/hta

For every trace listed in TRACES this script makes a directory under --workdir
(default /tmp/hta_goldens_in/<short>) holding a symlink to the corpus file (HTA
loads a *directory* of traces, one file per rank), runs
`TraceAnalysis(trace_dir=..., include_last_profiler_step=...)` in a fresh child
process and writes testdata/hta/<short>.json (HTA's default, which drops the GPU
kernels launched in the last ProfilerStep) and, where that filter applies (>= 2
distinct ProfilerStep names), testdata/hta/<short>.last_step.json
(include_last_profiler_step=True).

Nothing from the corpus is copied into the repository: only HTA's outputs.
Floats are rounded to 12 significant digits; NaN/inf become null.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

# short name -> list of corpus-relative files (one per rank).
TRACES = {
    "sampled_rank0": ["hta/tests/data/trace_filter/sampled_rank-0.json.gz"],
    "sampled_rank1": ["hta/tests/data/trace_filter/sampled_rank-1.json.gz"],
    "sampled_2ranks": [
        "hta/tests/data/trace_filter/sampled_rank-0.json.gz",
        "hta/tests/data/trace_filter/sampled_rank-1.json.gz",
    ],
    "nccl_data": ["hta/tests/data/nccl_parser_config/nccl_data.json.gz"],
    "alexnet": [
        "hta/tests/data/critical_path/alexnet/"
        "benchmark_result_2869224_1695835535_trace.json.gz"
    ],
    "event_sync": [
        "hta/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz"
    ],
    "ns_resolution": [
        "hta/tests/data/ns_resolution_trace/"
        "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
    ],
    "gpu_user_annotation": [
        "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz"
    ],
    "amd_mi250": [
        "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    ],
    "resnet50_2021": [
        "kineto/plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"
    ],
    "triton_example": ["hta/tests/data/triton_example/triton_example.json.gz"],
    "tb_gpu_metrics_2021": ["kineto/tb_plugin/test/gpu_metrics_input.json"],
}

ANALYSIS_KEYS = [
    "temporal", "kernel_type", "kernel", "kernel_default", "idle",
    "idle_interval_stats", "overlap", "launch", "queue", "queue_series",
    "queue_blocked_on_full", "memory_bw", "memory_bw_series",
]

MAX_ROWS = 2000  # above this, keep summary stats and the first HEAD_ROWS rows
HEAD_ROWS = 200
SIG_DIGITS = 12

IDLE_CONSECUTIVE_KERNEL_DELAY = 30  # HTA default; compared against integer-us gaps
LAUNCH_RUNTIME_CUTOFF = 50  # us (HTA default)
LAUNCH_DELAY_CUTOFF = 100  # us (HTA default)


# ---------------------------------------------------------------- conversion


def plain(v):
    """numpy/pandas scalar -> JSON-able plain Python value, floats rounded."""
    import numpy as np

    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            return None
        return float(f"{f:.{SIG_DIGITS}g}")
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, str):
        return v
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return None
    except Exception:  # pragma: no cover
        pass
    return str(v)


def flat_col(c):
    if isinstance(c, tuple):
        return ".".join(str(x) for x in c if str(x) != "")
    return str(c)


def records(df, keep_index=False):
    """DataFrame -> list of dicts with plain values (MultiIndex columns joined by '.')."""
    if df is None:
        return None
    if keep_index:
        df = df.reset_index()
    out = []
    cols = [flat_col(c) for c in df.columns]
    for row in df.itertuples(index=False, name=None):
        out.append({c: plain(v) for c, v in zip(cols, row)})
    return out


def dump(obj, ind=0):
    """Pretty JSON where every flat record (dict of scalars) sits on one line."""
    pad, pad1 = " " * ind, " " * (ind + 1)
    flat = lambda o: all(not isinstance(v, (dict, list)) for v in o.values())
    if isinstance(obj, dict) and obj and not flat(obj):
        items = [f"{pad1}{json.dumps(k)}: {dump(v, ind + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and any(isinstance(v, (dict, list)) for v in obj):
        items = [f"{pad1}{dump(v, ind + 1)}" for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)


def err(e):
    return {"error": f"{type(e).__name__}: {e}"}


def capped(rows, numeric_cols):
    """Keep all rows when few; else counts, sums and the first HEAD_ROWS rows."""
    n = len(rows)
    sums = {
        c: plain(sum((r.get(c) or 0) for r in rows)) for c in numeric_cols
    }
    out = {"count": n, "sums": sums, "truncated": n > MAX_ROWS}
    out["rows"] = rows[:HEAD_ROWS] if n > MAX_ROWS else rows
    return out


# ---------------------------------------------------------------- one run


def run_one(trace_dir, include_last):
    import numpy as np
    import pandas as pd
    from hta.trace_analysis import TraceAnalysis

    t0 = time.time()
    ta = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=include_last)
    load_s = time.time() - t0
    t = ta.t
    ranks = t.get_ranks()
    sym = t.symbol_table.get_sym_id_map()
    step_names = sorted(k for k in sym if "ProfilerStep" in k)
    info = {
        "ranks": ranks,
        "rank_files": {str(r): os.path.basename(f) for r, f in t.trace_files.items()},
        "min_ts_us_subtracted": plain(t.min_ts),
        "profiler_step_symbols": step_names,
        # HTA's own condition in Trace._filter_irrelevant_gpu_kernels (0.5.0)
        "profiler_step_filter_applied": len(step_names) >= 2,
        "rows_after_preprocessing": {
            str(r): int(len(t.get_trace(r))) for r in ranks
        },
        "gpu_rows_stream_ne_minus1": {
            str(r): int(t.get_trace(r)["stream"].ne(-1).sum()) for r in ranks
        },
        "ts_dtype": {str(r): str(t.get_trace(r)["ts"].dtype) for r in ranks},
        "load_seconds": round(load_s, 2),
    }
    try:
        info["profiler_steps"] = [plain(x) for x in ta.get_profiler_steps()]
    except Exception as e:
        info["profiler_steps"] = err(e)

    A = {}

    try:
        A["temporal"] = records(ta.get_temporal_breakdown(visualize=False))
    except Exception as e:
        A["temporal"] = err(e)

    try:
        kt, k = ta.get_gpu_kernel_breakdown(
            visualize=False,
            num_kernels=1000000,
            duration_ratio=1.0,
            include_memory_kernels=True,
        )
        A["kernel_type"] = records(kt)
        A["kernel"] = records(k)
    except Exception as e:
        A["kernel_type"] = err(e)
        A["kernel"] = err(e)

    try:
        kt, k = ta.get_gpu_kernel_breakdown(visualize=False)
        A["kernel_default"] = {"kernel_type": records(kt), "kernel": records(k)}
    except Exception as e:
        A["kernel_default"] = err(e)

    try:
        idle, stats = ta.get_idle_time_breakdown(
            ranks=ranks,
            visualize=False,
            show_idle_interval_stats=True,
            consecutive_kernel_delay=IDLE_CONSECUTIVE_KERNEL_DELAY,
        )
        A["idle"] = records(idle)
        A["idle_interval_stats"] = records(stats, keep_index=True)
    except Exception as e:
        A["idle"] = err(e)
        A["idle_interval_stats"] = err(e)

    try:
        A["overlap"] = records(ta.get_comm_comp_overlap(visualize=False))
    except Exception as e:
        A["overlap"] = err(e)

    try:
        launch = ta.get_cuda_kernel_launch_stats(
            ranks=ranks,
            runtime_cutoff=LAUNCH_RUNTIME_CUTOFF,
            launch_delay_cutoff=LAUNCH_DELAY_CUTOFF,
            include_memory_events=True,
            visualize=False,
        )
        out = []
        for r, df in launch.items():
            rows = records(df)
            o = {"rank": int(r)}
            o.update(
                capped(rows, ["cpu_duration", "gpu_duration", "launch_delay"])
            )
            # Same expressions as HTA's visualize_cuda_launch_kernel_info (counts only).
            o["derived_counts"] = {
                "short_kernels": int(
                    (
                        (df["cpu_duration"] <= LAUNCH_RUNTIME_CUTOFF)
                        & (df["gpu_duration"] < df["cpu_duration"])
                    ).sum()
                ),
                "runtime_outliers": int(
                    (df["cpu_duration"] > LAUNCH_RUNTIME_CUTOFF).sum()
                ),
                "launch_delay_outliers": int(
                    (df["launch_delay"] > LAUNCH_DELAY_CUTOFF).sum()
                ),
            }
            out.append(o)
        A["launch"] = out
    except Exception as e:
        A["launch"] = err(e)

    try:
        A["queue"] = records(ta.get_queue_length_summary(ranks=ranks), keep_index=True)
    except Exception as e:
        A["queue"] = err(e)

    try:
        series = ta.get_queue_length_time_series(ranks=ranks)
        qs = []
        for r, df in series.items():
            o = {"rank": int(r)}
            o.update(capped(records(df), ["queue_length"]))
            qs.append(o)
        A["queue_series"] = qs
        try:
            A["queue_blocked_on_full"] = records(
                ta.get_time_spent_blocked_on_full_queue(series)
            )
        except Exception as e:
            A["queue_blocked_on_full"] = err(e)
    except Exception as e:
        A["queue_series"] = err(e)

    try:
        A["memory_bw"] = records(ta.get_memory_bw_summary(ranks=ranks), keep_index=True)
    except Exception as e:
        A["memory_bw"] = err(e)

    try:
        series = ta.get_memory_bw_time_series(ranks=ranks)
        ms = []
        for r, df in series.items():
            o = {"rank": int(r)}
            o.update(capped(records(df), ["memory_bw_gbps"]))
            ms.append(o)
        A["memory_bw_series"] = ms
    except Exception as e:
        A["memory_bw_series"] = err(e)

    return info, A


# ---------------------------------------------------------------- driver


def versions():
    from importlib.metadata import version

    return {
        "HolisticTraceAnalysis": version("HolisticTraceAnalysis"),
        "pandas": version("pandas"),
        "numpy": version("numpy"),
        "python": sys.version.split()[0],
    }


PARAMS = {
    "temporal": "get_temporal_breakdown(visualize=False)",
    "kernel_type": "get_gpu_kernel_breakdown(visualize=False, num_kernels=1000000, "
    "duration_ratio=1.0, include_memory_kernels=True)[0]",
    "kernel": "same call [1]",
    "kernel_default": "get_gpu_kernel_breakdown(visualize=False) i.e. duration_ratio=0.8, "
    "num_kernels=10, include_memory_kernels=True (0.5.0 TraceAnalysis default)",
    "idle": f"get_idle_time_breakdown(ranks=<all>, visualize=False, show_idle_interval_stats=True, "
    f"consecutive_kernel_delay={IDLE_CONSECUTIVE_KERNEL_DELAY}) [0]; threshold compared with "
    "integer-microsecond gaps, i.e. effectively 30 us (HTA's docstring says ns)",
    "idle_interval_stats": "same call [1] (describe() of idle_interval per category, round(2))",
    "overlap": "get_comm_comp_overlap(visualize=False)",
    "launch": f"get_cuda_kernel_launch_stats(ranks=<all>, runtime_cutoff={LAUNCH_RUNTIME_CUTOFF}, "
    f"launch_delay_cutoff={LAUNCH_DELAY_CUTOFF}, include_memory_events=True, visualize=False); "
    f"> {MAX_ROWS} rows -> count, sums, first {HEAD_ROWS} rows",
    "queue": "get_queue_length_summary(ranks=<all>) (describe() flattened: queue_length.<stat>)",
    "queue_series": "get_queue_length_time_series(ranks=<all>) (capped like launch)",
    "queue_blocked_on_full": "get_time_spent_blocked_on_full_queue(<queue_series>, max_queue_length=1024)",
    "memory_bw": "get_memory_bw_summary(ranks=<all>) (describe() flattened: memory_bw_gbps.<stat>)",
    "memory_bw_series": "get_memory_bw_time_series(ranks=<all>) (capped like launch)",
}


def force_stable_sort():
    """Make every DataFrame/Series.sort_values stable (probe for tie-order sensitivity)."""
    import pandas as pd

    for cls in (pd.DataFrame, pd.Series):
        orig = cls.sort_values

        def sv(self, *a, _orig=orig, **k):
            k["kind"] = "mergesort"
            return _orig(self, *a, **k)

        cls.sort_values = sv


def child_main(args):
    if args.stable_sort:
        force_stable_sort()
    info, A = run_one(args.trace_dir, args.include_last)
    with open(args.child_out, "w") as f:
        json.dump({"info": info, "analyses": A}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "testdata", "hta"))
    ap.add_argument("--workdir", default="/tmp/hta_goldens_in")
    ap.add_argument("--only", nargs="*", help="short names to run (default: all)")
    ap.add_argument("--timeout", type=int, default=1800)
    # internal: child mode
    ap.add_argument("--child-out")
    ap.add_argument("--trace-dir")
    ap.add_argument("--include-last", action="store_true")
    ap.add_argument("--stable-sort", action="store_true")
    args = ap.parse_args()
    if args.child_out:
        return child_main(args)

    os.makedirs(args.out, exist_ok=True)
    ver = versions()
    summary = {}
    for short, rels in TRACES.items():
        if args.only and short not in args.only:
            continue
        d = os.path.join(args.workdir, short)
        os.makedirs(d, exist_ok=True)
        for fn in os.listdir(d):
            os.unlink(os.path.join(d, fn))
        for rel in rels:
            os.symlink(os.path.join(args.corpus, rel), os.path.join(d, os.path.basename(rel)))
        for include_last in (False, True):
            tmp = os.path.join(args.workdir, f"{short}.{int(include_last)}.out.json")
            if os.path.exists(tmp):
                os.unlink(tmp)
            cmd = [sys.executable, os.path.abspath(__file__), "--child-out", tmp, "--trace-dir", d]
            if include_last:
                cmd.append("--include-last")
            t0 = time.time()
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            wall = time.time() - t0
            if p.returncode != 0 or not os.path.exists(tmp):
                # TraceAnalysis() itself failed: every analysis gets the load error
                tail = (p.stderr or "").strip().splitlines()[-1:] or ["?"]
                e = {"error": "TraceAnalysis load failed: " + tail[0]}
                res = {"info": {}, "analyses": {k: e for k in ANALYSIS_KEYS}}
            else:
                with open(tmp) as f:
                    res = json.load(f)
            applied = res["info"].get("profiler_step_filter_applied", False)
            if include_last and not applied:
                # include_last_profiler_step has no effect: identical to the default file
                continue
            # Probe: rerun with stable sorts; analyses that change depend on how
            # pandas' default (unstable) sort orders equal timestamps.
            tie_sensitive = None  # None: TraceAnalysis could not load the trace
            if res["info"]:
                p2 = subprocess.run(cmd + ["--stable-sort"], capture_output=True, text=True, timeout=args.timeout)
                if p2.returncode == 0:
                    with open(tmp) as f:
                        alt = json.load(f)["analyses"]
                    tie_sensitive = [k for k in res["analyses"] if res["analyses"][k] != alt.get(k)]
                else:
                    tie_sensitive = ["probe failed"]
            res["info"]["sort_tie_sensitive_analyses"] = tie_sensitive
            doc = {
                "hta_version": ver["HolisticTraceAnalysis"],
                "versions": ver,
                "produced_by": "scripts/hta_goldens.py running HTA on this machine",
                "input": rels[0] if len(rels) == 1 else rels,
                "include_last_profiler_step": include_last,
                "trace_info": res["info"],
                "parameters": PARAMS,
                "analyses": res["analyses"],
            }
            doc["trace_info"].pop("load_seconds", None)
            name = f"{short}.last_step.json" if include_last else f"{short}.json"
            with open(os.path.join(args.out, name), "w") as f:
                f.write(dump(doc) + "\n")
            errs = [k for k, v in res["analyses"].items() if isinstance(v, dict) and "error" in v]
            summary[name] = {"wall_s": round(wall, 1), "errors": errs}
            print(f"{name}: {wall:.1f}s errors={errs}", flush=True)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
