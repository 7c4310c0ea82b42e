#!/usr/bin/env python3
"""Independent oracle: facts about the shared corpus, computed straight from the raw files.

grove's Rust readers are tested against the JSON this script writes
(``testdata/corpus_totals.json``).  It is deliberately written without looking at grove's
code, in Python 3.11 with the standard library only, so that a bug has to be made twice to
go unnoticed.  The corpus itself is never copied: only these derived numbers are stored.

Usage::

    python3 scripts/oracle_totals.py [--corpus DIR] [--out FILE]

Defaults: ``--corpus ../shared/corpus`` (relative to the repository root; falls back to
``/work/shared/corpus``), ``--out testdata/corpus_totals.json``.  Output: sorted keys, indent 1.

Which files
-----------
* ``chrome``: every MANIFEST.md row whose format column contains "Chrome trace JSON"
  (this includes "Kineto/Chrome trace JSON", "(gz)" and the PerfFlowAspect ``.pfw`` rows), plus
  every ``*.json`` under ``perfetto/inline_json/parser/`` and ``perfetto/test/`` (the Perfetto
  ``*.expected.txt`` golden outputs are not traces and are skipped).
* ``hatchet_literal``: ``hatchet-exports/*.literal.json``.
* ``folded``: MANIFEST.md rows whose format starts with "folded stacks".
Keys are paths relative to the corpus root.  A file that cannot be read even leniently gets
``{"error": "..."}`` instead of numbers.

Lenient Chrome-trace loader
---------------------------
1. gzip is detected by the magic bytes ``1f 8b`` (not by the name); layers are peeled until
   the data no longer starts with them.  A UTF-8 BOM is dropped.
2. Strict ``json.loads`` first, with ``parse_float=decimal.Decimal`` (JSON numbers keep their
   exact decimal text; ints stay ints).  ``lenient`` in the output lists what had to be fixed:
3. ``control_chars``: raw U+0000..U+001F inside strings are escaped as ``\\u00XX``;
   ``trailing_commas``: a ``,`` followed only by whitespace before ``]``/``}`` is dropped
   (both done by one string-aware scan, so commas/brackets inside strings are untouched);
4. ``unterminated_array``: if the document starts with ``[`` and still fails, elements are
   decoded one by one and decoding stops at the end of input (missing final ``]``) or at a
   truncated last element (``dropped_partial_tail`` is then set).  A truncated *object*
   form stays an error, as in Perfetto.
``form`` is "array" for a bare array and "object" for ``{"traceEvents": [...]}``.

Events and time
---------------
* ``events`` = number of entries of the event array, ``{}`` entries included (as in the
  MANIFEST "trace facts" column); ``empty_events`` counts the ``{}`` ones; ``ph_counts`` counts
  the literal ``ph`` strings (``"<none>"`` when absent).
* The *phase* used for semantics is the first character of ``ph`` (Perfetto's rule, so
  ``"XXX"`` acts as ``X``).
* ``ts``/``dur`` are microseconds: a JSON number or a numeric string (``"200.5"``; strings with
  trailing garbage such as ``"100a"`` or non-numbers are invalid).  The *decimal text* is
  multiplied by 1000 exactly and rounded half away from zero to integer nanoseconds.  An
  X event needs a valid ``ts`` and ``dur``; otherwise it is left out of every X total and
  counted in ``x_invalid`` (Perfetto drops such events, including X without ``dur``).

GPU / CPU classification (X events with valid ts+dur only)
----------------------------------------------------------
* GPU activity: ``cat.lower()`` in {kernel, gpu_memcpy, gpu_memset, memcpy, memset} (covers
  the modern names and the 2021 dialect's Kernel/Memcpy/Memset).  ``gpu.count``/``gpu.ns`` and
  ``gpu.by_cat``.  ``gpu_user_annotation`` and ``cuda_sync`` are *not* GPU activities here.
* Lane of a GPU activity: device = ``args.device`` if present else ``pid``; stream =
  ``args.stream`` if present else ``tid``.  Strings ``"stream 7"``/``"stream 7 "`` give 7,
  numeric strings and ``0x..`` give their number; a tid >= 1000000 taken from the ``tid``
  fallback is folded back by subtracting 1000000 (Kineto's stream-sync offset).
  ``gpu_lanes`` = number of distinct (device, stream); ``gpu_lane_list`` lists them.
* ``gpu.busy_ns`` = sum over lanes of the length of the union of [ts, ts+dur) intervals;
  ``gpu.overlapping`` = number of activities that start before the latest end seen so far on
  their lane (lane sorted by ts, then dur); zero/negative durations are counted separately.
* Kineto-style file: top-level ``schemaVersion``/``deviceProperties`` or any event whose
  lower-cased cat is a Kineto CPU, runtime or GPU cat.  CPU X events:
  - Kineto-style: ``cat.lower()`` in {cpu_op, user_annotation, python_function, cuda_runtime,
    cuda_driver, operator, runtime};
  - otherwise (generic Chrome trace): every X event that is not a GPU activity and whose
    (pid, tid) is not a lane carrying GPU activities.
  ``cpu.count``/``cpu.ns``; ``x_by_cat`` gives count/ns for every cat of every valid X event
  so other definitions can be checked too.
* Runtime launches: runtime events = any event with ``cat.lower()`` in {cuda_runtime,
  cuda_driver, runtime} and an ``args.correlation``.  A GPU activity is *linked* when its
  ``args.correlation`` equals one of theirs (ints and numeric strings compare as ints).
  ``launch.linked`` / ``launch.unlinked`` (count, ns) / ``launch.gpu_without_correlation``.
* ``rank`` = ``distributedInfo.rank`` and ``world_size``; ``base_time_ns`` =
  ``baseTimeNanoseconds``; both only when present.

Diagnostics (facts a reader must survive, not totals)
-----------------------------------------------------
``sync_lane_list`` / ``gpu_lanes_with_sync``: lanes of ``cuda_sync`` X events (same lane rule;
Event Sync rows have stream -1 or 4294967295, kept as written) and the size of their union with
the GPU-activity lanes (this is what MANIFEST.md's "GPU streams" counts);
``non_gpu_x_with_stream_arg``: non-GPU, non-sync X events that carry ``args.stream`` (ROCm
runtime calls with ``"0x0"``, a Triton ``cpu_op``) and must not create GPU lanes;
``x_partial_overlaps``: X events (per (pid, tid), sorted by ts then longest first) that start
inside an open slice but end after it (Perfetto's overflow case);
``tids_ge_1000000``: events with a numeric tid >= 1000000 (mostly plain OS tids!);
``sync_offset_events``: ``cuda_sync`` events on such a tid, ``sync_thread_names``: ``thread_name``
metadata containing "(sync)" (Kineto PR #1356); ``time_values_rounded``: ts/dur with more than 3
decimals; ``ints_beyond_i64``: JSON integers outside i64 (e.g. u64 "Comms Id");
``string_pids`` (first 20) / ``string_tid_count``; ``x_zero_dur`` / ``x_negative_dur``;
``events_with_invalid_ts`` (non-M events whose ts is present but unparsable);
``ts_min_ns`` / ``ts_max_end_ns`` over non-M events.

B/E matching ("per-thread stack rule")
--------------------------------------
Only for files with B or E phases.  Events with a valid ts are grouped by (pid, tid) and
stable-sorted by ts (equal ts keep file order).  ``B`` pushes; ``E`` pops the top of its
thread's stack if non-empty (one matched pair; the names are not required to match, but
``be.name_mismatch`` counts pairs where the E carries a non-empty name different from the
B's) and is otherwise counted in ``be.unmatched_e``; what is left on the stacks is
``be.unmatched_b``.

Hatchet literal
---------------
``nodes`` = nodes visited by a DFS over ``children`` from every root (a shared node written
twice counts twice); ``unique_nids`` = distinct ``metrics._hatchet_nid`` when present;
``roots``; ``metric_keys`` (union, sorted) and ``metric_keys_consistent``; ``root_metrics`` =
each root's metrics in file order; ``time_sum`` = sum of the exclusive ``time`` metric over all
visited nodes (``math.fsum``), with ``time_sum_exact`` as the exact decimal text, and
``time_sum_unique_nids`` = the same sum counting each ``_hatchet_nid`` once (differs for a
DAG such as gprof2dot, whose shared nodes are written under every parent).

Folded stacks
-------------
UTF-16 LE/BE detected by BOM (UTF-8 BOM dropped); CR/LF/CRLF line ends.  Lines blank after
stripping or starting with ``#`` are skipped (``skipped``).  A valid line is ``STACK COUNT``
where COUNT is the last whitespace-separated token and is an integer or a decimal number, and
STACK (the text before the last whitespace run) is not empty; other lines are ``invalid``.
``samples`` = sum of counts (an int unless ``float_count_lines`` > 0); ``distinct_paths`` =
number of distinct stack prefixes, i.e. the nodes of the CCT merged by path (the synthetic
root not included); ``distinct_stacks`` = distinct full stacks; ``max_depth``.
"""

from __future__ import annotations

import argparse
import decimal
import glob
import gzip
import json
import math
import os
import re
import sys
import time
from collections import Counter, defaultdict
from decimal import Decimal

decimal.getcontext().prec = 60

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
CPU_CATS = {"cpu_op", "user_annotation", "python_function", "cuda_runtime", "cuda_driver",
            "operator", "runtime"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "runtime"}
KINETO_CATS = GPU_CATS | CPU_CATS
SYNC_TID_OFFSET = 1_000_000
I64_MAX = 2**63 - 1

NUM_RE = re.compile(r"^\s*-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$")


# ----------------------------------------------------------------------------- loading

def read_bytes(path: str) -> tuple[bytes, int]:
    with open(path, "rb") as f:
        data = f.read()
    layers = 0
    while data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
        layers += 1
    return data, layers


def _scan_fix(text: str) -> tuple[str, bool, bool]:
    """Escape raw control chars inside strings, drop trailing commas before ] or }."""
    out = []
    ctrl = False
    trailing = False
    in_str = False
    esc = False
    i = 0
    n = len(text)
    pending_comma = -1  # index in out of a comma that may be trailing
    while i < n:
        c = text[i]
        if in_str:
            if esc:
                esc = False
                out.append(c)
            elif c == "\\":
                esc = True
                out.append(c)
            elif c == '"':
                in_str = False
                out.append(c)
            elif c < " ":
                ctrl = True
                out.append("\\u%04x" % ord(c))
            else:
                out.append(c)
        else:
            if c == '"':
                in_str = True
                pending_comma = -1
                out.append(c)
            elif c == ",":
                pending_comma = len(out)
                out.append(c)
            elif c in "]}":
                if pending_comma >= 0:
                    out[pending_comma] = ""
                    trailing = True
                pending_comma = -1
                out.append(c)
            elif c in " \t\r\n":
                out.append(c)
            else:
                pending_comma = -1
                out.append(c)
        i += 1
    return "".join(out), ctrl, trailing


def lenient_load(path: str) -> tuple[object, dict]:
    data, layers = read_bytes(path)
    info: dict = {"gzip_layers": layers, "lenient": []}
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    text = data.decode("utf-8", errors="surrogateescape")
    big = [0]

    def parse_int(txt: str) -> int:
        v = int(txt)
        if v > I64_MAX or v < -I64_MAX - 1:
            big[0] += 1
        return v

    kw = dict(parse_float=Decimal, parse_int=parse_int)
    info["ints_beyond_i64"] = big
    try:
        return json.loads(text, **kw), info
    except json.JSONDecodeError as e:
        first_err = str(e)
    fixed, ctrl, trailing = _scan_fix(text)
    if ctrl:
        info["lenient"].append("control_chars")
    if trailing:
        info["lenient"].append("trailing_commas")
    big[0] = 0
    try:
        return json.loads(fixed, **kw), info
    except json.JSONDecodeError as e:
        second_err = str(e)
    stripped = fixed.lstrip()
    if not stripped.startswith("["):
        raise ValueError(f"not valid JSON even leniently: {second_err} (strict: {first_err})")
    # Unterminated array: decode element by element.
    big[0] = 0
    dec = json.JSONDecoder(**kw)
    pos = len(fixed) - len(stripped) + 1
    n = len(fixed)
    ws = re.compile(r"[\s,]*")
    items = []
    closed = False
    while True:
        pos = ws.match(fixed, pos).end()
        if pos >= n:
            break
        if fixed[pos] == "]":
            closed = True
            pos += 1
            break
        try:
            obj, pos = dec.raw_decode(fixed, pos)
        except json.JSONDecodeError:
            info["dropped_partial_tail"] = True
            break
        items.append(obj)
    if closed:
        rest = fixed[pos:].strip()
        if rest:
            raise ValueError(f"trailing data after array: {rest[:40]!r}")
    info["lenient"].append("unterminated_array")
    return items, info


# ----------------------------------------------------------------------------- helpers

def to_ns(v) -> int | None:
    """Microseconds (number or numeric string) -> integer ns, exact, half away from zero."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v * 1000
    if isinstance(v, Decimal):
        d = v
    elif isinstance(v, float):  # NaN/Infinity literals only
        if not math.isfinite(v):
            return None
        d = Decimal(repr(v))
    elif isinstance(v, str):
        if not NUM_RE.match(v):
            return None
        d = Decimal(v.strip())
    else:
        return None
    if not d.is_finite():
        return None
    return int((d * 1000).quantize(Decimal(1), rounding=decimal.ROUND_HALF_UP))


def norm_id(v):
    """Normalise a pid/tid/device/stream/correlation value: ints stay ints, numeric strings
    and 'stream N' become ints, other strings stay strings."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return v
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else str(v)
    if isinstance(v, str):
        s = v.strip()
        m = re.fullmatch(r"(?:stream\s+)?(-?\d+)(?:\s*\(sync\))?", s)
        if m:
            return int(m.group(1))
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", s):
            return int(s, 16)
        return v
    if v is None:
        return None
    return json.dumps(v, default=str)


def gpu_lane(e: dict, args: dict) -> tuple[tuple, int]:
    """(device, stream) of a GPU-side event and 1 if a stream-sync tid offset was folded."""
    dev = norm_id(args["device"]) if args.get("device") is not None else norm_id(e.get("pid"))
    folded = 0
    if args.get("stream") is not None:
        stream = norm_id(args["stream"])
    else:
        stream = norm_id(e.get("tid"))
        if isinstance(stream, int) and stream >= SYNC_TID_OFFSET:
            stream -= SYNC_TID_OFFSET
            folded = 1
    return (dev, stream), folded


def lane_str(k) -> str:
    return f"{k[0]}:{k[1]}"


def jsonable(v):
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() and abs(v) < 2**63 else float(v)
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    return v


def union_len(intervals: list[tuple[int, int]]) -> int:
    total = 0
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if e < s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


# ----------------------------------------------------------------------------- chrome

def analyse_chrome(path: str) -> dict:
    doc, info = lenient_load(path)
    res: dict = {}
    if isinstance(doc, list):
        form, events, top = "array", doc, {}
    elif isinstance(doc, dict):
        form, top = "object", doc
        events = doc.get("traceEvents")
        if events is None:
            return {"error": "object without traceEvents", "form": form}
        if not isinstance(events, list):
            return {"error": "traceEvents is not an array", "form": form}
    else:
        return {"error": f"top-level JSON is a {type(doc).__name__}"}
    res["form"] = form
    res["gzip"] = info["gzip_layers"] > 0
    res["lenient"] = info["lenient"]
    if info.get("dropped_partial_tail"):
        res["dropped_partial_tail"] = True
    res["events"] = len(events)
    res["ints_beyond_i64"] = info["ints_beyond_i64"][0]

    ph_counts: Counter = Counter()
    empty = 0
    non_dict = 0
    evs = []
    for e in events:
        if not isinstance(e, dict):
            non_dict += 1
            ph_counts["<not an object>"] += 1
            continue
        if not e:
            empty += 1
        ph = e.get("ph")
        ph_counts[ph if isinstance(ph, str) else "<none>"] += 1
        evs.append(e)
    res["empty_events"] = empty
    if non_dict:
        res["non_object_events"] = non_dict
    res["ph_counts"] = dict(ph_counts)

    kineto = isinstance(top, dict) and ("schemaVersion" in top or "deviceProperties" in top)
    for e in evs:
        c = e.get("cat")
        if isinstance(c, str) and c.lower() in KINETO_CATS:
            kineto = True
            break
    res["kineto"] = kineto

    # -- pass 1: X events, GPU activities, runtime correlations
    x_valid = []  # (e, ts_ns, dur_ns, cat)
    x_invalid = 0
    invalid_ts_any = 0
    string_pids: set = set()
    string_tids: set = set()
    big_tids = 0
    ts_min = ts_max = None
    runtime_corr: set = set()
    rounded = sync_offset = sync_thread_names = 0
    for e in evs:
        if not e:
            continue
        ph = e.get("ph")
        phase = ph[0] if isinstance(ph, str) and ph else ""
        pid, tid = e.get("pid"), e.get("tid")
        if isinstance(pid, str):
            string_pids.add(pid)
        if isinstance(tid, str):
            string_tids.add(tid)
        ntid = norm_id(tid)
        if isinstance(ntid, int) and ntid >= SYNC_TID_OFFSET:
            big_tids += 1
        cat = e.get("cat")
        cat_s = cat if isinstance(cat, str) else ""
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if cat_s.lower() in RUNTIME_CATS and "correlation" in args:
            runtime_corr.add(norm_id(args["correlation"]))
        for k in ("ts", "dur"):
            v = e.get(k)
            if isinstance(v, str) and NUM_RE.match(v):
                v = Decimal(v.strip())
            if isinstance(v, Decimal) and v.is_finite() and v.normalize().as_tuple().exponent < -3:
                rounded += 1
        if cat_s == "cuda_sync" and isinstance(ntid, int) and ntid >= SYNC_TID_OFFSET:
            sync_offset += 1
        if phase == "M" and e.get("name") == "thread_name":
            tn = (e.get("args") or {}).get("name") if isinstance(e.get("args"), dict) else None
            if isinstance(tn, str) and "(sync)" in tn:
                sync_thread_names += 1
        ts = to_ns(e.get("ts")) if "ts" in e else None
        if phase != "M":
            if "ts" in e and ts is None:
                invalid_ts_any += 1
            if ts is not None:
                ts_min = ts if ts_min is None or ts < ts_min else ts_min
                end = ts
                if phase == "X":
                    d = to_ns(e.get("dur"))
                    if d is not None and d > 0:
                        end = ts + d
                ts_max = end if ts_max is None or end > ts_max else ts_max
        if phase == "X":
            dur = to_ns(e.get("dur")) if "dur" in e else None
            if ts is None or dur is None:
                x_invalid += 1
                continue
            x_valid.append((e, ts, dur, cat_s, args))
    res["x_valid"] = len(x_valid)
    res["x_invalid"] = x_invalid
    res["events_with_invalid_ts"] = invalid_ts_any
    if ts_min is not None:
        res["ts_min_ns"] = ts_min
        res["ts_max_end_ns"] = ts_max
    res["string_pids"] = sorted(string_pids)[:20]
    res["string_tid_count"] = len(string_tids)
    res["tids_ge_1000000"] = big_tids
    res["sync_offset_events"] = sync_offset
    res["sync_thread_names"] = sync_thread_names
    res["time_values_rounded"] = rounded

    x_by_cat: dict = defaultdict(lambda: [0, 0])
    gpu_count = gpu_ns = 0
    gpu_by_cat: dict = defaultdict(lambda: [0, 0])
    lanes: dict = defaultdict(list)
    lane_pidtid: set = set()
    gpu_zero = gpu_neg = 0
    dev_pid_mismatch = 0
    linked = [0, 0]
    unlinked = [0, 0]
    no_corr = 0
    folded_sync = 0
    neg_x = 0
    zero_x = 0
    sync_lanes: set = set()
    stream_arg_non_gpu = 0
    for e, ts, dur, cat, args in x_valid:
        xc = x_by_cat[cat]
        xc[0] += 1
        xc[1] += dur
        if dur < 0:
            neg_x += 1
        elif dur == 0:
            zero_x += 1
        if cat.lower() not in GPU_CATS:
            if cat == "cuda_sync":
                sync_lanes.add(gpu_lane(e, args)[0])
            elif "stream" in args:
                stream_arg_non_gpu += 1
            continue
        gpu_count += 1
        gpu_ns += dur
        g = gpu_by_cat[cat]
        g[0] += 1
        g[1] += dur
        if dur == 0:
            gpu_zero += 1
        elif dur < 0:
            gpu_neg += 1
        (dev, stream), folded = gpu_lane(e, args)
        folded_sync += folded
        if args.get("device") is not None and norm_id(args["device"]) != norm_id(e.get("pid")):
            dev_pid_mismatch += 1
        lanes[(dev, stream)].append((ts, ts + dur))
        lane_pidtid.add((norm_id(e.get("pid")), norm_id(e.get("tid"))))
        if "correlation" in args and args["correlation"] is not None:
            c = norm_id(args["correlation"])
            if c in runtime_corr:
                linked[0] += 1
                linked[1] += dur
            else:
                unlinked[0] += 1
                unlinked[1] += dur
        else:
            no_corr += 1
            unlinked[0] += 1
            unlinked[1] += dur

    overlapping = 0
    busy = 0
    for key, ivs in lanes.items():
        ivs.sort(key=lambda p: (p[0], p[1]))
        latest = None
        for s, en in ivs:
            if latest is not None and s < latest:
                overlapping += 1
            latest = en if latest is None or en > latest else latest
        busy += union_len(ivs)

    res["gpu"] = {
        "count": gpu_count,
        "ns": gpu_ns,
        "busy_ns": busy,
        "by_cat": {k: {"count": v[0], "ns": v[1]} for k, v in gpu_by_cat.items()},
        "zero_dur": gpu_zero,
        "negative_dur": gpu_neg,
        "overlapping": overlapping,
        "device_ne_pid": dev_pid_mismatch,
        "sync_tid_folded": folded_sync,
    }
    res["gpu_lanes"] = len(lanes)
    res["gpu_lane_list"] = sorted(lane_str(k) for k in lanes)
    res["sync_lane_list"] = sorted(lane_str(k) for k in sync_lanes)
    res["gpu_lanes_with_sync"] = len(set(lanes) | sync_lanes)
    res["non_gpu_x_with_stream_arg"] = stream_arg_non_gpu

    cpu = [0, 0]
    for e, ts, dur, cat, args in x_valid:
        cl = cat.lower()
        if cl in GPU_CATS:
            continue
        if kineto:
            ok = cl in CPU_CATS
        else:
            ok = (norm_id(e.get("pid")), norm_id(e.get("tid"))) not in lane_pidtid
        if ok:
            cpu[0] += 1
            cpu[1] += dur
    res["cpu"] = {"count": cpu[0], "ns": cpu[1]}
    res["x_by_cat"] = {k: {"count": v[0], "ns": v[1]} for k, v in x_by_cat.items()}
    per_thread_x: dict = defaultdict(list)
    for e, ts, dur, cat, args in x_valid:
        if dur >= 0:
            per_thread_x[(norm_id(e.get("pid")), norm_id(e.get("tid")))].append((ts, -dur))
    partial = 0
    for lst in per_thread_x.values():
        lst.sort()
        ends: list = []
        for ts, ndur in lst:
            end = ts - ndur
            while ends and ends[-1] <= ts:
                ends.pop()
            if ends and end > ends[-1]:
                partial += 1
                continue
            ends.append(end)
    res["x_partial_overlaps"] = partial
    res["x_zero_dur"] = zero_x
    res["x_negative_dur"] = neg_x
    res["launch"] = {
        "runtime_correlations": len(runtime_corr),
        "linked": {"count": linked[0], "ns": linked[1]},
        "unlinked": {"count": unlinked[0], "ns": unlinked[1]},
        "gpu_without_correlation": no_corr,
    }

    di = top.get("distributedInfo") if isinstance(top, dict) else None
    if isinstance(di, dict):
        if "rank" in di:
            res["rank"] = jsonable(di["rank"])
        if "world_size" in di:
            res["world_size"] = jsonable(di["world_size"])
    if isinstance(top, dict) and "baseTimeNanoseconds" in top:
        res["base_time_ns"] = jsonable(top["baseTimeNanoseconds"])
    if isinstance(top, dict) and "displayTimeUnit" in top:
        res["display_time_unit"] = jsonable(top["displayTimeUnit"])

    # -- B/E matching
    be_events = []
    for idx, e in enumerate(evs):
        ph = e.get("ph")
        if isinstance(ph, str) and ph[:1] in ("B", "E"):
            be_events.append((idx, e))
    if be_events:
        per_thread: dict = defaultdict(list)
        bad_ts = 0
        for idx, e in be_events:
            ts = to_ns(e.get("ts"))
            if ts is None:
                bad_ts += 1
                continue
            per_thread[(norm_id(e.get("pid")), norm_id(e.get("tid")))].append((ts, idx, e))
        pairs = unmatched_e = unmatched_b = mismatch = 0
        for key, lst in per_thread.items():
            lst.sort(key=lambda t: (t[0], t[1]))
            stack = []
            for ts, idx, e in lst:
                if e["ph"][0] == "B":
                    stack.append(e)
                else:
                    if stack:
                        b = stack.pop()
                        pairs += 1
                        en = e.get("name")
                        if isinstance(en, str) and en and en != b.get("name"):
                            mismatch += 1
                    else:
                        unmatched_e += 1
            unmatched_b += len(stack)
        res["be"] = {
            "b": sum(1 for _, e in be_events if e["ph"][0] == "B"),
            "e": sum(1 for _, e in be_events if e["ph"][0] == "E"),
            "pairs": pairs,
            "unmatched_b": unmatched_b,
            "unmatched_e": unmatched_e,
            "name_mismatch": mismatch,
            "invalid_ts": bad_ts,
            "threads": len(per_thread),
        }
    return res


# ----------------------------------------------------------------------------- hatchet

def analyse_hatchet_literal(path: str) -> dict:
    data, _ = read_bytes(path)
    doc = json.loads(data.decode("utf-8"), parse_float=Decimal)
    if not isinstance(doc, list):
        return {"error": "top level is not a list"}
    nodes = 0
    nids: set = set()
    keysets: set = set()
    keys_union: set = set()
    times: list = []
    by_nid: dict = {}
    max_depth = 0
    stack = [(r, 1) for r in reversed(doc)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        max_depth = max(max_depth, depth)
        m = node.get("metrics", {}) or {}
        keysets.add(tuple(sorted(m)))
        keys_union.update(m)
        if "_hatchet_nid" in m:
            nids.add(jsonable(m["_hatchet_nid"]))
            by_nid[jsonable(m["_hatchet_nid"])] = m.get("time")
        if "time" in m:
            times.append(m["time"])
        for ch in reversed(node.get("children", []) or []):
            stack.append((ch, depth + 1))
    res = {
        "roots": len(doc),
        "nodes": nodes,
        "max_depth": max_depth,
        "metric_keys": sorted(keys_union),
        "metric_keys_consistent": len(keysets) == 1,
        "root_metrics": [jsonable(r.get("metrics", {})) for r in doc],
        "root_names": [(r.get("frame") or {}).get("name", r.get("name")) for r in doc],
    }
    if nids:
        res["unique_nids"] = len(nids)
    if times:
        exact = sum((t if isinstance(t, Decimal) else Decimal(t)) for t in times)
        res["time_sum"] = math.fsum(float(t) for t in times)
        res["time_sum_exact"] = str(exact)
    if by_nid:
        vals = [t for t in by_nid.values() if t is not None]
        res["time_sum_unique_nids"] = math.fsum(float(t) for t in vals)
    return res


# ----------------------------------------------------------------------------- folded

def decode_text(data: bytes) -> tuple[str, str]:
    if data[:2] == b"\xff\xfe":
        return data[2:].decode("utf-16-le"), "utf-16-le"
    if data[:2] == b"\xfe\xff":
        return data[2:].decode("utf-16-be"), "utf-16-be"
    if data[:3] == b"\xef\xbb\xbf":
        return data[3:].decode("utf-8", errors="replace"), "utf-8-bom"
    return data.decode("utf-8", errors="replace"), "utf-8"


COUNT_INT = re.compile(r"^[+-]?\d+$")
COUNT_FLOAT = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$")


def analyse_folded(path: str) -> dict:
    data, layers = read_bytes(path)
    text, enc = decode_text(data)
    crlf = "\r\n" in text
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    valid = invalid = skipped = float_lines = 0
    total_int = 0
    total_dec = Decimal(0)
    paths: set = set()
    stacks: set = set()
    max_depth = 0
    invalid_examples = []
    for ln in lines:
        s = ln.strip()
        if not s or s.startswith("#"):
            skipped += 1
            continue
        parts = s.rsplit(None, 1)
        if len(parts) != 2 or not COUNT_FLOAT.match(parts[1]):
            invalid += 1
            if len(invalid_examples) < 5:
                invalid_examples.append(s[:80])
            continue
        stack, cnt = parts[0].rstrip(), parts[1]
        valid += 1
        if COUNT_INT.match(cnt):
            total_int += int(cnt)
        else:
            float_lines += 1
            total_dec += Decimal(cnt)
        frames = stack.split(";")
        max_depth = max(max_depth, len(frames))
        stacks.add(stack)
        for i in range(1, len(frames) + 1):
            paths.add(tuple(frames[:i]))
    res = {
        "encoding": enc,
        "crlf": crlf,
        "lines": len(lines),
        "valid": valid,
        "invalid": invalid,
        "skipped": skipped,
        "float_count_lines": float_lines,
        "distinct_paths": len(paths),
        "distinct_stacks": len(stacks),
        "max_depth": max_depth,
    }
    if float_lines:
        tot = total_dec + total_int
        res["samples"] = float(tot)
        res["samples_exact"] = str(tot)
    else:
        res["samples"] = total_int
    if invalid_examples:
        res["invalid_examples"] = invalid_examples
    return res


# ----------------------------------------------------------------------------- driver

def manifest_rows(corpus: str) -> list[tuple[str, str]]:
    rows = []
    with open(os.path.join(corpus, "MANIFEST.md"), encoding="utf-8") as f:
        for line in f:
            if not line.startswith("| `"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 2:
                continue
            rows.append((cells[0].strip("`"), cells[1]))
    return rows


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    default_corpus = os.path.normpath(os.path.join(root, "..", "shared", "corpus"))
    if not os.path.isdir(default_corpus):
        default_corpus = "/work/shared/corpus"
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=default_corpus)
    ap.add_argument("--out", default=os.path.join(root, "testdata", "corpus_totals.json"))
    a = ap.parse_args()
    corpus = a.corpus

    rows = manifest_rows(corpus)
    chrome = {p for p, fmt in rows if "Chrome trace JSON" in fmt}
    for pat in ("perfetto/inline_json/parser/**/*.json", "perfetto/test/**/*.json"):
        for p in glob.glob(os.path.join(corpus, pat), recursive=True):
            chrome.add(os.path.relpath(p, corpus))
    chrome = {p for p in chrome if not p.endswith(".expected.txt")}
    folded = {p for p, fmt in rows if fmt.startswith("folded stacks")}
    literal = {os.path.relpath(p, corpus)
               for p in glob.glob(os.path.join(corpus, "hatchet-exports", "*.literal.json"))}

    out = {"generated_by": "scripts/oracle_totals.py", "chrome": {}, "hatchet_literal": {},
           "folded": {}}
    t0 = time.time()
    for section, paths, fn in (("chrome", chrome, analyse_chrome),
                               ("hatchet_literal", literal, analyse_hatchet_literal),
                               ("folded", folded, analyse_folded)):
        for p in sorted(paths):
            full = os.path.join(corpus, p)
            try:
                out[section][p] = fn(full)
            except Exception as ex:  # record, never crash
                out[section][p] = {"error": f"{type(ex).__name__}: {ex}"}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(out, f, sort_keys=True, indent=1, ensure_ascii=False)
        f.write("\n")
    n = sum(len(out[s]) for s in ("chrome", "hatchet_literal", "folded"))
    errs = sum(1 for s in ("chrome", "hatchet_literal", "folded")
               for v in out[s].values() if "error" in v)
    print(f"wrote {a.out}: {n} files ({errs} errors) in {time.time() - t0:.1f}s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
