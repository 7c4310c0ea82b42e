#!/usr/bin/env python3
"""An independent decode of a Perfetto protobuf trace with the perfetto package's own
protos (pip install perfetto): slice count and summed duration per track, the figures
tests/perfetto.rs compares grove's with.

    python3 golden.py TRACE[.gz] > TRACE.golden.json

Rules, as trace_processor applies them: a packet's timestamp is in its
timestamp_clock_id, else its sequence's TracePacketDefaults clock, else the trace clock;
an incremental clock adds each packet's value to the sequence's last one, starting from
the value its latest ClockSnapshot gave, times the clock's unit_multiplier_ns; it is then
brought to the trace clock (primary_trace_clock, else BOOTTIME) through the latest
snapshot, at or before the value, that holds both clocks (a slice may begin in one
clock and end in another: Chrome's begin in its sequence's µs clock, some ends in
MONOTONIC ns). Only direct links are followed, which is all these files need.
Incremental state is cleared by SEQ_INCREMENTAL_STATE_CLEARED (or
incremental_state_cleared) and lost after previous_packet_dropped, until cleared; packets
with SEQ_NEEDS_INCREMENTAL_STATE are skipped while it is lost. A slice end closes the
innermost open slice of its track (the event's track_uuid, else the sequence's default
track). Instants are slices of duration 0; legacy events (type unset, a JSON phase)
count as their phase says: I/i/n/R instants, X complete, B/E begin/end. Slices still open at the end are counted
apart ("unclosed").

Output: {"tracks": {KEY: {"slices": N, "dur_ns": D, "unclosed": U}}, "total": {...}}
where KEY is "PID/TID" for a thread track and "track:NAME" for any other track.
"""
import gzip
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def packets(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    t = pb.Trace()
    t.ParseFromString(data)
    for p in t.packet:
        if p.HasField("compressed_packets"):
            import zlib

            inner = pb.Trace()
            inner.ParseFromString(zlib.decompress(p.compressed_packets))
            yield from inner.packet
        else:
            yield p


def main():
    descs = {}
    seqs = {}
    units = {}  # (seq, clock) -> (incremental, multiplier)
    links = {}  # (seq, clock) -> [(ns in that clock, ns in the trace clock)]
    trace_clock = [None]
    stacks = {}
    out = {}

    def add(track, dur):
        o = out.setdefault(track, {"slices": 0, "dur_ns": 0, "unclosed": 0})
        o["slices"] += 1
        o["dur_ns"] += dur

    for p in packets(sys.argv[1]):
        sid = p.trusted_packet_sequence_id
        s = seqs.setdefault(sid, {"lost": False, "defaults": None, "incr": {}})
        if p.previous_packet_dropped:
            s["lost"] = True
        if p.incremental_state_cleared or p.sequence_flags & 1:
            s["lost"] = False
            s["defaults"] = None
        if p.sequence_flags & 2 and s["lost"]:
            continue
        if p.HasField("trace_packet_defaults"):
            s["defaults"] = p.trace_packet_defaults
        if p.HasField("clock_snapshot"):
            snap = p.clock_snapshot
            if trace_clock[0] is None and snap.primary_trace_clock:
                trace_clock[0] = snap.primary_trace_clock
            tc = trace_clock[0] or 6
            at = {(sid if 64 <= c.clock_id < 128 else 0, c.clock_id): c.timestamp * (c.unit_multiplier_ns or 1) for c in snap.clocks}
            if (0, tc) in at:
                for k, v in at.items():
                    links.setdefault(k, []).append((v, at[(0, tc)]))
            for c in snap.clocks:
                key = (sid if 64 <= c.clock_id < 128 else 0, c.clock_id)
                units[key] = (c.is_incremental, c.unit_multiplier_ns or 1)
                if c.is_incremental:
                    s["incr"][c.clock_id] = c.timestamp
        ts = None
        if p.HasField("timestamp"):
            clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else None
            if clock is None and s["defaults"] is not None and s["defaults"].HasField("timestamp_clock_id"):
                clock = s["defaults"].timestamp_clock_id
            key = (sid if clock is not None and 64 <= clock < 128 else 0, clock)
            inc, mult = units.get(key, (False, 1))
            if inc:
                s["incr"][clock] = s["incr"].get(clock, 0) + p.timestamp
                ts = s["incr"][clock] * mult
            else:
                ts = p.timestamp * mult
            if clock is not None and clock != (trace_clock[0] or 6) and key in links:
                pairs = links[key]
                own, tr = next((x for x in reversed(pairs) if x[0] <= ts), pairs[0])
                ts = tr + (ts - own)
        if p.HasField("track_descriptor"):
            descs[p.track_descriptor.uuid] = p.track_descriptor
        if not p.HasField("track_event") or ts is None:
            continue
        e = p.track_event
        track = e.track_uuid if e.HasField("track_uuid") else None
        if track is None and s["defaults"] is not None:
            d = s["defaults"].track_event_defaults
            track = d.track_uuid if d.HasField("track_uuid") else None
        st = stacks.setdefault(track, [])
        kind = e.type
        if kind == 0 and e.HasField("legacy_event"):
            # Legacy JSON phases on the event's track: Chrome's marks ('R').
            phase = chr(e.legacy_event.phase)
            if phase in "IinR":
                kind = pb.TrackEvent.TYPE_INSTANT
            elif phase == "X":
                add(track, e.legacy_event.duration_us * 1000)
                continue
            elif phase in "BE":
                kind = pb.TrackEvent.TYPE_SLICE_BEGIN if phase == "B" else pb.TrackEvent.TYPE_SLICE_END
        if kind == pb.TrackEvent.TYPE_SLICE_BEGIN:
            st.append(ts)
        elif kind == pb.TrackEvent.TYPE_SLICE_END:
            if st:
                add(track, ts - st.pop())
        elif kind == pb.TrackEvent.TYPE_INSTANT:
            add(track, 0)
    for track, st in stacks.items():
        if st:
            out.setdefault(track, {"slices": 0, "dur_ns": 0, "unclosed": 0})["unclosed"] += len(st)

    def key(uuid):
        d = descs.get(uuid)
        if d is not None and d.HasField("thread"):
            return f"{d.thread.pid}/{d.thread.tid}"
        name = d.name or d.static_name if d is not None else ""
        return f"track:{name or uuid}"

    tracks = {}
    for uuid, o in out.items():
        k = key(uuid)
        t = tracks.setdefault(k, {"slices": 0, "dur_ns": 0, "unclosed": 0})
        for f in t:
            t[f] += o[f]
    total = {f: sum(t[f] for t in tracks.values()) for f in ("slices", "dur_ns", "unclosed")}
    json.dump({"tracks": dict(sorted(tracks.items())), "total": total}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
