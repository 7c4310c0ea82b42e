//! speedscope's own JSON format (https://www.speedscope.app/file-format-schema.json):
//! `shared.frames` (name, file, line, col) and `profiles`, each `evented` (open/close
//! events `O`/`C` at a value) or `sampled` (stacks of frame indices, root first, with
//! weights). Every profile becomes one root node (kind `profile`, named as the file
//! names it) so a file with one profile per thread shows one tree per thread.
//!
//! The metric is the file's unit: `time` for time units (values kept in the first
//! profile's unit, other time units converted to it), `bytes` for bytes, `weight`
//! for `none`.

use std::io::BufRead;

use serde_json::Value;

use crate::model::demangle::{demangle, RAW_NAME};
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

/// Strict probe: a JSON object naming speedscope's schema or exporter.
pub fn claims(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.starts_with('{')
        && (t.contains("speedscope.app/file-format-schema")
            || t.contains("\"exporter\": \"speedscope")
            || t.contains("\"exporter\":\"speedscope"))
}

/// (metric name, unit label, factor to nanoseconds for time units).
fn unit(u: &str) -> Option<(&'static str, &'static str, f64)> {
    Some(match u {
        "nanoseconds" => ("time", "ns", 1.0),
        "microseconds" => ("time", "us", 1e3),
        "milliseconds" => ("time", "ms", 1e6),
        "seconds" => ("time", "s", 1e9),
        "bytes" => ("bytes", "bytes", 1.0),
        "none" => ("weight", "", 1.0),
        _ => return None,
    })
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

pub fn read(input: &mut dyn BufRead, mut source: Source) -> Result<Profile, String> {
    let doc: Value = crate::json::from_reader(input).map_err(|e| format!("not valid JSON: {e}"))?;
    let frames = doc
        .pointer("/shared/frames")
        .and_then(Value::as_array)
        .ok_or("no shared.frames list: not a speedscope file")?;
    let profiles = doc
        .get("profiles")
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
        .ok_or("no profiles in the file")?;
    let mut t = Tree {
        frames,
        cct: Cct::default(),
        values: Vec::new(),
        kids: Default::default(),
        bad_frames: 0,
        mismatched: 0,
        unclosed: 0,
    };
    let mut warnings = Vec::new();
    let mut metric: Option<(&str, &str, f64)> = None;
    let mut meta = Vec::new();
    for (pi, p) in profiles.iter().enumerate() {
        let name = p
            .get("name")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| format!("profile {pi}"));
        let u = p.get("unit").and_then(Value::as_str).unwrap_or("none");
        let Some(this) = unit(u) else {
            return Err(format!("profile '{name}': unknown unit '{u}'"));
        };
        let scale = match metric {
            None => {
                metric = Some(this);
                1.0
            }
            Some(m) if m.0 == this.0 => this.2 / m.2,
            Some(m) => {
                return Err(format!(
                "profiles measure different things ({} and {}): grove reads one metric per file",
                m.0, this.0
            ))
            }
        };
        let root = t.cct.add_node(None, Frame::new(&name, "profile"));
        t.values.push(0.0);
        let said = match p.get("type").and_then(Value::as_str) {
            Some("sampled") => format!("sampled, {} samples", t.sampled(p, &name, root, scale)?),
            Some("evented") => format!("evented, {} events", t.evented(p, &name, root, scale)?),
            other => {
                return Err(format!(
                    "profile '{name}': type {other:?} (speedscope has 'sampled' and 'evented')"
                ))
            }
        };
        meta.push((format!("profile {pi}"), format!("{name}: {said}")));
    }
    let Tree {
        cct,
        values,
        bad_frames,
        mismatched,
        unclosed,
        ..
    } = t;
    if bad_frames > 0 {
        warnings.push(format!(
            "{bad_frames} sample frame(s) name no frame of shared.frames and were skipped"
        ));
    }
    // speedscope's own importer refuses unbalanced event streams; so does grove, rather
    // than guess where the time of a frame left open belongs.
    if mismatched > 0 {
        return Err(format!(
            "an invalid evented speedscope profile: {mismatched} close event(s) do not close the innermost open frame (grove reads balanced O/C events, as speedscope does)"
        ));
    }
    if unclosed > 0 {
        return Err(format!(
            "an invalid evented speedscope profile: {unclosed} frame(s) are never closed (grove reads balanced O/C events, as speedscope does)"
        ));
    }
    let (mname, munit, _) = metric.expect("at least one profile");
    let mut metrics = MetricTable::new(cct.len());
    metrics.set(mname, munit, values);
    metrics.derive_inclusive(&cct, &[mname]);
    if let Some(e) = doc.get("exporter").and_then(Value::as_str) {
        meta.insert(0, ("exporter".into(), e.to_string()));
    }
    source.format = Format::Speedscope;
    Ok(Profile {
        call_graph: None,
        source,
        dialect: "speedscope".into(),
        cct,
        metrics,
        events: None,
        counters: None,
        meta,
        warnings,
        default_metric: mname.into(),
    })
}

/// The frame of `shared.frames[i]`, its name demangled.
fn frame_of(frames: &[Value], i: usize) -> Option<Frame> {
    let f = frames.get(i)?;
    let raw = f.get("name")?.as_str()?;
    let mut fr = match demangle(raw) {
        Some(d) => {
            let mut fr = Frame::new(&d, "function");
            fr.set_attr(RAW_NAME, raw);
            fr
        }
        None => Frame::new(raw, "function"),
    };
    if let Some(file) = f.get("file").and_then(Value::as_str) {
        fr.set_attr("file", file);
    }
    if let Some(l) = f.get("line").and_then(Value::as_i64) {
        fr.set_attr("line", &l.to_string());
    }
    Some(fr)
}

/// The tree the profiles build, with each node's exclusive value, and what was wrong.
struct Tree<'a> {
    frames: &'a [Value],
    cct: Cct,
    values: Vec<f64>,
    /// Children of a node by frame index: sampled and evented stacks merge by call path.
    kids: std::collections::HashMap<(u32, usize), u32>,
    bad_frames: u64,
    mismatched: u64,
    unclosed: u64,
}

impl Tree<'_> {
    /// The child of `parent` for frame `fi` (made on first sight); None when there is
    /// no such frame.
    fn child(&mut self, parent: u32, fi: usize) -> Option<u32> {
        if let Some(&n) = self.kids.get(&(parent, fi)) {
            return Some(n);
        }
        let n = self.cct.add_node(Some(parent), frame_of(self.frames, fi)?);
        self.values.push(0.0);
        self.kids.insert((parent, fi), n);
        Some(n)
    }

    /// A sampled profile under `root`; the number of samples.
    fn sampled(&mut self, p: &Value, name: &str, root: u32, scale: f64) -> Result<usize, String> {
        let samples = p
            .get("samples")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("profile '{name}': no samples"))?;
        let weights = p.get("weights").and_then(Value::as_array);
        for (si, s) in samples.iter().enumerate() {
            let w = match weights {
                Some(ws) => ws
                    .get(si)
                    .and_then(num)
                    .ok_or_else(|| format!("profile '{name}': sample {si} has no weight"))?,
                None => 1.0,
            };
            let mut node = root;
            for f in s.as_array().into_iter().flatten() {
                match f.as_u64().and_then(|i| self.child(node, i as usize)) {
                    Some(n) => node = n,
                    None => self.bad_frames += 1,
                }
            }
            self.values[node as usize] += w * scale;
        }
        Ok(samples.len())
    }

    /// An evented profile under `root`; the number of events.
    fn evented(&mut self, p: &Value, name: &str, root: u32, scale: f64) -> Result<usize, String> {
        let events = p
            .get("events")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("profile '{name}': no events"))?;
        let end = p.get("endValue").and_then(num);
        // Stack of (frame index, node); time between events goes to the top.
        let mut stack: Vec<(usize, u32)> = Vec::new();
        let mut last: Option<f64> = None;
        for (ei, e) in events.iter().enumerate() {
            let (Some(kind), Some(fi), Some(at)) = (
                e.get("type").and_then(Value::as_str),
                e.get("frame").and_then(Value::as_u64).map(|f| f as usize),
                e.get("at").and_then(num),
            ) else {
                return Err(format!(
                    "profile '{name}': event {ei} lacks type, frame or at"
                ));
            };
            if let (Some(l), Some(&(_, top))) = (last, stack.last()) {
                if at < l {
                    return Err(format!(
                        "profile '{name}': event {ei} goes back in time ({at} < {l})"
                    ));
                }
                self.values[top as usize] += (at - l) * scale;
            }
            last = Some(at);
            match kind {
                "O" => {
                    let parent = stack.last().map(|s| s.1).unwrap_or(root);
                    let Some(n) = self.child(parent, fi) else {
                        return Err(format!(
                            "profile '{name}': event {ei} names frame {fi}, which does not exist"
                        ));
                    };
                    stack.push((fi, n));
                }
                "C" => match stack.iter().rposition(|s| s.0 == fi) {
                    Some(pos) => {
                        if pos + 1 != stack.len() {
                            self.mismatched += 1;
                        }
                        stack.truncate(pos);
                    }
                    None => self.mismatched += 1,
                },
                other => return Err(format!("profile '{name}': event {ei} has type '{other}'")),
            }
        }
        if !stack.is_empty() {
            self.unclosed += stack.len() as u64;
            if let (Some(l), Some(end), Some(&(_, top))) = (last, end, stack.last()) {
                if end > l {
                    self.values[top as usize] += (end - l) * scale;
                }
            }
        }
        Ok(events.len())
    }
}
