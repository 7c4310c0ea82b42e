#!/usr/bin/env python3
"""Writes a large Perfetto protobuf trace for the loading-speed figure of docs/performance.md
(issue 29: 200 MB at >= 200 MB/s). The protobuf is encoded by hand (the perfetto package's
builder makes ~10M packets too slowly), laid out as the Perfetto SDK writes TrackEvents:

- one packet sequence per thread (8 threads in 2 processes), its state cleared in its first
  packet, which interns 300 event names and 6 categories, sets the thread's track as the
  sequence's default track and, as the SDK does, an incremental sequence clock (64, ns,
  based on BOOTTIME by a clock snapshot); every event packet then says
  SEQ_NEEDS_INCREMENTAL_STATE, names its event and category by iid and gives its time as
  a delta;
- slices nested 1-5 deep (begin/end pairs), a few instants, a few debug annotations;
- two counter tracks (one double, one integer) sampled from the threads;
- two GPU-like tracks (rocprofv3's `COMPUTE AGENT [n] QUEUE [0] (GPU)` with category
  `kernel_dispatch`) on a sequence of their own, names inline, a `corr_id` annotation.

    python3 scripts/gen_perfetto_bench.py OUT.pftrace [MEGABYTES]   # default 200

Deterministic (a fixed LCG). One block of ~4 MB is generated (every slice in it ends in it,
times are deltas) and written again and again: the trace goes on in time. Check it independently with the perfetto package:
`trace_processor` or `perfetto_trace_pb2.Trace.FromString`.
"""
import struct
import sys


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wt):
    return varint(field << 3 | wt)


def vf(field, v):
    return key(field, 0) + varint(v)


def lf(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def packet(body):
    return lf(1, body)


CLEARED, NEEDS = 1, 2
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4
T0 = 3_600_000_000_000  # an hour of uptime, in ns
PROCS = [(1000, "trainer", [1000, 1001, 1002, 1003]), (2000, "loader", [2000, 2001, 2002, 2003])]
NAMES = 300
CATS = ["main", "io", "compute", "sync", "net", "alloc"]
CNT_DOUBLE, CNT_INT = 900, 901
GPU_TRACKS = {910: "COMPUTE AGENT [1] QUEUE [0] (GPU)", 911: "COMPUTE AGENT [2] QUEUE [0] (GPU)"}
GPU_SEQ = 99
CLOCK = 64


class Lcg:
    def __init__(self, s):
        self.s = s

    def next(self, n):
        self.s = (self.s * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        return (self.s >> 33) % n


def descriptors():
    out = bytearray()
    for pid, pname, tids in PROCS:
        out += packet(lf(60, vf(1, pid) + lf(3, vf(1, pid) + lf(6, pname))) + vf(10, 1))
        for tid in tids:
            t = lf(4, vf(1, pid) + vf(2, tid) + lf(5, f"{pname}-{tid - pid}"))
            out += packet(lf(60, vf(1, tid) + vf(5, pid) + t) + vf(10, 1))
    out += packet(lf(60, vf(1, CNT_DOUBLE) + lf(2, "loss") + lf(8, b"")) + vf(10, 1))
    out += packet(lf(60, vf(1, CNT_INT) + lf(2, "queued bytes") + lf(8, vf(4, 1))) + vf(10, 1))
    for uuid, name in GPU_TRACKS.items():
        out += packet(lf(60, vf(1, uuid) + lf(2, name)) + vf(10, 1))
    return bytes(out)


def first_packet(seq, tid):
    if tid is None:  # the GPU sequence: its clock only
        defaults = lf(59, vf(58, CLOCK))
        snap = lf(6, lf(1, vf(1, 6) + vf(2, T0)) + lf(1, vf(1, CLOCK) + vf(2, T0) + vf(3, 1) + vf(4, 1)))
        return packet(vf(8, T0) + vf(58, 6) + vf(10, seq) + vf(13, CLEARED) + defaults + snap)
    interned = b"".join(lf(2, vf(1, i + 1) + lf(2, f"fn_{seq}_{i}::run(int, float*)")) for i in range(NAMES))
    interned += b"".join(lf(1, vf(1, i + 1) + lf(2, c)) for i, c in enumerate(CATS))
    interned += lf(3, vf(1, 1) + lf(2, "bytes"))
    defaults = lf(59, lf(11, vf(11, tid)) + vf(58, CLOCK))
    snap = lf(6, lf(1, vf(1, 6) + vf(2, T0)) + lf(1, vf(1, CLOCK) + vf(2, T0) + vf(3, 1) + vf(4, 1)))
    return packet(vf(8, T0) + vf(58, 6) + vf(10, seq) + vf(13, CLEARED) + lf(12, interned) + defaults + snap)


def event(seq, delta, body):
    return packet(vf(8, delta) + vf(10, seq) + vf(13, NEEDS) + lf(11, body))


def block(rng, threads, seqs, clock, last, gpu_clock):
    """About 4 MB of events; every slice begun in it ends in it. `clock` holds each thread's
    time and `last` the time of its sequence's last packet (timestamps are deltas)."""
    buf = bytearray()
    end_body = vf(9, END)
    corr = 0

    def ev(tid, t, body):
        nonlocal buf
        buf += event(seqs[tid], t - last[tid], body)
        last[tid] = t

    while len(buf) < 4_000_000:
        tid = threads[rng.next(len(threads))][1]
        t = clock[tid]
        depth = 1 + rng.next(5)
        for d in range(depth):
            t += 1 + rng.next(2000)
            body = vf(9, BEGIN) + vf(3, 1 + rng.next(len(CATS))) + vf(10, 1 + rng.next(NAMES))
            if rng.next(4) == 0:
                body += lf(4, vf(1, 1) + vf(4, rng.next(1 << 20)))
            ev(tid, t, body)
        if rng.next(4) == 0:
            t += 1 + rng.next(100)
            ev(tid, t, vf(9, INSTANT) + vf(3, 1) + vf(10, 1 + rng.next(NAMES)))
        if rng.next(8) == 0:
            ev(tid, t, vf(9, COUNTER) + vf(11, CNT_INT) + vf(30, rng.next(1 << 24)))
            v = rng.next(1 << 20) / 1024.0
            ev(tid, t, vf(9, COUNTER) + vf(11, CNT_DOUBLE) + key(44, 1) + struct.pack("<d", v))
        for _ in range(depth):
            t += 1 + rng.next(3000)
            ev(tid, t, end_body)
        clock[tid] = t + rng.next(500)
        if rng.next(16) == 0:
            corr += 1
            uuid = 910 + rng.next(2)
            g = max(gpu_clock[uuid], last[GPU_SEQ], t) + rng.next(10_000)
            e = g + 1 + rng.next(50_000)
            gpu_clock[uuid] = e
            body = (vf(9, BEGIN) + vf(11, uuid) + lf(22, "kernel_dispatch")
                    + lf(23, f"gemm_kernel_{rng.next(40)}") + lf(4, lf(10, "corr_id") + vf(4, corr)))
            buf += packet(vf(8, g - last[GPU_SEQ]) + vf(10, GPU_SEQ) + vf(13, NEEDS) + lf(11, body))
            buf += packet(vf(8, e - g) + vf(10, GPU_SEQ) + vf(13, NEEDS) + lf(11, vf(9, END) + vf(11, uuid)))
            last[GPU_SEQ] = e
    return bytes(buf)


def main():
    out = sys.argv[1]
    target = int(float(sys.argv[2]) * 1_000_000) if len(sys.argv) > 2 else 200_000_000
    rng = Lcg(29)
    threads = [(pid, tid) for pid, _, tids in PROCS for tid in tids]
    seqs = {tid: i + 2 for i, (_, tid) in enumerate(threads)}
    clock = {tid: T0 for _, tid in threads}
    last = dict(clock)
    last[GPU_SEQ] = T0
    gpu_clock = {u: T0 for u in GPU_TRACKS}
    body = block(rng, threads, seqs, clock, last, gpu_clock)
    span = max(last.values()) - T0
    with open(out, "wb") as f:
        head = descriptors() + b"".join(first_packet(seqs[t], t) for _, t in threads)
        head += first_packet(GPU_SEQ, None)
        f.write(head)
        written = len(head)
        while written < target:
            f.write(body)
            written += len(body)
    print(f"{out}: {written} bytes, block span {span} ns")
if __name__ == "__main__":
    main()
