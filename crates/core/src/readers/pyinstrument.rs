//! pyinstrument's JSON renderer (`pyinstrument -r json`, `JSONRenderer`): run facts at
//! the top and one `root_frame` tree of `{function, file_path_short, line_no, time,
//! is_application_code, children}` objects.
//!
//! As in Hatchet's `from_pyinstrument`, every object is one node (siblings with the
//! same function are not merged), `time` in the file is inclusive and becomes
//! `time (inc)`, and `time` (exclusive) is the node's time less its children's.

use std::io::Read;

use crate::json::number::text_f64;
use crate::json::{JsonReader, Kind};
use crate::model::{Cct, Format, Frame, MetricTable, Profile};

#[derive(Debug)]
pub struct Tree {
    pub cct: Cct,
    pub metrics: MetricTable,
    pub meta: Vec<(String, String)>,
}

struct Build {
    cct: Cct,
    inc: Vec<f64>,
    exc: Vec<f64>,
    app: Vec<f64>,
}

fn number(text: &[u8]) -> f64 {
    text_f64(text).unwrap_or(f64::NAN)
}

/// One open frame object while reading.
struct Open {
    node: usize,
    /// Inclusive time of the children read so far.
    children: f64,
    first_key: bool,
    /// Inside the `children` array: whether the next element is the first.
    in_children: Option<bool>,
}

/// Starts a frame object (the reader is at its `{`) as a node under `parent`. The node
/// exists before its fields are read: `children` may come before `function`.
fn open<R: Read>(
    r: &mut JsonReader<R>,
    b: &mut Build,
    parent: Option<u32>,
) -> Result<Open, String> {
    let e = |e: crate::json::JsonError| e.to_string();
    if r.peek_kind().map_err(e)? != Kind::Object {
        return Err(r.error("a frame is not an object").to_string());
    }
    r.begin_object().map_err(e)?;
    let n = b.cct.add_node(parent, Frame::new("", "function")) as usize;
    b.inc.push(f64::NAN);
    b.exc.push(0.0);
    b.app.push(f64::NAN);
    Ok(Open {
        node: n,
        children: 0.0,
        first_key: true,
        in_children: None,
    })
}

/// Reads one frame tree (the reader is at the root's `{`) with an explicit stack, so
/// deep Python stacks cannot overflow grove's.
fn frame_tree<R: Read>(r: &mut JsonReader<R>, b: &mut Build) -> Result<(), String> {
    let e = |e: crate::json::JsonError| e.to_string();
    let mut stack = vec![open(r, b, None)?];
    let mut key = Vec::new();
    let mut val = Vec::new();
    while let Some(top) = stack.last_mut() {
        let n = top.node;
        if let Some(first) = top.in_children {
            if r.next_element(first).map_err(e)? {
                top.in_children = Some(false);
                let child = open(r, b, Some(n as u32))?;
                stack.push(child);
            } else {
                top.in_children = None;
            }
            continue;
        }
        let first = top.first_key;
        top.first_key = false;
        if !r.next_key(first, &mut key).map_err(e)? {
            let done = stack.pop().expect("the frame just read");
            b.exc[n] = b.inc[n] - done.children;
            if let Some(parent) = stack.last_mut() {
                if !b.inc[n].is_nan() {
                    parent.children += b.inc[n];
                }
            }
            continue;
        }
        match key.as_slice() {
            b"function" | b"file_path_short" | b"file_path" => {
                r.read_scalar(&mut val).map_err(e)?;
                let text = String::from_utf8_lossy(&val);
                let f = b.cct.frame_mut(n as u32);
                match key.as_slice() {
                    b"function" => f.name = text.as_ref().into(),
                    b"file_path_short" => f.set_attr("file", &text),
                    _ => f.set_attr("file_path", &text),
                }
            }
            b"line_no" => {
                r.read_scalar(&mut val).map_err(e)?;
                let text = String::from_utf8_lossy(&val).into_owned();
                b.cct.frame_mut(n as u32).set_attr("line", &text);
            }
            b"time" => {
                r.read_scalar(&mut val).map_err(e)?;
                b.inc[n] = number(&val);
            }
            b"is_application_code" => {
                let v = r.read_bool_or_null().map_err(e)?;
                b.app[n] = v.map_or(f64::NAN, |x| f64::from(u8::from(x)));
            }
            b"children" if r.peek_kind().map_err(e)? == Kind::Array => {
                r.begin_array().map_err(e)?;
                if let Some(top) = stack.last_mut() {
                    top.in_children = Some(true);
                }
            }
            _ => r.skip_value().map_err(e)?,
        }
    }
    Ok(())
}

pub fn read<R: Read>(src: R) -> Result<Tree, String> {
    let mut r = JsonReader::new(src);
    r.skip_bom();
    let e = |e: crate::json::JsonError| e.to_string();
    if r.peek_kind().map_err(e)? != Kind::Object {
        return Err(r.error("expected a pyinstrument JSON object").to_string());
    }
    let mut b = Build {
        cct: Cct::default(),
        inc: Vec::new(),
        exc: Vec::new(),
        app: Vec::new(),
    };
    let mut meta = Vec::new();
    let mut key = Vec::new();
    let mut val = Vec::new();
    let mut first = true;
    let mut roots = 0;
    r.begin_object().map_err(e)?;
    while r.next_key(first, &mut key).map_err(e)? {
        first = false;
        if key == b"root_frame" {
            if r.peek_kind().map_err(e)? == Kind::Null {
                r.skip_value().map_err(e)?;
                continue;
            }
            frame_tree(&mut r, &mut b)?;
            roots += 1;
        } else {
            let k = String::from_utf8_lossy(&key).into_owned();
            match r.read_scalar(&mut val).map_err(e)? {
                Kind::Object | Kind::Array => {}
                _ => meta.push((k, String::from_utf8_lossy(&val).into_owned())),
            }
        }
    }
    if roots == 0 {
        return Err("not pyinstrument JSON: no root_frame".into());
    }
    let mut metrics = MetricTable::new(b.cct.len());
    metrics.set("time", "s", b.exc);
    metrics.set("time (inc)", "s", b.inc);
    metrics.set("is_application_code", "", b.app);
    b.cct.finish();
    Ok(Tree {
        cct: b.cct,
        metrics,
        meta,
    })
}

pub struct Pyinstrument;

impl super::Reader for Pyinstrument {
    fn name(&self) -> &'static str {
        "pyinstrument JSON"
    }

    fn format(&self) -> Format {
        Format::Pyinstrument
    }

    /// A JSON object whose first block names `root_frame` and pyinstrument's frame keys.
    fn claims(&self, probe: &super::Probe) -> bool {
        let Some(text) = probe.json().filter(|t| t[0] == b'{') else {
            return false;
        };
        let has = |pat: &[u8]| text.windows(pat.len()).any(|w| w == pat);
        has(b"\"root_frame\"") && has(b"\"is_application_code\"")
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let (input, source) = input.into_stream()?;
        let t = read(input)?;
        Ok(vec![Profile {
            call_graph: None,
            source,
            dialect: "pyinstrument".into(),
            cct: t.cct,
            metrics: t.metrics,
            events: None,
            counters: None,
            meta: t.meta,
            warnings: Vec::new(),
            default_metric: "time".into(),
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_is_time_less_children() {
        let j = r#"{"program":"x.py","root_frame":{"children":[
            {"function":"a","time":0.25,"line_no":3,"children":[]},
            {"function":"a","time":0.5,"is_application_code":true}],
            "function":"<module>","time":1.0}}"#;
        let t = read(j.as_bytes()).unwrap();
        assert_eq!(t.cct.len(), 3);
        assert_eq!(t.cct.name(0), "<module>");
        assert_eq!(t.metrics.values("time").unwrap(), &[0.25, 0.25, 0.5]);
        assert_eq!(t.meta, vec![("program".into(), "x.py".into())]);
    }

    #[test]
    fn bad_input() {
        assert!(read(&b"{}"[..]).unwrap_err().contains("no root_frame"));
        assert!(read(&b"{\"root_frame\":{\"function\":\"a\""[..]).is_err());
        assert!(read(&b"[1]"[..]).is_err());
        // Deep nesting is read without recursion: a cut file is an error, not a crash.
        let deep = "{\"root_frame\":".to_string() + &"{\"children\":[".repeat(100_000);
        assert!(read(deep.as_bytes()).is_err());
    }
}
