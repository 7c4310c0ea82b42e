//! The level-of-detail summary that stands in for a trace's event rows in low-memory
//! mode (`--low-memory`): per GPU lane, the busy time in fixed time buckets and the
//! name that dominates each bucket, plus every GPU activity's duration grouped by name
//! (what the kernel table's count, total, mean, median, min, max and deviation need,
//! exactly). Plain data: `gpu::lod` builds it from the full table and reads it back.

use super::events::EventKind;

/// Buckets per lane: a timeline at most this many columns wide draws from it.
pub const BUCKETS: usize = 4096;

#[derive(Debug, Default, Clone)]
pub struct Lod {
    /// The earliest start of any event (the timeline counts from here).
    pub origin: i64,
    /// The first bucket's start and each bucket's width (ns).
    pub from: i64,
    pub bucket_ns: i64,
    /// GPU lanes in the timeline's order (by device, then stream).
    pub lanes: Vec<LodLane>,
    /// GPU activities by (name, kind), in the order of their first start.
    pub groups: Vec<LodGroup>,
    /// The rows the event table had before it was reduced.
    pub rows: usize,
}

#[derive(Debug, Default, Clone)]
pub struct LodLane {
    /// `GPU0 s7`.
    pub label: String,
    /// Busy nanoseconds in each bucket (overlaps on one stream counted once each).
    pub busy: Vec<i64>,
    /// The name (an id of the event table's strings) that covers most of each bucket
    /// alone; `u32::MAX` where the lane is idle.
    pub dominant: Vec<u32>,
}

#[derive(Debug, Clone)]
pub struct LodGroup {
    pub name: u32,
    pub kind: EventKind,
    /// Position of the group's first instance among all activities (start order).
    pub first: u32,
    /// The instances' durations, in start order.
    pub durs: Vec<i64>,
}

impl Lod {
    /// The number of buckets (every lane has as many).
    pub fn buckets(&self) -> usize {
        self.lanes.first().map(|l| l.busy.len()).unwrap_or(0)
    }

    /// `[from, to)` covered by the buckets.
    pub fn span(&self) -> (i64, i64) {
        (
            self.from,
            self.from + self.bucket_ns * self.buckets() as i64,
        )
    }

    /// Approximate bytes held (for the memory report).
    pub fn bytes(&self) -> usize {
        let lanes: usize = self.lanes.iter().map(|l| l.busy.len() * 12).sum();
        let groups: usize = self.groups.iter().map(|g| g.durs.len() * 8 + 32).sum();
        lanes + groups
    }
}
