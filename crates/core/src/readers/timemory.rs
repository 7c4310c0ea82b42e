//! timemory's JSON trees (`wall.tree.json`, `peak_rss.tree.json`, … one file per
//! component): `{"timemory": {COMPONENT: {properties…, "mpi"|"upcxx"|"graph": ranks}}}`
//! where each rank is a list of thread trees of `{"node": {prefix, tid, pid,
//! inclusive, exclusive}, "children": […]}`.
//!
//! As in Hatchet's `from_timemory`: tree roots with hash 0 are placeholders (their
//! children are the roots); nodes merge by call path of names; every statistic of a
//! component becomes a column `<stat>.<component>` (exclusive) and `<stat>.<component>
//! (inc)` (inclusive), e.g. `sum.wall_clock (inc)`; vector components get one column
//! per label; `count` is the inclusive laps. One profile per (rank, thread set),
//! labelled `rank<R>` (`rank<R>.t<tids>` when a rank has several), so ranks open as an
//! ensemble.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::{Cct, Format, MetricTable, Profile, Source};

/// A node prefix -> (name, file, line). timemory writes `func@file:line/tail`,
/// `func@file/tail`, `[func][file]` and `label [func/file:line]`; the name keeps the
/// function and tail (`generate_history/outer-loop-0`); anything else is the name.
fn name_file_line(prefix: &str) -> (String, Option<String>, Option<String>) {
    let p = prefix.trim();
    if let Some(inner) = p.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        if let Some((f, file)) = inner.split_once("][") {
            return (f.into(), Some(file.into()), None);
        }
    }
    if let Some((head, loc)) = p.strip_suffix(']').and_then(|x| x.rsplit_once(" [")) {
        if let Some((_, fl)) = loc.split_once('/') {
            let (file, line) = fl.rsplit_once(':').unwrap_or((fl, ""));
            return (
                head.trim_end().into(),
                Some(file.into()),
                (!line.is_empty()).then(|| line.into()),
            );
        }
    }
    if let Some((func, rest)) = p.split_once('@') {
        if !func.is_empty() && !func.contains(char::is_whitespace) {
            let (loc, tail) = rest.split_once('/').unwrap_or((rest, ""));
            let (file, line) = match loc.rsplit_once(':') {
                Some((f, l)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
                    (f, Some(l.to_string()))
                }
                _ => (loc, None),
            };
            let name = if tail.is_empty() {
                func.to_string()
            } else {
                format!("{func}/{tail}")
            };
            return (name, Some(file.into()), line);
        }
    }
    (p.into(), None, None)
}

/// `[1, 2]` -> "1,2"; `3` -> "3".
fn ids(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Null) | None => String::new(),
        Some(x) => x.to_string(),
    }
}

/// One profile being built: (rank, tids) -> tree and columns.
#[derive(Default)]
struct Build {
    cct: Cct,
    cols: BTreeMap<String, Vec<f64>>,
    units: BTreeMap<String, String>,
    file: String,
}

impl Build {
    fn set(&mut self, col: &str, unit: &str, node: u32, v: f64) {
        let c = self.cols.entry(col.to_string()).or_default();
        if c.len() <= node as usize {
            c.resize(node as usize + 1, f64::NAN);
        }
        c[node as usize] = v;
        self.units
            .entry(col.to_string())
            .or_insert_with(|| unit.to_string());
    }
}

struct Component<'a> {
    name: String,
    unit: String,
    labels: Option<Vec<String>>,
    data: &'a Value,
}

/// Adds one stats object's columns: `<stat>.<component>` plus the suffix.
fn stats(b: &mut Build, c: &Component, node: u32, st: Option<&Value>, suffix: &str) {
    let Some(Value::Object(st)) = st else { return };
    for (k, v) in st {
        if k == "cereal_class_version" || k == "count" {
            continue;
        }
        match v {
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    let label = c
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(i).cloned())
                        .unwrap_or_else(|| i.to_string());
                    let v = x.as_f64().unwrap_or(f64::NAN);
                    b.set(&format!("{k}.{label}{suffix}"), &c.unit, node, v);
                }
            }
            x => {
                let v = x.as_f64().unwrap_or(f64::NAN);
                b.set(&format!("{k}.{}{suffix}", c.name), &c.unit, node, v);
            }
        }
    }
}

/// Where a node went: its profile's (rank, thread set) and its node there.
type Placed = (usize, String, u32);

/// Walks one thread tree with an explicit stack (parents before children).
fn walk(
    profiles: &mut BTreeMap<(usize, String), Build>,
    c: &Component,
    rank: usize,
    root: &Value,
) -> Result<(), String> {
    let mut stack: Vec<(&Value, Option<Placed>)> = vec![(root, None)];
    while let Some((v, parent)) = stack.pop() {
        let node = v.get("node").ok_or("a tree entry without 'node'")?;
        let children = v.get("children").and_then(Value::as_array);
        let placeholder = node.get("hash").and_then(Value::as_u64) == Some(0);
        let here = if placeholder {
            parent
        } else {
            let prefix = node
                .get("prefix")
                .and_then(Value::as_str)
                .ok_or("a node without 'prefix'")?;
            let (name, file, line) = name_file_line(prefix);
            // A thread set keeps the profile its parent chose; a root opens its own.
            let key = match &parent {
                Some((r, t, _)) => (*r, t.clone()),
                None => (rank, ids(node.get("tid"))),
            };
            let b = profiles.entry(key.clone()).or_default();
            let n = b.cct.child(parent.as_ref().map(|p| p.2), &name, "region");
            let f = b.cct.frame_mut(n);
            if let Some(file) = file {
                f.set_attr("file", &file);
            }
            if let Some(line) = line {
                f.set_attr("line", &line);
            }
            let inc = node.get("inclusive");
            let laps = inc
                .and_then(|i| i.get("entry"))
                .and_then(|e| e.get("laps"))
                .and_then(Value::as_f64)
                .unwrap_or(f64::NAN);
            b.set("count", "", n, laps);
            stats(b, c, n, inc.and_then(|i| i.get("stats")), " (inc)");
            stats(
                b,
                c,
                n,
                node.get("exclusive").and_then(|i| i.get("stats")),
                "",
            );
            if b.file.is_empty() {
                b.file = ids(node.get("pid"));
            }
            Some((key.0, key.1, n))
        };
        if let Some(ch) = children {
            for child in ch.iter().rev() {
                stack.push((child, here.clone()));
            }
        }
    }
    Ok(())
}

pub fn read_value(root: &Value, source: &Source) -> Result<Vec<Profile>, String> {
    let comps = root
        .get("timemory")
        .and_then(Value::as_object)
        .ok_or("not timemory JSON: no 'timemory' object")?;
    let mut profiles: BTreeMap<(usize, String), Build> = BTreeMap::new();
    for (cname, data) in comps {
        let name = cname
            .replace("tim::", "")
            .replace("component::", "")
            .to_lowercase();
        let labels = match data.get("type") {
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|x| x.as_str().unwrap_or("").trim().replace([' ', '_'], "-"))
                    .collect(),
            ),
            _ => None,
        };
        let unit = data
            .get("unit_repr")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let unit = if unit == "sec" { "s".into() } else { unit };
        let c = Component {
            name,
            unit,
            labels,
            data,
        };
        let ranks = ["mpi", "upcxx", "graph"]
            .iter()
            .find_map(|k| c.data.get(*k).and_then(Value::as_array));
        let Some(ranks) = ranks else { continue };
        for (r, rank) in ranks.iter().enumerate() {
            let threads: Vec<&Value> = match rank {
                Value::Array(a) => a.iter().collect(),
                other => vec![other],
            };
            for t in threads {
                walk(&mut profiles, &c, r, t)?;
            }
        }
    }
    if profiles.is_empty() {
        return Err("the timemory file holds no tree".into());
    }
    let per_rank = |r: usize| profiles.keys().filter(|k| k.0 == r).count();
    let labels: Vec<String> = profiles
        .keys()
        .map(|(r, t)| {
            if per_rank(*r) > 1 {
                format!("rank{r}.t{t}")
            } else {
                format!("rank{r}")
            }
        })
        .collect();
    let mut out = Vec::new();
    for (((rank, tids), b), label) in profiles.into_iter().zip(labels) {
        let mut cct = b.cct;
        let n = cct.len();
        let mut metrics = MetricTable::new(n);
        let mut default = String::new();
        for (k, mut v) in b.cols {
            v.resize(n, f64::NAN);
            metrics.set(&k, b.units.get(&k).map_or("", String::as_str), v);
            if default.is_empty() && k.starts_with("sum.") && !k.ends_with(" (inc)") {
                default = k;
            }
        }
        cct.finish();
        let mut source = source.clone();
        source.label = label;
        out.push(Profile {
            call_graph: None,
            source,
            dialect: "timemory".into(),
            cct,
            metrics,
            events: None,
            counters: None,
            meta: vec![
                ("rank".into(), rank.to_string()),
                ("thread".into(), tids),
                ("pid".into(), b.file),
            ],
            warnings: Vec::new(),
            default_metric: default,
        });
    }
    Ok(out)
}

pub struct Timemory;

impl super::Reader for Timemory {
    fn name(&self) -> &'static str {
        "timemory JSON"
    }

    fn format(&self) -> Format {
        Format::Timemory
    }

    /// A JSON object whose first key is `"timemory"`.
    fn claims(&self, probe: &super::Probe) -> bool {
        let Some(text) = probe.json().filter(|t| t[0] == b'{') else {
            return false;
        };
        let rest = &text[1..];
        let start = rest.iter().position(|b| !b.is_ascii_whitespace());
        start.is_some_and(|s| rest[s..].starts_with(b"\"timemory\""))
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let (input, source) = input.into_stream()?;
        // A tree nests two JSON levels per call level: any depth is read (and
        // dropped) without recursing, where serde_json stops at 128 levels.
        let v = crate::json::value::from_reader_deep(input).map_err(|e| e.to_string())?;
        let r = read_value(&v, &source);
        crate::json::value::drop_deep(v);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        let t = |p: &str| name_file_line(p);
        assert_eq!(
            t("generate_history@hatchet_tests.cpp:114/outer-loop-0"),
            (
                "generate_history/outer-loop-0".into(),
                Some("hatchet_tests.cpp".into()),
                Some("114".into())
            )
        );
        assert_eq!(t("generate_history/consume").0, "generate_history/consume");
        assert_eq!(t("[f][a.c]").0, "f");
        assert_eq!(t("main loop [f/a.c:3]").2, Some("3".into()));
        assert_eq!(t("f@a.c").1, Some("a.c".into()));
    }

    fn src() -> Source {
        Source {
            path: None,
            format: Format::Timemory,
            size: 0,
            gzip: false,
            label: String::new(),
        }
    }

    #[test]
    fn bad_input() {
        let r = |j: &str| read_value(&serde_json::from_str(j).unwrap(), &src());
        assert!(r("{}").unwrap_err().contains("no 'timemory'"));
        assert!(r(r#"{"timemory":{}}"#).unwrap_err().contains("no tree"));
        assert!(r(r#"{"timemory":{"W":{"graph":[[{"children":[]}]]}}}"#).is_err());
        assert!(r(r#"{"timemory":{"W":{"graph":[[{"node":{"hash":1}}]]}}}"#)
            .unwrap_err()
            .contains("prefix"));
        let ok = r(
            r#"{"timemory":{"WALL":{"unit_repr":"sec","graph":[[{"node":{"hash":0},"children":[
            {"node":{"hash":5,"prefix":"a","tid":[0],"inclusive":{"entry":{"laps":2},"stats":{"sum":3.0}},
            "exclusive":{"stats":{"sum":1.0,"count":2}}},"children":[]}]}]]}}}"#,
        )
        .unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].metrics.values("sum.wall (inc)").unwrap(), &[3.0]);
        assert_eq!(ok[0].metrics.unit("sum.wall"), "s");
        assert_eq!(ok[0].default_metric, "sum.wall");
    }
}
