//! METRIC records that are not strict synchronous counters, placed on the call tree.
//!
//! OTF2 defines a metric member's values by its mode (OTF2_MetricMode): the low nibble
//! says what a value is (accumulated: a monotone count; absolute or relative: a level,
//! such as a memory size or a temperature), the high nibble which interval it covers
//! (START: since the beginning of the measurement; POINT: only its instant; LAST: since
//! the previous record of the metric; NEXT: until the next one). A strict synchronous
//! class is read at every Enter and Leave, so its accumulated members give each region
//! instance exactly (`mod.rs` does that). Everything else — synchronous classes read
//! at some boundaries only, asynchronous classes read at any time, metric instances —
//! is placed here by one rule: a record's amount belongs to the call path that is
//! innermost on the recording location at the record (the location's root when no
//! region is open), the way a sampling profiler charges a sample.
//!
//! - Accumulated START: the amount is the value minus the location's previous value of
//!   that member (0 before the first: the count starts at the measurement's start), so
//!   a location's total is its last value.
//! - Accumulated POINT: the same difference, but the first value is only a baseline.
//! - Accumulated LAST and NEXT: the value is the amount itself (of the interval before
//!   the record, or after it), so a location's total is the sum of its values.
//! - Absolute and relative values are levels, not amounts: summing them means nothing,
//!   so a node shows the largest value recorded there (`NAME:max`) and, inclusive, the
//!   largest anywhere beneath it (`NAME:max (inc)`: the peak while the call path ran).
//!
//! A MetricInstance measured for something other than the recording location (another
//! location, a location group, a system tree node, a group) is no call path of the
//! location: its records go to the recording location's root, and a warning says so.

use std::collections::HashMap;

use super::defs::Defs;
use crate::model::metrics::{inclusive_name, subtree_sums};
use crate::model::{Cct, MetricTable};

/// OTF2_MetricTiming values (the mode's high nibble).
const TIMING_START: u8 = 0x00;
const TIMING_POINT: u8 = 0x10;

struct Member {
    id: u32,
    name: String,
    unit: String,
    /// Accumulated (low nibble 0): amounts that add up; else levels.
    accumulated: bool,
    timing: u8,
    exponent: i64,
    /// Per node: the summed amounts (accumulated) or the largest level (NaN: none).
    placed: Vec<f64>,
    /// The location's previous value (NaN before the first).
    prev: f64,
    /// Whether any record gave this member a value.
    seen: bool,
}

/// A strict synchronous counter's columns, computed by region differences in `mod.rs`.
pub(super) struct Strict {
    pub member: u32,
    pub exc: Vec<f64>,
    pub inc: Vec<f64>,
}

/// Places METRIC records; counts what it cannot place as it should.
#[derive(Default)]
pub(super) struct Placer {
    members: Vec<Member>,
    of_id: HashMap<u32, usize>,
    /// Records naming a metric with no class or instance definition.
    undefined: u64,
    /// Records of instances scoped elsewhere, by OTF2_MetricScope (3 = any other).
    foreign: [u64; 4],
    /// Accumulated values lower than the location's previous one.
    decreasing: u64,
    /// Records with fewer values than their class has members.
    short: u64,
    /// Values that are not numbers (NaN or infinite doubles).
    not_numbers: u64,
}

/// A member's value as a number (OTF2_Type: 8 INT64, 10 DOUBLE; the rest unsigned).
pub(super) fn value(ty: u8, raw: u64) -> f64 {
    match ty {
        8 => raw as i64 as f64,
        10 => f64::from_bits(raw),
        _ => raw as f64,
    }
}

impl Placer {
    pub fn new(defs: &Defs) -> Placer {
        let mut ids: Vec<u32> = defs.metric_members.keys().copied().collect();
        ids.sort_unstable();
        let mut p = Placer::default();
        for id in ids {
            let m = &defs.metric_members[&id];
            p.of_id.insert(id, p.members.len());
            p.members.push(Member {
                id,
                name: defs.string(m.name).to_string(),
                unit: defs.string(m.unit).to_string(),
                accumulated: m.mode & 0x0f == 0,
                timing: m.mode & 0xf0,
                exponent: m.exponent,
                placed: Vec::new(),
                prev: f64::NAN,
                seen: false,
            });
        }
        p
    }

    /// A new location: previous values belong to the one before.
    pub fn start_location(&mut self) {
        self.members.iter_mut().for_each(|m| m.prev = f64::NAN);
    }

    /// A record naming a metric that has no definition.
    pub fn undefined(&mut self) {
        self.undefined += 1;
    }

    /// Places one record. `node` is the innermost open call path of the recording
    /// location (its root when none), `root` that root, `location` its id, `skip`
    /// the members that the strict synchronous path counts instead.
    pub fn record(
        &mut self,
        defs: &Defs,
        metric: u32,
        values: &[(u8, u64)],
        at: (u32, u32, u64),
        skip: impl Fn(u32) -> bool,
    ) {
        let (mut node, root, location) = at;
        let Some(class) = defs.metric_class(metric) else {
            self.undefined += 1;
            return;
        };
        if let Some(inst) = defs.metric_instances.get(&metric) {
            if inst.scope_kind != 0 || inst.scope != location {
                self.foreign[inst.scope_kind.min(3) as usize] += 1;
                node = root;
            }
        }
        if values.len() < class.members.len() {
            self.short += 1;
        }
        for (member, &(ty, raw)) in class.members.iter().zip(values) {
            if skip(*member) {
                continue;
            }
            let Some(&k) = self.of_id.get(member) else {
                continue;
            };
            let v = value(ty, raw);
            if !v.is_finite() {
                self.not_numbers += 1;
                continue;
            }
            self.place(k, node as usize, v);
        }
    }

    fn place(&mut self, k: usize, node: usize, v: f64) {
        let m = &mut self.members[k];
        if m.placed.len() <= node {
            let fill = if m.accumulated { 0.0 } else { f64::NAN };
            m.placed.resize(node + 1, fill);
        }
        m.seen = true;
        if !m.accumulated {
            let p = &mut m.placed[node];
            *p = if p.is_nan() { v } else { p.max(v) };
            return;
        }
        let amount = match m.timing {
            TIMING_START | TIMING_POINT => {
                let prev = if m.prev.is_nan() && m.timing == TIMING_START {
                    0.0
                } else {
                    m.prev
                };
                m.prev = v;
                if prev.is_nan() {
                    // POINT: the first value is where counting starts, not an amount.
                    return;
                }
                if v < prev {
                    self.decreasing += 1;
                }
                v - prev
            }
            _ => v,
        };
        m.placed[node] += amount;
    }

    /// The columns, in member id order: for an accumulated member `NAME` and
    /// `NAME (inc)` (with the strict counter's region differences added when it has
    /// them), for a level `NAME:max` and `NAME:max (inc)`. A member no record gave a
    /// value has no column, unless the strict path counts it (as before: zeros).
    pub fn finish(mut self, cct: &Cct, m: &mut MetricTable, strict: Vec<Strict>) {
        let n = cct.len();
        let mut strict: HashMap<u32, Strict> = strict.into_iter().map(|s| (s.member, s)).collect();
        for mem in &mut self.members {
            let s = strict.remove(&mem.id);
            if s.is_none() && !mem.seen {
                continue;
            }
            let unit = if mem.unit == "#" {
                ""
            } else {
                mem.unit.as_str()
            };
            let fill = if mem.accumulated { 0.0 } else { f64::NAN };
            mem.placed.resize(n, fill);
            let placed = std::mem::take(&mut mem.placed);
            if !mem.accumulated {
                let inc = subtree_max(cct, &placed);
                let name = format!("{}:max", mem.name);
                m.set(&name, unit, placed);
                m.set(&inclusive_name(&name), unit, inc);
                continue;
            }
            let (exc, mut inc) = match s {
                Some(s) if !mem.seen => (s.exc, s.inc),
                Some(s) => {
                    let sums = subtree_sums(cct, &placed);
                    let add =
                        |a: Vec<f64>, b: &[f64]| a.iter().zip(b).map(|(x, y)| x + y).collect();
                    (add(s.exc, &placed), add(s.inc, &sums))
                }
                None => {
                    let sums = subtree_sums(cct, &placed);
                    (placed, sums)
                }
            };
            // A strict counter counts between a region's Enter and Leave; a location's
            // root has neither, so its inclusive value is what ran on it: its own
            // (records placed there) and its top-level regions' (as for time).
            for r in cct.root_ids() {
                let kids: f64 = cct.children(r).map(|c| inc[c as usize]).sum();
                inc[r as usize] = exc[r as usize] + kids;
            }
            m.set(&mem.name, unit, exc);
            m.set(&inclusive_name(&mem.name), unit, inc);
        }
    }

    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.undefined > 0 {
            w.push(format!(
                "{} METRIC record(s) name a metric with no MetricClass or MetricInstance definition; their values are not shown",
                self.undefined
            ));
        }
        let scopes = [
            "another location",
            "a location group",
            "a system tree node",
            "a group of locations",
        ];
        for (i, &c) in self.foreign.iter().enumerate() {
            if c > 0 {
                w.push(format!(
                    "{c} METRIC record(s) of metric instances measured for {} (not the recording location) are shown on the recording location's root, not on a call path",
                    scopes[i]
                ));
            }
        }
        if self.decreasing > 0 {
            w.push(format!(
                "{} value(s) of accumulated metrics are lower than the location's previous value (a counter reset or wrap?); the negative differences are counted as they are",
                self.decreasing
            ));
        }
        if self.short > 0 {
            w.push(format!(
                "{} METRIC record(s) carry fewer values than their metric class has members; the missing members have no value there",
                self.short
            ));
        }
        if self.not_numbers > 0 {
            w.push(format!(
                "{} metric value(s) are not numbers (NaN or infinite) and were left out",
                self.not_numbers
            ));
        }
        let scaled: Vec<String> = self
            .members
            .iter()
            .filter(|m| m.seen && m.exponent != 0)
            .map(|m| format!("{} (exponent {})", m.name, m.exponent))
            .collect();
        if !scaled.is_empty() {
            w.push(format!(
                "metric member(s) {} declare a scale (base^exponent); their values are shown as recorded, unscaled",
                scaled.join(", ")
            ));
        }
        w
    }
}

/// Per node, the largest value at it or beneath it (NaN: none anywhere below).
fn subtree_max(cct: &Cct, exc: &[f64]) -> Vec<f64> {
    let mut out = exc.to_vec();
    // Children have larger ids than their parents: one backward pass.
    for c in (0..cct.len() as u32).rev() {
        if let Some(p) = cct.parent(c) {
            let v = out[c as usize];
            if !v.is_nan() {
                let q = &mut out[p as usize];
                *q = if q.is_nan() { v } else { q.max(v) };
            }
        }
    }
    out
}
