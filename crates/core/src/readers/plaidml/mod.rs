//! PlaidML event logs (`PLAIDML_EVENTLOG_FILENAME`, `eventlog.gz`): a gzip stream of
//! varint-length-prefixed protobuf `Record`s, the first carrying the `EvtL` magic,
//! each holding `Event`s. Events describe activities (ids within UUID-named streams);
//! one activity may be told by several events (a start, later its end), which are
//! joined here as PlaidML's own `tools/analysis` reader joins them.
//!
//! The tree is the activities by verb under their parents; a kernel run
//! (`tile::hal::opencl::Executing`) is named by its kernel (`RunInfo.kernel_id` on an
//! enclosing activity names the activity whose `KernelInfo` has the name). Kernel runs
//! become GPU kernel events on the device clock's lane; clocks are aligned as PlaidML
//! aligns them (a child never starts before its parent across clocks).

mod messages;

use std::collections::HashMap;
use std::io::BufRead;

use messages::*;
use prost::Message;

use crate::model::args::ArgValue;
use crate::model::events::{CounterTable, EventKind, EventTable};
use crate::model::{Cct, MetricTable, Profile, Source};

/// The verbs of a kernel execution on the device (OpenCL; the CPU HAL writes none).
const EXECUTING: [&str; 2] = ["tile::hal::opencl::Executing", "tile::hal::cpu::Executing"];

fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &c) in b.iter().enumerate().take(10) {
        v |= ((c & 0x7F) as u64) << (7 * i);
        if c & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// The head starts with a length prefix and a `Record` whose field 1 is the magic.
pub fn claims(head: &[u8]) -> bool {
    let Some((len, at)) = varint(head) else {
        return false;
    };
    let r = &head[at..];
    if len < 4 || r.len() < 3 || r[0] != 0x0A || r[2] != 0x08 {
        return false;
    }
    matches!(varint(&r[3..]), Some((EVENTLOG_MAGIC, _)))
}

#[derive(Default)]
struct Activity {
    verb: String,
    parent: Option<usize>,
    clock: (usize, u64),
    start: Option<i64>,
    end: Option<i64>,
    run_kernel: Option<usize>,
    kernel: Option<KernelInfo>,
    /// Made from an event without an activity id: it has no times to miss.
    bare: bool,
    /// The order of its first event: ties keep file order.
    seq: usize,
}

#[derive(Default)]
struct Log {
    streams: HashMap<Vec<u8>, usize>,
    acts: Vec<Activity>,
    by_id: HashMap<(usize, u64), usize>,
    no_id: u64,
    bad_meta: u64,
}

impl Log {
    fn stream(&mut self, uuid: &[u8]) -> usize {
        let n = self.streams.len();
        *self.streams.entry(uuid.to_vec()).or_insert(n)
    }

    fn activity(&mut self, stream: usize, index: u64) -> usize {
        let n = self.acts.len();
        *self.by_id.entry((stream, index)).or_insert_with(|| {
            self.acts.push(Activity {
                seq: n,
                ..Activity::default()
            });
            n
        })
    }

    fn resolve(&mut self, current: usize, id: &ActivityId) -> usize {
        let s = if id.stream_uuid.is_empty() {
            current
        } else {
            self.stream(&id.stream_uuid)
        };
        self.activity(s, id.index)
    }
}

pub fn read(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    let mut log = Log::default();
    let mut warnings = Vec::new();
    let mut current: Option<usize> = None;
    let mut buf = Vec::new();
    let mut records = 0u64;
    loop {
        let len = match read_varint(input) {
            Ok(Some(len)) => len,
            Ok(None) => break,
            // A cut inside a later length prefix is a cut like any other.
            Err(e) if records > 0 && e.starts_with("the log ends") => {
                warnings.push(format!(
                    "the log ends inside record {} ({e}); read up to it",
                    records + 1
                ));
                break;
            }
            Err(e) => return Err(format!("record {}: {e}", records + 1)),
        };
        buf.resize(len as usize, 0);
        if let Err(e) = input.read_exact(&mut buf) {
            if records == 0 {
                return Err(format!("record 1 is cut short ({e})"));
            }
            warnings.push(format!(
                "the log ends inside record {} ({e}); read up to it",
                records + 1
            ));
            break;
        }
        let rec = Record::decode(&buf[..])
            .map_err(|e| format!("record {} is not a PlaidML Record: {e}", records + 1))?;
        records += 1;
        if records == 1 && rec.magic.as_ref().map(|m| m.value) != Some(EVENTLOG_MAGIC) {
            return Err("the first record has no PlaidML event-log magic".into());
        }
        for ev in rec.event {
            add_event(&mut log, &mut current, ev);
        }
    }
    if log.no_id > 0 {
        warnings.push(format!(
            "{} event(s) without an activity id, each shown as an activity of its own (PlaidML's reader skips them)",
            log.no_id
        ));
    }
    if log.bad_meta > 0 {
        warnings.push(format!(
            "{} metadata item(s) could not be decoded; left out",
            log.bad_meta
        ));
    }
    Ok(build(log, source, records, warnings))
}

/// A varint length prefix; None at a clean end of the stream (as PlaidML stops at a
/// zero length).
fn read_varint(r: &mut dyn BufRead) -> Result<Option<u64>, String> {
    let mut v = 0u64;
    for i in 0..10 {
        let mut b = [0u8];
        match r.read(&mut b) {
            Ok(0) if i == 0 => return Ok(None),
            Ok(0) => return Err("the log ends inside a length prefix".into()),
            Ok(_) => {}
            Err(e) => return Err(format!("cannot read: {e}")),
        }
        v |= ((b[0] & 0x7F) as u64) << (7 * i);
        if b[0] & 0x80 == 0 {
            if v > (1 << 30) {
                return Err(format!("a record length of {v} bytes is not plausible"));
            }
            return Ok((v > 0).then_some(v));
        }
    }
    Err("a length prefix longer than 10 bytes".into())
}

fn add_event(log: &mut Log, current: &mut Option<usize>, ev: Event) {
    let Some(id) = ev.activity_id.filter(|a| a.index != 0) else {
        // PlaidML's reader drops these; grove keeps each as an activity of its own so a
        // log of only such events (its test log, "Hello, World!") still shows something.
        log.no_id += 1;
        if !ev.verb.is_empty() {
            let n = log.acts.len();
            log.acts.push(Activity {
                verb: ev.verb,
                seq: n,
                bare: true,
                ..Activity::default()
            });
        }
        return;
    };
    // An event without a stream UUID belongs to the stream of the one before it.
    let stream = match (id.stream_uuid.is_empty(), *current) {
        (true, Some(s)) => s,
        _ => log.stream(&id.stream_uuid),
    };
    *current = Some(stream);
    let a = log.activity(stream, id.index);
    // Index 0 is the stream's implicit root activity: no parent to show.
    if let Some(p) = ev.parent_id.as_ref().filter(|p| p.index != 0) {
        let p = log.resolve(stream, p);
        if p != a {
            log.acts[a].parent = Some(p);
        }
    }
    let act = &mut log.acts[a];
    if !ev.verb.is_empty() {
        act.verb = ev.verb;
    }
    if let Some(c) = &ev.clock_id {
        act.clock = (stream, c.index);
    } else if act.start.is_none() && act.end.is_none() {
        act.clock = (stream, 0);
    }
    if let Some(t) = ev.start_time.as_ref().map(Duration::ns).filter(|&t| t != 0) {
        act.start = Some(t);
    }
    if let Some(t) = ev.end_time.as_ref().map(Duration::ns).filter(|&t| t != 0) {
        act.end = Some(t);
    }
    let mut run_id = None;
    for m in &ev.metadata {
        if let Some(r) = unpack::<RunInfo>(m, "RunInfo") {
            run_id = r.kernel_id;
        } else if let Some(k) = unpack::<KernelInfo>(m, "KernelInfo") {
            log.acts[a].kernel = Some(k);
        } else if m.type_url.ends_with("RunInfo") || m.type_url.ends_with(".KernelInfo") {
            log.bad_meta += 1;
        }
    }
    if let Some(k) = run_id {
        let k = log.resolve(stream, &k);
        log.acts[a].run_kernel = Some(k);
    }
}

/// A clock: (stream, clock index within it).
type Clock = (usize, u64);

/// Clock epochs as PlaidML's `_adjust_clocks` computes them: for each (parent clock,
/// child clock) pair the largest non-negative gap by which a child starts before its
/// parent; a spanning walk from each group's first clock; then shifted so no epoch is
/// negative.
fn clock_epochs(acts: &[Activity]) -> HashMap<Clock, i64> {
    let mut edges: HashMap<(Clock, Clock), i64> = HashMap::new();
    let mut clocks: Vec<Clock> = Vec::new();
    for a in acts {
        if !clocks.contains(&a.clock) {
            clocks.push(a.clock);
        }
    }
    for a in acts {
        let Some(p) = a.parent else { continue };
        if acts[p].clock == a.clock {
            continue;
        }
        // A missing start is no evidence of where a clock sits.
        let (Some(ps), Some(cs)) = (acts[p].start, a.start) else {
            continue;
        };
        let d = ps.saturating_sub(cs);
        if d < 0 {
            continue;
        }
        let e = edges.entry((acts[p].clock, a.clock)).or_insert(d);
        *e = (*e).max(d);
    }
    let mut epoch: HashMap<Clock, i64> = HashMap::new();
    for &c in &clocks {
        if epoch.contains_key(&c) {
            continue;
        }
        epoch.insert(c, 0);
        let mut group = vec![c];
        let mut pending = vec![c];
        while let Some(x) = pending.pop() {
            let ex = epoch[&x];
            for (&(p, ch), &d) in &edges {
                let next = if p == x && !epoch.contains_key(&ch) {
                    Some((ch, ex.saturating_add(d)))
                } else if ch == x && !epoch.contains_key(&p) {
                    Some((p, ex.saturating_sub(d)))
                } else {
                    None
                };
                if let Some((n, e)) = next {
                    epoch.insert(n, e);
                    group.push(n);
                    pending.push(n);
                }
            }
        }
        let min = group.iter().map(|g| epoch[g]).min().unwrap_or(0);
        if min < 0 {
            for g in &group {
                let e = epoch.get_mut(g).unwrap();
                *e = e.saturating_sub(min);
            }
        }
    }
    epoch
}

/// The kernel activity a run names: through `RunInfo` on the run or an enclosing one.
fn kernel_of(acts: &[Activity], mut a: usize) -> Option<usize> {
    for _ in 0..64 {
        if let Some(k) = acts[a].run_kernel {
            return Some(k);
        }
        a = acts[a].parent?;
    }
    None
}

/// An activity's span, or None when the log does not give both its ends: an activity
/// whose end event never came (PlaidML's `vertexai::AllocBuffer` in the corpus log), one
/// without a start, and an event without an activity id have no duration to show.
/// PlaidML's own reader stretches a missing end to its clock's last time (855 s of
/// "allocation" in a 7.5 s log); grove leaves such activities out of every time metric
/// and counts them instead.
fn spans(acts: &[Activity], epoch: &HashMap<Clock, i64>) -> Vec<Option<(i64, i64)>> {
    // Clamped to ±2^61 ns (73 years): a damaged log must not overflow later sums.
    const LIMIT: i64 = 1 << 61;
    acts.iter()
        .map(|a| {
            let (s, e) = (a.start?, a.end?);
            let off = epoch.get(&a.clock).copied().unwrap_or(0);
            let s = s.saturating_add(off).clamp(-LIMIT, LIMIT);
            Some((s, e.saturating_add(off).clamp(s, LIMIT)))
        })
        .collect()
}

/// The warnings for activities `spans` gives no duration.
fn open_warnings(acts: &[Activity], warnings: &mut Vec<String>) {
    let timed = |a: &&Activity| !a.bare;
    let no_end = acts
        .iter()
        .filter(timed)
        .filter(|a| a.end.is_none())
        .count();
    let no_start = acts
        .iter()
        .filter(timed)
        .filter(|a| a.start.is_none() && a.end.is_some())
        .count();
    if no_end > 0 {
        let mut verbs: Vec<&str> = acts
            .iter()
            .filter(timed)
            .filter(|a| a.end.is_none())
            .map(|a| a.verb.as_str())
            .collect();
        verbs.sort_unstable();
        verbs.dedup();
        let shown = verbs.iter().take(3).copied().collect::<Vec<_>>().join(", ");
        let more = if verbs.len() > 3 { ", …" } else { "" };
        warnings.push(format!(
            "{no_end} {} no end event in the log ({shown}{more}): no duration, so left out of the time metrics and the timeline; counted in `open`",
            crate::readers::trace_cct::activities(no_end)
        ));
    }
    if no_start > 0 {
        warnings.push(format!(
            "{no_start} {} no start time in the log: no duration, so left out of the time metrics and the timeline; counted in `open`",
            crate::readers::trace_cct::activities(no_start)
        ));
    }
}

/// Each activity's kernel activity (the one whose `KernelInfo` names it), and the
/// number of kernel runs.
fn kernel_names(acts: &[Activity], warnings: &mut Vec<String>) -> (Vec<Option<usize>>, u64) {
    let mut kname: Vec<Option<usize>> = vec![None; acts.len()];
    let mut unnamed = 0u64;
    let mut kernels = 0u64;
    for (i, a) in acts.iter().enumerate() {
        if !EXECUTING.contains(&a.verb.as_str()) {
            continue;
        }
        kernels += 1;
        match kernel_of(acts, i).filter(|&k| acts[k].kernel.is_some()) {
            Some(k) => kname[i] = Some(k),
            None => unnamed += 1,
        }
    }
    if unnamed > 0 {
        warnings.push(format!(
            "{unnamed} kernel run(s) whose kernel has no KernelInfo in the log; named <unknown kernel>"
        ));
    }
    if kernels == 0 {
        warnings.push(
            "no kernel activities in this log (PlaidML's CPU device writes none): the tree only"
                .into(),
        );
    }
    (kname, kernels)
}

/// The tree: each activity under its parent's node, merged by name. Returns the node
/// of each activity.
fn tree(
    acts: &[Activity],
    order: &[usize],
    kname: &[Option<usize>],
    cct: &mut Cct,
    warnings: &mut Vec<String>,
) -> Vec<u32> {
    let mut node = vec![u32::MAX; acts.len()];
    let mut children: HashMap<(u32, String), u32> = HashMap::new();
    let mut depth_guard = 0usize;
    // Parents first: resolve nodes with an explicit stack (parents may come later in
    // the file than children, and a corrupt log may have cycles).
    for &i in order {
        let mut chain = vec![i];
        let mut p = acts[i].parent;
        while let Some(x) = p {
            if node[x] != u32::MAX || chain.contains(&x) || chain.len() > 256 {
                break;
            }
            chain.push(x);
            p = acts[x].parent;
        }
        for &c in chain.iter().rev() {
            if node[c] != u32::MAX {
                continue;
            }
            let parent = acts[c].parent.map(|x| node[x]).filter(|&x| x != u32::MAX);
            if acts[c].parent.is_some() && parent.is_none() {
                depth_guard += 1;
            }
            let (name, kind) = match (kname[c], EXECUTING.contains(&acts[c].verb.as_str())) {
                (Some(k), _) => (
                    acts[k]
                        .kernel
                        .as_ref()
                        .map(|x| x.kname.clone())
                        .unwrap_or_default(),
                    "kernel",
                ),
                (None, true) => ("<unknown kernel>".to_string(), "kernel"),
                (None, false) if acts[c].verb.is_empty() => ("<no verb>".to_string(), "activity"),
                (None, false) => (acts[c].verb.clone(), "activity"),
            };
            let key = (parent.unwrap_or(u32::MAX), name.clone());
            let id = match children.get(&key) {
                Some(&id) => id,
                None => {
                    let id = cct.child(parent, &name, kind);
                    if let Some(k) = kname[c] {
                        set_kernel_attrs(cct, id, acts[k].kernel.as_ref());
                    }
                    children.insert(key, id);
                    id
                }
            };
            node[c] = id;
        }
    }
    if depth_guard > 0 {
        warnings.push(format!(
            "{depth_guard} {} in a parent cycle; placed at the top",
            if depth_guard == 1 {
                "activity sits"
            } else {
                "activities sit"
            }
        ));
    }
    node
}

/// One event per activity with a span: kernel runs on the device clock's lane, the
/// rest on their host stream's.
fn push_event(
    ev: &mut EventTable,
    a: &Activity,
    (s, e): (i64, i64),
    name: &str,
    kernel: Option<&KernelInfo>,
) {
    let is_kernel = EXECUTING.contains(&a.verb.as_str());
    let nm = ev.strings.intern(name);
    let (pid, tid) = if is_kernel || a.clock.1 != 0 {
        (
            ev.strings.intern("device"),
            ev.strings.intern(&format!("clock {}", a.clock.1)),
        )
    } else {
        (
            ev.strings.intern("host"),
            ev.strings.intern(&format!("stream {}", a.clock.0)),
        )
    };
    let (kind, cat) = if is_kernel {
        (EventKind::Kernel, ev.strings.intern("kernel"))
    } else {
        (EventKind::Cpu, ev.strings.intern("activity"))
    };
    let j = ev.push(nm, cat, kind, s, e - s, pid, tid);
    ev.seq.set(j, a.seq as u32);
    if !is_kernel {
        return;
    }
    ev.device[j] = a.clock.0 as i64;
    ev.stream[j] = a.clock.1 as i64;
    if let Some(info) = kernel.and_then(|k| k.kinfo.as_ref()) {
        let (kind, ops) = info.kind_and_ops();
        ev.arg_store.push("flops", ArgValue::Int(info.flops));
        ev.arg_store.push("bytes", ArgValue::Int(info.bytes));
        let v = ev.arg_store.str_value(&kind);
        ev.arg_store.push("type", v);
        if !ops.is_empty() {
            let v = ev.arg_store.str_value(&ops.join("\n"));
            ev.arg_store.push("ops", v);
        }
    }
    ev.arg_store.push("device", ArgValue::Int(a.clock.0 as i64));
    ev.arg_store.push("stream", ArgValue::Int(a.clock.1 as i64));
    ev.args[j] = ev.arg_store.finish();
}

fn build(log: Log, source: Source, records: u64, mut warnings: Vec<String>) -> Profile {
    let acts = log.acts;
    open_warnings(&acts, &mut warnings);
    let epoch = clock_epochs(&acts);
    let span = spans(&acts, &epoch);
    let (kname, kernels) = kernel_names(&acts, &mut warnings);
    let mut order: Vec<usize> = (0..acts.len()).collect();
    order.sort_by_key(|&i| acts[i].seq);
    let mut cct = Cct::default();
    let node = tree(&acts, &order, &kname, &mut cct, &mut warnings);

    // Events and metrics.
    let mut ev = EventTable::default();
    let len = cct.len();
    let mut time_incl = vec![0.0; len];
    let mut child_sum = vec![0.0; len];
    let mut gpu = vec![0.0; len];
    let mut count = vec![0.0; len];
    let mut open = vec![0.0; len];
    for &i in &order {
        let a = &acts[i];
        let nd = node[i];
        count[nd as usize] += 1.0;
        let Some((s, e)) = span[i] else {
            open[nd as usize] += f64::from(!a.bare);
            continue;
        };
        let dur = (e - s) as f64;
        time_incl[nd as usize] += dur;
        if let Some(p) = a.parent {
            if node[p] != u32::MAX && node[p] != nd {
                child_sum[node[p] as usize] += dur;
            }
        }
        if EXECUTING.contains(&a.verb.as_str()) {
            gpu[nd as usize] += dur;
        }
        let kernel = kname[i].and_then(|k| acts[k].kernel.as_ref());
        push_event(&mut ev, a, (s, e), cct.name(nd), kernel);
        ev.node.push(nd);
    }
    ev.launch = crate::model::events::Sparse::with_len(ev.len());
    // Exclusive time: an activity's span less its children's (children on another clock
    // included: they ran inside it once clocks are aligned).
    let time: Vec<f64> = time_incl
        .iter()
        .zip(&child_sum)
        .map(|(t, c)| (t - c).max(0.0))
        .collect();
    let mut metrics = MetricTable::new(len);
    metrics.set("time", "ns", time);
    metrics.set("gpu_time", "ns", gpu);
    metrics.derive_inclusive(&cct, &["time", "gpu_time"]);
    metrics.set("count", "", count);
    if open.iter().any(|&o| o > 0.0) {
        metrics.set("open", "", open);
    }
    cct.finish();
    let meta = vec![
        ("records".to_string(), records.to_string()),
        ("activities".to_string(), acts.len().to_string()),
        ("kernel runs".to_string(), kernels.to_string()),
        ("streams".to_string(), log.streams.len().to_string()),
        ("clocks".to_string(), epoch.len().to_string()),
    ];
    Profile {
        call_graph: None,
        source,
        dialect: "PlaidML event log".into(),
        cct,
        metrics,
        events: Some(ev),
        counters: Some(CounterTable::default()),
        meta,
        warnings,
        default_metric: "time".into(),
    }
}

fn set_kernel_attrs(cct: &mut Cct, id: u32, k: Option<&KernelInfo>) {
    let Some(info) = k.and_then(|k| k.kinfo.as_ref()) else {
        return;
    };
    let (kind, ops) = info.kind_and_ops();
    let f = cct.frame_mut(id);
    f.set_attr("type", &kind);
    f.set_attr("flops", &info.flops.to_string());
    f.set_attr("bytes", &info.bytes.to_string());
    if !ops.is_empty() {
        f.set_attr("ops", &ops.join("\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;

    fn act(verb: &str, parent: Option<usize>, start: Option<i64>, end: Option<i64>) -> Activity {
        Activity {
            verb: verb.into(),
            parent,
            start,
            end,
            ..Activity::default()
        }
    }

    /// An activity whose end never came has no duration: it adds nothing to any time
    /// metric or to the timeline, is counted in `open`, and the warning says why.
    #[test]
    fn open_activities_get_no_duration() {
        let mut log = Log {
            acts: vec![
                act("Run", None, Some(100), Some(1100)),
                act("AllocBuffer", Some(0), Some(200), None),
                act("AllocBuffer", Some(0), Some(300), None),
                act("Copy", Some(0), Some(400), Some(600)),
                // A later activity on the same clock: the old rule stretched the open
                // ones to its end.
                act("Late", None, Some(5_000), Some(9_000)),
            ],
            ..Log::default()
        };
        for (i, a) in log.acts.iter_mut().enumerate() {
            a.seq = i;
        }
        let src = Source {
            path: None,
            format: Format::PlaidML,
            size: 0,
            gzip: false,
            label: "t".into(),
        };
        let p = build(log, src, 1, Vec::new());
        let at = |name: &str| {
            (0..p.cct.len())
                .find(|&n| p.cct.name(n as u32) == name)
                .unwrap()
        };
        let (run, alloc) = (at("Run"), at("AllocBuffer"));
        let time = p.metrics.values("time").unwrap();
        let inc = p.metrics.values("time (inc)").unwrap();
        assert_eq!(time[alloc], 0.0);
        assert_eq!(inc[run], 1000.0);
        assert_eq!(time[run], 800.0);
        assert_eq!(p.metrics.values("count").unwrap()[alloc], 2.0);
        assert_eq!(p.metrics.values("open").unwrap()[alloc], 2.0);
        assert_eq!(p.metrics.values("open").unwrap()[run], 0.0);
        let ev = p.events.as_ref().unwrap();
        assert_eq!(ev.len(), 3);
        assert!((0..ev.len()).all(|i| ev.name_of(i) != "AllocBuffer"));
        let w = p.warnings.join("\n");
        assert!(
            w.contains("2 activities have no end event in the log (AllocBuffer)"),
            "{w}"
        );
    }
}
