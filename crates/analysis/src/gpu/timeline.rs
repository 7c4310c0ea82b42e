//! The per-stream timeline's data: for each lane, kernels sorted by start plus a
//! level-of-detail pyramid (busy time and dominant kernel per power-of-two bucket), so a
//! frame costs O(columns) zoomed out and O(kernels in view + columns) zoomed in,
//! whatever the trace's size. Overlapping kernels on one stream (programmatic dependent
//! launch) count once in busy time and are all kept.

use std::sync::OnceLock;

use super::spans::Spans;
use super::stack_chart::StackRows;
use crate::model::EventTable;

/// At most this many buckets at the finest level of a lane.
const MAX_BUCKETS: i64 = 1 << 18;

#[derive(Debug, Clone, Default)]
struct Level {
    width: i64,
    busy: Vec<i64>,
    /// Dominant event per bucket (u32::MAX when idle) and its time in the bucket.
    top: Vec<u32>,
    top_ns: Vec<i64>,
}

#[derive(Debug, Clone, Default)]
pub struct LaneIndex {
    pub events: Vec<u32>,
    /// The events' starts and ends, packed (`gpu::spans`): position `k` is `events[k]`.
    pub times: Spans,
    /// Built on the first zoomed-out draw: a lane's pyramid is megabytes whatever the
    /// trace's size, and commands that never draw the timeline (`grove tree`, `info`)
    /// should not pay for it.
    pyramid: OnceLock<Pyramid>,
    /// The stack chart's rows (`gpu::stack_chart`), placed once here.
    pub stack: StackRows,
}

#[derive(Debug, Clone, Default)]
struct Pyramid {
    t0: i64,
    levels: Vec<Level>,
}

/// What one column of a lane shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Share of the column's time with a kernel running, 0..=1.
    pub busy: f64,
    /// The kernel with the most time in the column.
    pub top: Option<u32>,
}

impl LaneIndex {
    pub fn new(ev: &EventTable, events: &[u32]) -> LaneIndex {
        LaneIndex::from_ids(ev, events.to_vec())
    }

    /// `new`, taking the ids' vector: a thread of millions of slices is not copied.
    pub fn from_ids(ev: &EventTable, mut events: Vec<u32>) -> LaneIndex {
        events.shrink_to_fit();
        // The enclosing slice first among equal starts, so the stack chart nests it
        // above the slices it holds. The key is unique (the id is in it), so an
        // unstable sort gives the same order without a stable sort's scratch copy.
        events.sort_unstable_by_key(|&i| {
            (ev.ts[i as usize], std::cmp::Reverse(ev.dur[i as usize]), i)
        });
        let times = Spans::new(events.len(), |k| {
            let i = events[k] as usize;
            (ev.ts[i], ev.ts[i] + ev.dur[i])
        });
        let stack = StackRows::assign(&times);
        LaneIndex {
            events,
            times,
            pyramid: OnceLock::new(),
            stack,
        }
    }

    pub fn span(&self) -> Option<(i64, i64)> {
        self.times.span()
    }

    /// Bytes on the heap: the ids, the packed times and the stack rows (the pyramid,
    /// built on the first zoomed-out draw, apart).
    pub fn heap_bytes(&self) -> usize {
        self.events.capacity() * 4 + self.times.heap_bytes() + self.stack.heap_bytes()
    }

    fn pyramid(&self) -> &Pyramid {
        self.pyramid.get_or_init(|| self.build_pyramid())
    }

    fn build_pyramid(&self) -> Pyramid {
        let Some((t0, t1)) = self.span() else {
            return Pyramid::default();
        };
        let total = (t1 - t0).max(1);
        let mut width = 1i64;
        while total / width > MAX_BUCKETS {
            width *= 2;
        }
        let n = (total / width + 1) as usize;
        let mut busy = vec![0i64; n];
        let mut top = vec![u32::MAX; n];
        let mut top_ns = vec![0i64; n];
        // Busy time from the union of intervals; the dominant kernel by own overlap.
        let mut cur: Option<(i64, i64)> = None;
        let add_busy = |s: i64, e: i64, busy: &mut Vec<i64>| {
            let mut t = s;
            while t < e {
                let b = ((t - t0) / width) as usize;
                let bend = t0 + (b as i64 + 1) * width;
                let x = e.min(bend);
                busy[b] += x - t;
                t = x;
            }
        };
        for k in 0..self.events.len() {
            let (s, e) = (self.times.start(k), self.times.end(k));
            match cur {
                Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
                Some((cs, ce)) => {
                    add_busy(cs, ce, &mut busy);
                    cur = Some((s, e));
                }
                None => cur = Some((s, e)),
            }
            let mut t = s;
            while t < e {
                let b = ((t - t0) / width) as usize;
                let bend = t0 + (b as i64 + 1) * width;
                let x = e.min(bend);
                if x - t > top_ns[b] {
                    top_ns[b] = x - t;
                    top[b] = self.events[k];
                }
                t = x;
            }
            if s == e {
                let b = ((s - t0) / width) as usize;
                if top[b] == u32::MAX {
                    top[b] = self.events[k];
                }
            }
        }
        if let Some((cs, ce)) = cur {
            add_busy(cs, ce, &mut busy);
        }
        let mut levels = vec![Level {
            width,
            busy,
            top,
            top_ns,
        }];
        while levels.last().unwrap().busy.len() > 1 {
            let prev = levels.last().unwrap();
            let m = prev.busy.len().div_ceil(2);
            let mut l = Level {
                width: prev.width * 2,
                busy: vec![0; m],
                top: vec![u32::MAX; m],
                top_ns: vec![0; m],
            };
            for i in 0..prev.busy.len() {
                let j = i / 2;
                l.busy[j] += prev.busy[i];
                if prev.top[i] != u32::MAX && (l.top[j] == u32::MAX || prev.top_ns[i] > l.top_ns[j])
                {
                    l.top[j] = prev.top[i];
                    l.top_ns[j] = prev.top_ns[i];
                }
            }
            levels.push(l);
        }
        Pyramid { t0, levels }
    }

    /// First kernel index that may still run at time `a`: the earliest kernel reaching
    /// past `a`, or the first starting at `a`.
    fn first_at(&self, a: i64) -> usize {
        let k = self.times.starting_before(a, false);
        self.times.first_ending_after(a).min(k)
    }

    /// The cells of `cols` equal columns over `[a, b)`.
    pub fn cells(&self, a: i64, b: i64, cols: usize) -> Vec<Cell> {
        let mut out = vec![
            Cell {
                busy: 0.0,
                top: None
            };
            cols
        ];
        if cols == 0 || b <= a || self.events.is_empty() {
            return out;
        }
        let cw = (b - a) as f64 / cols as f64;
        let pyramid = self.pyramid();
        let base = pyramid.levels.first().map(|l| l.width).unwrap_or(1) as f64;
        if cw >= 16.0 * base {
            // Zoomed out: read the pyramid level with about 16 buckets per column, so the
            // share of a bucket cut by a column edge stays a small error.
            let level = pyramid
                .levels
                .iter()
                .rev()
                .find(|l| l.width as f64 * 16.0 <= cw)
                .unwrap_or(&pyramid.levels[0]);
            let w = level.width;
            // Positions relative to the window start: absolute epoch ns do not fit f64
            // exactly.
            let off = (a - pyramid.t0) as f64;
            for (c, cell) in out.iter_mut().enumerate() {
                let cs = off + c as f64 * cw;
                let ce = cs + cw;
                let b0 = (cs / w as f64).floor().max(0.0) as i64;
                let b1 = (ce / w as f64).ceil() as i64;
                let mut busy = 0.0;
                let mut best = 0i64;
                for bi in b0..b1.min(level.busy.len() as i64) {
                    let bs = (bi * w) as f64;
                    let be = bs + w as f64;
                    let overlap = (ce.min(be) - cs.max(bs)).max(0.0);
                    busy += level.busy[bi as usize] as f64 * overlap / w as f64;
                    let t = level.top[bi as usize];
                    if t != u32::MAX && level.top_ns[bi as usize] > best {
                        best = level.top_ns[bi as usize];
                        cell.top = Some(t);
                    }
                }
                cell.busy = (busy / cw).clamp(0.0, 1.0);
            }
            return out;
        }
        // Zoomed in: sweep the kernels in view; overlapping ones count once. Times are
        // taken relative to `a` before they become f64.
        let mut best = vec![0.0f64; cols];
        let mut union_end = f64::MIN;
        let mut k = self.first_at(a);
        while k < self.events.len() && self.times.start(k) < b {
            let (s, e) = (self.times.start(k), self.times.end(k));
            let (s, e) = ((s - a) as f64, (e - a) as f64);
            if e > 0.0 || (s == e && s >= 0.0) {
                let c0 = ((s / cw).floor().max(0.0)) as usize;
                let c1 = ((e / cw).ceil() as usize).min(cols);
                for (c, cell) in out
                    .iter_mut()
                    .enumerate()
                    .take(c1.max(c0 + 1).min(cols))
                    .skip(c0)
                {
                    let cs = c as f64 * cw;
                    let ce = cs + cw;
                    let own = (e.min(ce) - s.max(cs)).max(0.0);
                    // Only the part not already covered by earlier kernels is new busy time.
                    let fresh = (e.min(ce) - s.max(cs).max(union_end)).max(0.0);
                    cell.busy += fresh / cw;
                    if own > best[c] || (cell.top.is_none() && s == e) {
                        best[c] = own;
                        cell.top = Some(self.events[k]);
                    }
                }
                union_end = union_end.max(e);
            }
            k += 1;
        }
        for cell in &mut out {
            cell.busy = cell.busy.clamp(0.0, 1.0);
        }
        out
    }

    /// Index (into `events`) of the next kernel starting after `t`, or the previous one
    /// starting before it.
    pub fn neighbour(&self, t: i64, forward: bool) -> Option<u32> {
        if forward {
            let k = self.times.starting_before(t, true);
            self.events.get(k).copied()
        } else {
            let k = self.times.starting_before(t, false);
            k.checked_sub(1).map(|k| self.events[k])
        }
    }

    /// The latest-starting slice still open at `t`: on a CPU thread, whose slices nest,
    /// the innermost. Slices before the first whose running end passes `t` are all
    /// closed, so the walk back stops there.
    pub fn innermost_at(&self, t: i64) -> Option<u32> {
        let k = self.times.starting_before(t, true);
        let lo = self.times.first_ending_after(t);
        (lo..k)
            .rev()
            .find(|&j| self.times.end(j) > t)
            .map(|j| self.events[j])
    }

    /// The lane position of event `i` (a binary search on its start).
    pub fn pos_of(&self, i: u32, ts: i64) -> Option<u32> {
        let k = self.times.starting_before(ts, false);
        (k..self.times.len())
            .take_while(|&j| self.times.start(j) == ts)
            .find(|&j| self.events[j] == i)
            .map(|j| j as u32)
    }

    /// Kernels that run at time `t` (or the nearest one).
    pub fn at(&self, t: i64) -> Option<u32> {
        let k = self.first_at(t);
        let mut j = k;
        while j < self.events.len() && self.times.start(j) <= t {
            if self.times.end(j) > t || self.times.start(j) == t {
                return Some(self.events[j]);
            }
            j += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;

    fn lane(spans: &[(i64, i64)]) -> (EventTable, LaneIndex) {
        let mut ev = EventTable::default();
        let n = ev.strings.intern("k");
        let idx: Vec<u32> = spans
            .iter()
            .map(|&(s, d)| ev.push(n, n, EventKind::Kernel, s, d, 0, 0) as u32)
            .collect();
        let l = LaneIndex::new(&ev, &idx);
        (ev, l)
    }

    #[test]
    fn zoomed_in_and_out_agree_on_busy_time() {
        let (_, l) = lane(&[(0, 50), (100, 100), (150, 100), (400, 0), (600, 400)]);
        let cells = l.cells(0, 1000, 10);
        let busy: f64 = cells.iter().map(|c| c.busy * 100.0).sum();
        // Union: [0,50) + [100,250) + [600,1000) = 600.
        assert!((busy - 600.0).abs() < 1e-6, "{busy}");
        assert_eq!(cells[1].busy, 1.0);
        assert_eq!(cells[3].busy, 0.0);
        // Overlapping kernels are shown: the second one owns column 2.
        assert!(cells[2].top.is_some());
        assert_eq!(l.at(175), Some(1));
        assert_eq!(l.neighbour(100, true), Some(2));
        assert_eq!(l.neighbour(100, false), Some(0));
    }

    #[test]
    fn epoch_nanoseconds_keep_their_precision() {
        let base = 1_731_227_668_258_969_029i64;
        let (_, l) = lane(&[(base, 4_526), (base + 100_000, 10)]);
        let cells = l.cells(base - 453, base + 4_979, 66);
        let busy: f64 = cells.iter().map(|c| c.busy).sum::<f64>() * 5_432.0 / 66.0;
        assert!((busy - 4_526.0).abs() < 1.0, "{busy}");
    }

    #[test]
    fn zoomed_far_in() {
        let spans: Vec<(i64, i64)> = (0..100_000).map(|i| (i * 1000, 500)).collect();
        let (_, l) = lane(&spans);
        let cells = l.cells(50_000_100, 50_000_700, 6);
        let busy: Vec<f64> = cells
            .iter()
            .map(|c| (c.busy * 100.0).round() / 100.0)
            .collect();
        assert_eq!(busy, vec![1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
        assert!(cells[0].top.is_some() && cells[5].top.is_none());
    }

    #[test]
    fn pyramid_on_a_long_lane() {
        let spans: Vec<(i64, i64)> = (0..100_000).map(|i| (i * 1000, 500)).collect();
        let (_, l) = lane(&spans);
        let cells = l.cells(0, 100_000_000, 100);
        for c in &cells {
            assert!((c.busy - 0.5).abs() < 0.02, "{c:?}");
            assert!(c.top.is_some());
        }
    }
}
