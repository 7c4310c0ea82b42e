//! The Firefox Profiler's markers with a duration as a timeline lane per thread: an
//! interval marker (phase 1), an interval start matched with the next end of the same
//! name on its thread (phases 2 and 3, as the Firefox Profiler pairs them), and in the
//! raw format's older markers (no phase) any marker with both times. Each becomes an
//! event row on its thread's lane (pid, tid), its category the marker's category name;
//! its node is the thread's root (markers belong to no stack). Instant markers have no
//! extent on a lane: counted and warned, as are unmatched starts and ends and markers
//! whose times are missing or run backwards.

use std::collections::HashMap;

use serde_json::Value;

use super::tables::Thread;
use crate::model::events::{EventKind, EventTable, Row, Sparse};
use crate::model::Profile;

/// Milliseconds (the format's unit) to integer nanoseconds.
fn ns(ms: f64) -> i64 {
    (ms * 1e6).round().clamp(-9e18, 9e18) as i64
}

#[derive(Default)]
struct Skipped {
    instants: u64,
    unmatched: u64,
    bad: u64,
}

pub fn lane(
    p: &mut Profile,
    threads: &[Thread],
    roots: &[u32],
    meta: &Value,
    warnings: &mut Vec<String>,
) {
    let cats: Vec<&str> = meta
        .get("categories")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| c.get("name").and_then(Value::as_str).unwrap_or("marker"))
                .collect()
        })
        .unwrap_or_default();
    let mut ev = EventTable::default();
    let mut node = Vec::new();
    let mut skip = Skipped::default();
    for (th, &root) in threads.iter().zip(roots) {
        let pid = ev.strings.intern(&th.pid);
        let tid = match th.tid.as_str() {
            "" => ev.strings.intern(&th.label),
            t => ev.strings.intern(t),
        };
        let mut open: HashMap<&str, Vec<f64>> = HashMap::new();
        for m in &th.markers {
            let (start, end) = match m.phase {
                Some(0) => {
                    skip.instants += 1;
                    continue;
                }
                Some(1) => (m.start, m.end),
                Some(2) => {
                    match m.start {
                        Some(s) => open.entry(&m.name).or_default().push(s),
                        None => skip.bad += 1,
                    }
                    continue;
                }
                Some(3) => match open.get_mut(m.name.as_str()).and_then(Vec::pop) {
                    Some(s) => (Some(s), m.end),
                    None => {
                        skip.unmatched += 1;
                        continue;
                    }
                },
                None if m.end.is_none() => {
                    skip.instants += 1;
                    continue;
                }
                None => (m.start, m.end),
                Some(_) => (None, None),
            };
            let (Some(s), Some(e)) = (start, end) else {
                skip.bad += 1;
                continue;
            };
            let (ts, te) = (ns(s + th.offset_ms), ns(e + th.offset_ms));
            if te < ts {
                skip.bad += 1;
                continue;
            }
            let cat = m
                .category
                .and_then(|c| usize::try_from(c).ok())
                .and_then(|c| cats.get(c).copied())
                .unwrap_or("marker");
            let name = ev.strings.intern(&m.name);
            let cat = ev.strings.intern(cat);
            let seq = ev.len() as u32;
            ev.push_row(&Row {
                seq,
                ..Row::new(name, cat, EventKind::Cpu, ts, te - ts, pid, tid)
            });
            node.push(root);
        }
        skip.unmatched += open.values().map(|v| v.len() as u64).sum::<u64>();
    }
    warn(&skip, warnings);
    if ev.is_empty() {
        return;
    }
    ev.launch = Sparse::with_len(ev.len());
    ev.node = node;
    p.events = Some(ev);
    p.counters = Some(Default::default());
}

fn warn(s: &Skipped, warnings: &mut Vec<String>) {
    if s.instants > 0 {
        warnings.push(format!(
            "{} instant marker(s) skipped: the markers lane shows markers with a duration",
            s.instants
        ));
    }
    if s.unmatched > 0 {
        warnings.push(format!(
            "{} interval marker start(s) or end(s) without their other half on the thread were skipped",
            s.unmatched
        ));
    }
    if s.bad > 0 {
        warnings.push(format!(
            "{} marker(s) with a missing time, an unknown phase or an end before their start were skipped",
            s.bad
        ));
    }
}
