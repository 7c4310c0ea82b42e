//! One thread of either dialect turned into the same plain tables: stacks (prefix,
//! frame), frames (function name, file, line, library), samples (stack, time, weight,
//! CPU delta) and the markers' count. The raw Gecko format stores each table as a
//! `schema` (column -> position) and `data` (rows as arrays) with one `stringTable`
//! per thread; the processed format stores columns as arrays with the strings in
//! `shared.stringArray` (newer) or the thread's `stringArray`/`stringTable` (older).

use super::stream::{RawThread, Table, NO};

/// A function as the call tree shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Func {
    pub name: String,
    pub file: Option<String>,
    pub line: Option<i64>,
    pub lib: Option<String>,
}

/// A marker as the file gives it (times in ms, as the samples').
#[derive(Debug, Clone, Default)]
pub struct Marker {
    pub name: String,
    pub start: Option<f64>,
    pub end: Option<f64>,
    /// 0 instant, 1 interval, 2 interval start, 3 interval end (None: the raw format's
    /// markers before phases: an interval when both times are given).
    pub phase: Option<i64>,
    pub category: Option<i64>,
}

/// One thread's tables, indices checked by the tree builder (a bad index is skipped
/// and counted there, never trusted).
#[derive(Debug, Default)]
pub struct Thread {
    pub label: String,
    /// The thread's pid and tid as the file writes them (the markers' lane).
    pub pid: String,
    pub tid: String,
    /// (prefix, frame) per stack index; `NO`: none.
    pub stacks: Vec<(u32, u32)>,
    /// The function of each frame index (None: the frame names no function).
    pub frames: Vec<Option<Func>>,
    /// The sample table (columns `stack`, `weight`, `threadCPUDelta`) and its rows.
    pub samples: Table,
    pub n_samples: usize,
    /// Whether the sample table has a weight column, and its `weightType`.
    pub weighted: Option<String>,
    /// The marker table's rows, and those markers.
    pub marker_rows: usize,
    pub markers: Vec<Marker>,
    /// Added to the markers' times: a raw sub-profile's start after the root's (ms).
    pub offset_ms: f64,
}

fn to_u32(i: Option<usize>) -> u32 {
    i.and_then(|i| u32::try_from(i).ok()).unwrap_or(NO)
}

/// `name (file:line:col)` -> (name, file, line): how Gecko writes JS and labelled
/// frames with a location; anything else is the whole string as the name.
fn split_location(loc: &str) -> Func {
    let plain = Func {
        name: loc.to_string(),
        ..Func::default()
    };
    let Some(inner) = loc.strip_suffix(')') else {
        return plain;
    };
    let Some(open) = inner.rfind(" (") else {
        return plain;
    };
    let (name, place) = (&inner[..open], &inner[open + 2..]);
    if let Some(lib) = place.strip_prefix("in ") {
        return Func {
            name: name.to_string(),
            lib: Some(lib.to_string()),
            ..Func::default()
        };
    }
    // file:line:col or file:line; a URL's own colons stay in the file.
    let mut parts = place.rsplitn(3, ':');
    let (a, b, c) = (parts.next(), parts.next(), parts.next());
    let (file, line) = match (a, b, c) {
        (Some(col), Some(line), Some(file))
            if col.parse::<u64>().is_ok() && line.parse::<i64>().is_ok() =>
        {
            (file, line.parse().ok())
        }
        (Some(line), Some(file), _) if line.parse::<i64>().is_ok() => (file, line.parse().ok()),
        _ => return plain,
    };
    Func {
        name: name.to_string(),
        file: Some(file.to_string()),
        line,
        lib: None,
    }
}

/// The thread's pid or tid as text (string or number).
fn text(t: &RawThread, k: &str) -> Option<String> {
    match t.info.get(k)? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The markers of a table (either dialect), names resolved.
fn markers(m: Option<&Table>, strings: &[String], n: usize) -> Vec<Marker> {
    let Some(m) = m else { return Vec::new() };
    let (name, start, end) = (m.col("name"), m.col("startTime"), m.col("endTime"));
    let (phase, cat) = (m.col("phase"), m.col("category"));
    (0..n)
        .map(|i| Marker {
            name: name
                .and_then(|c| c.idx(i))
                .and_then(|s| strings.get(s))
                .cloned()
                .unwrap_or_default(),
            start: start.and_then(|c| c.num(i)),
            end: end.and_then(|c| c.num(i)),
            phase: phase.and_then(|c| c.int(i)),
            category: cat.and_then(|c| c.int(i)),
        })
        .collect()
}

fn base(t: &RawThread, label: String) -> Thread {
    Thread {
        label,
        pid: text(t, "pid").unwrap_or_default(),
        tid: text(t, "tid").unwrap_or_default(),
        ..Thread::default()
    }
}

/// A thread of the raw Gecko format: tables with a `schema` (those without are not read).
pub fn raw_thread(mut t: RawThread, label: String) -> Thread {
    let strings = t.strings.take().unwrap_or_default();
    let string = |i: Option<usize>| i.and_then(|i| strings.get(i)).map(String::as_str);
    let mut th = base(&t, label);
    let raw = |k: &str| t.tables.get(k).filter(|x| x.is_raw());
    if let Some(s) = raw("stackTable") {
        let (prefix, frame) = (s.col("prefix"), s.col("frame"));
        th.stacks = (0..s.rows())
            .map(|i| {
                let p = prefix.and_then(|c| c.idx(i));
                (to_u32(p), to_u32(frame.and_then(|c| c.idx(i))))
            })
            .collect();
    }
    if let Some(s) = raw("frameTable") {
        // A frame's own `line` (where in the function it was) is finer than the call
        // tree groups by: the function is its location string, as the Firefox
        // Profiler's processing keys functions.
        let loc = s.col("location");
        th.frames = (0..s.rows())
            .map(|i| string(loc.and_then(|c| c.idx(i))).map(split_location))
            .collect();
    }
    if let Some(m) = t.tables.get("markers") {
        th.marker_rows = m.rows();
        if m.is_raw() {
            th.markers = markers(Some(m), &strings, m.rows());
        }
    }
    if let Some(s) = t.tables.remove("samples").filter(Table::is_raw) {
        if s.has("weight") {
            th.weighted = Some(s.weight_type.clone().unwrap_or_else(|| "samples".into()));
        }
        th.n_samples = s.rows();
        th.samples = s;
    }
    th
}

/// A thread of the processed format; `shared` is the profile's `shared` object,
/// where newer versions keep the strings (and may keep the tables).
pub fn processed_thread(mut t: RawThread, shared: &RawThread, label: String) -> Thread {
    let mut th = base(&t, label);
    let samples = match t.tables.remove("samples") {
        Some(s) => Some(s),
        None => shared.tables.get("samples").cloned(),
    };
    let table = |k: &str| t.tables.get(k).or_else(|| shared.tables.get(k));
    let strings: &[String] = t
        .strings
        .as_deref()
        .or(shared.strings.as_deref())
        .unwrap_or_default();
    let string = |i: Option<usize>| i.and_then(|i| strings.get(i)).map(String::as_str);
    if let Some(s) = table("stackTable") {
        let (prefix, frame) = (s.col("prefix"), s.col("frame"));
        th.stacks = (0..s.len(&["frame", "prefix"]))
            .map(|i| {
                let p = prefix.and_then(|c| c.idx(i));
                (to_u32(p), to_u32(frame.and_then(|c| c.idx(i))))
            })
            .collect();
    }
    let (funcs, resources) = (table("funcTable"), table("resourceTable"));
    let fcol = |k: &str| funcs.and_then(|f| f.col(k));
    let (fname, fres, ffile, fline) = (
        fcol("name"),
        fcol("resource"),
        fcol("fileName"),
        fcol("lineNumber"),
    );
    let rname = resources.and_then(|r| r.col("name"));
    let func_of = |f: usize| -> Option<Func> {
        let name = string(fname.and_then(|c| c.idx(f)))?;
        let lib = fres
            .and_then(|c| c.int(f))
            .filter(|r| *r >= 0)
            .and_then(|r| string(rname.and_then(|c| c.idx(r as usize))))
            .map(str::to_string);
        Some(Func {
            name: name.to_string(),
            file: string(ffile.and_then(|c| c.idx(f))).map(str::to_string),
            line: fline.and_then(|c| c.int(f)),
            lib,
        })
    };
    if let Some(frames) = table("frameTable") {
        // A frame's own line (where in the function) is finer than the call tree
        // groups by; the function's line is kept.
        let func = frames.col("func");
        th.frames = (0..frames.len(&["func"]))
            .map(|i| func.and_then(|c| c.idx(i)).and_then(func_of))
            .collect();
    }
    if let Some(m) = t.tables.get("markers") {
        th.marker_rows = m.len(&["name", "startTime"]);
        th.markers = markers(Some(m), strings, th.marker_rows);
    }
    if let Some(s) = samples {
        th.n_samples = s.len(&["stack", "time", "timeDeltas", "weight"]);
        if s.has("weight") {
            th.weighted = Some(s.weight_type.clone().unwrap_or_else(|| "samples".into()));
        }
        th.samples = s;
    }
    th
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_split_into_name_file_and_line() {
        let f = split_location("onLoad (https://a.org:8080/x.js:12:5)");
        assert_eq!(
            (f.name.as_str(), f.file.as_deref(), f.line),
            ("onLoad", Some("https://a.org:8080/x.js"), Some(12))
        );
        let f = split_location("malloc (in libc.so.6)");
        assert_eq!(
            (f.name.as_str(), f.lib.as_deref()),
            ("malloc", Some("libc.so.6"))
        );
        assert_eq!(split_location("0x7f001234").name, "0x7f001234");
        assert_eq!(split_location("f (weird)").name, "f (weird)");
    }
}
