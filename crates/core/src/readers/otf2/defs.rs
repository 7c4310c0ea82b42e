//! Definitions: the global definitions file (`traces.def`: strings, regions, system
//! tree, location groups, locations, groups, communicators, metric members and classes,
//! attributes, clock properties) and each location's local definitions
//! (`traces/N.def`: the mapping tables that turn the event file's local ids into
//! global ones, and the clock offsets that correct its timestamps).
//!
//! Every record carries its length, so a record grove does not read is skipped by it,
//! and fields appended by later OTF2 versions are skipped the same way (a reader
//! always jumps to the record's announced end).

use std::collections::HashMap;

use super::buffer::{self, Buf, Res};

// Global definition record ids (otf2_global_definitions.h).
const CLOCK_PROPERTIES: u8 = 5;
const PARADIGM: u8 = 6;
const STRING: u8 = 10;
const ATTRIBUTE: u8 = 11;
const SYSTEM_TREE_NODE: u8 = 12;
const LOCATION_GROUP: u8 = 13;
const LOCATION: u8 = 14;
const REGION: u8 = 15;
const GROUP: u8 = 18;
const METRIC_MEMBER: u8 = 19;
const METRIC_CLASS: u8 = 20;
const METRIC_INSTANCE: u8 = 21;
const COMM: u8 = 22;
/// The highest global definition id of OTF2 3.0 (CallpathParameter); higher ids are
/// from a newer OTF2 and counted as unknown.
const LAST_KNOWN_GLOBAL: u8 = 42;

// Local definition record ids (otf2_local_definitions.h).
const MAPPING_TABLE: u8 = 5;
const CLOCK_OFFSET: u8 = 6;

/// Mapping types (OTF2_MappingType) grove applies.
pub const MAP_STRING: u8 = 0;
pub const MAP_LOCATION: u8 = 2;
pub const MAP_REGION: u8 = 3;
pub const MAP_METRIC: u8 = 5;
pub const MAP_COMM: u8 = 6;
pub const MAP_KINDS: usize = 15;

/// Location types (OTF2_LocationType).
pub const LOCATION_CPU_THREAD: u8 = 1;
pub const LOCATION_ACCELERATOR_STREAM: u8 = 2;
pub const LOCATION_METRIC: u8 = 3;

#[derive(Debug, Clone, Default)]
pub struct Region {
    pub name: u32,
    pub canonical: u32,
    pub file: u32,
    pub begin_line: u32,
    pub role: u8,
    pub paradigm: u8,
}

#[derive(Debug, Clone)]
pub struct Location {
    pub id: u64,
    pub name: u32,
    pub kind: u8,
    pub events: u64,
    pub group: u32,
}

#[derive(Debug, Clone, Default)]
pub struct LocationGroup {
    pub name: u32,
    pub kind: u8,
    pub parent: u32,
}

#[derive(Debug, Clone, Default)]
pub struct MetricMember {
    pub name: u32,
    pub unit: u32,
    /// OTF2_MetricMode: value kind in the low nibble, timing in the high one.
    pub mode: u8,
    pub value_type: u8,
    pub base: u8,
    pub exponent: i64,
}

/// What one METRIC record's values are: a class's members, in order.
#[derive(Debug, Clone, Default)]
pub struct MetricClass {
    pub members: Vec<u32>,
    /// OTF2_MetricOccurrence: 0 strict synchronous, 1 synchronous, 2 asynchronous.
    pub occurrence: u8,
}

/// A MetricInstance: a class recorded by one location for a scope, which may be the
/// recording location or something else (another location, a location group, a
/// system tree node, a group of locations).
#[derive(Debug, Clone, Default)]
pub struct MetricInstance {
    pub class: u32,
    pub recorder: u64,
    /// OTF2_MetricScope: 0 location, 1 location group, 2 system tree node, 3 group.
    pub scope_kind: u8,
    pub scope: u64,
}

#[derive(Debug, Default)]
pub struct Defs {
    pub clock_resolution: u64,
    pub clock_offset: u64,
    pub trace_length: u64,
    pub strings: HashMap<u32, String>,
    pub paradigms: HashMap<u8, u32>,
    pub regions: HashMap<u32, Region>,
    pub locations: Vec<Location>,
    pub location_groups: HashMap<u32, LocationGroup>,
    pub system_tree: HashMap<u32, (u32, u32, u32)>,
    pub metric_members: HashMap<u32, MetricMember>,
    /// Metric classes and instances share one id space; an instance names its class.
    pub metric_classes: HashMap<u32, MetricClass>,
    pub metric_instances: HashMap<u32, MetricInstance>,
    pub comms: HashMap<u32, u32>,
    pub records: u64,
    /// Whether the file ended with its end-of-file mark (a cut file does not).
    pub complete: bool,
    /// Records of ids this OTF2 version does not define (from newer writers).
    pub unknown: u64,
}

impl Defs {
    pub fn string(&self, id: u32) -> &str {
        self.strings.get(&id).map(|s| s.as_str()).unwrap_or("")
    }

    /// The members of a metric class or instance.
    pub fn metric_class(&self, id: u32) -> Option<&MetricClass> {
        self.metric_classes.get(&id).or_else(|| {
            self.metric_instances
                .get(&id)
                .and_then(|i| self.metric_classes.get(&i.class))
        })
    }
}

/// Reads the records of one chunk of a definitions file into `each(record id, body)`,
/// where `body` ends at the record's end. Stops at END_OF_FILE.
fn records(
    b: &mut Buf<'_>,
    done: &mut bool,
    mut each: impl FnMut(u8, &mut Buf<'_>) -> Res<()>,
) -> Res<()> {
    b.header(true)?;
    while !b.at_end() {
        let id = b.u8()?;
        match id {
            buffer::END_OF_CHUNK => return Ok(()),
            buffer::END_OF_FILE | 1 => {
                *done = true;
                return Ok(());
            }
            _ => {}
        }
        let end = b.record_end()?;
        let mut body = Buf {
            data: &b.data[..end],
            pos: b.pos,
            big_endian: b.big_endian,
            base: b.base,
        };
        each(id, &mut body)?;
        b.pos = end;
    }
    Ok(())
}

/// Parses the global definitions, one chunk at a time.
pub fn parse_global(path: &std::path::Path, chunk_size: u64) -> Result<Defs, String> {
    let mut d = Defs::default();
    let mut done = false;
    buffer::for_each_chunk(path, chunk_size, |mut b| {
        if done {
            return Ok(());
        }
        records(&mut b, &mut done, |id, r| global_record(&mut d, id, r))
    })?;
    d.complete = done;
    Ok(d)
}

/// One global definition (a chunk's bytes are the test's input too).
pub fn global_record(d: &mut Defs, id: u8, r: &mut Buf<'_>) -> Res<()> {
    d.records += 1;
    match id {
        CLOCK_PROPERTIES => {
            d.clock_resolution = r.u64c()?;
            d.clock_offset = r.u64c()?;
            d.trace_length = r.u64c()?;
        }
        PARADIGM => {
            let p = r.u8()?;
            let name = r.u32c()?;
            d.paradigms.insert(p, name);
        }
        STRING => {
            let id = r.u32c()?;
            let s = r.cstr()?;
            d.strings.insert(id, s);
        }
        SYSTEM_TREE_NODE => {
            let id = r.u32c()?;
            let name = r.u32c()?;
            let class = r.u32c()?;
            let parent = r.u32c()?;
            d.system_tree.insert(id, (name, class, parent));
        }
        LOCATION_GROUP => {
            let id = r.u32c()?;
            let name = r.u32c()?;
            let kind = r.u8()?;
            let parent = r.u32c()?;
            d.location_groups
                .insert(id, LocationGroup { name, kind, parent });
        }
        LOCATION => {
            let id = r.u64c()?;
            let name = r.u32c()?;
            let kind = r.u8()?;
            let events = r.u64c()?;
            let group = r.u32c()?;
            d.locations.push(Location {
                id,
                name,
                kind,
                events,
                group,
            });
        }
        REGION => {
            let id = r.u32c()?;
            let name = r.u32c()?;
            let _description = r.u32c()?;
            let _region_type = r.u8()?;
            let file = r.u32c()?;
            let begin_line = r.u32c()?;
            let _end_line = r.u32c()?;
            let mut reg = Region {
                name,
                canonical: name,
                file,
                begin_line,
                role: 0,
                paradigm: 0,
            };
            // Since OTF2 1.1: canonical name, role, paradigm, flags.
            if !r.at_end() {
                reg.canonical = r.u32c()?;
                reg.role = r.u8()?;
                reg.paradigm = r.u8()?;
            }
            d.regions.insert(id, reg);
        }
        METRIC_MEMBER => {
            let id = r.u32c()?;
            let name = r.u32c()?;
            let _description = r.u32c()?;
            let _metric_type = r.u8()?;
            let mode = r.u8()?;
            let value_type = r.u8()?;
            let base = r.u8()?;
            let exponent = r.i64c()?;
            let unit = r.u32c()?;
            d.metric_members.insert(
                id,
                MetricMember {
                    name,
                    unit,
                    mode,
                    value_type,
                    base,
                    exponent,
                },
            );
        }
        METRIC_CLASS => {
            let id = r.u32c()?;
            let n = r.u8()?;
            let mut members = Vec::with_capacity(n as usize);
            for _ in 0..n {
                members.push(r.u32c()?);
            }
            let occurrence = r.u8()?;
            d.metric_classes.insert(
                id,
                MetricClass {
                    members,
                    occurrence,
                },
            );
        }
        METRIC_INSTANCE => {
            let id = r.u32c()?;
            let class = r.u32c()?;
            let recorder = r.u64c()?;
            let scope_kind = r.u8()?;
            let scope = r.u64c()?;
            d.metric_instances.insert(
                id,
                MetricInstance {
                    class,
                    recorder,
                    scope_kind,
                    scope,
                },
            );
        }
        COMM => {
            let id = r.u32c()?;
            let name = r.u32c()?;
            d.comms.insert(id, name);
        }
        ATTRIBUTE | GROUP => {}
        x if !(CLOCK_PROPERTIES..=LAST_KNOWN_GLOBAL).contains(&x) => d.unknown += 1,
        _ => {}
    }
    Ok(())
}

/// One location's local definitions: mapping tables (local id -> global id, per kind)
/// and clock offsets.
#[derive(Debug, Default)]
pub struct Local {
    pub maps: Vec<Option<IdMap>>,
    /// (time, offset) synchronisation points, in file order.
    pub clock_offsets: Vec<(u64, i64)>,
    pub unknown: u64,
}

#[derive(Debug, Clone)]
pub enum IdMap {
    /// Local id i maps to the i-th value.
    Dense(Vec<u64>),
    Sparse(HashMap<u64, u64>),
}

impl IdMap {
    pub fn get(&self, local: u64) -> u64 {
        match self {
            IdMap::Dense(v) => v.get(local as usize).copied().unwrap_or(local),
            IdMap::Sparse(m) => m.get(&local).copied().unwrap_or(local),
        }
    }
}

/// Sizes above this are damage, not a real map: refuse before allocating.
const MAX_MAP: u64 = 1 << 26;

pub fn parse_local(path: &std::path::Path, chunk_size: u64) -> Result<Local, String> {
    let mut l = Local {
        maps: vec![None; MAP_KINDS],
        ..Default::default()
    };
    let mut done = false;
    buffer::for_each_chunk(path, chunk_size, |mut b| {
        if done {
            return Ok(());
        }
        records(&mut b, &mut done, |id, r| local_record(&mut l, id, r))
    })?;
    Ok(l)
}

pub fn local_record(l: &mut Local, id: u8, r: &mut Buf<'_>) -> Res<()> {
    match id {
        MAPPING_TABLE => {
            let kind = r.u8()?;
            let n = r.u64c()?;
            let mode = r.u8()?;
            if n > MAX_MAP || n > r.remaining() as u64 {
                return r.err(format!(
                    "mapping table of {n} entries is larger than its record"
                ));
            }
            let map = if mode == 0 {
                let mut v = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    v.push(r.u64c()?);
                }
                IdMap::Dense(v)
            } else {
                let mut m = HashMap::with_capacity(n as usize);
                for _ in 0..n {
                    let k = r.u64c()?;
                    let v = r.u64c()?;
                    m.insert(k, v);
                }
                IdMap::Sparse(m)
            };
            if let Some(slot) = l.maps.get_mut(kind as usize) {
                *slot = Some(map);
            }
        }
        CLOCK_OFFSET => {
            let time = r.u64_full()?;
            let offset = r.i64c()?;
            l.clock_offsets.push((time, offset));
        }
        _ => l.unknown += 1,
    }
    Ok(())
}

/// Timer synchronisation intervals built from clock offsets as OTF2 builds them: each
/// consecutive pair gives an interval with a linear slope; times before the first or
/// after the last use the nearest interval; one offset alone corrects nothing.
#[derive(Debug, Default, Clone)]
pub struct ClockCorrection {
    intervals: Vec<(u64, u64, i64, f64)>,
    at: usize,
}

impl ClockCorrection {
    pub fn new(offsets: &[(u64, i64)]) -> ClockCorrection {
        let mut intervals = Vec::new();
        for w in offsets.windows(2) {
            let ((t0, o0), (t1, o1)) = (w[0], w[1]);
            if t1 <= t0 {
                continue;
            }
            // In f64: offsets of a damaged file may be any i64, and their difference
            // must not overflow.
            let slope = (o1 as f64 - o0 as f64) / (t1 - t0) as f64;
            intervals.push((t0, t1, o0, slope));
        }
        ClockCorrection { intervals, at: 0 }
    }

    /// The corrected time; times come in increasing order, so the interval search
    /// moves forward only.
    pub fn apply(&mut self, t: u64) -> u64 {
        if self.intervals.is_empty() {
            return t;
        }
        while self.at + 1 < self.intervals.len() && t > self.intervals[self.at].1 {
            self.at += 1;
        }
        let (begin, _, offset, slope) = self.intervals[self.at];
        let diff = if t >= begin {
            (t - begin) as f64
        } else {
            -((begin - t) as f64)
        };
        // Saturating: a damaged offset or slope gives a wrong time, never an overflow
        // (the `as i64` of a huge or NaN product saturates too).
        let off = offset.saturating_add((slope * diff).round_ties_even() as i64);
        t.wrapping_add(off as u64)
    }
}
