//! A location's event file (`traces/N.evt`): chunks of records, each
//! `[timestamp record][attribute list][type byte][length][payload]`. A timestamp record
//! (id 5, eight fixed bytes) sets the time of the records after it; an attribute list
//! (id 6) belongs to the next event and is skipped by its length. Every event has a
//! length byte except the "singletons" of OTF2 1.1 (one compressed field and no
//! length: Enter, Leave, the MPI request and OpenMP task records), which are read or
//! skipped by their one field. Any other id is skipped by its length and counted.

use super::buffer::{self, Buf, Res};
use super::defs::{IdMap, MAP_COMM, MAP_METRIC, MAP_REGION};

pub const ENTER: u8 = 12;
pub const LEAVE: u8 = 13;
pub const MPI_SEND: u8 = 14;
pub const MPI_ISEND: u8 = 15;
pub const MPI_RECV: u8 = 18;
pub const MPI_IRECV: u8 = 19;
pub const MPI_COLLECTIVE_END: u8 = 23;
pub const METRIC: u8 = 31;
/// The last event id of OTF2 3.0 (ProgramEnd); higher ids come from newer writers.
pub const LAST_KNOWN: u8 = 84;

/// Event records with one compressed field and no length byte (OTF2 1.1; "there
/// won't be any after 1.1").
fn is_singleton(id: u8) -> bool {
    matches!(id, 12 | 13 | 16 | 17 | 20 | 21 | 24 | 28 | 29 | 30)
}

/// Names of event records as otf2-print shows them, for the per-type counts.
pub fn event_name(id: u8) -> Option<&'static str> {
    Some(match id {
        10 => "BUFFER_FLUSH",
        11 => "MEASUREMENT_ON_OFF",
        12 => "ENTER",
        13 => "LEAVE",
        14 => "MPI_SEND",
        15 => "MPI_ISEND",
        16 => "MPI_ISEND_COMPLETE",
        17 => "MPI_IRECV_REQUEST",
        18 => "MPI_RECV",
        19 => "MPI_IRECV",
        20 => "MPI_REQUEST_TEST",
        21 => "MPI_REQUEST_CANCELLED",
        22 => "MPI_COLLECTIVE_BEGIN",
        23 => "MPI_COLLECTIVE_END",
        24 => "OMP_FORK",
        25 => "OMP_JOIN",
        26 => "OMP_ACQUIRE_LOCK",
        27 => "OMP_RELEASE_LOCK",
        28 => "OMP_TASK_CREATE",
        29 => "OMP_TASK_SWITCH",
        30 => "OMP_TASK_COMPLETE",
        31 => "METRIC",
        32 => "PARAMETER_STRING",
        33 => "PARAMETER_INT",
        34 => "PARAMETER_UNSIGNED_INT",
        35..=52 => "RMA",
        53 => "THREAD_FORK",
        54 => "THREAD_JOIN",
        55 => "THREAD_TEAM_BEGIN",
        56 => "THREAD_TEAM_END",
        57 => "THREAD_ACQUIRE_LOCK",
        58 => "THREAD_RELEASE_LOCK",
        59 => "THREAD_TASK_CREATE",
        60 => "THREAD_TASK_SWITCH",
        61 => "THREAD_TASK_COMPLETE",
        62 => "THREAD_CREATE",
        63 => "THREAD_BEGIN",
        64 => "THREAD_WAIT",
        65 => "THREAD_END",
        66 => "CALLING_CONTEXT_ENTER",
        67 => "CALLING_CONTEXT_LEAVE",
        68 => "CALLING_CONTEXT_SAMPLE",
        69..=82 => "IO",
        83 => "PROGRAM_BEGIN",
        84 => "PROGRAM_END",
        _ => return None,
    })
}

/// What the decoder hands on. Ids are already global (mapped).
pub trait Visit {
    fn enter(&mut self, t: u64, region: u32);
    fn leave(&mut self, t: u64, region: u32);
    /// A point-to-point send (`send`) or receive, with its size in bytes.
    fn message(&mut self, t: u64, send: bool, bytes: u64);
    fn collective(&mut self, t: u64, sent: u64, received: u64);
    /// A METRIC record: the metric class or instance and its (type, raw value) pairs.
    fn metric(&mut self, t: u64, metric: u32, values: &[(u8, u64)]);
}

/// Per-location decoding state that survives chunk boundaries.
pub struct Decoder<'m> {
    pub maps: &'m [Option<IdMap>],
    pub clock: super::defs::ClockCorrection,
    pub time: u64,
    /// Events by record id (attribute lists and timestamps are not events).
    pub counts: [u64; 256],
    pub done: bool,
    values: Vec<(u8, u64)>,
}

impl<'m> Decoder<'m> {
    pub fn new(maps: &'m [Option<IdMap>], clock: super::defs::ClockCorrection) -> Decoder<'m> {
        Decoder {
            maps,
            clock,
            time: 0,
            counts: [0; 256],
            done: false,
            values: Vec::new(),
        }
    }

    fn map(&self, kind: u8, id: u64) -> u64 {
        match self.maps.get(kind as usize) {
            Some(Some(m)) => m.get(id),
            _ => id,
        }
    }

    /// Decodes one chunk.
    pub fn chunk(&mut self, b: &mut Buf<'_>, v: &mut impl Visit) -> Res<()> {
        if self.done {
            return Ok(());
        }
        b.header(true)?;
        while !b.at_end() {
            let id = b.u8()?;
            match id {
                buffer::END_OF_CHUNK => return Ok(()),
                1 | buffer::END_OF_FILE => {
                    self.done = true;
                    return Ok(());
                }
                buffer::TIMESTAMP => {
                    let raw = b.u64_full()?;
                    self.time = self.clock.apply(raw);
                    continue;
                }
                buffer::ATTRIBUTE_LIST => {
                    b.pos = b.record_end()?;
                    continue;
                }
                _ => {}
            }
            self.counts[id as usize] += 1;
            let t = self.time;
            if is_singleton(id) {
                if id == ENTER || id == LEAVE {
                    let r = self.map(MAP_REGION, b.u32c()? as u64) as u32;
                    if id == ENTER {
                        v.enter(t, r);
                    } else {
                        v.leave(t, r);
                    }
                } else {
                    b.skip_compressed()?;
                }
                continue;
            }
            let end = b.record_end()?;
            let mut r = Buf {
                data: &b.data[..end],
                pos: b.pos,
                big_endian: b.big_endian,
                base: b.base,
            };
            match id {
                MPI_SEND | MPI_ISEND | MPI_RECV | MPI_IRECV => {
                    let _peer = r.u32c()?;
                    let _comm = self.map(MAP_COMM, r.u32c()? as u64);
                    let _tag = r.u32c()?;
                    let bytes = r.u64c()?;
                    v.message(t, matches!(id, MPI_SEND | MPI_ISEND), bytes);
                }
                MPI_COLLECTIVE_END => {
                    let _op = r.u8()?;
                    let _comm = r.u32c()?;
                    let _root = r.u32c()?;
                    let sent = r.u64c()?;
                    let received = r.u64c()?;
                    v.collective(t, sent, received);
                }
                METRIC => {
                    let m = self.map(MAP_METRIC, r.u32c()? as u64) as u32;
                    let n = r.u8()?;
                    self.values.clear();
                    for _ in 0..n {
                        let ty = r.u8()?;
                        let val = r.u64c()?;
                        self.values.push((ty, val));
                    }
                    v.metric(t, m, &self.values);
                }
                _ => {}
            }
            b.pos = end;
        }
        Ok(())
    }
}
