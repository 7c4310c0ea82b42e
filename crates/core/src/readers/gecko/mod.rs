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

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;

use serde_json::Value;

use crate::model::cct::FrameId;
use crate::model::hidden::hidden_warning;
use crate::model::intern::FxBuild;
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};
use stream::{Col, Doc, RawThread, NO};
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

/// `values[s]` (a sum per stack index) added to each stack's node.
fn add_by_stack(to: &mut [f64], order: &[u32], node: &[u32], values: &[f64]) {
    for &st in order {
        let n = node[st as usize];
        if n != BAD {
            to[n as usize] += values[st as usize];
        }
    }
}

/// A thread's samples counted per stack index, in one pass over the stack column.
struct PerStack<'a> {
    /// Samples per stack index of the stack table.
    count: Vec<u64>,
    /// Stack indices in the order of their first sample.
    order: Vec<u32>,
    /// Each sample's stack index; at or past `count.len()` (`NO` among them): none, or
    /// out of the table's range. The stack column itself when it holds indices.
    of_sample: Cow<'a, [u32]>,
    no_stack: u64,
    /// Samples naming a stack beyond the table: bad (the walk up finds nothing).
    out_of_range: u64,
}

impl<'a> PerStack<'a> {
    fn count(th: &Thread, stacks: Option<&'a Col>) -> PerStack<'a> {
        let n = th.n_samples;
        let of_sample: Cow<[u32]> = match stacks {
            Some(Col::Idx(v)) => Cow::Borrowed(&v[..v.len().min(n)]),
            _ => Cow::Owned(
                (0..n)
                    .map(|i| match stacks.and_then(|c| c.idx(i)) {
                        None => NO,
                        // Beyond any table (and not `NO`): out of range, not missing.
                        Some(s) => u32::try_from(s).ok().filter(|&s| s != NO).unwrap_or(NO - 1),
                    })
                    .collect(),
            ),
        };
        let mut p = PerStack {
            count: vec![0; th.stacks.len()],
            order: Vec::new(),
            of_sample,
            // Samples past the stack column's end have no stack either.
            no_stack: (n - n.min(match stacks {
                Some(Col::Idx(v)) => v.len(),
                _ => n,
            })) as u64,
            out_of_range: 0,
        };
        for &st in p.of_sample.iter() {
            if st == NO {
                p.no_stack += 1;
                continue;
            }
            match p.count.get_mut(st as usize) {
                Some(c) => {
                    if *c == 0 {
                        p.order.push(st);
                    }
                    *c += 1;
                }
                None => p.out_of_range += 1,
            }
        }
        p
    }

    /// The stack index of the sample at position `st` of `of_sample` when in range.
    #[inline]
    fn stack(&self, st: u32) -> Option<usize> {
        let st = st as usize;
        (st < self.count.len()).then_some(st)
    }

    /// Per stack index, the sum of an index column's values (`missing` for a sample
    /// without one, or none added) and whether any was added: only when the sums are
    /// exact in any order (integers, the thread's total below 2^53), so that adding
    /// them by stack gives the very f64s adding them sample by sample gave. Else None.
    fn sums(&self, c: &Col, missing: Option<u64>) -> Option<(Vec<f64>, Vec<bool>)> {
        let Col::Idx(v) = c else { return None };
        let mut sum = vec![0u64; self.count.len()];
        let mut any = vec![false; self.count.len()];
        let mut total = 0u64;
        for (i, &st) in self.of_sample.iter().enumerate() {
            let Some(st) = self.stack(st) else { continue };
            let x = match v.get(i) {
                Some(&x) if x != NO => u64::from(x),
                _ => match missing {
                    Some(m) => m,
                    None => continue,
                },
            };
            sum[st] += x;
            any[st] = true;
            total = total.saturating_add(x);
        }
        if total >= 1 << 53 {
            return None;
        }
        Some((sum.into_iter().map(|x| x as f64).collect(), any))
    }

    /// Each sample with a node, in file order, with its value in `c` (floats are
    /// added in the order they always were).
    fn each(&self, c: &Col, node: &[u32], mut f: impl FnMut(usize, Option<f64>)) {
        for (i, &st) in self.of_sample.iter().enumerate() {
            match self.stack(st).map(|st| node[st]) {
                Some(n) if n != BAD => f(n as usize, c.num(i)),
                _ => {}
            }
        }
    }
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
    /// The current thread's frames by frame index, once looked up.
    frame_of: Vec<Option<FrameId>>,
}

impl Builder {
    /// One thread into the tree: its samples counted per stack index first, then each
    /// stack made a node once (not once per sample) and its sums added there.
    fn thread(&mut self, th: &Thread) {
        let root = self.cct.add_node(None, Frame::new(&th.label, "thread"));
        self.roots.push(root);
        self.frame_of.clear();
        // At most one node per stack: no rehashing as the thread's nodes come.
        self.by_path.reserve(th.stacks.len());
        let mut memo = vec![UNSET; th.stacks.len()];
        if let Some(w) = &th.weighted {
            if !self.weight_types.contains(w) {
                self.weight_types.push(w.clone());
            }
        }
        // The columns looked up once, not per sample.
        let s = &th.samples;
        let weights = th.weighted.as_ref().and(s.col("weight"));
        let cpus = s.col("threadCPUDelta");
        let per = PerStack::count(th, s.col("stack"));
        self.total += th.n_samples as u64;
        self.no_stack += per.no_stack;
        self.bad_stack += per.out_of_range;
        // Nodes are made in the order of each stack's first sample, as a walk over the
        // samples makes them: node ids, and so every output, stay as they were.
        let mut node = vec![BAD; th.stacks.len()];
        for &st in &per.order {
            let st = st as usize;
            match self.node_of(th, root, st, &mut memo) {
                Some(n) => node[st] = n,
                None => self.bad_stack += per.count[st],
            }
        }
        self.grow();
        let counts: Vec<f64> = per.count.iter().map(|&c| c as f64).collect();
        add_by_stack(&mut self.samples, &per.order, &node, &counts);
        match weights {
            None => add_by_stack(&mut self.weight, &per.order, &node, &counts),
            Some(c) => match per.sums(c, Some(1)) {
                Some((sum, _)) => add_by_stack(&mut self.weight, &per.order, &node, &sum),
                None => per.each(c, &node, |n, v| self.weight[n] += v.unwrap_or(1.0)),
            },
        }
        if let Some(c) = cpus {
            match per.sums(c, None) {
                Some((sum, any)) => {
                    add_by_stack(&mut self.cpu, &per.order, &node, &sum);
                    // A value counts only on a sample whose stack makes a node.
                    self.any_cpu |= per.order.iter().any(|&st| {
                        let st = st as usize;
                        any[st] && node[st] != BAD
                    });
                }
                None => {
                    let (cpu, any) = (&mut self.cpu, &mut self.any_cpu);
                    per.each(c, &node, |n, v| {
                        if let Some(v) = v {
                            cpu[n] += v;
                            *any = true;
                        }
                    });
                }
            }
        }
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
            let fid = self.frame_at(th, func);
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

    /// The frame of the thread's frame index `i`, looked up by its function once per
    /// index (a function's strings are hashed once, not once per node). A frame without
    /// a function is looked up (and counted) each time, as before.
    fn frame_at(&mut self, th: &Thread, i: usize) -> FrameId {
        let Some(func) = th.frames.get(i).and_then(Option::as_ref) else {
            return self.frame(None);
        };
        if let Some(&Some(id)) = self.frame_of.get(i) {
            return id;
        }
        let id = self.frame(Some(func));
        if self.frame_of.len() <= i {
            self.frame_of.resize(i + 1, None);
        }
        self.frame_of[i] = Some(id);
        id
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
