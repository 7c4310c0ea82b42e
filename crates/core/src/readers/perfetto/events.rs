//! One `TrackEvent`: a slice begin or end, an instant, a counter value, or a legacy
//! (JSON-phase) event, walked by hand (no allocation per event). Slices are matched per
//! track in file order, an end closing the innermost open begin as trace_processor
//! does; the row goes into the event table (a CPU slice at its begin, GPU activity at
//! its end) with its track's index as a placeholder for its lane, which `lanes` fills
//! in once every descriptor is known.

use prost::Message;

use super::packets::{Decoder, Packet, Seq};
use super::proto::LegacyEvent;
use super::tracks::{Key, Open};
use super::wire::{ints, split_len, varint_rest, Fields, Value};
use crate::model::args::ArgValue;
use crate::model::events::{EventKind, EventTable, NONE_I64, NONE_U32};

/// `TrackEvent.Type`.
pub(super) const SLICE_BEGIN: u64 = 1;
const SLICE_END: u64 = 2;
pub(super) const INSTANT: u64 = 3;
const COUNTER: u64 = 4;
const STATE: u64 = 5;

/// Reused buffers for an event's repeated fields.
#[derive(Default)]
pub struct Bufs {
    cats: Vec<u64>,
    extra: Vec<u64>,
    extra_uuids: Vec<u64>,
    dextra: Vec<u64>,
    dextra_uuids: Vec<u64>,
    flows: Vec<u64>,
}

/// The singular fields of one event.
#[derive(Default)]
struct Ev<'a> {
    kind: u64,
    name_iid: Option<u64>,
    name: Option<&'a [u8]>,
    cat_names: Option<&'a [u8]>,
    track: Option<u64>,
    counter: Option<f64>,
    legacy: Option<&'a [u8]>,
    delta_us: Option<i64>,
    absolute_us: Option<i64>,
    correlation: Option<i64>,
    annotations: bool,
}

impl Decoder {
    pub fn track_event(&mut self, p: &Packet, ts: Option<i64>, b: &[u8]) {
        self.stats.track_events += 1;
        // Boxed: taking it out and back is a pointer's move, not six vectors'.
        let mut bufs = self.bufs.take().unwrap_or_default();
        bufs.cats.clear();
        bufs.extra.clear();
        bufs.extra_uuids.clear();
        bufs.dextra.clear();
        bufs.dextra_uuids.clear();
        bufs.flows.clear();
        let mut e = Ev::default();
        let ok = sdk_fields(b, &mut e, &mut bufs.cats) || {
            e = Ev::default();
            bufs.cats.clear();
            walk_event(b, &mut e, &mut bufs)
        };
        if ok {
            self.event(p, ts, &e, b, &mut bufs);
        } else {
            self.stats.bad_packets += 1;
        }
        self.bufs = Some(bufs);
    }

    fn event(&mut self, p: &Packet, ts: Option<i64>, e: &Ev, b: &[u8], bufs: &mut Bufs) {
        let seq = self.seqs.at(p.si);
        let ts = match (ts, e.absolute_us, e.delta_us) {
            (Some(t), _, _) => t,
            (None, Some(abs), _) => abs.saturating_mul(1000),
            (None, None, Some(d)) => {
                seq.reference_us = seq.reference_us.wrapping_add(d);
                seq.reference_us.saturating_mul(1000)
            }
            (None, None, None) => {
                self.stats.no_timestamp += 1;
                return;
            }
        };
        // Times beyond ±2^61 ns (73 years) are damage, and would overflow later sums.
        if ts.unsigned_abs() > 1 << 61 {
            self.stats.bad_time += 1;
            return;
        }
        let legacy = match e.legacy.map(LegacyEvent::decode) {
            Some(Ok(l)) => Some(l),
            Some(Err(_)) => {
                self.stats.bad_packets += 1;
                return;
            }
            None => None,
        };
        let seq = self.seqs.at(p.si);
        let mut key = match e.track.or_else(|| seq.default_track()) {
            Some(u) => Key::Uuid(u),
            None => {
                let (pid, tid) = seq.thread.unwrap_or((0, 0));
                Key::Thread(pid, tid)
            }
        };
        // Extra counter values name their tracks in the event, else in the defaults.
        if !bufs.extra.is_empty() || !bufs.dextra.is_empty() {
            default_counter_tracks(seq, bufs);
        }
        // The category first: a legacy async event's lane is keyed by it.
        let cat = match e.kind {
            SLICE_END | COUNTER => 0,
            _ => self.category(p.si, e, &bufs.cats),
        };
        let mut kind = e.kind;
        let mut complete = None;
        if let Some(l) = &legacy {
            match self.legacy_phase(l, kind, cat, &mut key, &mut complete) {
                Some(k) => kind = k,
                None => return,
            }
        }
        // Each sequence remembers its last track: sequences interleave, so the tracks'
        // own one-entry cache would miss at every switch.
        let track = match self.seqs.get_at(p.si).track {
            Some((k, t)) if k == key => t,
            _ => {
                let t = self.tracks.get(key);
                self.seqs.at(p.si).track = Some((key, t));
                t
            }
        };
        if !bufs.extra.is_empty() || !bufs.dextra.is_empty() {
            for (&v, &u) in bufs.extra.iter().zip(&bufs.extra_uuids) {
                self.counter(u, ts, v as i64 as f64);
            }
            for (&v, &u) in bufs.dextra.iter().zip(&bufs.dextra_uuids) {
                self.counter(u, ts, f64::from_bits(v));
            }
        }
        match kind {
            SLICE_BEGIN | INSTANT => {
                let order = self.order;
                self.order += 1;
                for &f in &bufs.flows {
                    self.flows.push((f, track, ts));
                }
                let name = self.event_name(p.si, e, legacy.as_ref());
                let k = if kind == INSTANT {
                    EventKind::Instant
                } else {
                    self.kind_of(cat)
                };
                let (args, corr) = self.extras(p.si, k, e, b);
                let open = Open {
                    name,
                    cat,
                    kind: k,
                    ts,
                    seq: order,
                    args,
                    correlation: corr,
                    row: NONE_U32,
                };
                match (kind, complete) {
                    (INSTANT, _) => self.push(track, open, 0, false),
                    (_, Some(d)) if d >= 0 => self.push(track, open, d, false),
                    (_, Some(_)) => self.stats.negative_dur += 1,
                    _ => {
                        self.step(track, ts);
                        let mut open = open;
                        if !k.on_gpu_lane() {
                            open.row = self.push_begun(track, &open);
                        }
                        self.tracks.list[track as usize].open.push(open);
                    }
                }
            }
            SLICE_END => {
                for &f in &bufs.flows {
                    self.flows.push((f, track, ts));
                }
                let t = &mut self.tracks.list[track as usize];
                match t.open.pop() {
                    Some(o) => {
                        let dur = ts.saturating_sub(o.ts);
                        if dur < 0 {
                            self.stats.backwards += 1;
                        }
                        self.end(track, o, dur.max(0));
                    }
                    None => self.stats.unmatched_end += 1,
                }
            }
            COUNTER => match e.counter {
                Some(v) => {
                    if let Key::Uuid(u) = key {
                        self.counter(u, ts, v);
                    }
                }
                None => self.stats.not_counter_track += 1,
            },
            STATE => self.stats.state_events += 1,
            other => {
                *self
                    .stats
                    .legacy_skipped
                    .entry(char::from_digit((other % 10) as u32, 10).unwrap_or('?'))
                    .or_default() += 1
            }
        }
    }

    /// The kind of a legacy (`TrackEvent.legacy_event`) event from its phase, with its
    /// lane key (pid/tid overrides, async ids) and a complete event's duration; None
    /// for a phase grove skips (counted).
    fn legacy_phase(
        &mut self,
        l: &LegacyEvent,
        kind: u64,
        cat: u32,
        key: &mut Key,
        complete: &mut Option<i64>,
    ) -> Option<u64> {
        if let (Some(pid), Some(tid)) = (l.pid_override, l.tid_override) {
            *key = Key::Thread(pid, i64::from(tid));
        }
        if kind != 0 {
            return Some(kind);
        }
        let phase = u8::try_from(l.phase.unwrap_or(0)).unwrap_or(0);
        let id = l.unscoped_id.or(l.local_id).or(l.global_id).unwrap_or(0);
        Some(match phase {
            b'B' => SLICE_BEGIN,
            b'E' => SLICE_END,
            b'X' => {
                *complete = Some(l.duration_us.unwrap_or(0).saturating_mul(1000));
                SLICE_BEGIN
            }
            b'I' | b'i' | b'n' | b'R' => INSTANT,
            b'b' | b'S' => {
                *key = Key::Async(cat, id);
                SLICE_BEGIN
            }
            b'e' | b'F' => {
                *key = Key::Async(cat, id);
                SLICE_END
            }
            _ => {
                *self.stats.legacy_skipped.entry(phase as char).or_default() += 1;
                return None;
            }
        })
    }

    #[inline(always)]
    pub(super) fn step(&mut self, track: u32, ts: i64) {
        let t = &mut self.tracks.list[track as usize];
        if ts < t.last_ts {
            self.stats.backwards += 1;
        }
        t.last_ts = ts;
    }

    /// Appends a finished slice (or instant) with its track's index as its pid and tid;
    /// `lanes` replaces them with the lane's (in the columns' value tables, not row by
    /// row), and gives the rows that may sit on a GPU lane their device and stream.
    pub fn push(&mut self, track: u32, o: Open, dur: i64, begin_end: bool) {
        let t = &mut self.tracks.list[track as usize];
        t.events += 1;
        t.gpu |= o.kind.is_gpu_activity();
        self.max_ts = self.max_ts.max(o.ts.saturating_add(dur));
        let row = self.push_own(&o, dur, track, begin_end);
        if o.kind.on_gpu_lane() {
            self.gpu_lane_rows.push(row as u32);
        }
    }

    /// A slice that cannot sit on a GPU lane goes into the table at its begin (its
    /// duration set at its end, `end`): a lane's rows then come in order of their
    /// starts, as the tree sorts them, not in the post-order of their ends. GPU rows
    /// keep the order of their ends, which the GPU pass follows.
    pub(super) fn push_begun(&mut self, track: u32, o: &Open) -> u32 {
        self.tracks.list[track as usize].events += 1;
        self.push_own(o, 0, track, true) as u32
    }

    #[inline(always)]
    fn push_own(&mut self, o: &Open, dur: i64, track: u32, begin_end: bool) -> usize {
        push_row(&mut self.tr.events, o, dur, track, begin_end)
    }

    /// A B/E slice's end: its row's duration, or its row when not pushed at its begin.
    pub fn end(&mut self, track: u32, o: Open, dur: i64) {
        if o.row == NONE_U32 {
            self.push(track, o, dur, true);
            return;
        }
        self.max_ts = self.max_ts.max(o.ts.saturating_add(dur));
        self.tr.events.dur[o.row as usize] = dur;
    }

    /// A counter sample on the counter track `uuid`, scaled by its unit and summed when
    /// the track is incremental. The counter table's columns hold the track's index
    /// until `lanes` names them.
    pub(super) fn counter(&mut self, uuid: u64, ts: i64, v: f64) {
        let i = self.tracks.get(Key::Uuid(uuid));
        let t = &mut self.tracks.list[i as usize];
        let c = t.desc.as_ref().and_then(|d| d.counter.as_ref());
        if t.desc.is_some() && c.is_none() {
            self.stats.not_counter_track += 1;
            return;
        }
        let unit = c
            .and_then(|c| c.unit_multiplier)
            .filter(|&m| m != 0)
            .unwrap_or(1) as f64;
        let mut value = v * unit;
        if c.and_then(|c| c.is_incremental).unwrap_or(false) {
            t.counter += value;
            value = t.counter;
        }
        t.events += 1;
        let ct = &mut self.tr.counters;
        ct.name.push(i);
        ct.series.push(i);
        ct.pid.push(i);
        ct.ts.push(ts);
        ct.value.push(value);
    }

    fn event_name(&mut self, si: usize, e: &Ev, legacy: Option<&LegacyEvent>) -> u32 {
        let strings = &mut self.tr.events.strings;
        if let Some(n) = e.name {
            return strings.intern_bytes(n);
        }
        let iid = e.name_iid.or(legacy.and_then(|l| l.name_iid));
        match iid {
            Some(iid) => match self.seqs.get_at(si).names.get(&iid) {
                Some(&n) => n,
                None => {
                    self.stats.unknown_iids += 1;
                    strings.intern("<unknown name>")
                }
            },
            None => strings.intern(""),
        }
    }

    fn category(&mut self, si: usize, e: &Ev, iids: &[u64]) -> u32 {
        let strings = &mut self.tr.events.strings;
        if let Some(c) = e.cat_names {
            return strings.intern_bytes(c);
        }
        let s = self.seqs.get_at(si);
        match iids {
            [] => strings.intern(""),
            [one] => match s.cats.get(one) {
                Some(&c) => c,
                None => {
                    self.stats.unknown_iids += 1;
                    strings.intern("")
                }
            },
            many => {
                let names: Vec<String> = many
                    .iter()
                    .filter_map(|i| s.cats.get(i).map(|&c| strings.resolve(c).to_string()))
                    .collect();
                strings.intern(&names.join(","))
            }
        }
    }

    /// What a category means, asked once per category: Kineto's and rocprofv3's
    /// categories name GPU activity and runtime calls; anything else is a CPU slice.
    fn kind_of(&mut self, cat: u32) -> EventKind {
        if let Some(Some(k)) = self.kinds.get(cat as usize) {
            return *k;
        }
        let text = self.tr.events.strings.resolve(cat);
        let k = match text {
            // rocprofv3's pftrace categories (rocprofiler-sdk's perfetto_category).
            "kernel_dispatch" => EventKind::Kernel,
            "memory_copy" => EventKind::Memcpy,
            "hip_api" | "hsa_api" | "rccl_api" | "hip_api_ext" => EventKind::Runtime,
            _ => EventKind::from_category(text).unwrap_or(EventKind::Cpu),
        };
        let i = cat as usize;
        if self.kinds.len() <= i {
            self.kinds.resize(i + 1, None);
        }
        self.kinds[i] = Some(k);
        k
    }

    /// For GPU activity and runtime calls: the correlation id (`TrackEvent.correlation_id`,
    /// else rocprofv3's `corr_id` annotation) and, for GPU rows, the annotations as args.
    fn extras(&mut self, si: usize, kind: EventKind, e: &Ev, b: &[u8]) -> (u32, i64) {
        let wanted = kind.is_gpu_activity() || kind == EventKind::Runtime;
        let mut corr = e.correlation.unwrap_or(NONE_I64);
        if !wanted || !e.annotations {
            return (NONE_U32, corr);
        }
        let gpu = kind.is_gpu_activity();
        let names = Some(&self.seqs.get_at(si).ann_names);
        let store = &mut self.tr.events.arg_store;
        for (f, v) in Fields::new(b) {
            let (4, Value::Len(a)) = (f, v) else {
                continue;
            };
            let Some((name, value)) = annotation(a) else {
                continue;
            };
            let key = match name {
                Name::Inline(n) => n,
                Name::Interned(i) => match names.and_then(|m| m.get(&i)) {
                    Some(n) => n.as_str(),
                    None => continue,
                },
            };
            let v = match value {
                Scalar::Int(x) => ArgValue::Int(x),
                Scalar::UInt(x) => i64::try_from(x).map_or(ArgValue::UInt(x), ArgValue::Int),
                Scalar::Float(x) => ArgValue::Float(x),
                Scalar::Str(t) => store.str_value(t),
            };
            if key == "corr_id" && corr == NONE_I64 {
                corr = v.as_i64().unwrap_or(NONE_I64);
            }
            if gpu {
                store.push(key, v);
            }
        }
        if gpu {
            (store.finish(), corr)
        } else {
            (NONE_U32, corr)
        }
    }
}

/// An event's fields in general (any order, any field): false on damage.
fn walk_event<'a>(b: &'a [u8], e: &mut Ev<'a>, bufs: &mut Bufs) -> bool {
    let mut fields = Fields::new(b);
    let mut ok = true;
    while let Some((f, v)) = fields.field() {
        ok &= match (f, v) {
            (9, Value::Varint(x)) => {
                e.kind = x;
                true
            }
            (10, Value::Varint(x)) => {
                e.name_iid = Some(x);
                true
            }
            (23, Value::Len(x)) => {
                e.name = Some(x);
                true
            }
            (3, v) => ints(v, false, &mut bufs.cats),
            (22, Value::Len(x)) => {
                e.cat_names.get_or_insert(x);
                true
            }
            (11, Value::Varint(x)) => {
                e.track = Some(x);
                true
            }
            (30, Value::Varint(x)) => {
                e.counter = Some(x as i64 as f64);
                true
            }
            (44, Value::Fixed64(x)) => {
                e.counter = Some(f64::from_bits(x));
                true
            }
            (12, v) => ints(v, false, &mut bufs.extra),
            (31, v) => ints(v, false, &mut bufs.extra_uuids),
            (46, v) => ints(v, true, &mut bufs.dextra),
            (45, v) => ints(v, false, &mut bufs.dextra_uuids),
            (47 | 48, v) => ints(v, true, &mut bufs.flows),
            (36 | 42, v) => ints(v, false, &mut bufs.flows),
            (6, Value::Len(x)) => {
                e.legacy = Some(x);
                true
            }
            (1, Value::Varint(x)) => {
                e.delta_us = Some(x as i64);
                true
            }
            (16, Value::Varint(x)) => {
                e.absolute_us = Some(x as i64);
                true
            }
            (52, Value::Varint(x)) => {
                e.correlation = Some(x as i64);
                true
            }
            (4, _) => {
                e.annotations = true;
                true
            }
            _ => true,
        };
    }
    !fields.bad && ok
}

/// The fields the Perfetto SDK writes for most events (type, one category and a name
/// by iid, a track, debug annotations, not looked into here), read without the general
/// field walk: one key byte names the field and its wire type at once. Any other
/// field, or damage, says no (then `walk_event`); fields set as that walk sets them.
#[inline(always)]
fn sdk_fields<'a>(b: &'a [u8], e: &mut Ev<'a>, cats: &mut Vec<u64>) -> bool {
    // The SDK's orders, straight through: an end (its type alone), or a begin or an
    // instant with one category and a name by iid (one-byte type and category).
    match b {
        [0x48, kind] if *kind < 0x80 => {
            e.kind = u64::from(*kind);
            return true;
        }
        [0x48, kind, 0x18, cat, 0x50, rest @ ..] if *kind < 0x80 && *cat < 0x80 => {
            if let Some((name, [])) = varint_rest(rest) {
                e.kind = u64::from(*kind);
                cats.push(u64::from(*cat));
                e.name_iid = Some(name);
                return true;
            }
        }
        _ => {}
    }
    let mut rest = b;
    while let Some((&k, r)) = rest.split_first() {
        let Some((v, r)) = varint_rest(r) else {
            return false;
        };
        rest = r;
        match k {
            0x48 => e.kind = v,
            0x18 => cats.push(v),
            0x50 => e.name_iid = Some(v),
            0x58 => e.track = Some(v),
            0x22 => {
                let Some((_, r)) = split_len(v, rest) else {
                    return false;
                };
                e.annotations = true;
                rest = r;
            }
            _ => return false,
        }
    }
    true
}

/// A debug annotation's name: inline, or interned in its sequence.
enum Name<'a> {
    Inline(&'a str),
    Interned(u64),
}

/// A debug annotation's scalar value (nested dicts and arrays are not kept).
enum Scalar<'a> {
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a str),
}

/// A `DebugAnnotation`'s name and scalar value, walked without allocating (one per
/// annotation of every GPU row: the hot path of a rocprofv3 trace). Fields as in
/// perfetto's `debug_annotation.proto`: name_iid 1, name 10; bool 2, uint 3, int 4,
/// double 5, string 6, pointer 7.
fn annotation(b: &[u8]) -> Option<(Name<'_>, Scalar<'_>)> {
    let (mut name, mut value) = (None, None);
    let mut fields = Fields::new(b);
    while let Some((f, v)) = fields.field() {
        match (f, v) {
            (1, Value::Varint(i)) => name = Some(Name::Interned(i)),
            (10, Value::Len(n)) => name = Some(Name::Inline(std::str::from_utf8(n).ok()?)),
            (2, Value::Varint(x)) => value = Some(Scalar::Int(i64::from(x != 0))),
            (3 | 7, Value::Varint(x)) => value = Some(Scalar::UInt(x)),
            (4, Value::Varint(x)) => value = Some(Scalar::Int(x as i64)),
            (5, Value::Fixed64(x)) => value = Some(Scalar::Float(f64::from_bits(x))),
            (6, Value::Len(t)) => value = Some(Scalar::Str(std::str::from_utf8(t).ok()?)),
            _ => {}
        }
    }
    if fields.bad {
        return None;
    }
    Some((name?, value?))
}

/// The tracks of an event's extra counter values, from the sequence's defaults when
/// the event names none.
fn default_counter_tracks(seq: &Seq, bufs: &mut Bufs) {
    let defaults = seq
        .defaults
        .as_ref()
        .and_then(|d| d.track_event_defaults.as_ref());
    if let Some(d) = defaults {
        if !bufs.extra.is_empty() && bufs.extra_uuids.is_empty() {
            bufs.extra_uuids
                .extend_from_slice(&d.extra_counter_track_uuids);
        }
        if !bufs.dextra.is_empty() && bufs.dextra_uuids.is_empty() {
            bufs.dextra_uuids
                .extend_from_slice(&d.extra_double_counter_track_uuids);
        }
    }
}

/// A row with its track's index as its pid (`finish` copies the pid column to the
/// tid column, then names both): its own columns, and the correlation and args
/// where it has them (`finish` fills the optional columns' other rows:
/// `EventTable::fill_optional`).
#[inline(always)]
pub(super) fn push_row(
    ev: &mut EventTable,
    o: &Open,
    dur: i64,
    track: u32,
    begin_end: bool,
) -> usize {
    // Every column has a value a row: `ts`, a plain vector, counts them cheapest.
    let row = ev.ts.len();
    // Coded at once (`push_final`): rows are not set after (but `dur`).
    ev.name.push_final(o.name);
    ev.cat.push_final(o.cat);
    ev.kind.push(o.kind);
    ev.ts.push(o.ts);
    ev.dur.push(dur);
    ev.pid.push_final(track);
    ev.seq.push(o.seq);
    ev.begin_end.push(begin_end);
    if o.correlation != NONE_I64 {
        ev.correlation.resize_none(row);
        ev.correlation.push(o.correlation);
    }
    if o.args != NONE_U32 {
        ev.args.resize_none(row);
        ev.args.push(o.args);
    }
    row
}
