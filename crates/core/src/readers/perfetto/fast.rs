//! The common packet in one pass: a slice begin, end or instant as the Perfetto SDK
//! writes it (timestamp as a delta of the sequence's clock, sequence id, flags, and an
//! event of its type, one category and a name by iid, maybe debug annotations), and a
//! counter value on a named track, read and applied with what its sequence already
//! knows, kept in one place (`FastSeq`):
//! its clock and how it converts, its default track. The general path (`Decoder::apply`,
//! `Decoder::track_event`) walks the same packet through a `Packet`, an `Ev`, the
//! sequence's defaults and the track cache, about 500 instructions a packet.
//!
//! Nothing here decides differently from the general path: every check that could go
//! another way there (an unknown iid, a category whose meaning is not known yet, a
//! sequence that lost its state, a GPU or runtime event whose annotations are read, a
//! sequence without its state made) sends the packet to it before anything is changed.

use super::clocks::{ClockKey, Clocks};
use super::events::{push_row, INSTANT, SLICE_BEGIN};
use super::packets::{Decoder, Seq, SEQ_INCREMENTAL_STATE_CLEARED};
use super::tracks::{Key, Open};
use super::wire::{split_len, varint_rest};
use crate::model::events::{EventKind, NONE_I64, NONE_U32};

/// What a sequence's common packets share, made from its state (`make_fast_seq`);
/// dropped when its defaults, its thread or its whole state change (`Seq::clear`), and
/// stale after a clock snapshot (`gen`).
#[derive(Clone, Copy)]
pub struct FastSeq {
    /// `Clocks::generation` when made.
    gen: u64,
    clock: ClockKey,
    /// The clock's place in `Seq::incr` when it is incremental.
    incr: Option<usize>,
    /// Nanoseconds per unit.
    unit: i64,
    /// The default track (the sequence's track descriptor or legacy thread).
    track: u32,
    /// Where the clock's values (ns) convert by one addition, `[lo, hi)` and the
    /// offset (`Window`): the sequence's conversion cache as it stood, kept here so
    /// that a packet converts with no check of the cache's generation and clock
    /// (`FastSeq::gen` is checked already). Empty until a conversion fills it.
    window: Window,
}

/// `[lo, hi)` and the offset that brings those values to the trace clock.
#[derive(Clone, Copy)]
struct Window {
    lo: i64,
    hi: i64,
    off: i64,
}

/// Values of the trace clock itself are within ±2^61 (`bad_time`): they are kept.
const SAFE: i64 = 1 << 61;

impl Window {
    const EMPTY: Window = Window {
        lo: 0,
        hi: 0,
        off: 0,
    };

    /// The window of a sequence's conversion cache (`Clocks::convert_with`) when it
    /// serves `clock` in this generation; the whole of ±2^61 when `clock` is the trace
    /// clock (`Clocks::convert` returns those values as they are).
    fn of(seq: &Seq, clocks: &Clocks, clock: ClockKey) -> Window {
        if clock == (0, clocks.trace_clock()) {
            return Window {
                lo: -SAFE,
                hi: SAFE,
                off: 0,
            };
        }
        match seq.conv {
            // a, b and until are within ±2^62 (`Clocks::convert`): b - a does not
            // overflow, and b + (v - a) is v + (b - a).
            Some((g, f, a, b, until)) if g == clocks.generation && f == clock => Window {
                lo: a,
                hi: until,
                off: b - a,
            },
            _ => Window::EMPTY,
        }
    }
}

/// A common event: an end, a begin or instant with its category and name iids, or a
/// counter value on a named track.
#[derive(Clone, Copy)]
enum Shape {
    End,
    Named {
        kind: u64,
        cat: u64,
        name: u64,
        annotations: bool,
    },
    Counter {
        track: u64,
        value: f64,
    },
}

/// A common event with its names and meaning found (`Decoder::resolve`).
enum Resolved {
    End,
    Named {
        kind: u64,
        cat: u32,
        name: u32,
        k: EventKind,
    },
    Counter {
        track: u64,
        value: f64,
    },
}

/// The packet's timestamp, sequence id and event when it has the SDK's shape: fields
/// in the SDK's order, one-byte sequence id and flags, no clearing of the state.
#[inline(always)]
fn packet_shape(b: &[u8]) -> Option<(u64, u32, &[u8])> {
    let [0x40, rest @ ..] = b else { return None };
    let (ts, [0x50, seq, 0x68, flags, 0x5a, len, event @ ..]) = varint_rest(rest)? else {
        return None;
    };
    let ok = *seq < 0x80
        && *flags < 0x80
        && u64::from(*flags) & SEQ_INCREMENTAL_STATE_CLEARED == 0
        && usize::from(*len) == event.len();
    ok.then_some((ts, u32::from(*seq), event))
}

/// `packet_shape` of a packet framed as the SDK frames it (the `Trace.packet` key, a
/// one-byte length), from the first 16 bytes of the stream there, where its whole head
/// lies: read at fixed places, with no bounds check per byte and no general varint (the
/// framing and `packet_shape` took about 60 instructions a packet). The timestamp, the
/// sequence id, and where the event starts and the packet ends; None for any other
/// head (a timestamp delta past two bytes too).
#[inline(always)]
fn framed_head(h: &[u8; 16]) -> Option<(u64, u32, usize, usize)> {
    let [0x0a, len, 0x40, t0, t1, ..] = *h else {
        return None;
    };
    // The timestamp: a delta of one or two bytes.
    let (raw, at) = if t0 < 0x80 {
        (u64::from(t0), 4)
    } else if t1 < 0x80 {
        (u64::from(t0 & 0x7f) | u64::from(t1) << 7, 5)
    } else {
        return None;
    };
    let (&[0x50, seq, 0x68, flags, 0x5a, event_len], _) = h[at..].split_first_chunk::<6>()? else {
        return None;
    };
    let end = 2 + usize::from(len);
    let ok = len < 0x80
        && seq < 0x80
        && flags < 0x80
        && u64::from(flags) & SEQ_INCREMENTAL_STATE_CLEARED == 0
        && at + 6 + usize::from(event_len) == end;
    ok.then_some((raw, u32::from(seq), at + 6, end))
}

/// The event's shape: its type alone; type, one one-byte category iid and a name iid,
/// then nothing but debug annotations (not looked into here); or a counter's type,
/// track and one value (`counter_value` 30, `double_counter_value` 44).
#[inline(always)]
fn event_shape(b: &[u8]) -> Option<Shape> {
    match b {
        [0x48, 2] => Some(Shape::End),
        [0x48, kind @ (1 | 3), 0x18, cat, 0x50, rest @ ..] if *cat < 0x80 => {
            let (name, mut rest) = varint_rest(rest)?;
            let annotations = !rest.is_empty();
            while let [0x22, r @ ..] = rest {
                let (len, r) = varint_rest(r)?;
                rest = split_len(len, r)?.1;
            }
            rest.is_empty().then_some(Shape::Named {
                kind: u64::from(*kind),
                cat: u64::from(*cat),
                name,
                annotations,
            })
        }
        [0x48, 4, 0x58, rest @ ..] => {
            let (track, rest) = varint_rest(rest)?;
            let value = match rest {
                [0xf0, 0x01, v @ ..] => match varint_rest(v)? {
                    (x, []) => x as i64 as f64,
                    _ => return None,
                },
                [0xe1, 0x02, x @ ..] => {
                    f64::from_bits(u64::from_le_bytes(<[u8; 8]>::try_from(x).ok()?))
                }
                _ => return None,
            };
            Some(Shape::Counter { track, value })
        }
        _ => None,
    }
}

impl Decoder {
    /// Reads and applies a packet of the common shape; false (nothing changed) for any
    /// other, which the general path then reads.
    #[inline(always)]
    pub fn fast_packet(&mut self, b: &[u8]) -> bool {
        let Some((raw, seq_id, event)) = packet_shape(b) else {
            return false;
        };
        self.fast_event(raw, seq_id, event)
    }

    /// The packet at the start of `rest`, framed as a `Trace.packet` field (key and a
    /// one-byte length) and of the common shape, read and applied: the bytes it took.
    /// None (nothing changed) for any other, or one that `rest` does not hold whole.
    /// `h`: the first 16 bytes of `rest`, where every field of the packet's head
    /// lies, so the head is read at fixed places with no bounds check (the framing
    /// and `packet_shape` took about 60 instructions a packet).
    #[inline(always)]
    pub fn fast_framed(&mut self, h: &[u8; 16], rest: &[u8]) -> Option<usize> {
        let (raw, seq, start, end) = framed_head(h)?;
        let event = rest.get(start..end)?;
        self.fast_event(raw, seq, event).then_some(end)
    }

    /// `fast_packet` past the packet's head: its timestamp, sequence id and event.
    #[inline(always)]
    fn fast_event(&mut self, raw: u64, seq_id: u32, event: &[u8]) -> bool {
        let Some(shape) = event_shape(event) else {
            return false;
        };
        let Some(si) = self.seqs.find(seq_id) else {
            return false;
        };
        // The sequence borrowed once, beside the clocks and the categories' kinds.
        let gen = self.clocks.generation;
        let seq = self.seqs.at(si);
        if seq.lost {
            return false;
        }
        let f = match seq.fast {
            Some(f) if f.gen == gen => f,
            _ => match make_fast_seq(seq, &self.clocks, seq_id) {
                Some(f) => {
                    seq.fast = Some(f);
                    f
                }
                None => return false,
            },
        };
        let Some(r) = resolve(seq, &self.kinds, shape) else {
            return false;
        };
        self.stats.packets += 1;
        #[cfg(test)]
        {
            self.stats.fast_packets += 1;
        }
        let ts = fast_time(seq, &mut self.clocks, &f, raw);
        self.stats.track_events += 1;
        if ts.unsigned_abs() > 1 << 61 {
            self.stats.bad_time += 1;
            return true;
        }
        match r {
            Resolved::End => self.fast_end(f.track, ts),
            Resolved::Named { kind, cat, name, k } => {
                let open = Open {
                    name,
                    cat,
                    kind: k,
                    ts,
                    seq: self.order,
                    args: NONE_U32,
                    correlation: NONE_I64,
                    row: NONE_U32,
                };
                self.order += 1;
                self.fast_begin(f.track, open, kind);
            }
            Resolved::Counter { track, value } => self.fast_counter(track, ts, value),
        }
        true
    }

    /// A slice end on the sequence's track: the innermost open slice's duration.
    #[inline(always)]
    fn fast_end(&mut self, track: u32, ts: i64) {
        let t = &mut self.tracks.list[track as usize];
        // The innermost open slice's start and row read in place (a pop copied all
        // of it out first).
        let Some(&Open { ts: start, row, .. }) = t.open.last() else {
            self.stats.unmatched_end += 1;
            return;
        };
        // Both times are within ±2^61 (`bad_time`): no sum here overflows.
        let dur = ts - start;
        if dur < 0 {
            self.stats.backwards += 1;
        }
        let dur = dur.max(0);
        // A CPU slice's row, pushed at its begin (`end`, inlined).
        if row != NONE_U32 {
            t.open.truncate(t.open.len() - 1);
            self.max_ts = self.max_ts.max(start + dur);
            self.tr.events.dur[row as usize] = dur;
        } else if let Some(o) = t.open.pop() {
            self.end(track, o, dur);
        }
    }

    /// A slice begin or an instant on the sequence's track, as `event` places it.
    #[inline(always)]
    fn fast_begin(&mut self, track: u32, mut open: Open, kind: u64) {
        if kind == SLICE_BEGIN {
            // `step` and `push_begun` with the track borrowed once.
            let t = &mut self.tracks.list[track as usize];
            if open.ts < t.last_ts {
                self.stats.backwards += 1;
            }
            t.last_ts = open.ts;
            if !open.kind.on_gpu_lane() {
                t.events += 1;
                open.row = push_row(&mut self.tr.events, &open, 0, track, true) as u32;
            }
            t.open.push(open);
        } else {
            // An instant (`push`, inlined: a call per instant cost about 150
            // instructions more): its kind is `Instant`, no GPU activity, on no GPU
            // lane.
            self.tracks.list[track as usize].events += 1;
            self.max_ts = self.max_ts.max(open.ts);
            push_row(&mut self.tr.events, &open, 0, track, false);
        }
    }

    /// A counter value (`counter`). `event` looks its track up first, which makes the
    /// track when new: `counter` makes the same one at the same point.
    #[inline(never)]
    fn fast_counter(&mut self, uuid: u64, ts: i64, value: f64) {
        self.counter(uuid, ts, value);
    }
}

/// A begin's or an instant's names and meaning, as `event` finds them; None for one
/// not known yet (counted, or asked once), which is the general path's.
#[inline(always)]
fn resolve(seq: &Seq, kinds: &[Option<EventKind>], shape: Shape) -> Option<Resolved> {
    Some(match shape {
        Shape::End => Resolved::End,
        Shape::Counter { track, value } => Resolved::Counter { track, value },
        Shape::Named {
            kind,
            cat,
            name,
            annotations,
        } => {
            let (Some(&cat), Some(&name)) = (seq.cats.get(&cat), seq.names.get(&name)) else {
                return None;
            };
            let k = if kind == INSTANT {
                EventKind::Instant
            } else {
                (*kinds.get(cat as usize)?)?
            };
            // Their annotations are read (`extras`).
            if annotations && (k.is_gpu_activity() || k == EventKind::Runtime) {
                return None;
            }
            Resolved::Named { kind, cat, name, k }
        }
    })
}

/// The packet's time in the trace clock, as `Decoder::time` gives it.
#[inline(always)]
fn fast_time(seq: &mut Seq, clocks: &mut Clocks, f: &FastSeq, raw: u64) -> i64 {
    let value = match f.incr {
        Some(i) => match seq.incr.get_mut(i) {
            Some((_, v)) => {
                *v = v.wrapping_add(raw as i64);
                *v
            }
            None => raw as i64,
        },
        None => raw as i64,
    };
    let ns = if f.unit == 1 {
        value
    } else {
        value.saturating_mul(f.unit)
    };
    let w = f.window;
    if ns >= w.lo && ns < w.hi {
        return ns + w.off;
    }
    convert(seq, clocks, f.clock, ns)
}

/// A time outside the sequence's window: converted through the sequence's cache
/// (`Clocks::convert_with`), and the window made anew from it.
#[inline(never)]
fn convert(seq: &mut Seq, clocks: &mut Clocks, clock: ClockKey, ns: i64) -> i64 {
    let v = clocks.convert_with(clock, ns, &mut seq.conv);
    let w = Window::of(seq, clocks, clock);
    if let Some(f) = &mut seq.fast {
        f.window = w;
    }
    v
}

/// A sequence's `FastSeq`, from what the general path has already set up (its
/// incremental clock's place, its default track in the track cache); None while
/// something is missing.
#[inline(never)]
fn make_fast_seq(seq: &Seq, clocks: &Clocks, seq_id: u32) -> Option<FastSeq> {
    let clock = seq
        .defaults
        .as_ref()
        .and_then(|d| d.timestamp_clock_id)
        .unwrap_or_else(|| clocks.trace_clock());
    let key = super::clocks::key(seq_id, clock);
    let (inc, unit) = clocks.units.get(&key).copied().unwrap_or((false, 1));
    let incr = if inc {
        Some(seq.incr.iter().position(|(c, _)| *c == clock)?)
    } else {
        None
    };
    let want = match seq.default_track() {
        Some(u) => Key::Uuid(u),
        None => {
            let (pid, tid) = seq.thread.unwrap_or((0, 0));
            Key::Thread(pid, tid)
        }
    };
    let track = match seq.track {
        Some((k, t)) if k == want => t,
        _ => return None,
    };
    Some(FastSeq {
        gen: clocks.generation,
        clock: key,
        incr,
        unit,
        track,
        window: Window::of(seq, clocks, key),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `framed_head` takes what the framing and `packet_shape` take, with a delta of at
    /// most two bytes, and reads it alike: SDK heads with every byte changed in turn to
    /// a few values (keys, high bits, the clearing flag, lengths).
    #[test]
    fn framed_head_is_packet_shape() {
        let reference = |b: &[u8]| -> Option<(u64, u32, usize, usize)> {
            let [0x0a, len, ..] = *b else { return None };
            if len >= 0x80 {
                return None;
            }
            let end = 2 + usize::from(len);
            let (raw, seq, event) = packet_shape(b.get(2..end)?)?;
            let start = end - event.len();
            (start <= 11).then_some((raw, seq, start, end))
        };
        let heads: [&[u8]; 3] = [
            &[0x0a, 10, 0x40, 0x05, 0x50, 3, 0x68, 2, 0x5a, 2, 0x48, 2],
            &[
                0x0a, 11, 0x40, 0x85, 0x21, 0x50, 7, 0x68, 2, 0x5a, 2, 0x48, 2,
            ],
            &[
                0x0a, 16, 0x40, 0x85, 0x21, 0x50, 7, 0x68, 0, 0x5a, 5, 0x48, 1, 0x18, 1, 0x50, 3,
            ],
        ];
        let mut n = 0;
        for head in heads {
            for at in 0..head.len() {
                for x in [
                    0u8, 1, 2, 3, 5, 0x0a, 0x40, 0x50, 0x5a, 0x68, 0x7f, 0x80, 0x81, 0xff,
                ] {
                    let mut b = [0u8; 40];
                    b[..head.len()].copy_from_slice(head);
                    b[at] = x;
                    let h: &[u8; 16] = b.first_chunk().expect("16 bytes");
                    assert_eq!(framed_head(h), reference(&b), "{:?}", &b[..head.len()]);
                    n += usize::from(framed_head(h).is_some());
                }
            }
        }
        assert!(n > 30, "{n}");
    }
}
