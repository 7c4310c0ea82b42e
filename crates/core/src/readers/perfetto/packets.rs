//! The packet loop: the `Trace` stream read one `TracePacket` at a time (never the whole
//! file in memory), each packet's sequence state applied (incremental state, interned
//! data, defaults, clocks) before its data: a `TrackEvent`, a `TrackDescriptor`, a clock
//! snapshot, or a kind grove does not read, counted by its field number.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Read};

use prost::Message;

use super::clocks::{self, Clocks};
use super::proto::{
    ClockSnapshot, InternedData, ThreadDescriptor, TracePacketDefaults, TrackDescriptor,
};
use super::tracks::Tracks;
use super::wire::{split_len, varint, varint_rest, Fields, Value};
use crate::model::intern::FxBuild;
use crate::readers::chrome::ChromeTrace;

/// `TracePacket.SequenceFlags`.
pub(super) const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

/// Interned ids to interned strings. The SDK numbers iids from 1 up, so small ones are
/// a vector's index (no hashing per event); a large one (damage, or another writer's
/// scheme) goes to a map. The vector grows only as far as about twice its entries, so
/// a damaged iid cannot make it large.
#[derive(Default)]
pub struct IidMap {
    dense: Vec<u32>,
    sparse: HashMap<u64, u32, FxBuild>,
    n: usize,
}

const NO_IID: u32 = u32::MAX;

impl IidMap {
    pub fn insert(&mut self, iid: u64, v: u32) {
        self.n += 1;
        let limit = (2 * self.n + 1024) as u64;
        if iid < limit && v != NO_IID {
            let i = iid as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, NO_IID);
            }
            self.dense[i] = v;
            // A later value for an iid once kept in the map replaces it there too.
            if !self.sparse.is_empty() {
                self.sparse.remove(&iid);
            }
        } else {
            self.sparse.insert(iid, v);
        }
    }

    #[inline(always)]
    pub fn get(&self, iid: &u64) -> Option<&u32> {
        match self.dense.get(*iid as usize) {
            Some(v) if *v != NO_IID && *iid < self.dense.len() as u64 => Some(v),
            _ if self.sparse.is_empty() => None,
            _ => self.sparse.get(iid),
        }
    }

    pub fn clear(&mut self) {
        self.dense.clear();
        self.sparse.clear();
        self.n = 0;
    }
}

/// The packet sequences by id. Ids below `DENSE_SEQS` (the SDK numbers its writers'
/// sequences from 1 up) find their place in a table: packets of a few sequences
/// interleave (a writer thread's chunks), and a hash lookup at every switch of
/// sequence was about 30 instructions a packet on average. Larger ids (another
/// writer's scheme, damage) go to a map.
#[derive(Default)]
pub struct Seqs {
    list: Vec<Seq>,
    /// The place of each sequence by its id below `DENSE_SEQS`, NO_SEQ where none.
    dense: Vec<u32>,
    index: HashMap<u32, usize, FxBuild>,
}

/// Ids below this take `Seqs::dense` (16 KiB at most).
const DENSE_SEQS: u32 = 4096;
const NO_SEQ: u32 = u32::MAX;

impl Seqs {
    // Always inlined: once for every packet.
    #[inline(always)]
    pub(super) fn find(&self, id: u32) -> Option<usize> {
        if id < DENSE_SEQS {
            return match self.dense.get(id as usize) {
                Some(&i) if i != NO_SEQ => Some(i as usize),
                _ => None,
            };
        }
        self.index.get(&id).copied()
    }

    /// The sequence's place (stable: sequences are only added), made when first seen.
    #[inline]
    pub fn index(&mut self, id: u32) -> usize {
        match self.find(id) {
            Some(i) => i,
            None => {
                let i = self.list.len();
                self.list.push(Seq::default());
                if id < DENSE_SEQS {
                    let at = id as usize;
                    if self.dense.len() <= at {
                        self.dense.resize(at + 1, NO_SEQ);
                    }
                    self.dense[at] = i as u32;
                } else {
                    self.index.insert(id, i);
                }
                i
            }
        }
    }

    /// The sequence at a place `index` gave.
    #[inline(always)]
    pub fn at(&mut self, i: usize) -> &mut Seq {
        &mut self.list[i]
    }

    #[inline]
    pub fn get_at(&self, i: usize) -> &Seq {
        &self.list[i]
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }
}

/// One packet sequence's incremental state (a writer thread's, in the SDK).
#[derive(Default)]
pub struct Seq {
    /// False after a packet of the sequence was lost, until the state is cleared:
    /// packets that need it are skipped, as trace_processor does.
    pub lost: bool,
    pub names: IidMap,
    pub cats: IidMap,
    pub ann_names: HashMap<u64, String, FxBuild>,
    pub defaults: Option<TracePacketDefaults>,
    /// The last value of each incremental clock, in the clock's units.
    /// (clock id, value): a sequence uses one or two clocks, so a list.
    pub incr: Vec<(u32, i64)>,
    /// The clock this sequence's last timestamp was in, its units, and the conversion
    /// to the trace clock that served it: valid while no snapshot came since
    /// (`Clocks::generation`). Packets of one sequence mostly share one clock.
    pub clock_cache: Option<(u64, clocks::ClockKey, bool, i64)>,
    pub conv: clocks::ConvCache,
    /// The legacy thread descriptor packet's thread, and its time base for
    /// `timestamp_delta_us`.
    pub thread: Option<(i32, i64)>,
    pub reference_us: i64,
    /// The track of the sequence's last event and its key (`Tracks::get`).
    pub track: Option<(super::tracks::Key, u32)>,
    /// What its common packets share (`fast`): dropped where the defaults, the thread
    /// or the state change.
    pub fast: Option<super::fast::FastSeq>,
}

impl Seq {
    fn clear(&mut self) {
        self.lost = false;
        self.names.clear();
        self.cats.clear();
        self.ann_names.clear();
        self.defaults = None;
        self.fast = None;
    }

    pub fn default_track(&self) -> Option<u64> {
        self.defaults
            .as_ref()?
            .track_event_defaults
            .as_ref()?
            .track_uuid
    }
}

/// What was skipped or repaired, for the warnings.
#[derive(Default)]
pub struct Stats {
    /// Packet kinds not read, by field number: (count, bookkeeping).
    pub other: BTreeMap<u32, u64>,
    pub needs_state: u64,
    pub bad_packets: u64,
    pub unknown_iids: u64,
    pub no_timestamp: u64,
    pub unmatched_end: u64,
    pub unclosed: u64,
    pub state_events: u64,
    pub legacy_skipped: BTreeMap<char, u64>,
    pub not_counter_track: u64,
    pub nested_compressed: u64,
    pub packets: u64,
    pub track_events: u64,
    pub backwards: u64,
    pub negative_dur: u64,
    pub bad_time: u64,
    /// Packets the fast path read (`fast`), for the tests.
    #[cfg(test)]
    pub fast_packets: u64,
}

pub struct Decoder {
    pub tr: ChromeTrace,
    pub seqs: Seqs,
    pub clocks: Clocks,
    pub tracks: Tracks,
    pub stats: Stats,
    /// Running event number: the `seq` of rows, their file order.
    pub order: u32,
    pub max_ts: i64,
    pub bufs: Option<Box<super::events::Bufs>>,
    /// Flow ids with the track and time of each event naming them, in file order.
    pub flows: Vec<(u64, u32, i64)>,
    /// Rows of GPU activity and GPU annotations, in row order: the only ones that may
    /// get a device and stream (`lanes`).
    pub gpu_lane_rows: Vec<u32>,
    /// What each category means (`kind_of`).
    /// By the category's string id (dense), so no hashing per event.
    pub kinds: Vec<Option<crate::model::events::EventKind>>,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder {
            tr: ChromeTrace::default(),
            seqs: Seqs::default(),
            clocks: Clocks::default(),
            tracks: Tracks::default(),
            stats: Stats::default(),
            order: 0,
            max_ts: i64::MIN,
            bufs: None,
            flows: Vec::new(),
            gpu_lane_rows: Vec::new(),
            kinds: Vec::new(),
        }
    }

    /// Reads the stream to its end. Damage after the first packet ends the read with a
    /// warning (what came before is kept); damage before it is the error. Packets whole
    /// in the input's buffer are read where they lie; one that crosses the buffer's end
    /// is copied out (`read_packet`).
    pub fn read_stream(&mut self, input: &mut dyn BufRead) -> Result<(), String> {
        let mut buf: Vec<u8> = Vec::new();
        loop {
            let used = match input.fill_buf() {
                Ok([]) => return Ok(()),
                Ok(b) => self.packets_in(b),
                Err(e) => return self.cut(e.to_string()),
            };
            match used {
                Ok(0) => {}
                Ok(n) => {
                    input.consume(n);
                    continue;
                }
                Err(e) => return self.cut(e),
            }
            // The next packet crosses the buffer's end: read it field by field.
            let key = match read_varint(input) {
                Ok(Some(k)) => k,
                Ok(None) => return Ok(()),
                Err(e) => return self.cut(e),
            };
            if key != 0x0a {
                return self.cut(not_a_packet(key));
            }
            let len = match read_varint(input) {
                Ok(Some(l)) => l,
                Ok(None) => return self.cut("the input ends inside a packet's length".into()),
                Err(e) => return self.cut(e),
            };
            let len = match packet_len(len) {
                Ok(l) => l,
                Err(e) => return self.cut(e),
            };
            if let Err(e) = read_packet(input, &mut buf, len) {
                return self.cut(e);
            }
            self.packet(&buf[..len], true);
        }
    }

    /// The packets whole in `b`, read in place: the bytes they took. 0 when the first
    /// packet (or its key or length) crosses the end of `b`.
    fn packets_in(&mut self, b: &[u8]) -> Result<usize, String> {
        let mut at = 0;
        loop {
            let rest = &b[at..];
            // The common packet, framed as the SDK frames it, read here, inlined.
            if let Some(h) = rest.first_chunk::<16>() {
                if let Some(n) = self.fast_framed(h, rest) {
                    at += n;
                    continue;
                }
            }
            // Most packets are shorter than 128 bytes: a key and a one-byte length.
            let (start, len) = match rest {
                [0x0a, len, ..] if *len < 0x80 => (2, usize::from(*len)),
                _ => {
                    let Some((key, n)) = varint(rest) else {
                        return Ok(at);
                    };
                    if key != 0x0a {
                        return Err(not_a_packet(key));
                    }
                    let Some((len, m)) = varint(&rest[n..]) else {
                        return Ok(at);
                    };
                    (n + m, packet_len(len)?)
                }
            };
            if rest.len() - start < len {
                return Ok(at);
            }
            // The common packet read here, inlined; any other by the general path.
            let packet = &rest[start..start + len];
            if !self.fast_packet(packet) {
                self.general_packet(packet, true);
            }
            at += start + len;
        }
    }

    /// Ends the read at damage: an error before any packet, else a warning.
    fn cut(&mut self, why: String) -> Result<(), String> {
        if self.stats.packets == 0 {
            return Err(format!("not a Perfetto trace: {why}"));
        }
        self.tr.warnings.push(format!(
            "{}: {why}; loaded the {} packet(s) before it",
            crate::readers::PARTIAL,
            self.stats.packets
        ));
        Ok(())
    }

    /// One `TracePacket`. `top`: not itself inside `compressed_packets`.
    pub fn packet(&mut self, b: &[u8], top: bool) {
        if !self.fast_packet(b) {
            self.general_packet(b, top);
        }
    }

    /// A packet the fast path (`fast`) left alone.
    #[inline(never)]
    fn general_packet(&mut self, b: &[u8], top: bool) {
        self.stats.packets += 1;
        let mut p = Packet::default();
        if !sdk_event(b, &mut p) {
            p = Packet::default();
            self.walk_packet(b, &mut p);
        }
        if p.bad {
            self.stats.bad_packets += 1;
            return;
        }
        self.apply(p, top);
    }

    /// A packet's fields in general (any order, any field).
    fn walk_packet<'a>(&mut self, b: &'a [u8], p: &mut Packet<'a>) {
        let mut fields = Fields::new(b);
        while let Some((f, v)) = fields.field() {
            match (f, v) {
                (8, Value::Varint(x)) => p.timestamp = Some(x),
                (58, Value::Varint(x)) => p.clock = Some(x as u32),
                (10, Value::Varint(x)) => p.seq = x as u32,
                (13, Value::Varint(x)) => p.flags = x,
                (41, Value::Varint(x)) => p.cleared = x != 0,
                (42, Value::Varint(x)) => p.dropped = x != 0,
                (12, Value::Len(x)) => p.interned = Some(x),
                (59, Value::Len(x)) => p.defaults = Some(x),
                (11, Value::Len(x)) => p.data = Data::TrackEvent(x),
                (60, Value::Len(x)) => p.data = Data::Track(x),
                (6, Value::Len(x)) => p.data = Data::Clock(x),
                (44, Value::Len(x)) => p.data = Data::Thread(x),
                (43, Value::Len(x)) => p.data = Data::Process(x),
                (50, Value::Len(x)) => p.data = Data::Compressed(x),
                // Fields of every packet, not its data.
                (3 | 79 | 87 | 98, _) => {}
                (f, _) => p.data = Data::Other(f),
            }
        }
        p.bad = fields.bad;
    }

    /// A packet read: its sequence's state, then its data.
    #[inline(always)]
    fn apply(&mut self, mut p: Packet, top: bool) {
        p.si = self.seqs.index(p.seq);
        let seq = self.seqs.at(p.si);
        if p.dropped {
            seq.lost = true;
        }
        if p.cleared || p.flags & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
            seq.clear();
        }
        if p.flags & SEQ_NEEDS_INCREMENTAL_STATE != 0 && seq.lost {
            self.stats.needs_state += 1;
            return;
        }
        if let Some(d) = p.defaults {
            match TracePacketDefaults::decode(d) {
                Ok(d) => {
                    seq.defaults = Some(d);
                    seq.fast = None;
                }
                Err(_) => self.stats.bad_packets += 1,
            }
        }
        if let Some(i) = p.interned {
            self.intern(p.si, i);
        }
        // A snapshot first: it restarts the incremental clocks the packet's own
        // timestamp may be in. Every timestamped packet advances its incremental clock.
        if let Data::Clock(c) = p.data {
            match ClockSnapshot::decode(c) {
                Ok(c) => {
                    let bases = self.clocks.snapshot(p.seq, &c);
                    let seq = self.seqs.at(p.si);
                    for ((_, id), v) in bases {
                        match seq.incr.iter_mut().find(|(c, _)| *c == id) {
                            Some(x) => x.1 = v,
                            None => seq.incr.push((id, v)),
                        }
                    }
                }
                Err(_) => self.stats.bad_packets += 1,
            }
        }
        let ts = self.time(&p);
        match p.data {
            Data::TrackEvent(e) => self.track_event(&p, ts, e),
            Data::Track(t) => match TrackDescriptor::decode(t) {
                Ok(t) => self.tracks.describe(t),
                Err(_) => self.stats.bad_packets += 1,
            },
            Data::Clock(_) => {}
            Data::Thread(t) => match ThreadDescriptor::decode(t) {
                Ok(t) => {
                    let seq = self.seqs.at(p.si);
                    seq.thread = Some((t.pid.unwrap_or(0), t.tid.unwrap_or(0)));
                    seq.fast = None;
                    seq.reference_us = t.reference_timestamp_us.unwrap_or(0);
                    self.tracks.legacy_thread(&t);
                }
                Err(_) => self.stats.bad_packets += 1,
            },
            Data::Process(d) => match super::proto::ProcessDescriptor::decode(d) {
                Ok(d) => self.tracks.legacy_process(d),
                Err(_) => self.stats.bad_packets += 1,
            },
            Data::Compressed(z) if top => self.compressed(z),
            Data::Compressed(_) => self.stats.nested_compressed += 1,
            Data::Other(f) => *self.stats.other.entry(f).or_default() += 1,
            Data::None => {}
        }
    }

    /// `compressed_packets`: a zlib-deflated run of `Trace.packet` fields.
    fn compressed(&mut self, z: &[u8]) {
        let mut out = Vec::new();
        let mut d = flate2::read::ZlibDecoder::new(z).take(1 << 30);
        if d.read_to_end(&mut out).is_err() {
            self.stats.bad_packets += 1;
            return;
        }
        let mut fields = Fields::new(&out);
        let packets: Vec<&[u8]> = (&mut fields)
            .filter_map(|(f, v)| match (f, v) {
                (1, Value::Len(p)) => Some(p),
                _ => None,
            })
            .collect();
        for p in packets {
            self.packet(p, false);
        }
        if fields.bad {
            self.stats.bad_packets += 1;
        }
    }

    fn intern(&mut self, si: usize, b: &[u8]) {
        let Ok(d) = InternedData::decode(b) else {
            self.stats.bad_packets += 1;
            return;
        };
        let strings = &mut self.tr.events.strings;
        let seq = self.seqs.at(si);
        for n in &d.event_names {
            seq.names.insert(n.iid, strings.intern(&n.name));
        }
        for n in &d.event_categories {
            seq.cats.insert(n.iid, strings.intern(&n.name));
        }
        for n in d.debug_annotation_names {
            seq.ann_names.insert(n.iid, n.name);
        }
    }

    /// The packet's time in the trace clock (ns), from its timestamp in its clock.
    fn time(&mut self, p: &Packet) -> Option<i64> {
        let raw = p.timestamp?;
        let seq = self.seqs.at(p.si);
        let clock = p
            .clock
            .or_else(|| seq.defaults.as_ref().and_then(|d| d.timestamp_clock_id))
            .unwrap_or_else(|| self.clocks.trace_clock());
        let key = clocks::key(p.seq, clock);
        let gen = self.clocks.generation;
        let (incremental, unit) = match seq.clock_cache {
            Some((g, k, inc, u)) if g == gen && k == key => (inc, u),
            _ => {
                let (inc, u) = self.clocks.units.get(&key).copied().unwrap_or((false, 1));
                seq.clock_cache = Some((gen, key, inc, u));
                (inc, u)
            }
        };
        let value: i64 = if incremental {
            let i = match seq.incr.iter().position(|(c, _)| *c == clock) {
                Some(i) => i,
                None => {
                    seq.incr.push((clock, 0));
                    seq.incr.len() - 1
                }
            };
            let v = &mut seq.incr[i].1;
            *v = v.wrapping_add(raw as i64);
            *v
        } else {
            raw as i64
        };
        // Nanoseconds mostly: no multiplication then.
        let ns = if unit == 1 {
            value
        } else {
            value.saturating_mul(unit)
        };
        Some(self.clocks.convert_with(key, ns, &mut seq.conv))
    }
}

/// The fields of a packet that say how to read its data.
#[derive(Default)]
pub struct Packet<'a> {
    pub timestamp: Option<u64>,
    pub clock: Option<u32>,
    pub seq: u32,
    /// The sequence's place in `Seqs` (`Seqs::index`).
    pub si: usize,
    flags: u64,
    cleared: bool,
    dropped: bool,
    interned: Option<&'a [u8]>,
    defaults: Option<&'a [u8]>,
    data: Data<'a>,
    /// Damaged: skipped (counted).
    bad: bool,
}

/// The packet the Perfetto SDK writes for a track event (timestamp, sequence id, flags
/// and the event, in any order), read without the general field walk: one key byte
/// names the field and its wire type at once. Any other field, or damage, says no (the
/// packet is then walked in general, `walk_packet`); fields set as that walk sets them.
#[inline(always)]
fn sdk_event<'a>(b: &'a [u8], p: &mut Packet<'a>) -> bool {
    // The SDK's order with one-byte sequence id, flags and length: straight through.
    if let [0x40, rest @ ..] = b {
        if let Some((ts, [0x50, seq, 0x68, flags, 0x5a, len, event @ ..])) = varint_rest(rest) {
            if *seq < 0x80 && *flags < 0x80 && usize::from(*len) == event.len() {
                p.timestamp = Some(ts);
                p.seq = u32::from(*seq);
                p.flags = u64::from(*flags);
                p.data = Data::TrackEvent(event);
                return true;
            }
        }
    }
    let mut rest = b;
    while let Some((&k, r)) = rest.split_first() {
        let Some((v, r)) = varint_rest(r) else {
            return false;
        };
        rest = r;
        match k {
            0x40 => p.timestamp = Some(v),
            0x50 => p.seq = v as u32,
            0x68 => p.flags = v,
            0x5a => {
                let Some((x, r)) = split_len(v, rest) else {
                    return false;
                };
                p.data = Data::TrackEvent(x);
                rest = r;
            }
            _ => return false,
        }
    }
    true
}

#[derive(Default, Clone, Copy)]
enum Data<'a> {
    #[default]
    None,
    TrackEvent(&'a [u8]),
    Track(&'a [u8]),
    Clock(&'a [u8]),
    Thread(&'a [u8]),
    Process(&'a [u8]),
    Compressed(&'a [u8]),
    Other(u32),
}

fn not_a_packet(key: u64) -> String {
    format!("a field other than Trace.packet (key {key:#x}) where a packet should start")
}

/// A packet's length as the stream gives it, refused when absurd.
fn packet_len(len: u64) -> Result<usize, String> {
    match usize::try_from(len) {
        Ok(l) if l <= 1 << 30 => Ok(l),
        Ok(_) => Err(format!("a packet of {len} bytes (more than 1 GiB)")),
        Err(_) => Err(format!("a packet of {len} bytes")),
    }
}

/// Reads a packet of `len` bytes into `buf[..len]`. The buffer only grows (no zeroing
/// per packet); a large packet grows it as its bytes arrive, so a damaged length costs
/// no more memory than the input holds.
fn read_packet(input: &mut dyn BufRead, buf: &mut Vec<u8>, len: usize) -> Result<(), String> {
    const SMALL: usize = 1 << 20;
    let cut = |n: usize| format!("the last packet is cut short ({n} of its {len} bytes)");
    if len <= SMALL {
        if buf.len() < len {
            buf.resize(len, 0);
        }
        return match input.read_exact(&mut buf[..len]) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(format!(
                "the last packet is cut short (it should have {len} bytes)"
            )),
            Err(e) => Err(e.to_string()),
        };
    }
    buf.clear();
    match input.take(len as u64).read_to_end(buf) {
        Ok(n) if n == len => Ok(()),
        Ok(n) => Err(cut(n)),
        Err(e) => Err(e.to_string()),
    }
}

/// A varint from a stream; None at a clean end (no byte at all).
fn read_varint(r: &mut dyn BufRead) -> Result<Option<u64>, String> {
    let buf = r.fill_buf().map_err(|e| e.to_string())?;
    if buf.is_empty() {
        return Ok(None);
    }
    if let Some((v, n)) = varint(buf) {
        r.consume(n);
        return Ok(Some(v));
    }
    // Split across buffer refills (or damaged): byte by byte.
    let mut v = 0u64;
    for i in 0..10 {
        let mut byte = [0u8];
        match r.read(&mut byte) {
            Ok(1) => {}
            Ok(_) => return Err("the input ends inside a varint".into()),
            Err(e) => return Err(e.to_string()),
        }
        v |= u64::from(byte[0] & 0x7f) << (7 * i);
        if byte[0] < 0x80 {
            return Ok(Some(v));
        }
    }
    Err("a varint longer than 10 bytes".into())
}
