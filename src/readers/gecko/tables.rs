//! One thread of either dialect turned into the same plain tables: stacks (prefix,
//! frame), frames (function name, file, line, library), samples (stack, time, weight,
//! CPU delta) and the markers' count. The raw Gecko format stores each table as a
//! `schema` (column -> position) and `data` (rows as arrays) with one `stringTable`
//! per thread; the processed format stores columns as arrays with the strings in
//! `shared.stringArray` (newer) or the thread's `stringArray`/`stringTable` (older).

use serde_json::Value;

/// A function as the call tree shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Func {
    pub name: String,
    pub file: Option<String>,
    pub line: Option<i64>,
    pub lib: Option<String>,
}

#[derive(Debug, Default)]
pub struct Sample {
    /// None: the sample has no stack (`null`), which the Firefox Profiler leaves out of
    /// the call tree.
    pub stack: Option<usize>,
    pub weight: f64,
    pub cpu: Option<f64>,
}

/// One thread's tables, indices checked by the tree builder (a bad index is skipped
/// and counted there, never trusted).
#[derive(Debug, Default)]
pub struct Thread {
    pub label: String,
    /// (prefix, frame) per stack index.
    pub stacks: Vec<(Option<usize>, usize)>,
    /// The function of each frame index (None: the frame names no function).
    pub frames: Vec<Option<Func>>,
    pub samples: Vec<Sample>,
    /// Whether the sample table has a weight column, and its `weightType`.
    pub weighted: Option<String>,
    pub markers: usize,
}

fn idx(v: &Value) -> Option<usize> {
    v.as_u64().and_then(|n| usize::try_from(n).ok())
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
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

/// A raw table: its column positions and rows.
struct Schema<'a> {
    cols: &'a serde_json::Map<String, Value>,
    rows: &'a [Value],
}

impl<'a> Schema<'a> {
    fn of(table: Option<&'a Value>) -> Option<Schema<'a>> {
        let t = table?;
        Some(Schema {
            cols: t.get("schema")?.as_object()?,
            rows: t.get("data")?.as_array()?,
        })
    }

    fn col(&self, name: &str) -> Option<usize> {
        self.cols.get(name).and_then(idx)
    }

    fn cell(row: &'a Value, col: Option<usize>) -> Option<&'a Value> {
        row.as_array()?.get(col?).filter(|v| !v.is_null())
    }
}

/// A thread of the raw Gecko format.
pub fn raw_thread(t: &Value, label: String) -> Thread {
    let strings: Vec<&str> = t
        .get("stringTable")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|s| s.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    let string = |v: Option<&Value>| v.and_then(idx).and_then(|i| strings.get(i)).copied();
    let mut th = Thread {
        label,
        ..Thread::default()
    };
    if let Some(s) = Schema::of(t.get("stackTable")) {
        let (prefix, frame) = (s.col("prefix"), s.col("frame"));
        for row in s.rows {
            let f = Schema::cell(row, frame).and_then(idx).unwrap_or(usize::MAX);
            th.stacks.push((Schema::cell(row, prefix).and_then(idx), f));
        }
    }
    if let Some(s) = Schema::of(t.get("frameTable")) {
        // A frame's own `line` (where in the function it was) is finer than the call
        // tree groups by: the function is its location string, as the Firefox
        // Profiler's processing keys functions.
        let loc = s.col("location");
        for row in s.rows {
            th.frames
                .push(string(Schema::cell(row, loc)).map(split_location));
        }
    }
    if let Some(s) = Schema::of(t.get("samples")) {
        let (stack, weight, cpu) = (s.col("stack"), s.col("weight"), s.col("threadCPUDelta"));
        if weight.is_some() {
            let kind = t.pointer("/samples/weightType").and_then(Value::as_str);
            th.weighted = Some(kind.unwrap_or("samples").to_string());
        }
        for row in s.rows {
            th.samples.push(Sample {
                stack: Schema::cell(row, stack).and_then(idx),
                weight: Schema::cell(row, weight).and_then(num).unwrap_or(1.0),
                cpu: Schema::cell(row, cpu).and_then(num),
            });
        }
    }
    th.markers = t
        .pointer("/markers/data")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    th
}

/// The `i`-th value of a processed column (None when the column or the cell is
/// missing or null).
fn at<'a>(table: Option<&'a Value>, col: &str, i: usize) -> Option<&'a Value> {
    table?.get(col)?.as_array()?.get(i).filter(|v| !v.is_null())
}

/// A column's length: `length` when given, else the longest of the named columns.
fn len(table: Option<&Value>, cols: &[&str]) -> usize {
    let Some(t) = table else { return 0 };
    if let Some(n) = t.get("length").and_then(idx) {
        return n;
    }
    cols.iter()
        .filter_map(|c| t.get(*c).and_then(Value::as_array).map(Vec::len))
        .max()
        .unwrap_or(0)
}

/// A thread of the processed format; `shared` is the profile's `shared` object,
/// where newer versions keep the strings (and may keep the tables).
pub fn processed_thread(t: &Value, shared: Option<&Value>, label: String) -> Thread {
    let table = |k: &str| t.get(k).or_else(|| shared.and_then(|s| s.get(k)));
    let strings: Vec<&str> = t
        .get("stringArray")
        .or_else(|| t.get("stringTable").filter(|v| v.is_array()))
        .or_else(|| shared.and_then(|s| s.get("stringArray")))
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|s| s.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    let string = |v: Option<&Value>| v.and_then(idx).and_then(|i| strings.get(i)).copied();
    let mut th = Thread {
        label,
        ..Thread::default()
    };
    let stacks = table("stackTable");
    for i in 0..len(stacks, &["frame", "prefix"]) {
        let frame = at(stacks, "frame", i).and_then(idx).unwrap_or(usize::MAX);
        th.stacks
            .push((at(stacks, "prefix", i).and_then(idx), frame));
    }
    let (frames, funcs) = (table("frameTable"), table("funcTable"));
    let resources = table("resourceTable");
    let func_of = |f: usize| -> Option<Func> {
        let name = string(at(funcs, "name", f))?;
        let lib = at(funcs, "resource", f)
            .and_then(Value::as_i64)
            .filter(|r| *r >= 0)
            .and_then(|r| string(at(resources, "name", r as usize)))
            .map(str::to_string);
        Some(Func {
            name: name.to_string(),
            file: string(at(funcs, "fileName", f)).map(str::to_string),
            line: at(funcs, "lineNumber", f).and_then(Value::as_i64),
            lib,
        })
    };
    for i in 0..len(frames, &["func"]) {
        let func = at(frames, "func", i).and_then(idx).and_then(func_of);
        // A frame's own line (where in the function) is finer than the call tree
        // groups by; the function's line is kept.
        th.frames.push(func);
    }
    let samples = t.get("samples");
    let n = len(samples, &["stack", "time", "timeDeltas", "weight"]);
    let has_weight = samples
        .and_then(|s| s.get("weight"))
        .is_some_and(Value::is_array);
    if has_weight {
        let kind = samples
            .and_then(|s| s.get("weightType"))
            .and_then(Value::as_str);
        th.weighted = Some(kind.unwrap_or("samples").to_string());
    }
    for i in 0..n {
        th.samples.push(Sample {
            stack: at(samples, "stack", i).and_then(idx),
            weight: at(samples, "weight", i).and_then(num).unwrap_or(1.0),
            cpu: at(samples, "threadCPUDelta", i).and_then(num),
        });
    }
    th.markers = len(t.get("markers"), &["name", "startTime"]);
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
