//! CPU samples inside a trace file, as speedscope and DevTools read them:
//! - DevTools Performance-panel recordings: a `Profile` event (`ph: P`, its `id`, the
//!   sampled thread's pid/tid, `args.data.startTime` in µs) and `ProfileChunk` events
//!   with the same `id`, each adding `args.data.cpuProfile.nodes` (id, callFrame,
//!   parent), `cpuProfile.samples` (node ids) and `args.data.timeDeltas` (µs since the
//!   previous sample). A chunk may come from another thread (V8's sampler): the
//!   Profile event names the sampled one.
//! - The Trace Event format's own `samples` (`sf`: a `stackFrames` id, `ts`, pid/tid,
//!   `weight`) and `stackFrames` (id -> name, parent) at the top level.
//!
//! The sampled stacks become one root per sampled thread (kind `samples`) beside the
//! slices' trees, with two metrics of their own: `samples` (the count; a top-level
//! sample's `weight` when given) and `sample_time` (ns: a sample lasts until the
//! thread's next one, as DevTools and speedscope draw it; the last lasts nothing).
//! The slices' metrics stay as they were; the sampled nodes have none of them.
//!
//! Only `ph: P` events and the two top-level keys reach this module: the scanner hands
//! `P` events to the streaming reader (which keeps their hex `id` text), so the
//! common path pays one comparison per event.

use std::collections::HashMap;

use serde_json::Value;

use crate::model::hidden::hidden_warning;
use crate::model::{Cct, Frame, MetricTable};
use crate::readers::cpuprofile::call_frame;

/// One `Profile` or `ProfileChunk` event.
#[derive(Debug)]
struct ProfileEvent {
    chunk: bool,
    pid: String,
    tid: String,
    id: String,
    data: Value,
}

/// What the scan kept of the sampled profiles.
#[derive(Debug, Default)]
pub struct Sampled {
    events: Vec<ProfileEvent>,
    pub top_samples: Option<Value>,
    pub stack_frames: Option<Value>,
}

fn text_of(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl Sampled {
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.top_samples.is_none()
    }

    /// A `ph: P` event as the streaming reader read it (raw texts).
    pub fn push(&mut self, name: &[u8], pid: &[u8], tid: &[u8], id: Option<&[u8]>, args: &[u8]) {
        let chunk = match name {
            b"Profile" => false,
            b"ProfileChunk" => true,
            _ => return,
        };
        let args: Value = crate::json::from_slice(args).unwrap_or(Value::Null);
        self.events.push(ProfileEvent {
            chunk,
            pid: text_of(pid),
            tid: text_of(tid),
            id: id.map(text_of).unwrap_or_default(),
            data: args.get("data").cloned().unwrap_or(Value::Null),
        });
    }
}

/// A sampled profile's node table: V8 node id -> (parent, frame).
#[derive(Default)]
struct Nodes {
    info: HashMap<i64, (Option<i64>, Frame)>,
    /// V8 node id -> grove node, filled on first use.
    made: HashMap<i64, u32>,
    /// Nodes whose parent is not in the profile (or whose parents loop): placed
    /// under the thread's root.
    orphans: u64,
}

impl Nodes {
    /// The grove node of a V8 node: its parent chain made first (iteratively; a chain
    /// that loops or names an unknown parent ends at the thread's root).
    fn node(&mut self, cct: &mut Cct, root: u32, id: i64) -> Option<u32> {
        if let Some(&n) = self.made.get(&id) {
            return Some(n);
        }
        self.info.get(&id)?;
        let mut chain = vec![id];
        let mut parent = root;
        let mut cur = self.info[&id].0;
        while let Some(p) = cur {
            if let Some(&n) = self.made.get(&p) {
                parent = n;
                break;
            }
            if chain.contains(&p) || chain.len() > 100_000 {
                self.orphans += 1;
                break;
            }
            match self.info.get(&p) {
                Some((pp, _)) => {
                    chain.push(p);
                    cur = *pp;
                }
                None => {
                    self.orphans += 1;
                    break;
                }
            }
        }
        for &c in chain.iter().rev() {
            let n = cct.add_node(Some(parent), self.info[&c].1.clone());
            self.made.insert(c, n);
            parent = n;
        }
        Some(parent)
    }
}

/// Per-node sums being built, sized to the tree as it grows.
struct Sums {
    samples: Vec<f64>,
    time: Vec<f64>,
}

impl Sums {
    fn add(&mut self, n: u32, count: f64, dt_us: f64) {
        let n = n as usize;
        if self.samples.len() <= n {
            self.samples.resize(n + 1, 0.0);
            self.time.resize(n + 1, 0.0);
        }
        self.samples[n] += count;
        self.time[n] += dt_us * 1e3;
    }
}

/// Adds the sampled threads' roots to the trace's tree and the two sample metrics to
/// its table (the slices' columns padded with zeros for the new nodes). `label` names
/// a thread root from its pid and tid texts.
pub fn attach(
    s: &Sampled,
    cct: &mut Cct,
    metrics: MetricTable,
    label: &dyn Fn(&str, &str) -> String,
    warnings: &mut Vec<String>,
) -> MetricTable {
    let before = cct.len();
    let mut sums = Sums {
        samples: vec![0.0; before],
        time: vec![0.0; before],
    };
    let mut roots: HashMap<(String, String), u32> = HashMap::new();
    let mut root_of = |cct: &mut Cct, pid: &str, tid: &str| -> u32 {
        *roots
            .entry((pid.to_string(), tid.to_string()))
            .or_insert_with(|| cct.add_node(None, Frame::new(&label(pid, tid), "samples")))
    };
    chunked(s, cct, &mut root_of, &mut sums, warnings);
    top_level(s, cct, &mut root_of, &mut sums, warnings);
    let len = cct.len();
    let mut out = MetricTable::new(len);
    for name in metrics.names() {
        let mut v = metrics.values(&name).unwrap_or_default().to_vec();
        v.resize(len, 0.0);
        out.set(&name, metrics.unit(&name), v);
    }
    sums.samples.resize(len, 0.0);
    sums.time.resize(len, 0.0);
    out.set("samples", "", sums.samples);
    out.set("sample_time", "ns", sums.time);
    out.derive_inclusive(cct, &["samples", "sample_time"]);
    out
}

/// The `Profile`/`ProfileChunk` events, grouped by profile id (per process).
fn chunked(
    s: &Sampled,
    cct: &mut Cct,
    root_of: &mut dyn FnMut(&mut Cct, &str, &str) -> u32,
    sums: &mut Sums,
    warnings: &mut Vec<String>,
) {
    // (pid, id) -> the Profile event's tid and startTime.
    let mut heads: HashMap<(&str, &str), (&str, f64)> = HashMap::new();
    for e in s.events.iter().filter(|e| !e.chunk) {
        let start = e
            .data
            .get("startTime")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        heads.insert((&e.pid, &e.id), (&e.tid, start));
    }
    let mut order: Vec<(&str, &str)> = Vec::new();
    let mut chunks: HashMap<(&str, &str), Vec<&ProfileEvent>> = HashMap::new();
    for e in s.events.iter().filter(|e| e.chunk) {
        let key = (e.pid.as_str(), e.id.as_str());
        if !chunks.contains_key(&key) {
            order.push(key);
        }
        chunks.entry(key).or_default().push(e);
    }
    let (mut orphans, mut unknown, mut total, mut parentless) = (0u64, 0u64, 0u64, 0u64);
    for key in order {
        let list = &chunks[&key];
        let (tid, start) = match heads.get(&key) {
            Some(&h) => h,
            None => {
                orphans += 1;
                (list[0].tid.as_str(), 0.0)
            }
        };
        let root = root_of(cct, key.0, tid);
        let mut nodes = Nodes::default();
        // (node id, time in µs) of every sample, in file order.
        let mut samples: Vec<(i64, f64)> = Vec::new();
        let mut t = start;
        for c in list {
            let prof = c.data.get("cpuProfile");
            for n in prof
                .and_then(|p| p.get("nodes"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(id) = n.get("id").and_then(Value::as_i64) {
                    let parent = n.get("parent").and_then(Value::as_i64);
                    nodes
                        .info
                        .insert(id, (parent, call_frame(n.get("callFrame"))));
                }
            }
            let ids = prof
                .and_then(|p| p.get("samples"))
                .and_then(Value::as_array);
            let deltas = c.data.get("timeDeltas").and_then(Value::as_array);
            for (i, id) in ids.into_iter().flatten().enumerate() {
                t += deltas
                    .and_then(|d| d.get(i))
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                samples.push((id.as_i64().unwrap_or(i64::MIN), t));
            }
        }
        total += samples.len() as u64;
        for (i, &(id, at)) in samples.iter().enumerate() {
            let Some(n) = nodes.node(cct, root, id) else {
                unknown += 1;
                continue;
            };
            let next = samples.get(i + 1).map_or(at, |s| s.1);
            sums.add(n, 1.0, (next - at).max(0.0));
        }
        parentless += nodes.orphans;
    }
    if parentless > 0 {
        warnings.push(format!(
            "{parentless} sampled call-tree node(s) name a parent their profile does not hold (or parents that loop): placed under the thread's root"
        ));
    }
    if orphans > 0 {
        warnings.push(format!(
            "{orphans} sampled profile(s) have ProfileChunk events but no Profile event: placed on the chunks' own thread, times from 0"
        ));
    }
    if unknown > 0 {
        warnings.push(hidden_warning(
            format!("{unknown} CPU sample(s) name no node of their profile and were skipped"),
            unknown as f64 / total.max(1) as f64,
        ));
    }
}

/// A top-level sample: its `stackFrames` id, `ts` (µs) and weight.
type TopSample = (Option<String>, f64, f64);

/// The top-level `samples` + `stackFrames`.
fn top_level(
    s: &Sampled,
    cct: &mut Cct,
    root_of: &mut dyn FnMut(&mut Cct, &str, &str) -> u32,
    sums: &mut Sums,
    warnings: &mut Vec<String>,
) {
    let Some(list) = s.top_samples.as_ref() else {
        return;
    };
    let Some(list) = list.as_array() else {
        warnings.push("the top-level samples is not a list; skipped".into());
        return;
    };
    let frames = s.stack_frames.as_ref().and_then(Value::as_object);
    let key = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let text = |v: Option<&Value>| v.and_then(key).unwrap_or_default();
    // Per thread: (stack frame id, ts µs, weight) in ts order.
    let mut threads: Vec<((String, String), Vec<TopSample>)> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut no_time = 0u64;
    for smp in list {
        let Some(ts) = num(smp.get("ts")) else {
            no_time += 1;
            continue;
        };
        let thread = (text(smp.get("pid")), text(smp.get("tid")));
        let i = *index.entry(thread.clone()).or_insert_with(|| {
            threads.push((thread, Vec::new()));
            threads.len() - 1
        });
        let weight = num(smp.get("weight")).unwrap_or(1.0);
        threads[i].1.push((smp.get("sf").and_then(key), ts, weight));
    }
    let (mut unknown, total) = (0u64, list.len() as u64);
    for ((pid, tid), mut samples) in threads {
        samples.sort_by(|a, b| a.1.total_cmp(&b.1));
        let root = root_of(cct, &pid, &tid);
        let mut made: HashMap<String, u32> = HashMap::new();
        for (i, (sf, ts, w)) in samples.iter().enumerate() {
            let node = sf
                .as_ref()
                .and_then(|sf| stack_node(cct, root, frames, &mut made, sf));
            let Some(n) = node else {
                unknown += 1;
                continue;
            };
            let next = samples.get(i + 1).map_or(*ts, |s| s.1);
            sums.add(n, *w, next - ts);
        }
    }
    if no_time > 0 {
        warnings.push(format!(
            "{no_time} top-level sample(s) without a ts skipped"
        ));
    }
    if unknown > 0 {
        warnings.push(hidden_warning(
            format!("{unknown} top-level sample(s) name no stackFrames entry and were skipped"),
            unknown as f64 / total.max(1) as f64,
        ));
    }
}

/// A number, or a number written as a string (`"ts": "11550183666"`).
fn num(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite())
}

/// The node of a `stackFrames` id: its parent chain made first, root-most frame at
/// the top (a loop or an unknown parent ends the chain at the thread's root).
fn stack_node(
    cct: &mut Cct,
    root: u32,
    frames: Option<&serde_json::Map<String, Value>>,
    made: &mut HashMap<String, u32>,
    sf: &str,
) -> Option<u32> {
    if let Some(&n) = made.get(sf) {
        return Some(n);
    }
    let frames = frames?;
    frames.get(sf)?;
    let mut chain: Vec<String> = vec![sf.to_string()];
    let mut parent = root;
    loop {
        let parent_id = frames[chain.last()?.as_str()]
            .get("parent")
            .and_then(|p| match p {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            });
        let Some(p) = parent_id else { break };
        if let Some(&n) = made.get(&p) {
            parent = n;
            break;
        }
        if !frames.contains_key(&p) || chain.contains(&p) || chain.len() > 100_000 {
            break;
        }
        chain.push(p);
    }
    for c in chain.iter().rev() {
        let f = &frames[c.as_str()];
        let name = f.get("name").and_then(Value::as_str).unwrap_or("(unnamed)");
        let mut fr = Frame::new(name, "function");
        if let Some(cat) = f.get("category").and_then(Value::as_str) {
            fr.set_attr("category", cat);
        }
        let n = cct.add_node(Some(parent), fr);
        made.insert(c.clone(), n);
        parent = n;
    }
    Some(parent)
}

#[cfg(test)]
mod tests {
    use crate::model::Profile;

    fn load(text: &str) -> Profile {
        let bytes = text.as_bytes().to_vec();
        let n = bytes.len() as u64;
        crate::readers::load_reader(Box::new(std::io::Cursor::new(bytes)), None, n, "t").unwrap()
    }

    /// (name, exclusive samples, exclusive sample_time) of every node named `name`.
    fn sums(p: &Profile, name: &str) -> (f64, f64) {
        let s = p.metrics.values("samples").unwrap();
        let t = p.metrics.values("sample_time").unwrap();
        (0..p.cct.len() as u32)
            .filter(|&n| p.cct.name(n) == name)
            .fold((0.0, 0.0), |a, n| {
                (a.0 + s[n as usize], a.1 + t[n as usize])
            })
    }

    /// A DevTools recording: a slice, a Profile on thread 1 and two chunks from the
    /// sampler thread 9 (hex id), the second naming a node of the first.
    fn devtools(slices: usize) -> String {
        let mut ev = vec![
            r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"CrRendererMain"}}"#
                .to_string(),
        ];
        for i in 0..slices {
            ev.push(format!(
                r#"{{"ph":"X","name":"Task","cat":"toplevel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{}}}}"#,
                i * 10
            ));
            if i == slices / 2 {
                ev.push(r#"{"args":{"data":{"startTime":100}},"cat":"disabled-by-default-v8.cpu_profiler","id":"0x7b","name":"Profile","ph":"P","pid":1,"tid":1,"ts":100}"#.into());
                ev.push(r#"{"args":{"data":{"cpuProfile":{"nodes":[{"callFrame":{"functionName":"(root)"},"id":1},{"callFrame":{"functionName":"main","url":"a.js","lineNumber":4},"id":2,"parent":1}],"samples":[2,2,1]},"timeDeltas":[10,20,30]}},"cat":"disabled-by-default-v8.cpu_profiler","id":"0x7b","name":"ProfileChunk","ph":"P","pid":1,"tid":9,"ts":200}"#.into());
                ev.push(r#"{"args":{"data":{"cpuProfile":{"nodes":[{"callFrame":{"functionName":"leaf"},"id":3,"parent":2}],"samples":[3,7]},"timeDeltas":[40,5]}},"cat":"disabled-by-default-v8.cpu_profiler","id":"0x7b","name":"ProfileChunk","ph":"P","pid":1,"tid":9,"ts":300}"#.into());
                ev.push(r#"{"args":{},"cat":"disabled-by-default-v8.cpu_profiler","id":"0x7b","name":"ProfileChunk","ph":"P","pid":1,"tid":9,"ts":400}"#.into());
            }
        }
        format!("{{\"traceEvents\":[\n{}\n]}}", ev.join(",\n"))
    }

    fn check_devtools(p: &Profile, slices: usize) {
        let root = p
            .cct
            .root_ids()
            .into_iter()
            .find(|&r| p.cct.name(r).starts_with("CPU samples"))
            .expect("a samples root");
        assert_eq!(
            p.cct.name(root),
            "CPU samples: pid 1, CrRendererMain (tid 1)"
        );
        // Samples at 110, 130, 160, 200, 205 (µs): main 2 (20 + 30 µs), (root) 1 (40),
        // leaf 1 (5), the last names no node.
        assert_eq!(sums(p, "main"), (2.0, 50_000.0));
        assert_eq!(sums(p, "(root)"), (1.0, 40_000.0));
        assert_eq!(sums(p, "leaf"), (1.0, 5_000.0));
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("1 CPU sample(s) name no node")),
            "{:?}",
            p.warnings
        );
        let task: f64 = (0..p.cct.len() as u32)
            .filter(|&n| p.cct.name(n) == "Task")
            .map(|n| p.metrics.values("time").unwrap()[n as usize])
            .sum();
        assert_eq!(task, slices as f64 * 5_000.0, "the slices keep their time");
    }

    #[test]
    fn devtools_profile_chunks_in_the_streaming_reader() {
        let text = devtools(4);
        check_devtools(&load(&text), 4);
    }

    #[test]
    fn devtools_profile_chunks_through_the_block_scanner() {
        // Small parts, so the scanner meets the P events mid-block on the crew.
        crate::readers::chrome::set_thread_override(Some(4096), Some(3));
        let text = devtools(3000);
        let p = load(&text);
        crate::readers::chrome::set_thread_override(None, None);
        check_devtools(&p, 3000);
    }

    #[test]
    fn top_level_samples_and_stack_frames() {
        let text = r#"{"traceEvents":[{"ph":"M","name":"process_name","pid":5,"tid":0,"args":{"name":"hermes"}}],
          "samples":[{"pid":5,"tid":"7","ts":"100","sf":2,"weight":"1"},{"pid":5,"tid":"7","ts":"130","sf":3},
                     {"pid":5,"tid":"8","ts":"100","sf":3},{"pid":5,"tid":"7","ts":"140","sf":99},{"pid":5,"tid":"7","ts":"150","sf":2}],
          "stackFrames":{"1":{"name":"[root]"},"2":{"name":"f","parent":1},"3":{"name":"g","parent":"2"}}}"#;
        let p = load(text);
        assert_eq!(p.default_metric, "sample_time");
        // tid 7: f at 100 (30 µs), g at 130 (10), unknown at 140, f at 150 (0).
        let names: Vec<&str> = p.cct.root_ids().iter().map(|&r| p.cct.name(r)).collect();
        assert_eq!(
            names,
            [
                "CPU samples: hermes (pid 5), tid 7",
                "CPU samples: hermes (pid 5), tid 8"
            ]
        );
        assert_eq!(sums(&p, "f"), (2.0, 30_000.0));
        assert_eq!(sums(&p, "g"), (2.0, 10_000.0));
        assert!(p
            .warnings
            .iter()
            .any(|w| w.contains("1 top-level sample(s) name no stackFrames")));
    }

    #[test]
    fn bad_sample_data_is_warned_never_a_panic() {
        for text in [
            r#"{"traceEvents":[],"samples":5,"stackFrames":[]}"#,
            r#"{"traceEvents":[],"samples":[{"ts":1,"sf":1}],"stackFrames":{"1":{"name":"a","parent":1}}}"#,
            r#"{"traceEvents":[{"ph":"P","name":"ProfileChunk","pid":1,"tid":1,"args":{"data":{"cpuProfile":{"nodes":[{"id":1,"parent":2},{"id":2,"parent":1}],"samples":[1,2,"x"]},"timeDeltas":["a",-5]}}}]}"#,
            r#"{"traceEvents":[{"ph":"P","name":"Sample","pid":1,"tid":1,"ts":3},{"ph":"X","name":"a","pid":1,"tid":1,"ts":3,"dur":1}]}"#,
        ] {
            let bytes = text.as_bytes().to_vec();
            let _ =
                crate::readers::load_reader(Box::new(std::io::Cursor::new(bytes)), None, 0, "t");
        }
    }
}
