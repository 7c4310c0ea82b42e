//! Idle gaps of a timeline lane: the stretches between the end of the union of its
//! activities and the next start. Computed once per lane from its `LaneIndex` (which
//! already holds the activities sorted by start), so stepping from gap to gap and
//! listing the longest ones never walk the event table again.

use super::timeline::LaneIndex;

/// One idle stretch `[start, end)` of a lane, with the activity that ends before it
/// and the one that starts after it (event indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    pub start: i64,
    pub end: i64,
    pub before: u32,
    pub after: u32,
}

impl Gap {
    pub fn len(&self) -> i64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// The gaps of a lane in time order. Overlapping activities count once: a gap starts
/// where the running end of everything before it lies, so a long kernel that covers
/// shorter ones leaves no false gap behind it.
pub fn of_lane(lane: &LaneIndex) -> Vec<Gap> {
    let mut out = Vec::new();
    let mut run_end = i64::MIN;
    let mut last = u32::MAX;
    for k in 0..lane.events.len() {
        let (s, e) = (lane.times.start(k), lane.times.end(k));
        if last != u32::MAX && s > run_end {
            out.push(Gap {
                start: run_end,
                end: s,
                before: last,
                after: lane.events[k],
            });
        }
        if e >= run_end {
            run_end = e;
            last = lane.events[k];
        }
    }
    out
}

/// The first gap of at least `min` ns starting after `t` (forward), or the last one
/// starting before `t`.
pub fn step(gaps: &[Gap], t: i64, forward: bool, min: i64) -> Option<&Gap> {
    if forward {
        let k = gaps.partition_point(|g| g.start <= t);
        gaps[k..].iter().find(|g| g.len() >= min)
    } else {
        let k = gaps.partition_point(|g| g.start < t);
        gaps[..k].iter().rev().find(|g| g.len() >= min)
    }
}

/// The gap that starts at `t`, or else the one that contains it.
pub fn at(gaps: &[Gap], t: i64) -> Option<&Gap> {
    let k = gaps.partition_point(|g| g.start <= t);
    let g = gaps.get(k.checked_sub(1)?)?;
    (t < g.end || g.start == t).then_some(g)
}

/// The `n` longest gaps of at least `min` ns, longest first (earlier first on ties).
pub fn longest(gaps: &[Gap], n: usize, min: i64) -> Vec<Gap> {
    let mut v: Vec<Gap> = gaps.iter().filter(|g| g.len() >= min).copied().collect();
    v.sort_by_key(|g| (std::cmp::Reverse(g.len()), g.start));
    v.truncate(n);
    v
}

/// The innermost slice of a CPU lane open at `t`: the latest-starting slice that
/// has begun by `t` and not yet ended (slices of one thread nest).
pub fn open_slice(lane: &LaneIndex, t: i64) -> Option<u32> {
    lane.innermost_at(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventKind, EventTable};

    fn lane(spans: &[(i64, i64)]) -> LaneIndex {
        let mut ev = EventTable::default();
        let n = ev.strings.intern("k");
        let idx: Vec<u32> = spans
            .iter()
            .map(|&(s, d)| ev.push(n, n, EventKind::Kernel, s, d, 0, 0) as u32)
            .collect();
        LaneIndex::new(&ev, &idx)
    }

    #[test]
    fn gaps_skip_covered_kernels() {
        // [0,100) covers [10,20); then idle until 150; [150,160) then idle to 400.
        let l = lane(&[(0, 100), (10, 10), (150, 10), (400, 5), (405, 0)]);
        let g = of_lane(&l);
        let spans: Vec<(i64, i64)> = g.iter().map(|g| (g.start, g.end)).collect();
        assert_eq!(spans, vec![(100, 150), (160, 400)]);
        assert_eq!(g[0].before, 0);
        assert_eq!(g[0].after, 2);
        assert_eq!(step(&g, 0, true, 0).map(|g| g.start), Some(100));
        assert_eq!(step(&g, 100, true, 0).map(|g| g.start), Some(160));
        assert_eq!(step(&g, 100, true, 1000), None);
        assert_eq!(step(&g, 160, false, 0).map(|g| g.start), Some(100));
        assert_eq!(step(&g, 500, false, 60).map(|g| g.start), Some(160));
        assert_eq!(longest(&g, 1, 0)[0].start, 160);
        assert_eq!(at(&g, 200).map(|g| g.start), Some(160));
        assert_eq!(at(&g, 50), None);
    }

    #[test]
    fn innermost_open_slice() {
        let l = lane(&[(0, 1000), (100, 300), (150, 50), (500, 10)]);
        assert_eq!(open_slice(&l, 160), Some(2));
        assert_eq!(open_slice(&l, 250), Some(1));
        assert_eq!(open_slice(&l, 505), Some(3));
        assert_eq!(open_slice(&l, 700), Some(0));
        assert_eq!(open_slice(&l, 1000), None);
    }
}
