#!/usr/bin/env python3
"""Writes a Perfetto protobuf trace with the perfetto package's StreamingTraceProtoBuilder
(pip install perfetto), laid out as rocprofv3's pftrace writer lays out its tracks
(rocprofiler-sdk source/lib/output/generatePerfetto.cpp): HIP API slices on a thread
track with a `corr_id` annotation and a process-scoped flow, kernel dispatches on
`COMPUTE AGENT [n] QUEUE [q] (GPU)` tracks and copies on `COPY to AGENT [n] THREAD [t]
(GPU)` tracks (categories kernel_dispatch / memory_copy), a counter track. Beside it
what other SDK writers use: interned names and categories with incremental state, an
incremental sequence clock in microseconds, nested CPU slices, an async (process-
scoped) track, instants, and packets grove does not read (ftrace, process_tree).

    python3 gen_synthetic.py OUT.pftrace [ITERATIONS]

testdata/perfetto/synthetic_rocprof.pftrace is `gen_synthetic.py synthetic_rocprof.pftrace 60`;
the performance figure in docs/performance.md uses ITERATIONS=400000 (~200 MB, not kept).
"""
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder

PID, TID, TID2 = 4242, 4242, 4250
SEQ, GPU_SEQ = 1, 2
CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
BEGIN, END = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END
INSTANT, COUNTER = pb.TrackEvent.TYPE_INSTANT, pb.TrackEvent.TYPE_COUNTER

PROC, THREAD, THREAD2, ASYNC, CNT = 1, 2, 3, 4, 5
QUEUES = {10: "COMPUTE AGENT [1] QUEUE [0] (GPU)", 11: "COMPUTE AGENT [2] QUEUE [0] (GPU)"}
COPY = 12


def main():
    out = sys.argv[1]
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    with open(out, "wb") as f:
        b = StreamingTraceProtoBuilder(f)

        def packet(seq):
            p = b.create_packet()
            p.trusted_packet_sequence_id = seq
            return p

        def track(uuid, parent=None, name=None, process=None, thread=None, counter=False):
            p = packet(SEQ)
            d = p.track_descriptor
            d.uuid = uuid
            if parent:
                d.parent_uuid = parent
            if name:
                d.name = name
            if process:
                d.process.pid = process[0]
                d.process.process_name = process[1]
            if thread:
                d.thread.pid, d.thread.tid, d.thread.thread_name = thread
            if counter:
                d.counter.unit_name = "bytes"
            b.write_packet(p)

        track(PROC, process=(PID, "vector_add"))
        track(THREAD, PROC, thread=(PID, TID, "vector_add"))
        track(THREAD2, PROC, thread=(PID, TID2, "worker"))
        track(ASYNC, PROC, name="requests")
        track(CNT, PROC, name="device memory", counter=True)
        for u, n in QUEUES.items():
            track(u, name=n)
        track(COPY, name="COPY to AGENT [1] THREAD [0] (GPU)")

        # The CPU sequence: state cleared, names interned, its own clock 64 in µs.
        p = packet(SEQ)
        p.sequence_flags = CLEARED
        p.trace_packet_defaults.timestamp_clock_id = 64
        p.trace_packet_defaults.track_event_defaults.track_uuid = THREAD
        c = p.clock_snapshot.clocks.add()
        c.clock_id, c.timestamp = 6, 5_000_000_000
        c = p.clock_snapshot.clocks.add()
        c.clock_id, c.timestamp, c.is_incremental, c.unit_multiplier_ns = 64, 1000, True, 1000
        names = ["main", "step", "hipMalloc", "hipLaunchKernel", "hipMemcpy", "tick"]
        for i, n in enumerate(names, 1):
            e = p.interned_data.event_names.add()
            e.iid, e.name = i, n
        for i, n in enumerate(["user", "hip_api"], 1):
            e = p.interned_data.event_categories.add()
            e.iid, e.name = i, n
        a = p.interned_data.debug_annotation_names.add()
        a.iid, a.name = 1, "corr_id"
        b.write_packet(p)

        def ev(delta, kind, name=None, cat=None, track=None, corr=None, flow=None, seq=SEQ):
            p = packet(seq)
            p.timestamp = delta
            p.sequence_flags = NEEDS
            e = p.track_event
            e.type = kind
            if name:
                e.name_iid = name
            if cat:
                e.category_iids.append(cat)
            if track:
                e.track_uuid = track
            if corr is not None:
                d = e.debug_annotations.add()
                d.name_iid, d.int_value = 1, corr
            if flow is not None:
                e.flow_ids.append(flow)
            b.write_packet(p)

        # The GPU sequence: absolute BOOTTIME nanoseconds, names inline.
        gpu_t = [5_000_000_000 + 1_000_000]

        def gpu(track_uuid, name, cat, start, dur, corr):
            for kind, t in ((BEGIN, start), (END, start + dur)):
                p = packet(GPU_SEQ)
                p.timestamp = t
                e = p.track_event
                e.type, e.track_uuid = kind, track_uuid
                if kind == BEGIN:
                    e.name = name
                    e.categories.append(cat)
                    for k, v in (("corr_id", corr), ("grid_size", 4096), ("workgroup_size", 256)):
                        d = e.debug_annotations.add()
                        d.name, d.int_value = k, v
                    e.flow_ids.append(corr)
                b.write_packet(p)

        ev(0, BEGIN, 1, 1)  # main
        corr = 0
        for i in range(iters):
            ev(10, BEGIN, 2, 1)  # step
            corr += 1
            ev(5, BEGIN, 3, 2, corr=corr, flow=corr)  # hipMalloc
            ev(20, END)
            corr += 1
            ev(5, BEGIN, 4, 2, corr=corr, flow=corr)  # hipLaunchKernel
            ev(7, END)
            q = 10 + i % 2
            gpu(q, "vector_add_kernel(float*, float const*, int)" if q == 10 else "reduce_kernel",
                "kernel_dispatch", 5_000_000_000 + 1_000_000 + i * 100_000 + 40_000, 30_000 + i, corr)
            corr += 1
            ev(3, BEGIN, 5, 2, corr=corr, flow=corr)  # hipMemcpy
            ev(40, END)
            gpu(COPY, "MEMORY_COPY_HOST_TO_DEVICE", "memory_copy",
                5_000_000_000 + 1_000_000 + i * 100_000 + 80_000, 10_000, corr)
            ev(1, INSTANT, 6, 1)  # tick
            p = packet(SEQ)
            p.timestamp = 1
            p.sequence_flags = NEEDS
            p.track_event.type = COUNTER
            p.track_event.track_uuid = CNT
            p.track_event.counter_value = 1024 * (i % 7)
            b.write_packet(p)
            ev(9, END)  # step
            if i % 10 == 0:
                ev(2, BEGIN, 2, 1, track=ASYNC)
                ev(50, END, track=ASYNC)
                ev(1, BEGIN, 2, 1, track=THREAD2)
                ev(3, END, track=THREAD2)
                # Kinds grove does not read: counted, never guessed at.
                p = packet(3)
                p.timestamp = 5_000_000_000
                p.ftrace_events.cpu = 0
                b.write_packet(p)
        ev(10, END)  # main
        p = packet(3)
        p.process_tree.processes.add().pid = PID
        b.write_packet(p)


if __name__ == "__main__":
    main()
