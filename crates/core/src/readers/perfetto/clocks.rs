//! Clock snapshots to one time base, as trace_processor's clock tracker does: every
//! packet's timestamp is in some clock (the packet's `timestamp_clock_id`, its
//! sequence's default, else the trace clock); a `ClockSnapshot` gives the value of
//! several clocks at one instant, and a timestamp in clock A becomes the trace clock's
//! through the snapshots that link them (A -> B -> trace clock, the nearest snapshot at
//! or before the value for each hop). Clocks 64..=127 are scoped to their packet
//! sequence; incremental clocks carry deltas from the sequence's previous value, and a
//! clock's `unit_multiplier_ns` scales its values to nanoseconds.

use std::collections::{HashMap, VecDeque};

use super::proto::ClockSnapshot;
use crate::model::intern::FxBuild;

/// `BUILTIN_CLOCK_BOOTTIME`: the trace clock when no snapshot names another.
pub const BOOTTIME: u32 = 6;

/// A clock: (packet sequence for sequence-scoped clocks, else 0; clock id).
pub type ClockKey = (u32, u32);

#[inline]
pub fn key(seq: u32, clock: u32) -> ClockKey {
    if (64..128).contains(&clock) {
        (seq, clock)
    } else {
        (0, clock)
    }
}

#[derive(Default)]
pub struct Clocks {
    /// The trace clock (`primary_trace_clock` of the snapshots), BOOTTIME by default.
    pub trace_clock: Option<u32>,
    /// Per pair of clocks seen in one snapshot: (value in A, value in B), in ns, in the
    /// order they arrived.
    edges: HashMap<(ClockKey, ClockKey), Vec<(i64, i64)>, FxBuild>,
    /// Neighbours of each clock in the snapshot graph.
    links: HashMap<ClockKey, Vec<ClockKey>, FxBuild>,
    /// Incremental clocks and their unit (ns per unit) as the latest snapshot declared.
    pub units: HashMap<ClockKey, (bool, i64), FxBuild>,
    /// The path found from each clock to the trace clock (None: no path).
    paths: HashMap<ClockKey, Option<Vec<ClockKey>>, FxBuild>,
    /// Clocks without a path, with how many timestamps were kept unconverted.
    pub unlinked: HashMap<u32, u64>,
    /// The last one-hop conversion, `(from, a, b, until)`: a value v of `from` in
    /// [a, until) is b + (v - a). Most packets convert as the one before them did.
    last: Option<(ClockKey, i64, i64, i64)>,
    /// Counts the snapshots read: a cache made before the last one is stale.
    pub generation: u64,
}

/// A sequence's own conversion cache (`Clocks::convert_with`): the snapshot generation
/// it was made in and `Clocks::last`'s fields.
pub type ConvCache = Option<(u64, ClockKey, i64, i64, i64)>;

impl Clocks {
    pub fn trace_clock(&self) -> u32 {
        self.trace_clock.unwrap_or(BOOTTIME)
    }

    /// Records a snapshot taken on sequence `seq`; returns the incremental clocks' new
    /// base values (in the clock's own units) for the sequence to restart from.
    pub fn snapshot(&mut self, seq: u32, s: &ClockSnapshot) -> Vec<(ClockKey, i64)> {
        self.last = None;
        self.generation += 1;
        if let Some(p) = s.primary_trace_clock {
            if p != 0 {
                self.trace_clock = Some(p);
            }
        }
        let mut vals: Vec<(ClockKey, i64)> = Vec::with_capacity(s.clocks.len());
        let mut bases = Vec::new();
        for c in &s.clocks {
            let k = key(seq, c.clock_id);
            let unit = match c.unit_multiplier_ns {
                0 => 1,
                u => i64::try_from(u).unwrap_or(1),
            };
            self.units.insert(k, (c.is_incremental, unit));
            let raw = c.timestamp as i64;
            if c.is_incremental {
                bases.push((k, raw));
            }
            vals.push((k, raw.saturating_mul(unit)));
        }
        for (i, &(a, va)) in vals.iter().enumerate() {
            for &(b, vb) in &vals[i + 1..] {
                if a == b {
                    continue;
                }
                let fresh = !self.edges.contains_key(&(a, b));
                self.edges.entry((a, b)).or_default().push((va, vb));
                self.edges.entry((b, a)).or_default().push((vb, va));
                if fresh {
                    self.links.entry(a).or_default().push(b);
                    self.links.entry(b).or_default().push(a);
                    self.paths.clear();
                }
            }
        }
        bases
    }

    /// `ns` (already in ns) of clock `from`, in the trace clock; unconverted (and counted)
    /// when no snapshot links the two.
    /// `convert` with the caller's cache (a sequence's): sequences interleave, so one
    /// cache for all would miss at every switch.
    #[inline]
    pub fn convert_with(&mut self, from: ClockKey, ns: i64, cache: &mut ConvCache) -> i64 {
        if let Some((g, f, a, b, until)) = *cache {
            if g == self.generation && f == from && ns >= a && ns < until {
                // Kept only with a, b and until within ±2^62 (`convert`): for ns in
                // [a, until) neither step overflows, and the saturating ones agree.
                return b + (ns - a);
            }
        }
        let v = self.convert(from, ns);
        if let Some((f, a, b, until)) = self.last.filter(|l| l.0 == from) {
            *cache = Some((self.generation, f, a, b, until));
        }
        v
    }

    pub fn convert(&mut self, from: ClockKey, ns: i64) -> i64 {
        let to = (0, self.trace_clock());
        if from == to {
            return ns;
        }
        if let Some((f, a, b, until)) = self.last {
            if f == from && ns >= a && ns < until {
                return b.saturating_add(ns.saturating_sub(a));
            }
        }
        let path = match self.paths.get(&from) {
            Some(p) => p,
            None => {
                let p = self.path(from, to);
                self.paths.entry(from).or_insert(p)
            }
        };
        let Some(path) = path else {
            *self.unlinked.entry(from.1).or_default() += 1;
            return ns;
        };
        // The values of `from` that take the same snapshot at every hop, [lo, hi), and
        // the offset they all get: the next timestamps of the sequence mostly fall in
        // it, and then convert by one addition (`last`). Kept only while no sum nears
        // overflow, where the saturating hops below could differ from one offset.
        const SAFE: i64 = 1 << 61;
        let (mut lo, mut hi, mut off) = (-SAFE, SAFE, 0i64);
        let mut exact = ns.unsigned_abs() < SAFE as u64;
        let mut v = ns;
        for hop in path.windows(2) {
            let Some(pairs) = self.edges.get(&(hop[0], hop[1])) else {
                return v;
            };
            // The latest snapshot at or before the value, else the first.
            let k = pairs
                .iter()
                .rposition(|(a, _)| *a <= v)
                .or((!pairs.is_empty()).then_some(0));
            let (a, b) = k.map_or((0, 0), |k| pairs[k]);
            // Where this hop picks the same snapshot, in this hop's values: at or
            // above its `a` (unless it was the fallback), below every later `a`.
            let (mut from_v, mut to_v) = (i64::MIN, i64::MAX);
            if let Some(k) = k {
                if pairs[k].0 <= v {
                    from_v = a;
                }
                for &(later, _) in &pairs[k + 1..] {
                    to_v = to_v.min(later);
                }
            }
            exact &= a.unsigned_abs() < SAFE as u64 && b.unsigned_abs() < SAFE as u64;
            // In `from`'s values: this hop's values are `from`'s plus `off`.
            lo = lo.max(from_v.saturating_sub(off));
            hi = hi.min(to_v.saturating_sub(off));
            off = off.saturating_add(b.saturating_sub(a));
            exact &= off.unsigned_abs() < SAFE as u64;
            v = b.saturating_add(v.saturating_sub(a));
        }
        if exact && lo <= ns && ns < hi {
            self.last = Some((from, lo, lo + off, hi));
        }
        v
    }

    /// Breadth-first: the fewest hops from one clock to another.
    fn path(&self, from: ClockKey, to: ClockKey) -> Option<Vec<ClockKey>> {
        let mut prev: HashMap<ClockKey, ClockKey> = HashMap::new();
        let mut queue = VecDeque::from([from]);
        prev.insert(from, from);
        while let Some(c) = queue.pop_front() {
            if c == to {
                let mut path = vec![to];
                let mut at = to;
                while at != from {
                    at = prev[&at];
                    path.push(at);
                }
                path.reverse();
                return Some(path);
            }
            for &n in self.links.get(&c).into_iter().flatten() {
                if let std::collections::hash_map::Entry::Vacant(e) = prev.entry(n) {
                    e.insert(c);
                    queue.push_back(n);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::proto::Clock;
    use super::*;

    fn clock(id: u32, ts: u64, inc: bool, unit: u64) -> Clock {
        Clock {
            clock_id: id,
            timestamp: ts,
            is_incremental: inc,
            unit_multiplier_ns: unit,
        }
    }

    #[test]
    fn converts_through_two_hops() {
        let mut c = Clocks::default();
        // The service's snapshot: BOOTTIME and MONOTONIC; the trace clock MONOTONIC.
        c.snapshot(
            1,
            &ClockSnapshot {
                clocks: vec![clock(6, 5000, false, 0), clock(3, 1000, false, 0)],
                primary_trace_clock: Some(3),
            },
        );
        // A sequence's: its incremental clock 64 in µs, against BOOTTIME.
        let bases = c.snapshot(
            2,
            &ClockSnapshot {
                clocks: vec![clock(6, 6000, false, 0), clock(64, 7, true, 1000)],
                primary_trace_clock: None,
            },
        );
        assert_eq!(bases, vec![((2, 64), 7)]);
        // 7 µs in clock 64 is 6000 BOOTTIME is 2000 MONOTONIC; 2 µs later, 4000.
        assert_eq!(c.convert((2, 64), 7000), 2000);
        assert_eq!(c.convert((2, 64), 9000), 4000);
        // Cached conversions equal uncached ones, across a later snapshot's edge.
        c.snapshot(
            3,
            &ClockSnapshot {
                clocks: vec![clock(6, 9000, false, 0), clock(3, 10_000, false, 0)],
                primary_trace_clock: None,
            },
        );
        for v in [7000, 9000, 9999, 10_000, 10_001, 12_000, 8000, -5, 1 << 62] {
            let cached = c.convert((2, 64), v);
            c.last = None;
            assert_eq!(cached, c.convert((2, 64), v), "at {v}");
        }
        assert_eq!(c.convert((0, 3), 42), 42);
        assert_eq!(c.convert((0, 1), 42), 42);
        assert_eq!(c.unlinked.get(&1), Some(&1));
    }
}
