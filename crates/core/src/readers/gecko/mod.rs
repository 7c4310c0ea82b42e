//! The Firefox Profiler's formats (what samply, `perf script report gecko`, simpleperf
//! and Firefox itself write): the raw Gecko profile (`meta` + `threads` whose tables
//! are `schema`/`data` pairs with a `stringTable` each, `libs`, sub-profiles in
//! `processes`) and the processed profile the Firefox Profiler saves
//! (`meta.preprocessedProfileVersion`, column tables, strings in `shared.stringArray`
//! or per thread). Both may be gzip-compressed (the loader gunzips).
//!
//! Every thread becomes one root (kind `thread`, named process / thread (tid)); below
//! it the stacks as the Firefox Profiler's call tree merges them: a stack's frame
//! stands for its function, and stacks whose functions agree share a node. Metrics:
//! `samples` (one per sample row with a stack), `weight` when the sample table has a
//! weight column (in its `weightType`'s unit), `cpu` when it has CPU deltas
//! (`threadCPUDelta`, in `meta.sampleUnits`' unit). Markers with a duration become
//! event rows on a lane per thread (`markers`), so the timeline shows them.
//!
//! The file is read as a stream (`stream`): the long number columns are walked in the
//! reader's buffer and kept compactly, nothing is built as a JSON document.

mod markers;
mod stream;
mod tables;

use std::collections::HashMap;
use std::io::BufRead;

use serde_json::Value;

use crate::model::cct::FrameId;
use crate::model::hidden::hidden_warning;
use crate::model::intern::FxBuild;
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};
use stream::{Doc, RawThread, NO};
use tables::{Func, Thread};

/// Strict probe: a JSON object with a `meta` key whose head shows Gecko's own keys.
pub fn claims(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if !t.starts_with('{') || !(t.contains("\"meta\":") || t.contains("\"meta\" :")) {
        return false;
    }
    const SIGNS: &[&str] = &[
        "\"preprocessedProfileVersion\"",
        "\"stackTable\"",
        "\"stackwalk\"",
        "\"markerSchema\"",
    ];
    SIGNS.iter().any(|s| t.contains(s))
}

pub fn read(input: &mut dyn BufRead, mut source: Source) -> Result<Profile, String> {
    let mut input = input;
    let (doc, mut warnings) = stream::read(&mut input)?;
    let meta = doc
        .meta
        .as_ref()
        .ok_or("no meta object: not a Gecko profile")?;
    let processed = meta.get("preprocessedProfileVersion").is_some();
    let mut threads = Vec::new();
    let (meta, shared) = (meta.clone(), &doc.shared);
    if processed {
        warnings.extend(doc.warnings.iter().cloned());
        for t in doc.threads {
            let l = label(&t, None);
            threads.push(tables::processed_thread(t, shared, l));
        }
    } else {
        let start = meta.get("startTime").and_then(Value::as_f64).unwrap_or(0.0);
        raw_threads(doc, None, start, &mut threads, &mut warnings);
    }
    if threads.is_empty() {
        return Err("no threads in the profile".into());
    }
    let mut b = Builder::default();
    for th in &threads {
        b.thread(th);
    }
    let units = |k: &str| {
        meta.pointer(&format!("/sampleUnits/{k}"))
            .and_then(Value::as_str)
            .map(|u| if u == "µs" { "us" } else { u })
            .unwrap_or("")
            .to_string()
    };
    let roots = std::mem::take(&mut b.roots);
    let mut p = b.finish(&threads, &units("threadCPUDelta"), &mut warnings);
    markers::lane(&mut p, &threads, &roots, &meta, &mut warnings);
    p.meta = meta_of(&meta, processed, &threads);
    p.dialect = dialect(&meta, processed);
    p.warnings = warnings;
    source.format = Format::Gecko;
    p.source = source;
    Ok(p)
}

/// The raw format's threads, and those of its sub-profiles (`processes`), each of
/// which has its own `meta` and threads (and sub-profiles).
/// A sub-profile's times count from its own `meta.startTime` (ms since the epoch):
/// its markers are moved by the difference to the root profile's.
fn raw_threads(
    doc: Doc,
    parent: Option<&str>,
    root_start: f64,
    out: &mut Vec<Thread>,
    warnings: &mut Vec<String>,
) {
    warnings.extend(doc.warnings);
    let start = doc
        .meta
        .as_ref()
        .and_then(|m| m.get("startTime"))
        .and_then(Value::as_f64);
    let offset = start.map_or(0.0, |s| s - root_start);
    for t in doc.threads {
        let l = label(&t, parent);
        let mut th = tables::raw_thread(t, l);
        th.offset_ms = if offset.is_finite() { offset } else { 0.0 };
        out.push(th);
    }
    for sub in doc.processes {
        let name = sub
            .meta
            .as_ref()
            .and_then(|m| m.pointer("/product"))
            .and_then(Value::as_str)
            .map(str::to_string);
        raw_threads(sub, name.as_deref().or(parent), root_start, out, warnings);
    }
}

/// `process / thread (tid N)`: the process by name when the file names it, else by pid.
fn label(t: &RawThread, process: Option<&str>) -> String {
    let text = |k: &str| match t.info.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let name = text("name").unwrap_or_else(|| "thread".into());
    let proc = text("processName")
        .or_else(|| process.map(str::to_string))
        .or_else(|| text("pid").map(|p| format!("pid {p}")));
    let mut s = match proc {
        Some(p) if p != name => format!("{p} / {name}"),
        _ => name,
    };
    if let Some(tid) = text("tid") {
        s.push_str(&format!(" (tid {tid})"));
    }
    s
}

fn dialect(meta: &Value, processed: bool) -> String {
    let n = |k: &str| {
        meta.get(k)
            .map(|v| v.to_string())
            .unwrap_or_else(|| "?".into())
    };
    let product = meta
        .get("product")
        .and_then(Value::as_str)
        .map(|p| format!(", {p}"))
        .unwrap_or_default();
    if processed {
        format!(
            "Firefox Profiler processed profile (version {}){product}",
            n("preprocessedProfileVersion")
        )
    } else {
        format!("Gecko profile (version {}){product}", n("version"))
    }
}

fn meta_of(meta: &Value, processed: bool, threads: &[Thread]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for k in [
        "product",
        "version",
        "preprocessedProfileVersion",
        "interval",
        "startTime",
    ] {
        match meta.get(k) {
            Some(Value::String(s)) => out.push((k.to_string(), s.clone())),
            Some(v @ Value::Number(_)) => out.push((k.to_string(), v.to_string())),
            _ => {}
        }
    }
    out.push((
        "format".into(),
        if processed { "processed" } else { "raw Gecko" }.into(),
    ));
    out.push(("threads".into(), threads.len().to_string()));
    let samples: usize = threads.iter().map(|t| t.n_samples).sum();
    out.push(("samples".into(), samples.to_string()));
    out
}

/// Marks in the stack-to-node memo.
const UNSET: u32 = u32::MAX;
const VISITING: u32 = u32::MAX - 1;
const BAD: u32 = u32::MAX - 2;

/// The tree and the per-node sums, built thread by thread.
#[derive(Default)]
struct Builder {
    cct: Cct,
    frames: HashMap<Func, FrameId, FxBuild>,
    by_path: HashMap<(u32, FrameId), u32, FxBuild>,
    samples: Vec<f64>,
    weight: Vec<f64>,
    cpu: Vec<f64>,
    any_cpu: bool,
    no_stack: u64,
    bad_stack: u64,
    no_func: u64,
    total: u64,
    weight_types: Vec<String>,
    /// Each thread's root node, in thread order (the markers' lanes point at them).
    roots: Vec<u32>,
}

impl Builder {
    fn thread(&mut self, th: &Thread) {
        let root = self.cct.add_node(None, Frame::new(&th.label, "thread"));
        self.roots.push(root);
        let mut memo = vec![UNSET; th.stacks.len()];
        if let Some(w) = &th.weighted {
            if !self.weight_types.contains(w) {
                self.weight_types.push(w.clone());
            }
        }
        // The columns looked up once, not per sample.
        let s = &th.samples;
        let stacks = s.col("stack");
        let weights = th.weighted.as_ref().and(s.col("weight"));
        let cpus = s.col("threadCPUDelta");
        for i in 0..th.n_samples {
            self.total += 1;
            let Some(stack) = stacks.and_then(|c| c.idx(i)) else {
                self.no_stack += 1;
                continue;
            };
            let Some(node) = self.node_of(th, root, stack, &mut memo) else {
                self.bad_stack += 1;
                continue;
            };
            let n = node as usize;
            if n >= self.samples.len() {
                self.grow();
            }
            self.samples[n] += 1.0;
            self.weight[n] += weights.and_then(|c| c.num(i)).unwrap_or(1.0);
            if let Some(c) = cpus.and_then(|c| c.num(i)) {
                self.cpu[n] += c;
                self.any_cpu = true;
            }
        }
        self.grow();
    }

    fn grow(&mut self) {
        let len = self.cct.len();
        for v in [&mut self.samples, &mut self.weight, &mut self.cpu] {
            v.resize(len, 0.0);
        }
    }

    /// The node of a stack: its prefix chain walked up to a known node (or the root),
    /// then down, one node per frame. A prefix out of range or a cycle makes the
    /// stack (and those above it on the chain) bad.
    fn node_of(&mut self, th: &Thread, root: u32, stack: usize, memo: &mut [u32]) -> Option<u32> {
        let mut chain = Vec::new();
        let mut cur = Some(stack);
        let mut parent = root;
        while let Some(c) = cur {
            match memo.get(c).copied() {
                None | Some(BAD) | Some(VISITING) => {
                    for &c in &chain {
                        memo[c] = BAD;
                    }
                    return None;
                }
                Some(UNSET) => {
                    memo[c] = VISITING;
                    chain.push(c);
                    cur = match th.stacks[c].0 {
                        NO => None,
                        p => Some(p as usize),
                    };
                }
                Some(n) => {
                    parent = n;
                    break;
                }
            }
        }
        for &c in chain.iter().rev() {
            let func = th.stacks[c].1 as usize;
            let fid = self.frame(th.frames.get(func).and_then(Option::as_ref));
            let node = match self.by_path.get(&(parent, fid)) {
                Some(&n) => n,
                None => {
                    let n = self.cct.add_shared(Some(parent), fid);
                    self.by_path.insert((parent, fid), n);
                    n
                }
            };
            memo[c] = node;
            parent = node;
        }
        Some(parent)
    }

    fn frame(&mut self, func: Option<&Func>) -> FrameId {
        let unknown;
        let func = match func {
            Some(f) => f,
            None => {
                self.no_func += 1;
                unknown = Func {
                    name: "(frame without a function)".into(),
                    ..Func::default()
                };
                &unknown
            }
        };
        if let Some(&id) = self.frames.get(func) {
            return id;
        }
        let mut fr = Frame::new(&func.name, "function");
        if let Some(f) = &func.file {
            fr.set_attr("file", f);
        }
        if let Some(l) = func.line {
            fr.set_attr("line", &l.to_string());
        }
        if let Some(l) = &func.lib {
            fr.set_attr("module", l);
        }
        let id = self.cct.shared_frame(fr);
        self.frames.insert(func.clone(), id);
        id
    }

    fn finish(mut self, threads: &[Thread], cpu_unit: &str, warnings: &mut Vec<String>) -> Profile {
        self.grow();
        self.warn(warnings);
        let len = self.cct.len();
        let mut metrics = MetricTable::new(len);
        let mut bases = vec!["samples"];
        metrics.set("samples", "", std::mem::take(&mut self.samples));
        if threads.iter().any(|t| t.weighted.is_some()) {
            let unit = match self.weight_types.first().map(String::as_str) {
                Some("tracing-ms") => "ms",
                Some("bytes") => "bytes",
                _ => "",
            };
            metrics.set("weight", unit, std::mem::take(&mut self.weight));
            bases.push("weight");
        }
        if self.any_cpu {
            metrics.set("cpu", cpu_unit, std::mem::take(&mut self.cpu));
            bases.push("cpu");
        }
        metrics.derive_inclusive(&self.cct, &bases);
        Profile {
            call_graph: None,
            source: Source {
                path: None,
                format: Format::Gecko,
                size: 0,
                gzip: false,
                label: String::new(),
            },
            dialect: String::new(),
            cct: self.cct,
            metrics,
            events: None,
            counters: None,
            meta: Vec::new(),
            warnings: Vec::new(),
            default_metric: "samples".into(),
        }
    }

    fn warn(&self, warnings: &mut Vec<String>) {
        let share = |n: u64| n as f64 / self.total.max(1) as f64;
        if self.no_stack > 0 {
            warnings.push(hidden_warning(
                format!(
                    "{} of {} samples have no stack (null) and are left out of the tree, as the Firefox Profiler's call tree leaves them out",
                    self.no_stack, self.total
                ),
                share(self.no_stack),
            ));
        }
        if self.bad_stack > 0 {
            warnings.push(hidden_warning(
                format!(
                    "{} samples name a stack that is out of range or loops through its prefixes; skipped",
                    self.bad_stack
                ),
                share(self.bad_stack),
            ));
        }
        if self.no_func > 0 {
            warnings.push(format!(
                "{} stack entries name a frame without a function (out of range or no name); shown as \"(frame without a function)\"",
                self.no_func
            ));
        }
        if self.weight_types.len() > 1 {
            warnings.push(format!(
                "threads weigh their samples in different units ({}); the weight column adds them as they are",
                self.weight_types.join(", ")
            ));
        }
    }
}

#[cfg(test)]
mod tests;
