//! Chrome Trace Event JSON, with both PyTorch/Kineto dialects, read in one streaming pass
//! into the event table. The CCT is built afterwards (see `trace_cct`).
//!
//! Leniency follows Perfetto's JSON importer: trailing commas, an array without its
//! final `]`, numeric strings for ts/dur/pid/tid. Raw control characters in strings are
//! kept (Perfetto rejects them; PyTorch writes them), with a warning.

use std::collections::HashMap;
use std::io::Read;

use crate::json::{parse_decimal_scaled, JsonError, JsonReader, Kind};

mod blocks;
mod crew;
mod flows;
mod keys;
mod samples;
mod scan;
mod stream;

use crate::model::events::{CounterTable, EventKind, EventTable, Row, NONE_I64};
use crate::model::intern::FxBuild;
pub use blocks::{set_thread_override, threads};
pub use flows::Flows;
use scan::{Ev, Num, Part};
use stream::RawEvent;

/// The result of the streaming pass.
#[derive(Debug, Default)]
pub struct ChromeTrace {
    pub events: EventTable,
    pub counters: CounterTable,
    pub meta: Vec<(String, String)>,
    pub warnings: Vec<String>,
    /// (pid, tid) -> thread_name; pid -> process_name / process_labels (interned keys).
    pub thread_names: HashMap<(u32, u32), String>,
    pub process_names: HashMap<u32, String>,
    pub process_labels: HashMap<u32, String>,
    /// Launch flows (ac2g): where each starts and ends, looked up by the activities
    /// that have no correlation id.
    pub flows: Flows,
    pub kineto: bool,
    pub old_dialect: bool,
    pub array_form: bool,
    pub rank: Option<i64>,
    pub devices: Vec<serde_json::Value>,
    /// Written by legacy rocprof (its lane labels seen): uncategorised slices on its GPU
    /// and copy lanes are device activity (`readers::rocprof::chrome`).
    pub rocprof: bool,
    /// The `seq` of each slice whose end is not in the file (a `B` without its `E`, an
    /// NVTX range still open at the end): its row runs to the end of the trace so that
    /// what ran after it nests under it, but it counts no time of its own.
    pub unended: Vec<u32>,
    /// CPU samples in the file (`Profile`/`ProfileChunk` events, top-level `samples`
    /// and `stackFrames`): a sampled profile beside the slices.
    pub sampled: samples::Sampled,
}

/// What a category means to the reader, worked out once per category and part.
#[derive(Debug, Clone, Copy)]
struct Category {
    kind: Option<EventKind>,
    /// One of the 2021 dialect's names (`Operator`, `Kernel`, ...).
    old_dialect: bool,
    host: bool,
    empty: bool,
    cuda_sync: bool,
    /// The global id of its normalised name.
    global: u32,
}

struct OpenB {
    ev: RawEventSummary,
    seq: u32,
}

struct RawEventSummary {
    name: u32,
    cat: u32,
    kind: EventKind,
    ts: i64,
    pid: u32,
    tid: u32,
}

#[derive(Default)]
struct Stats {
    dropped_bad_time: u64,
    unknown_phase: u64,
    unmatched_end: u64,
    unclosed_begin: u64,
    negative_dur: u64,
    /// Slices whose category grove does not know, by category: read as CPU slices,
    /// and reported (in a Kineto trace) so device activity never vanishes silently.
    unknown_cats: HashMap<Vec<u8>, u64>,
    /// Some event had a category grove knows (a Kineto trace, whatever its header).
    known_cats: bool,
}

struct Parser {
    out: ChromeTrace,
    key: Vec<u8>,
    val: Vec<u8>,
    raw: RawEvent,
    open: HashMap<(u32, u32), Vec<OpenB>, FxBuild>,
    stats: Stats,
    seq: u32,
    max_ts: i64,
    /// `--steps`/`--window` while streaming (`select::Stream`): which events to keep.
    filter: Option<super::select::Stream>,
    /// Launch flows in file order, handed to `out.flows` by `finish`: a list grows at
    /// the end, where a hash map growing a flow at a time rehashes and touches fresh
    /// memory again and again (flows are a third of a Kineto trace's events).
    flow_starts: Vec<(i64, flows::At)>,
    flow_ends: Vec<(flows::At, i64)>,
}

fn int_of(text: &[u8]) -> Option<i64> {
    parse_decimal_scaled(text, 0)
}

/// `"stream 7"` / `"stream 7 "` / `"7"` -> 7.
fn stream_number(tid: &str) -> Option<i64> {
    let t = tid.trim();
    let t = t.strip_prefix("stream").unwrap_or(t).trim();
    let t = t.split_whitespace().next().unwrap_or(t);
    t.parse().ok()
}

/// Kineto's stream-sync rows sit on `stream + 1000000` (kineto PR #1356).
const STREAM_SYNC_OFFSET: i64 = 1_000_000;

pub fn parse<R: Read>(src: R) -> Result<ChromeTrace, JsonError> {
    parse_filtered(src, None).map(|(t, _)| t)
}

/// `parse`, keeping only the events `filter` accepts (and giving it back).
pub fn parse_filtered<R: Read>(
    src: R,
    filter: Option<super::select::Stream>,
) -> Result<(ChromeTrace, Option<super::select::Stream>), JsonError> {
    let mut r = JsonReader::new(src);
    r.skip_bom();
    let mut p = Parser {
        out: ChromeTrace::default(),
        key: Vec::new(),
        val: Vec::new(),
        raw: RawEvent::default(),
        open: HashMap::default(),
        stats: Stats::default(),
        seq: 0,
        max_ts: i64::MIN,
        filter,
        flow_starts: Vec::new(),
        flow_ends: Vec::new(),
    };
    let mut base_ns: Option<i64> = None;
    match r.peek_kind()? {
        Kind::Array => {
            p.out.array_form = true;
            if let Err(e) = p.events(&mut r) {
                if !e.eof {
                    return Err(e);
                }
                p.out.warnings.push(format!(
                    "the event array ends without ']' ({e}); loaded the complete events before it"
                ));
            }
        }
        Kind::Object => {
            r.begin_object()?;
            let mut first = true;
            let mut saw_events = false;
            loop {
                let mut key = std::mem::take(&mut p.key);
                let more = match r.next_key(first, &mut key) {
                    Ok(m) => m,
                    Err(e) if e.eof && saw_events => {
                        p.out
                            .warnings
                            .push(format!("the trace object is incomplete ({e})"));
                        break;
                    }
                    Err(e) => return Err(e),
                };
                first = false;
                if !more {
                    break;
                }
                match &key[..] {
                    b"traceEvents" => {
                        saw_events = true;
                        if let Err(e) = p.events(&mut r) {
                            if !e.eof {
                                return Err(e);
                            }
                            p.out.warnings.push(format!(
                                "traceEvents ends early ({e}); loaded the complete events before it"
                            ));
                            p.key = key;
                            break;
                        }
                    }
                    b"baseTimeNanoseconds" => {
                        r.read_scalar(&mut p.val)?;
                        base_ns = int_of(&p.val);
                        p.out.kineto = true;
                    }
                    b"distributedInfo" => {
                        let v = r.read_value()?;
                        if let Some(obj) = v.as_object() {
                            for (k, x) in obj {
                                if !x.is_object() && !x.is_array() {
                                    p.out
                                        .meta
                                        .push((format!("distributedInfo.{k}"), scalar_text(x)));
                                }
                            }
                            p.out.rank = obj.get("rank").and_then(|x| x.as_i64());
                        }
                    }
                    b"deviceProperties" => {
                        let v = r.read_value()?;
                        if let Some(a) = v.as_array() {
                            p.out.devices = a.clone();
                        }
                        p.out.kineto = true;
                    }
                    // The Trace Event format's own CPU samples (`chrome::samples`).
                    b"samples" => p.out.sampled.top_samples = Some(r.read_value()?),
                    b"stackFrames" => p.out.sampled.stack_frames = Some(r.read_value()?),
                    b"schemaVersion" => {
                        p.out.kineto = true;
                        let v = r.read_value()?;
                        p.out.meta.push(("schemaVersion".into(), scalar_text(&v)));
                    }
                    _ => {
                        let k = String::from_utf8_lossy(&key).into_owned();
                        match r.peek_kind()? {
                            Kind::Object | Kind::Array => r.skip_value()?,
                            _ => {
                                let v = r.read_value()?;
                                p.out.meta.push((k, scalar_text(&v)));
                            }
                        }
                    }
                }
                p.key = key;
            }
            if !saw_events {
                return Err(r.error("not a Chrome trace: the object has no \"traceEvents\""));
            }
        }
        _ => return Err(r.error("not a Chrome trace: expected '[' or '{'")),
    }
    p.finish(base_ns, r.repairs);
    Ok((p.out, p.filter))
}

fn scalar_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Parser {
    /// One element through the streaming reader (after `next_element` said there is
    /// one): what the fast path leaves, and the elements around it.
    fn slow_element<R: Read>(
        &mut self,
        r: &mut JsonReader<R>,
        part: &mut Part,
        counted: &mut super::progress::EventCounter,
    ) -> Result<(), JsonError> {
        counted.one();
        if r.peek_kind()? != Kind::Object {
            return r.skip_value();
        }
        self.read_event(r)?;
        if self.raw.ph == b'P' && matches!(&self.raw.name[..], b"Profile" | b"ProfileChunk") {
            // A sampled profile's event (the scanner leaves `P` events to this reader,
            // which keeps the hex `id` text that groups a profile's chunks). Other `P`
            // events (the old spec's sample events) count among the unused phases.
            let raw = &self.raw;
            let id = raw.id.get();
            self.out
                .sampled
                .push(&raw.name, &raw.pid, &raw.tid, id, &raw.args);
            self.seq += 1;
            return Ok(());
        }
        let ev = self.raw_to_ev(part);
        self.handle_event(part, &ev);
        self.seq += 1;
        part.clear_block();
        Ok(())
    }
    /// Events of one part, in file order (the fast path's output).
    fn replay(&mut self, part: &mut Part, counted: &mut super::progress::EventCounter) {
        let events = std::mem::take(&mut part.events);
        for ev in &events {
            counted.one();
            self.handle_event(part, ev);
            self.seq += 1;
        }
        part.events = events;
        part.clear_block();
    }

    fn handle_event(&mut self, part: &mut Part, ev: &Ev) {
        match ev.ph {
            b'X' | b'B' | b'E' | b'i' | b'I' => self.slice_event(part, ev),
            b'M' => self.metadata_event(part, ev),
            b'C' => self.counter_event(part, ev),
            b's' | b't' | b'f' => self.flow_event(part, ev),
            0 => {} // `{}` elements and events without ph are skipped, as Perfetto does
            _ => self.stats.unknown_phase += 1,
        }
    }

    /// What a category means, once per category and part.
    fn category(&mut self, part: &mut Part, cat: u32) -> Category {
        let i = cat as usize;
        if let Some(Some(c)) = part.categories.get(i) {
            return *c;
        }
        let text = part.strings.resolve(cat);
        let kind = EventKind::from_category(text);
        let c = Category {
            kind,
            old_dialect: kind.is_some()
                && matches!(
                    text,
                    "Operator" | "Runtime" | "Kernel" | "Memcpy" | "Memset"
                ),
            host: is_host_category(text),
            empty: text.is_empty(),
            cuda_sync: text == "cuda_sync",
            global: {
                let g = &mut self.out.events.strings;
                g.intern(normalized_category(text))
            },
        };
        if part.categories.len() <= i {
            part.categories.resize(i + 1, None);
        }
        part.categories[i] = Some(c);
        c
    }

    fn slice_event(&mut self, part: &mut Part, ev: &Ev) {
        let ph = ev.ph;
        let Some(ts) = ev.ts() else {
            self.stats.dropped_bad_time += 1;
            return;
        };
        let pid = part.global_id(ev.pid, &mut self.out.events.strings);
        let tid = part.global_id(ev.tid, &mut self.out.events.strings);
        // The category's global id is interned here, after pid and tid, as before.
        let cat_info = self.category(part, ev.cat);
        let kind = match ph {
            b'i' | b'I' => EventKind::Instant,
            _ => match cat_info.kind {
                Some(k) => {
                    if cat_info.old_dialect {
                        self.out.old_dialect = true;
                    }
                    self.stats.known_cats = true;
                    k
                }
                None if cat_info.empty && self.out.rocprof => {
                    let lane = self.out.process_names.get(&pid).map(String::as_str);
                    super::rocprof::chrome::lane_kind(lane)
                }
                None => {
                    if !cat_info.empty && !cat_info.host {
                        let cat = part.strings.resolve(ev.cat).as_bytes();
                        match self.stats.unknown_cats.get_mut(cat) {
                            Some(n) => *n += 1,
                            None => {
                                self.stats.unknown_cats.insert(cat.to_vec(), 1);
                            }
                        }
                    }
                    EventKind::Cpu
                }
            },
        };
        let cat = cat_info.global;
        match ph {
            b'B' => {
                let name = part.global_id(ev.name, &mut self.out.events.strings);
                self.open.entry((pid, tid)).or_default().push(OpenB {
                    ev: RawEventSummary {
                        name,
                        cat,
                        kind,
                        ts,
                        pid,
                        tid,
                    },
                    seq: self.seq,
                });
                self.max_ts = self.max_ts.max(ts);
                return;
            }
            b'E' => {
                let t = &mut self.out.events;
                // E closes the innermost open B of its thread, whatever its name (Perfetto).
                let Some(b) = self.open.get_mut(&(pid, tid)).and_then(|s| s.pop()) else {
                    self.stats.unmatched_end += 1;
                    return;
                };
                let dur = (ts - b.ev.ts).max(0);
                self.max_ts = self.max_ts.max(ts);
                if let Some(f) = &mut self.filter {
                    let name = t.strings.resolve(b.ev.name).as_bytes();
                    if !f.slice(b.ev.kind.on_gpu_lane(), name, b.ev.ts, dur, None) {
                        return;
                    }
                }
                t.push_row(&Row {
                    seq: b.seq,
                    begin_end: true,
                    ..Row::new(
                        b.ev.name, b.ev.cat, b.ev.kind, b.ev.ts, dur, b.ev.pid, b.ev.tid,
                    )
                });
                return;
            }
            _ => {}
        }
        let dur = if ph == b'X' {
            match ev.dur() {
                Some(d) if d >= 0 => d,
                Some(_) => {
                    self.stats.negative_dur += 1;
                    return;
                }
                // Perfetto drops complete events without a duration.
                None => {
                    self.stats.dropped_bad_time += 1;
                    return;
                }
            }
        } else {
            0
        };
        if let Some(f) = &mut self.filter {
            let name = part.strings.resolve(ev.name).as_bytes();
            if !f.slice(kind.on_gpu_lane(), name, ts, dur, ev.get(Num::Correlation)) {
                self.max_ts = self.max_ts.max(ts + dur);
                return;
            }
        }
        let name = part.global_id(ev.name, &mut self.out.events.strings);
        let t = &mut self.out.events;
        let mut row = Row {
            seq: self.seq,
            correlation: ev.get(Num::Correlation).unwrap_or(NONE_I64),
            external_id: ev.get(Num::ExternalId).unwrap_or(NONE_I64),
            record_function_id: ev.get(Num::RecordFunctionId).unwrap_or(NONE_I64),
            ..Row::new(name, cat, kind, ts, dur, pid, tid)
        };
        self.max_ts = self.max_ts.max(ts + dur);
        if kind.on_gpu_lane() || kind == EventKind::Sync {
            let pid_text = part.strings.resolve(ev.pid);
            let tid_text = part.strings.resolve(ev.tid);
            // Kineto puts GPU rows on pid = device; sync rows may sit on CPU threads.
            let pid_device = || {
                kind.on_gpu_lane()
                    .then(|| pid_text.trim().parse().ok())
                    .flatten()
            };
            row.device = ev.get(Num::Device).or_else(pid_device).unwrap_or(NONE_I64);
            let mut stream = ev
                .get(Num::Stream)
                .or_else(|| stream_number(tid_text))
                .unwrap_or(NONE_I64);
            if kind == EventKind::Sync && cat_info.cuda_sync && stream >= STREAM_SYNC_OFFSET {
                stream -= STREAM_SYNC_OFFSET;
            }
            row.stream = stream;
            if ev.has_args && kind != EventKind::Sync {
                row.args = part.copy_args(ev, &mut t.arg_store);
            }
        }
        t.push_row(&row);
    }

    fn metadata_event(&mut self, part: &mut Part, ev: &Ev) {
        let pid = part.global_id(ev.pid, &mut self.out.events.strings);
        let tid = part.global_id(ev.tid, &mut self.out.events.strings);
        let args: serde_json::Value = crate::json::from_slice(part.args_of(ev)).unwrap_or_default();
        let text = |k: &str| args.get(k).map(scalar_text);
        match part.strings.resolve(ev.name) {
            "thread_name" => {
                if let Some(n) = text("name") {
                    self.out
                        .thread_names
                        .insert((pid, tid), n.trim().to_string());
                }
            }
            "process_name" => {
                if let Some(n) = text("name") {
                    self.out.rocprof |= super::rocprof::chrome::is_rocprof_label(n.trim());
                    self.out.process_names.insert(pid, n.trim().to_string());
                }
            }
            "process_labels" => {
                if let Some(n) = text("labels") {
                    self.out.process_labels.insert(pid, n.trim().to_string());
                }
            }
            _ => {}
        }
    }

    fn counter_event(&mut self, part: &mut Part, ev: &Ev) {
        let Some(ts) = ev.ts() else {
            self.stats.dropped_bad_time += 1;
            return;
        };
        if self.filter.as_ref().is_some_and(|f| !f.counter(ts)) {
            return;
        }
        let args: serde_json::Value = crate::json::from_slice(part.args_of(ev)).unwrap_or_default();
        let Some(obj) = args.as_object() else { return };
        let name = part.global_id(ev.name, &mut self.out.events.strings);
        let pid = part.global_id(ev.pid, &mut self.out.events.strings);
        let t = &mut self.out.events;
        for (k, v) in obj {
            let value = match v {
                serde_json::Value::Number(n) => n.as_f64(),
                serde_json::Value::String(s) => s.trim().parse().ok(),
                _ => None,
            };
            if let Some(value) = value {
                let c = &mut self.out.counters;
                c.name.push(name);
                c.series.push(t.strings.intern(k));
                c.pid.push(pid);
                c.ts.push(ts);
                c.value.push(value);
            }
        }
    }

    fn flow_event(&mut self, part: &mut Part, ev: &Ev) {
        let cat = part.strings.resolve(ev.cat);
        let is_launch_flow = cat == "ac2g"
            || cat == "async_cpu_to_gpu"
            || cat == "async_gpu"
            || (cat == "async" && part.strings.resolve(ev.name) == "launch");
        if !is_launch_flow {
            return;
        }
        let (Some(id), Some(ts)) = (ev.get(Num::Id), ev.ts()) else {
            return;
        };
        let pid = part.global_id(ev.pid, &mut self.out.events.strings);
        let tid = part.global_id(ev.tid, &mut self.out.events.strings);
        // Interned above all the same, so a part's string table is that of a whole load.
        if let Some(f) = &self.filter {
            if !f.flow(ev.ph == b's', ts) {
                return;
            }
        }
        if ev.ph == b's' {
            self.flow_starts.push((id, (pid, tid, ts)));
        } else if ev.ph == b'f' {
            self.flow_ends.push(((pid, tid, ts), id));
        }
    }

    /// The flows as listed; their maps are built if an activity needs them
    /// (`Flows::start_of`), a later flow replacing an earlier one with the same key.
    fn build_flows(&mut self) {
        self.out.flows = Flows::from_lists(
            std::mem::take(&mut self.flow_starts),
            std::mem::take(&mut self.flow_ends),
        );
    }

    fn finish(&mut self, base_ns: Option<i64>, repairs: crate::json::Repairs) {
        // Close what never ended at the end of the trace (Perfetto leaves them open).
        let end = self.max_ts;
        let mut open: Vec<OpenB> = self.open.drain().flat_map(|(_, v)| v).collect();
        open.sort_by_key(|b| b.seq);
        for b in open {
            self.stats.unclosed_begin += 1;
            self.out.unended.push(b.seq);
            self.out.events.push_row(&Row {
                seq: b.seq,
                begin_end: true,
                ..Row::new(
                    b.ev.name,
                    b.ev.cat,
                    b.ev.kind,
                    b.ev.ts,
                    (end - b.ev.ts).max(0),
                    b.ev.pid,
                    b.ev.tid,
                )
            });
        }
        if let Some(base) = base_ns {
            self.out.events.shift_time(base);
            for t in &mut self.out.counters.ts {
                *t += base;
            }
            for (_, v) in &mut self.flow_starts {
                v.2 += base;
            }
            for (k, _) in &mut self.flow_ends {
                k.2 += base;
            }
            self.out
                .meta
                .push(("baseTimeNanoseconds".into(), base.to_string()));
        }
        self.build_flows();
        self.out.events.shrink_to_fit();
        self.out.counters.shrink_to_fit();
        let s = &self.stats;
        let w = &mut self.out.warnings;
        if repairs.control_chars > 0 {
            w.push(format!(
                "{} raw control character(s) inside strings (invalid JSON) were kept",
                repairs.control_chars
            ));
        }
        if repairs.invalid_utf8 > 0 {
            w.push(format!(
                "{} string(s) with invalid UTF-8 were decoded lossily (U+FFFD)",
                repairs.invalid_utf8
            ));
        }
        if repairs.not_scalar > 0 {
            w.push(format!(
                "{} field(s) held an object or array where a string or number belongs (e.g. an event name or pid); they were read as empty",
                repairs.not_scalar
            ));
        }
        if repairs.trailing_commas > 0 {
            w.push(format!(
                "{} trailing comma(s) ignored",
                repairs.trailing_commas
            ));
        }
        if s.dropped_bad_time > 0 {
            w.push(format!(
                "{} event(s) dropped: ts or dur is missing or not a number",
                s.dropped_bad_time
            ));
        }
        if s.negative_dur > 0 {
            w.push(format!("{} event(s) dropped: negative dur", s.negative_dur));
        }
        if s.unmatched_end > 0 {
            w.push(format!(
                "{} E event(s) without a matching B ignored",
                s.unmatched_end
            ));
        }
        if s.unclosed_begin > 0 {
            w.push(format!(
                "{} B event(s) never ended: each holds what ran after it but counts no time of its own",
                s.unclosed_begin
            ));
        }
        if s.unknown_phase > 0 {
            w.push(format!(
                "{} event(s) with phases grove does not use were skipped",
                s.unknown_phase
            ));
        }
        // Only in a Kineto trace: in other Chrome traces any category is a CPU slice.
        if (self.out.kineto || s.known_cats) && !s.unknown_cats.is_empty() {
            let mut cats: Vec<(&Vec<u8>, u64)> =
                s.unknown_cats.iter().map(|(c, &n)| (c, n)).collect();
            cats.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let total: u64 = cats.iter().map(|c| c.1).sum();
            let mut list: Vec<String> = cats
                .iter()
                .take(6)
                .map(|(c, n)| format!("{} ({n})", String::from_utf8_lossy(c)))
                .collect();
            if cats.len() > 6 {
                list.push(format!("and {} more", cats.len() - 6));
            }
            w.push(format!(
                "{total} event(s) in categories grove does not know were read as CPU slices: {}; if they are device activity, the kernel, timeline and breakdown views miss them",
                list.join(", ")
            ));
        }
    }
}

/// Kineto's host-side categories that grove reads as CPU slices on purpose (besides
/// those `EventKind::from_category` names): no warning for them.
fn is_host_category(cat: &str) -> bool {
    cat.split(',').any(|c| {
        matches!(
            c.trim(),
            "overhead"
                | "cpu_instant_event"
                | "external_correlation"
                | "cuda_profiler_range"
                | "python_function"
                | "Trace"
        )
    })
}

/// Maps both Kineto dialects to the current category names.
fn normalized_category(cat: &str) -> &str {
    match cat {
        "Operator" => "cpu_op",
        "Runtime" => "cuda_runtime",
        "Kernel" => "kernel",
        "Memcpy" => "gpu_memcpy",
        "Memset" => "gpu_memset",
        other => other,
    }
}

/// A sampled thread's root: `CPU samples: process (pid P), thread (tid T)` with the
/// names the metadata events give.
fn sampled_label(tr: &ChromeTrace, pid: &str, tid: &str) -> String {
    let s = &tr.events.strings;
    let (p, t) = (s.get(pid), s.get(tid));
    let process = p.and_then(|p| tr.process_names.get(&p));
    let thread = p.zip(t).and_then(|k| tr.thread_names.get(&k));
    let proc_part = match process {
        Some(n) => format!("{n} (pid {pid})"),
        None => format!("pid {pid}"),
    };
    let thread_part = match thread {
        Some(n) => format!("{n} (tid {tid})"),
        None => format!("tid {tid}"),
    };
    format!("CPU samples: {proc_part}, {thread_part}")
}

/// The Chrome Trace Event reader (PyTorch/Kineto dialects included): any JSON object,
/// or a JSON array that the Hatchet reader (asked first) does not claim.
pub struct Chrome;

impl super::Reader for Chrome {
    fn name(&self) -> &'static str {
        "Chrome/Kineto trace JSON"
    }

    fn format(&self) -> crate::model::Format {
        crate::model::Format::ChromeTrace
    }

    /// JSON that is not another format's: an object whose top-level keys (as far as
    /// the head goes) name no other JSON format and, when it closes within the head,
    /// include `traceEvents`; or an array (of events).
    fn claims(&self, probe: &super::Probe) -> bool {
        let Some(text) = probe.json() else {
            return false;
        };
        if text[0] != b'{' {
            return true;
        }
        let (keys, closed) = super::describe::json_keys(text);
        // An object with no key in the head is not JSON at all (a pstats file `{(`).
        super::describe::foreign_json(&keys).is_none()
            && !keys.is_empty()
            && (!closed || keys.iter().any(|k| k == "traceEvents"))
    }

    fn read(&self, input: super::Input) -> Result<Vec<crate::model::Profile>, String> {
        let (input, source) = input.into_stream()?;
        // `--steps` / `--window`: the part selected, before anything is built from it
        // (streaming past the rest when the file can be read twice).
        let (mut tr, part) = match super::select::current() {
            Some(part) => super::select::read_part(input, &source, part)?,
            None => (parse(input).map_err(|e| e.to_string())?, None),
        };
        if tr.rocprof {
            super::rocprof::chrome::place_lanes(&mut tr);
        }
        let mut tree = super::trace_cct::build(&tr);
        tr.events.node = tree.node_of_event;
        tr.events.launch = tree.launch_of_event;
        let mut sample_warnings = Vec::new();
        // A recording of samples only: its figures are the samples'.
        let only_samples = tree.cct.is_empty() && !tr.sampled.is_empty();
        if !tr.sampled.is_empty() {
            let label = |pid: &str, tid: &str| sampled_label(&tr, pid, tid);
            tree.metrics = samples::attach(
                &tr.sampled,
                &mut tree.cct,
                tree.metrics,
                &label,
                &mut sample_warnings,
            );
        }
        let dialect = if tr.rocprof {
            "AMD rocprof (legacy rocprof trace JSON)"
        } else if tr.old_dialect {
            "PyTorch profiler (Kineto, 2021 dialect)"
        } else if tr.kineto {
            "PyTorch profiler (Kineto)"
        } else {
            "Chrome Trace Event"
        };
        let mut meta = tr.meta;
        meta.insert(
            0,
            (
                "form".into(),
                if tr.array_form { "array" } else { "object" }.into(),
            ),
        );
        if tr.kineto || tr.old_dialect || tr.rank.is_some() {
            meta.push(("rank".into(), tr.rank.unwrap_or(0).to_string()));
        }
        for d in &tr.devices {
            if let (Some(id), Some(name)) = (d.get("id"), d.get("name")) {
                meta.push((
                    format!("device {id}"),
                    name.as_str().unwrap_or("").to_string(),
                ));
            }
        }
        let mut warnings = tr.warnings;
        warnings.extend(tree.warnings);
        warnings.extend(sample_warnings);
        let mut p = crate::model::Profile {
            call_graph: None,
            source,
            dialect: dialect.into(),
            cct: tree.cct,
            metrics: tree.metrics,
            events: Some(tr.events),
            counters: Some(tr.counters),
            meta,
            warnings,
            default_metric: if only_samples { "sample_time" } else { "time" }.into(),
        };
        if let Some((part, kept)) = part {
            super::select::mark(&mut p, part, &kept);
        }
        p.cct.finish();
        Ok(vec![p])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_numbers() {
        assert_eq!(stream_number("stream 7 "), Some(7));
        assert_eq!(stream_number("stream 7"), Some(7));
        assert_eq!(stream_number("12"), Some(12));
        assert_eq!(stream_number("main"), None);
    }

    #[test]
    fn phases_and_times() {
        let text = r#"{"traceEvents":[
            {"ph":"B","name":"a","pid":1,"tid":"1","ts":"10.5"},
            {"ph":"X","name":"b","pid":"1","tid":1,"ts":11,"dur":2.25},
            {"ph":"E","pid":1,"tid":1,"ts":20},
            {"ph":"C","name":"mem","pid":1,"ts":12,"args":{"used":5,"free":"7"}},
            {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main "}},
            {"ph":"X","name":"bad","pid":1,"tid":1,"ts":"100a","dur":1},
            {}
        ],"baseTimeNanoseconds":1000}"#;
        let t = parse(text.as_bytes()).unwrap();
        let e = &t.events;
        assert_eq!(e.len(), 2);
        assert_eq!(e.name_of(0), "b");
        assert_eq!((e.ts[0], e.dur[0]), (12000, 2250));
        assert_eq!(e.name_of(1), "a");
        assert_eq!((e.ts[1], e.dur[1]), (11500, 9500));
        assert_eq!(e.seq.get(1), 0);
        assert_eq!(e.pid[0], e.pid[1]);
        let mut vals = t.counters.value.clone();
        vals.sort_by(f64::total_cmp);
        assert_eq!(vals, vec![5.0, 7.0]);
        assert_eq!(t.thread_names.values().next().unwrap(), "main");
        assert!(t.warnings.iter().any(|w| w.contains("not a number")));
    }

    #[test]
    fn kineto_gpu_fields() {
        let text = r#"[
          {"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":"stream 7","ts":5,"dur":1,
           "args":{"device":0,"stream":7,"correlation":42,"external id":3,"grid":[1,2,3]}},
          {"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":1000007,"ts":6,"dur":1,
           "args":{"device":0,"correlation":9}}
        "#;
        let t = parse(text.as_bytes()).unwrap();
        let e = &t.events;
        assert_eq!(e.kind[0], EventKind::Kernel);
        assert_eq!(
            (e.device[0], e.stream[0], e.correlation[0], e.external_id[0]),
            (0, 7, 42, 3)
        );
        let grid = e.args_of(0).unwrap().get("grid").unwrap();
        assert_eq!(e.arg_store.text(grid), "[1,2,3]");
        assert_eq!(e.stream[1], 7);
        assert!(t.old_dialect);
        assert!(t.warnings[0].contains("without ']'"));
    }

    #[test]
    fn syntax_error_has_position() {
        let e = parse(&b"[{\"ph\":\"X\",\n \"ts\": ]"[..]).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(!e.eof);
    }
}
