//! perf's JSON export (`perf data convert --to-json`): `{"linux-perf-json-version": 1,
//! "headers": {...}, "samples": [{"pid", "tid", "cpu", "comm", "callchain": [{"ip",
//! "symbol", "dso"}, ...]}, ...]}`, call chains leaf first.
//!
//! The CCT is the perf script reader's (`super::perf`): comm as root, frames root-first,
//! an unsymbolized frame named after its module. The export carries neither the event
//! name nor the period, so samples are counted: the metric is named after the first
//! `-e` event of the recorded command line (`headers.cmdline`), else `samples`.

use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value;

use super::perf::{finish, frame_of, Acc};
use crate::model::{Format, Profile, Source};

#[derive(Deserialize)]
struct Export {
    #[serde(rename = "linux-perf-json-version")]
    version: Value,
    #[serde(default)]
    headers: serde_json::Map<String, Value>,
    #[serde(default)]
    samples: Vec<Sample>,
}

#[derive(Deserialize)]
struct Sample {
    #[serde(default)]
    pid: Option<i64>,
    #[serde(default)]
    tid: Option<i64>,
    #[serde(default)]
    comm: Option<String>,
    #[serde(default)]
    callchain: Vec<Frame>,
}

#[derive(Deserialize)]
struct Frame {
    #[serde(default)]
    symbol: Option<String>,
    #[serde(default)]
    dso: Option<String>,
}

/// The export's first key is its version tag: claimed only when the head is a JSON
/// object whose first key is `linux-perf-json-version`.
pub fn claims(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(512)]);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.strip_prefix('{')
        .map(|r| r.trim_start().starts_with("\"linux-perf-json-version\""))
        .unwrap_or(false)
}

/// The event recorded: the first `-e X`, `-eX`, `--event X` or `--event=X` of the
/// command line perf kept.
fn event_of(cmdline: &[String]) -> Option<String> {
    let mut it = cmdline.iter();
    while let Some(a) = it.next() {
        if a == "-e" || a == "--event" {
            return it.next().cloned();
        }
        if let Some(e) = a.strip_prefix("--event=") {
            return Some(e.to_string());
        }
        if let Some(e) = a.strip_prefix("-e").filter(|e| !e.is_empty()) {
            return Some(e.to_string());
        }
    }
    None
}

pub fn read(input: &mut dyn BufRead, mut source: Source) -> Result<Profile, String> {
    let ex: Export = crate::json::from_reader_as(input)
        .map_err(|e| format!("not a complete perf JSON export: {e}"))?;
    if ex.version.as_u64() != Some(1) {
        return Err(format!(
            "perf JSON export version {} (grove reads version 1)",
            ex.version
        ));
    }
    if ex.samples.is_empty() {
        return Err("the perf JSON export holds no samples".into());
    }
    let mut meta = Vec::new();
    let mut cmdline = Vec::new();
    for (k, v) in &ex.headers {
        match v {
            Value::Array(a) if k == "cmdline" => {
                cmdline = a
                    .iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect();
                meta.push((k.clone(), cmdline.join(" ")));
            }
            Value::String(s) => meta.push((k.clone(), s.clone())),
            Value::Number(n) => meta.push((k.clone(), n.to_string())),
            _ => {}
        }
    }
    let event = event_of(&cmdline).unwrap_or_else(|| "samples".into());
    let mut acc = Acc::new();
    let ev = acc.event(&event);
    for s in &ex.samples {
        let (pid, tid) = (s.pid.map(|p| p.to_string()), s.tid.map(|t| t.to_string()));
        acc.saw(pid.as_deref(), tid.as_deref());
        let frames: Vec<_> = s
            .callchain
            .iter()
            .map(|f| {
                frame_of(
                    f.symbol.as_deref().unwrap_or("[unknown]"),
                    f.dso.as_deref().unwrap_or(""),
                )
            })
            .collect();
        let comm = s
            .comm
            .as_deref()
            .unwrap_or("[unknown]")
            .trim()
            .replace(' ', "_");
        acc.add(&comm, &frames, ev, None);
    }
    let mut p = finish(
        acc,
        meta,
        Vec::new(),
        ex.samples.len() as u64,
        source.clone(),
    );
    source.format = Format::PerfScript;
    p.source = source;
    p.dialect = "perf JSON export".into();
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_only_the_export() {
        assert!(claims(b"{\n\t\"linux-perf-json-version\": 1,\n"));
        assert!(!claims(b"{\"traceEvents\": []}"));
        assert!(!claims(b"perf 1 [000] 1.0: 1 cpu-clock:\n"));
    }

    #[test]
    fn event_from_the_command_line() {
        let c = |v: &[&str]| event_of(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            c(&["perf", "record", "-e", "cpu-clock", "-g"]).unwrap(),
            "cpu-clock"
        );
        assert_eq!(
            c(&["perf", "record", "--event=cycles:u"]).unwrap(),
            "cycles:u"
        );
        assert_eq!(c(&["perf", "record", "-g"]), None);
    }
}
