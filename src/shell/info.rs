//! `grove info`: the detected format, counts and metrics of each input, then of their
//! ensemble; as text, or as JSON lines (one object per input, then the ensemble's).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{json, Value};

use grove::cli::{Format, InfoArgs, Writes};
use grove::export::formats::refusal;
use grove::model::coded::BytePairs;
use grove::model::{EventKind, Profile};

use super::{input, output};

pub fn run(args: InfoArgs, labels: Option<&str>) -> Result<(), String> {
    // Listed, not `==`: a new format is a compile error here until info says whether it
    // writes it. `--format`'s parser refuses the others already.
    let json = match args.format {
        Format::Json => true,
        Format::Text => false,
        f @ (Format::Csv
        | Format::Parquet
        | Format::Hatchet
        | Format::Folded
        | Format::Thicket
        | Format::Svg) => return Err(refusal(f, Writes::Info)),
    };
    // A directory or a quoted glob is an ensemble here as everywhere.
    let mut out = String::new();
    let mut inputs = 0;
    let ensemble = input::load_each_then_ensemble(&args.files, labels, |p| {
        inputs += 1;
        if json {
            out.push_str(&info_json(p, None).to_string());
            out.push('\n');
        } else {
            if inputs > 1 {
                out.push('\n');
            }
            out.push_str(&info_text(p, None));
        }
    })?;
    if let Some((e, inputs)) = ensemble {
        if json {
            out.push_str(&info_json(&e, Some(inputs)).to_string());
            out.push('\n');
        } else {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&info_text(&e, Some(inputs)));
        }
    }
    output::text(&out)
}

/// Counts over a trace's event table.
struct EventCounts {
    events: usize,
    by_kind: [(&'static str, usize); 6],
    gpu_ns: i64,
    devices: usize,
    streams: usize,
    threads: usize,
}

fn event_counts(p: &Profile) -> Option<EventCounts> {
    let ev = p.events.as_ref()?;
    // One pass over the rows (a big trace has millions), threads and streams counted
    // as `Distinct` keys.
    const KINDS: [(&str, EventKind); 6] = [
        ("cpu", EventKind::Cpu),
        ("runtime", EventKind::Runtime),
        ("kernel", EventKind::Kernel),
        ("memcpy", EventKind::Memcpy),
        ("memset", EventKind::Memset),
        ("instant", EventKind::Instant),
    ];
    // Rows counted by the kind's number (a search of KINDS per row was a third of
    // this pass on a Perfetto trace), threads as one u64 key (pid, tid).
    let mut per_kind = [0usize; 16];
    let mut gpu_ns = 0i64;
    let mut streams = Distinct::default();
    let mut threads = Distinct::default();
    // The rows whose pid and tid both columns hold as byte codes mark their pair of
    // codes in a table, read back as values once (`BytePairs`): a column read per row
    // through its checks was most of this pass on a Perfetto trace (54 M instructions
    // of a 40 MB trace's 1,264 M). Pairs of equal values meet in `threads`.
    let pairs = BytePairs::new(&ev.pid, &ev.tid);
    let mut seen = vec![false; pairs.as_ref().map_or(0, |p| p.slots())];
    for (i, &kind) in ev.kind.iter().enumerate() {
        per_kind[kind as usize & 15] += 1;
        match kind {
            EventKind::Cpu | EventKind::Runtime => {
                match pairs
                    .as_ref()
                    .and_then(|p| p.at(i))
                    .and_then(|at| seen.get_mut(at))
                {
                    Some(s) => *s = true,
                    None => threads.add(u64::from(ev.pid[i]) << 32 | u64::from(ev.tid[i])),
                }
            }
            EventKind::Kernel | EventKind::Memcpy | EventKind::Memset => {
                gpu_ns += ev.dur[i];
                streams.add((ev.device[i], ev.stream[i]));
            }
            _ => {}
        }
    }
    if let Some(pairs) = &pairs {
        let marked = seen.iter().enumerate().filter(|(_, &s)| s);
        for (p, t) in marked.filter_map(|(at, _)| pairs.values(at)) {
            threads.add(u64::from(p) << 32 | u64::from(t));
        }
    }
    let by_kind = KINDS.map(|(name, k)| (name, per_kind[k as usize & 15]));
    let (streams, threads) = (streams.all(), threads.all());
    let devices: BTreeSet<i64> = streams.iter().map(|x| x.0).collect();
    Some(EventCounts {
        events: ev.len(),
        by_kind,
        gpu_ns,
        devices: devices.len(),
        streams: streams.len(),
        threads: threads.len(),
    })
}

/// The distinct keys of a pass over millions of rows. Rows of one thread or stream
/// come in runs, so the last key is tried first; a trace's threads and streams are
/// mostly a few, and a Perfetto trace's threads switch every few rows, so the first
/// FEW keys are looked through before the set (a set insert per switch was 8 % of
/// `info` on a Perfetto trace).
struct Distinct<K> {
    last: Option<K>,
    few: Vec<K>,
    rest: BTreeSet<K>,
}

impl<K> Default for Distinct<K> {
    fn default() -> Self {
        Distinct {
            last: None,
            few: Vec::new(),
            rest: BTreeSet::new(),
        }
    }
}

impl<K: Ord + Copy> Distinct<K> {
    const FEW: usize = 16;

    #[inline]
    fn add(&mut self, k: K) {
        if self.last == Some(k) {
            return;
        }
        self.last = Some(k);
        if self.few.contains(&k) {
            return;
        }
        if self.few.len() < Self::FEW {
            self.few.push(k);
        } else {
            self.rest.insert(k);
        }
    }

    fn all(self) -> BTreeSet<K> {
        let mut all = self.rest;
        all.extend(self.few);
        all
    }
}

fn file_of(p: &Profile) -> String {
    p.source
        .path
        .as_ref()
        .map(|x| x.display().to_string())
        .unwrap_or("demo".into())
}

/// An ensemble's members: (label, file), in member order.
fn members(p: &Profile) -> Vec<(String, String)> {
    grove::app::compare::member_labels(&p.metrics)
        .into_iter()
        .map(|l| {
            let file = p.meta_value(&format!("{l}.file")).unwrap_or("").to_string();
            (l, file)
        })
        .collect()
}

/// One input (or the ensemble of `ensemble` inputs) as one JSON object; the same facts
/// as the text.
fn info_json(p: &Profile, ensemble: Option<usize>) -> Value {
    let src = &p.source;
    let mut v = json!({
        "file": if ensemble.is_some() { Value::Null } else { file_of(p).into() },
        "ensemble": ensemble.is_some(),
        "inputs": ensemble.unwrap_or(1),
        "format": src.format.label(),
        "gzip": src.gzip,
        "dialect": p.dialect.to_string(),
        "size": src.size,
        "nodes": p.cct.len(),
        "roots": p.cct.roots.len(),
        "metrics": p.metrics.names().iter().map(|m| json!({"name": m, "unit": p.metrics.unit(m)})).collect::<Vec<_>>(),
        "metadata": p.meta.iter().map(|(k, v)| (k.to_string(), Value::from(v.to_string()))).collect::<serde_json::Map<_, _>>(),
        "warnings": p.warnings,
        "hidden_share": p.hidden_share(),
    });
    if let Some(g) = &p.call_graph {
        // An ensemble keeps only the flag, not its members' graphs.
        if !g.is_empty() {
            v["functions"] = json!(g.len());
            v["call_edges"] = json!(g.graph.edge_count());
        }
        v["estimated_paths"] = json!(g.estimated_paths);
    }
    if ensemble.is_some() {
        v["members"] = members(p)
            .into_iter()
            .map(|(label, file)| json!({"label": label, "file": file}))
            .collect::<Vec<_>>()
            .into();
    }
    if let Some(c) = event_counts(p) {
        v["events"] = json!(c.events);
        v["events_by_kind"] = c
            .by_kind
            .iter()
            .map(|(k, n)| (k.to_string(), Value::from(*n)))
            .collect::<serde_json::Map<_, _>>()
            .into();
        v["gpu_time_ns"] = json!(c.gpu_ns);
        v["devices"] = json!(c.devices);
        v["streams"] = json!(c.streams);
        v["threads"] = json!(c.threads);
        if let Some(r) = p.meta_value("rank") {
            v["rank"] = json!(r);
            v["world_size"] = json!(p.meta_value("distributedInfo.world_size"));
        }
    }
    v
}

/// Members `grove info` lists one a line before it elides the middle.
const MEMBERS_SHOWN: usize = 20;

/// `ensemble`: the number of inputs when `p` is their ensemble.
fn info_text(p: &Profile, ensemble: Option<usize>) -> String {
    let mut s = String::new();
    let src = &p.source;
    match ensemble {
        Some(n) => {
            _ = writeln!(s, "ensemble: {n} inputs");
            // One line per member: its label (what its columns are named by) and file.
            let members = members(p);
            let w = members
                .iter()
                .map(|m| m.0.chars().count())
                .max()
                .unwrap_or(0);
            if !members.is_empty() {
                _ = writeln!(s, "members:");
            }
            // Thousands of members: the first and the last few, and how many between
            // (`--format json` lists them all).
            let n = members.len();
            for (i, (label, file)) in members.iter().enumerate() {
                if n > MEMBERS_SHOWN && i == MEMBERS_SHOWN - 3 {
                    _ = writeln!(
                        s,
                        "  … {} more (--format json lists every member)",
                        n - MEMBERS_SHOWN
                    );
                }
                if n > MEMBERS_SHOWN && (MEMBERS_SHOWN - 3..n - 3).contains(&i) {
                    continue;
                }
                _ = writeln!(s, "  {label:<w$}  {file}");
            }
            _ = writeln!(
                s,
                "stats:    zero (a node a member lacks counts as 0 in additive metrics' statistics; `--cmd \"stats present\"` leaves it out)"
            );
        }
        None => _ = writeln!(s, "file:     {}", file_of(p)),
    }
    let _ = writeln!(
        s,
        "format:   {}{} ({}){}",
        src.format.label(),
        if src.gzip { ", gzip" } else { "" },
        p.dialect,
        if grove::readers::is_partial(p) {
            ", partial: the input ends early (see the warnings)"
        } else {
            ""
        }
    );
    // A warning that hides more than 10% of the data is not left for the end.
    for w in p.serious_warnings() {
        let _ = writeln!(s, "HIDDEN:   {w}");
    }
    let _ = writeln!(s, "size:     {} bytes", src.size);
    let _ = writeln!(s, "nodes:    {}", p.cct.len());
    let _ = writeln!(s, "roots:    {}", p.cct.roots.len());
    if let Some(g) = &p.call_graph {
        if !g.is_empty() {
            let _ = writeln!(
                s,
                "graph:    {} functions, {} caller-callee edges (exact, from the file)",
                g.len(),
                g.graph.edge_count()
            );
        }
        if g.estimated_paths {
            let _ = writeln!(s, "tree:     {}", grove::model::call_graph::ESTIMATED_NOTE);
        }
    }
    if let Some(c) = event_counts(p) {
        let _ = writeln!(s, "events:   {}", c.events);
        let kinds: Vec<String> = c.by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(s, "          {}", kinds.join(" · "));
        let _ = writeln!(s, "gpu time: {} ns", c.gpu_ns);
        if let Some(r) = p.meta_value("rank") {
            let world = p.meta_value("distributedInfo.world_size").unwrap_or("?");
            let _ = writeln!(s, "rank:     {r} of {world}");
        }
        let _ = writeln!(s, "devices:  {}", c.devices);
        let _ = writeln!(s, "streams:  {}", c.streams);
        let _ = writeln!(s, "threads:  {}", c.threads);
    }
    let _ = writeln!(s, "metrics:");
    for m in p.metrics.names() {
        let u = p.metrics.unit(&m);
        let _ = writeln!(
            s,
            "  {m}{}",
            if u.is_empty() {
                String::new()
            } else {
                format!(" [{u}]")
            }
        );
    }
    if !p.meta.is_empty() {
        let _ = writeln!(s, "metadata:");
        for (k, v) in &p.meta {
            let _ = writeln!(s, "  {k}: {v}");
        }
    }
    for w in &p.warnings {
        let _ = writeln!(s, "warning:  {w}");
    }
    s
}
