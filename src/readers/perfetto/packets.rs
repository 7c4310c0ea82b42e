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
use super::wire::{varint, Fields, Value};
use crate::model::intern::FxBuild;
use crate::readers::chrome::ChromeTrace;

/// `TracePacket.SequenceFlags`.
const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

/// One packet sequence's incremental state (a writer thread's, in the SDK).
#[derive(Default)]
pub struct Seq {
    /// False after a packet of the sequence was lost, until the state is cleared:
    /// packets that need it are skipped, as trace_processor does.
    pub lost: bool,
    pub names: HashMap<u64, u32, FxBuild>,
    pub cats: HashMap<u64, u32, FxBuild>,
    pub ann_names: HashMap<u64, String, FxBuild>,
    pub defaults: Option<TracePacketDefaults>,
    /// The last value of each incremental clock, in the clock's units.
    pub incr: HashMap<u32, i64, FxBuild>,
    /// The legacy thread descriptor packet's thread, and its time base for
    /// `timestamp_delta_us`.
    pub thread: Option<(i32, i64)>,
    pub reference_us: i64,
}

impl Seq {
    fn clear(&mut self) {
        self.lost = false;
        self.names.clear();
        self.cats.clear();
        self.ann_names.clear();
        self.defaults = None;
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
}

pub struct Decoder {
    pub tr: ChromeTrace,
    pub seqs: HashMap<u32, Seq, FxBuild>,
    pub clocks: Clocks,
    pub tracks: Tracks,
    pub stats: Stats,
    /// Running event number: the `seq` of rows, their file order.
    pub order: u32,
    pub max_ts: i64,
    pub bufs: super::events::Bufs,
    /// Flow ids with the track and time of each event naming them, in file order.
    pub flows: Vec<(u64, u32, i64)>,
    /// What each category means (`kind_of`).
    pub kinds: HashMap<u32, crate::model::events::EventKind, FxBuild>,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder {
            tr: ChromeTrace::default(),
            seqs: HashMap::default(),
            clocks: Clocks::default(),
            tracks: Tracks::default(),
            stats: Stats::default(),
            order: 0,
            max_ts: i64::MIN,
            bufs: Default::default(),
            flows: Vec::new(),
            kinds: HashMap::default(),
        }
    }

    /// Reads the stream to its end. Damage after the first packet ends the read with a
    /// warning (what came before is kept); damage before it is the error.
    pub fn read_stream(&mut self, input: &mut dyn BufRead) -> Result<(), String> {
        let mut buf: Vec<u8> = Vec::new();
        loop {
            let key = match read_varint(input) {
                Ok(Some(k)) => k,
                Ok(None) => return Ok(()),
                Err(e) => return self.cut(e),
            };
            if key != 0x0a {
                return self.cut(format!(
                    "a field other than Trace.packet (key {key:#x}) where a packet should start"
                ));
            }
            let len = match read_varint(input) {
                Ok(Some(l)) => l,
                Ok(None) => return self.cut("the input ends inside a packet's length".into()),
                Err(e) => return self.cut(e),
            };
            let Ok(len) = usize::try_from(len) else {
                return self.cut(format!("a packet of {len} bytes"));
            };
            if len > 1 << 30 {
                return self.cut(format!("a packet of {len} bytes (more than 1 GiB)"));
            }
            if let Err(e) = read_packet(input, &mut buf, len) {
                return self.cut(e);
            }
            self.packet(&buf[..len], true);
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
        self.stats.packets += 1;
        let mut p = Packet::default();
        let mut fields = Fields::new(b);
        for (f, v) in &mut fields {
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
        if fields.bad {
            self.stats.bad_packets += 1;
            return;
        }
        let seq = self.seqs.entry(p.seq).or_default();
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
                Ok(d) => seq.defaults = Some(d),
                Err(_) => self.stats.bad_packets += 1,
            }
        }
        if let Some(i) = p.interned {
            self.intern(p.seq, i);
        }
        // A snapshot first: it restarts the incremental clocks the packet's own
        // timestamp may be in. Every timestamped packet advances its incremental clock.
        if let Data::Clock(c) = p.data {
            match ClockSnapshot::decode(c) {
                Ok(c) => {
                    let bases = self.clocks.snapshot(p.seq, &c);
                    let seq = self.seqs.entry(p.seq).or_default();
                    for ((_, id), v) in bases {
                        seq.incr.insert(id, v);
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
                    let seq = self.seqs.entry(p.seq).or_default();
                    seq.thread = Some((t.pid.unwrap_or(0), t.tid.unwrap_or(0)));
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

    fn intern(&mut self, seq_id: u32, b: &[u8]) {
        let Ok(d) = InternedData::decode(b) else {
            self.stats.bad_packets += 1;
            return;
        };
        let strings = &mut self.tr.events.strings;
        let seq = self.seqs.entry(seq_id).or_default();
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
        let seq = self.seqs.entry(p.seq).or_default();
        let clock = p
            .clock
            .or_else(|| seq.defaults.as_ref().and_then(|d| d.timestamp_clock_id))
            .unwrap_or_else(|| self.clocks.trace_clock());
        let key = clocks::key(p.seq, clock);
        let (incremental, unit) = self.clocks.units.get(&key).copied().unwrap_or((false, 1));
        let value = if incremental {
            let v = seq.incr.entry(clock).or_default();
            *v = v.wrapping_add(raw as i64);
            *v
        } else {
            raw as i64
        };
        Some(self.clocks.convert(key, value.saturating_mul(unit)))
    }
}

/// The fields of a packet that say how to read its data.
#[derive(Default)]
pub struct Packet<'a> {
    pub timestamp: Option<u64>,
    pub clock: Option<u32>,
    pub seq: u32,
    flags: u64,
    cleared: bool,
    dropped: bool,
    interned: Option<&'a [u8]>,
    defaults: Option<&'a [u8]>,
    data: Data<'a>,
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
