#!/usr/bin/python3
"""Writes testdata/otf2-async/: a small OTF2 archive with asynchronous metrics, made
with the OTF2 library's own Python bindings (Debian: python3-otf2; run with the
system Python, /usr/bin/python3, which has them):

    /usr/bin/python3 scripts/otf2_async_gen.py testdata/otf2-async

Two MPI ranks of one thread each; on each, `main` around four iterations of
`compute` (with a nested `kernel`) and `io`. Every thread records, outside the
Enter/Leave records (asynchronous metric classes, recorder kind CPU):

- PAPI_TOT_INS: ACCUMULATED_START, uint64 (a counter since the start of measurement),
  one record every 37 us, the first before `main` is entered;
- mem_usage: ABSOLUTE_POINT, uint64 bytes, one record every 50 us;
- io_bytes: ACCUMULATED_LAST, uint64 bytes (each value is what happened since the
  previous record), inside every `io`;
- node_power: ABSOLUTE_POINT, double watts, a MetricInstance of an ABSTRACT class
  that rank 0's thread records for the system tree node (a scope that is not the
  recording location, so not a call path of it).

Deterministic: the same events and definitions each run (a fixed xorshift; the
library itself stamps a random trace id in the anchor and the writing date in the
clock properties, which grove does not read).
"""
import os
import shutil
import sys

import otf2
from otf2.enums import MetricMode, MetricOccurrence, RecorderKind, Type

out = sys.argv[1] if len(sys.argv) > 1 else "testdata/otf2-async"
if os.path.exists(out):
    shutil.rmtree(out)

rng = 88172645463325252


def nxt():
    global rng
    rng ^= (rng << 13) & 0xFFFFFFFFFFFFFFFF
    rng ^= rng >> 7
    rng ^= (rng << 17) & 0xFFFFFFFFFFFFFFFF
    return rng


US = 1000  # ns per us; the timer counts ns
with otf2.writer.open(out, timer_resolution=1_000_000_000) as trace:
    d = trace.definitions
    main = d.region("main")
    compute = d.region("compute")
    kernel = d.region("kernel")
    io = d.region("io")
    node = d.system_tree_node("node0")
    ins_m = d.metric_member("PAPI_TOT_INS", "Instructions completed",
                            metric_mode=MetricMode.ACCUMULATED_START,
                            value_type=Type.UINT64, unit="#")
    mem_m = d.metric_member("mem_usage", "Resident memory",
                            metric_mode=MetricMode.ABSOLUTE_POINT,
                            value_type=Type.UINT64, unit="B")
    io_m = d.metric_member("io_bytes", "Bytes written since the last record",
                           metric_mode=MetricMode.ACCUMULATED_LAST,
                           value_type=Type.UINT64, unit="B")
    pw_m = d.metric_member("node_power", "Node power", unit="W",
                           metric_mode=MetricMode.ABSOLUTE_POINT, value_type=Type.DOUBLE)
    ins = d.metric_class([ins_m], MetricOccurrence.ASYNCHRONOUS, RecorderKind.CPU)
    mem = d.metric_class([mem_m], MetricOccurrence.ASYNCHRONOUS, RecorderKind.CPU)
    iob = d.metric_class([io_m], MetricOccurrence.ASYNCHRONOUS, RecorderKind.CPU)
    pw_class = d.metric_class([pw_m], MetricOccurrence.ASYNCHRONOUS, RecorderKind.ABSTRACT)
    writers = []
    for r in range(2):
        g = d.location_group(f"MPI Rank {r}", system_tree_parent=node)
        writers.append(trace.event_writer("Master thread", group=g))
    power = d.metric_instance(pw_class, writers[0]._location, scope=node)

    for r, w in enumerate(writers):
        # Region boundaries: (time, enter?, region).
        ev = [(0, True, main)]
        t = 10 * US
        for _ in range(4):
            ev.append((t, True, compute))
            ev.append((t + 40 * US, True, kernel))
            ev.append((t + 140 * US, False, kernel))
            ev.append((t + 200 * US, False, compute))
            ev.append((t + 210 * US, True, io))
            ev.append((t + 260 * US, False, io))
            t += 270 * US
        end = t + 5 * US
        ev.append((end, False, main))
        # Metric samples: (time, order, metric, value). Order 0 puts a sample before
        # a boundary at the same time (as Score-P writes them).
        samples = []
        ins_total = 0
        for k in range(0, end + 1, 37 * US):
            ins_total += 1000 + nxt() % 100000
            samples.append((k, 0, ins, ins_total))
        for k in range(3 * US, end, 50 * US):
            samples.append((k, 0, mem, (1 << 20) * (4 + r) + (nxt() % 4096) * 64))
        for (bt, enter, reg) in ev:
            if reg is io and enter:
                for j in range(1, 4):
                    samples.append((bt + j * 12 * US, 0, iob, 4096 * (1 + nxt() % 8)))
        if r == 0:
            for k in range(20 * US, end, 100 * US):
                samples.append((k, 0, power, 95.0 + (nxt() % 1000) / 100.0))
        recs = [(bt, 1, "b", (enter, reg)) for (bt, enter, reg) in ev]
        recs += [(st, o, "m", (m, v)) for (st, o, m, v) in samples]
        recs.sort(key=lambda x: (x[0], x[1]))
        for (tt, _, kind, x) in recs:
            if kind == "b":
                (w.enter if x[0] else w.leave)(tt, x[1])
            else:
                w.metric(tt, x[0], x[1])
