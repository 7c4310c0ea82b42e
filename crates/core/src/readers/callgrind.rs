//! Callgrind and cachegrind output (valgrind's `callgrind.out.<pid>`, `cachegrind.out.<pid>`,
//! pprof's `-callgrind`): the text format KCachegrind reads. This file parses the records
//! into a call graph (functions with exclusive cost, call edges with inclusive cost);
//! `callgrind_tree` unfolds that graph into a CCT by call path.
//!
//! What the format says (valgrind's "Callgrind Format Specification"):
//! * header lines `key: value` (`events:`, `positions:`, `summary:`, `totals:`, `part:`,
//!   `thread:`, `cmd:`, `desc:` ...) may appear before any part;
//! * `ob=`/`fl=`/`fi=`/`fe=`/`fn=` set the current object, file, inline file and
//!   function; `cob=`/`cfi=`/`cfl=`/`cfn=` name the callee of the next `calls=` line;
//!   a name may be compressed: `(id) name` defines id, `(id)` refers to it later;
//! * a cost line is positions then one value per event (missing trailing values are 0);
//!   positions may be absolute (decimal or 0x hex), relative (`+n`, `-n`) or `*` (same);
//! * the cost line after `calls=` is the inclusive cost of that call, not exclusive cost
//!   of the caller; the line after `jump=`/`jcnd=` holds positions only.

use std::collections::HashMap;
use std::io::BufRead;

use crate::model::{Profile, Source};

/// Keys a callgrind/cachegrind header may hold: a first line that is none of these (nor a
/// record) is not this format.
const HEADER_KEYS: &[&str] = &[
    "version",
    "creator",
    "pid",
    "cmd",
    "part",
    "desc",
    "positions",
    "events",
    "event",
    "summary",
    "totals",
    "thread",
    "timeframe (BB)",
];

/// Strict probe: the first meaningful lines are callgrind header lines, and an `events:`
/// line (which every callgrind and cachegrind file has) comes before the first record.
pub fn claims(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.clone().next() else {
        return false;
    };
    if first.starts_with("# callgrind format") {
        return true;
    }
    for l in lines.by_ref().take(64) {
        if l.starts_with('#') {
            continue;
        }
        match l.split_once(':') {
            Some((k, v)) if HEADER_KEYS.contains(&k.trim()) => {
                if k.trim() == "events" && !v.trim().is_empty() {
                    return true;
                }
            }
            _ => return false,
        }
    }
    false
}

/// One function of the call graph: KCachegrind's identity is name + file + object.
#[derive(Debug, Clone)]
pub struct Func {
    pub name: String,
    pub file: String,
    pub object: String,
    /// First line position seen in its cost lines (0 when the file has no line column).
    pub line: i64,
    pub exclusive: Vec<f64>,
}

#[derive(Debug, Clone, Default)]
pub struct Edge {
    pub calls: f64,
    pub inclusive: Vec<f64>,
}

/// The call graph a file describes.
#[derive(Debug, Default)]
pub struct Graph {
    pub events: Vec<String>,
    pub funcs: Vec<Func>,
    /// (caller, callee) -> calls and inclusive cost.
    pub edges: HashMap<(u32, u32), Edge>,
    /// Sum of `totals:` (or `summary:`) over the parts, when the file gives them.
    pub summary: Option<Vec<f64>>,
    pub meta: Vec<(String, String)>,
    pub warnings: Vec<String>,
    /// Whether any `calls=` line was seen (cachegrind has none).
    pub has_calls: bool,
    pub callgrind_magic: bool,
}

/// Name compression tables: one namespace for files, one for functions, one for objects.
#[derive(Default)]
struct Names {
    map: HashMap<(u8, String), String>,
    undefined: u64,
}

impl Names {
    /// `(id) name` defines, `(id)` refers, anything else is the name itself.
    fn resolve(&mut self, space: u8, v: &str) -> String {
        let v = v.trim();
        if let Some(rest) = v.strip_prefix('(') {
            // Ids are numbers: `(below main)` is a name.
            let close = rest
                .find(')')
                .filter(|&c| c > 0 && rest[..c].bytes().all(|b| b.is_ascii_digit()));
            if let Some(close) = close {
                let id = &rest[..close];
                let name = rest[close + 1..].trim();
                if !name.is_empty() {
                    self.map.insert((space, id.to_string()), name.to_string());
                    return name.to_string();
                }
                if let Some(n) = self.map.get(&(space, id.to_string())) {
                    return n.clone();
                }
                self.undefined += 1;
                return format!("({id})");
            }
        }
        v.to_string()
    }
}

const FILES: u8 = 0;
const FNS: u8 = 1;
const OBJS: u8 = 2;

#[derive(PartialEq)]
enum Pending {
    None,
    Call { callee: u32, calls: f64 },
    Jump,
}

struct Parser {
    g: Graph,
    names: Names,
    ids: HashMap<(String, String, String), u32>,
    positions: Vec<String>,
    last_pos: Vec<i64>,
    ob: String,
    fl: String,
    /// The file of the cost lines now: `fl=`, or an inline file (`fi=`/`fe=`) inside it.
    /// A callee named without `cfi=` is in this file (as callgrind_annotate reads it).
    cur_file: String,
    cur: Option<u32>,
    cob: Option<String>,
    cfl: Option<String>,
    cfn: Option<String>,
    pending: Pending,
    part_totals: Option<Vec<f64>>,
    part_summary: Option<Vec<f64>>,
    summed: Vec<f64>,
    any_summary: bool,
    bad_lines: u64,
    first_bad: u64,
    extra_values: u64,
    orphan_costs: u64,
    records: u64,
}

fn parse_costs(s: &str) -> Option<Vec<f64>> {
    s.split_whitespace()
        .map(|t| t.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect()
}

impl Parser {
    fn func(&mut self, name: String, file: String, object: String) -> u32 {
        let key = (name, file, object);
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = self.g.funcs.len() as u32;
        let n = self.g.events.len().max(1);
        self.g.funcs.push(Func {
            name: key.0.clone(),
            file: key.1.clone(),
            object: key.2.clone(),
            line: 0,
            exclusive: vec![0.0; n],
        });
        self.ids.insert(key, id);
        id
    }

    fn bad(&mut self, lineno: u64) {
        self.bad_lines += 1;
        if self.first_bad == 0 {
            self.first_bad = lineno;
        }
    }

    /// Closes a part: its `totals:` (else `summary:`) joins the file's summary.
    fn end_part(&mut self) {
        if let Some(t) = self.part_totals.take().or(self.part_summary.take()) {
            self.any_summary = true;
            if self.summed.len() < t.len() {
                self.summed.resize(t.len(), 0.0);
            }
            for (s, v) in self.summed.iter_mut().zip(t) {
                *s += v;
            }
        }
        self.part_summary = None;
    }

    fn header(&mut self, key: &str, value: &str, lineno: u64) -> Result<(), String> {
        let value = value.trim();
        match key {
            "events" => {
                let ev: Vec<String> = value.split_whitespace().map(String::from).collect();
                if ev.is_empty() {
                    return Err(format!("line {lineno}: 'events:' names no event"));
                }
                if !self.g.events.is_empty() && self.g.events != ev {
                    return Err(format!(
                        "line {lineno}: a later part changes the events ({} -> {})",
                        self.g.events.join(" "),
                        ev.join(" ")
                    ));
                }
                self.g.events = ev;
            }
            "positions" => {
                let p: Vec<String> = value.split_whitespace().map(String::from).collect();
                if p.is_empty() || p.iter().any(|x| x != "line" && x != "instr") {
                    return Err(format!("line {lineno}: unknown positions '{value}'"));
                }
                self.positions = p;
                self.last_pos = vec![0; self.positions.len()];
            }
            "summary" | "totals" => {
                let v = parse_costs(value)
                    .ok_or_else(|| format!("line {lineno}: '{key}:' is not a list of numbers"))?;
                if key == "totals" {
                    self.part_totals = Some(v);
                } else {
                    self.part_summary = Some(v);
                }
            }
            "part" => {
                self.end_part();
                self.push_meta("parts", value);
            }
            "version" | "creator" | "pid" | "cmd" | "thread" | "desc" => {
                self.push_meta(key, value);
            }
            _ => {}
        }
        Ok(())
    }

    fn push_meta(&mut self, key: &str, value: &str) {
        // One entry per key: repeated keys (desc, part) join.
        match self.g.meta.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) if key == "parts" => *v = value.to_string(),
            Some((_, v)) => {
                if !v.split("; ").any(|x| x == value) {
                    v.push_str("; ");
                    v.push_str(value);
                }
            }
            None => self.g.meta.push((key.to_string(), value.to_string())),
        }
    }

    /// One position token, decompressed against the previous value of its column.
    fn position(&mut self, col: usize, tok: &str) -> Option<i64> {
        let prev = self.last_pos[col];
        let v = if tok == "*" {
            prev
        } else if let Some(r) = tok.strip_prefix('+') {
            prev.checked_add(parse_int(r)?)?
        } else if let Some(r) = tok.strip_prefix('-') {
            prev.checked_sub(parse_int(r)?)?
        } else {
            parse_int(tok)?
        };
        self.last_pos[col] = v;
        Some(v)
    }

    fn cost_line(&mut self, line: &str, lineno: u64) {
        // A bad line still consumes a pending call: its cost is lost, not given to the
        // next line.
        if !self.try_cost_line(line) {
            self.pending = Pending::None;
            self.bad(lineno);
        }
    }

    fn try_cost_line(&mut self, line: &str) -> bool {
        let mut toks = line.split_whitespace();
        let mut line_pos = None;
        for col in 0..self.positions.len() {
            let Some(v) = toks.next().and_then(|t| self.position(col, t)) else {
                return false;
            };
            if self.positions[col] == "line" {
                line_pos = Some(v);
            }
        }
        let n = self.g.events.len();
        let mut costs = vec![0.0; n];
        for (i, tok) in toks.enumerate() {
            let Some(v) = tok.parse::<f64>().ok().filter(|v| v.is_finite()) else {
                return false;
            };
            if i >= n {
                self.extra_values += 1;
                break;
            }
            costs[i] = v;
        }
        self.records += 1;
        let pending = std::mem::replace(&mut self.pending, Pending::None);
        match pending {
            Pending::Jump => {}
            Pending::Call { callee, calls } => {
                let Some(caller) = self.cur else {
                    self.orphan_costs += 1;
                    return true;
                };
                let e = self.g.edges.entry((caller, callee)).or_default();
                e.calls += calls;
                if e.inclusive.len() < n {
                    e.inclusive.resize(n, 0.0);
                }
                for (a, c) in e.inclusive.iter_mut().zip(&costs) {
                    *a += c;
                }
            }
            Pending::None => {
                let f = match self.cur {
                    Some(f) => f,
                    None => {
                        self.orphan_costs += 1;
                        let (fl, ob) = (self.fl.clone(), self.ob.clone());
                        let f = self.func("(unknown)".into(), fl, ob);
                        self.cur = Some(f);
                        f
                    }
                };
                let func = &mut self.g.funcs[f as usize];
                if func.line == 0 {
                    if let Some(l) = line_pos {
                        func.line = l;
                    }
                }
                for (a, c) in func.exclusive.iter_mut().zip(&costs) {
                    *a += c;
                }
            }
        }
        true
    }

    fn assignment(&mut self, key: &str, value: &str, lineno: u64) {
        match key {
            "ob" => self.ob = self.names.resolve(OBJS, value),
            "fl" => {
                self.fl = self.names.resolve(FILES, value);
                self.cur_file = self.fl.clone();
            }
            // Inline files change where lines are, not which function runs.
            "fi" | "fe" => self.cur_file = self.names.resolve(FILES, value),
            // Jump-target files may define compressed names used later.
            "jfi" | "jfl" => {
                self.names.resolve(FILES, value);
            }
            "fn" => {
                let name = self.names.resolve(FNS, value);
                let (fl, ob) = (self.fl.clone(), self.ob.clone());
                self.cur = Some(self.func(name, fl, ob));
            }
            "cob" => self.cob = Some(self.names.resolve(OBJS, value)),
            "cfi" | "cfl" => self.cfl = Some(self.names.resolve(FILES, value)),
            "cfn" => self.cfn = Some(self.names.resolve(FNS, value)),
            "calls" => {
                // `calls=count target-position`: the target position is not kept.
                let count = value
                    .split_whitespace()
                    .next()
                    .and_then(|c| c.parse::<f64>().ok());
                let (Some(count), Some(name)) = (count, self.cfn.take()) else {
                    self.bad(lineno);
                    return;
                };
                // The callee's file and object default to the caller's; they hold for
                // this call only.
                let file = self
                    .cfl
                    .take()
                    .filter(|f| !f.is_empty())
                    .unwrap_or_else(|| self.cur_file.clone());
                let obj = self
                    .cob
                    .take()
                    .filter(|o| !o.is_empty())
                    .unwrap_or_else(|| self.ob.clone());
                let callee = self.func(name, file, obj);
                self.g.has_calls = true;
                self.pending = Pending::Call {
                    callee,
                    calls: count,
                };
            }
            "jump" | "jcnd" => self.pending = Pending::Jump,
            _ => self.bad(lineno),
        }
    }
}

fn parse_int(t: &str) -> Option<i64> {
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16)
            .ok()
            .or_else(|| u64::from_str_radix(h, 16).ok().map(|v| v as i64)),
        None => t.parse().ok(),
    }
}

/// Parses the records into a call graph.
pub fn parse(input: &mut dyn BufRead) -> Result<Graph, String> {
    let mut p = Parser {
        g: Graph::default(),
        names: Names::default(),
        ids: HashMap::new(),
        positions: vec!["line".into()],
        last_pos: vec![0],
        ob: String::new(),
        fl: String::new(),
        cur_file: String::new(),
        cur: None,
        cob: None,
        cfl: None,
        cfn: None,
        pending: Pending::None,
        part_totals: None,
        part_summary: None,
        summed: Vec::new(),
        any_summary: false,
        bad_lines: 0,
        first_bad: 0,
        extra_values: 0,
        orphan_costs: 0,
        records: 0,
    };
    let mut lines = super::lines::Lines::new(input);
    while let Some((lineno, line)) = lines.next_line()? {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('#') {
            if lineno == 1 && line.starts_with("# callgrind format") {
                p.g.callgrind_magic = true;
            }
            continue;
        }
        let first = line.as_bytes()[0];
        if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'*') {
            if p.g.events.is_empty() {
                return Err(format!("line {lineno}: a cost line before 'events:'"));
            }
            p.cost_line(line, lineno);
            continue;
        }
        // `key=value` assignments are lower case and short; `key: value` headers.
        let eq = line.find('=');
        let colon = line.find(':');
        match (eq, colon) {
            (Some(e), c) if c.is_none_or(|c| e < c) => {
                let (k, v) = (&line[..e], &line[e + 1..]);
                if p.g.events.is_empty() && !matches!(k, "ob" | "fl" | "fi" | "fe" | "fn") {
                    return Err(format!("line {lineno}: '{k}=' before 'events:'"));
                }
                p.assignment(k, v, lineno);
            }
            (_, Some(c)) => {
                let (k, v) = (line[..c].trim(), &line[c + 1..]);
                p.header(k, v, lineno)?;
            }
            _ => p.bad(lineno),
        }
    }
    p.end_part();
    if p.g.events.is_empty() {
        return Err("no 'events:' line: not a callgrind/cachegrind profile".into());
    }
    if p.records == 0 {
        return Err(format!(
            "no cost line in {} lines: the profile holds no cost",
            lines.count()
        ));
    }
    let w = &mut p.g.warnings;
    if p.bad_lines > 0 {
        w.push(format!(
            "{} line(s) are not callgrind records and were skipped (first at line {})",
            p.bad_lines, p.first_bad
        ));
    }
    if p.extra_values > 0 {
        w.push(format!(
            "{} cost line(s) have more values than events; the extra values were dropped",
            p.extra_values
        ));
    }
    if p.orphan_costs > 0 {
        w.push(format!(
            "{} cost line(s) came before any 'fn=' and were put under '(unknown)'",
            p.orphan_costs
        ));
    }
    if p.names.undefined > 0 {
        w.push(format!(
            "{} compressed name(s) refer to an id never defined",
            p.names.undefined
        ));
    }
    if p.pending != Pending::None {
        w.push("the file ends after a 'calls='/'jump=' line: truncated?".into());
    }
    if lines.lossy() {
        w.push("invalid UTF-8 in names was replaced".into());
    }
    if p.any_summary {
        p.g.summary = Some(p.summed);
    }
    Ok(p.g)
}

/// Reads a callgrind or cachegrind file into one profile.
pub fn read(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    let g = parse(input)?;
    super::callgrind_tree::profile(g, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_is_strict() {
        assert!(claims(b"# callgrind format\nversion: 1\n"));
        assert!(claims(b"desc: I1 cache\ncmd: ./a\nevents: Ir\nfl=a.c\n"));
        assert!(claims(b"events: Instructions\n\nfl=a.c\n"));
        assert!(!claims(b"version: 1\nfoo;bar 12\n"));
        assert!(!claims(b"main;a 3\n"));
        assert!(!claims(b"events:\n"));
    }

    #[test]
    fn compression_and_calls() {
        let text =
            "events: Ir Dr\nfl=(1) a.c\nfn=(1) main\n1 10 1\n+2 5\ncfn=(2) f\ncalls=2 9\n* 30 3\n\
                    fn=(2)\n9 30 3\n";
        let g = parse(&mut text.as_bytes()).unwrap();
        assert_eq!(g.funcs.len(), 2);
        assert_eq!(g.funcs[0].exclusive, vec![15.0, 1.0]);
        assert_eq!(g.funcs[1].file, "a.c");
        assert_eq!(g.edges[&(0, 1)].inclusive, vec![30.0, 3.0]);
        assert_eq!(g.funcs[0].line, 1);
        let g = parse(&mut &b"events: Ir\nfn=(below main)\n1 2\n"[..]).unwrap();
        assert_eq!(g.funcs[0].name, "(below main)");
        assert!(g.warnings.is_empty());
    }

    #[test]
    fn bad_input_is_an_error_or_warning() {
        assert!(parse(&mut &b"fn=main\n1 2\n"[..]).is_err());
        assert!(parse(&mut &b"events: Ir\n"[..]).is_err());
        let g = parse(&mut &b"events: Ir\nfn=a\n1 x\n1 2\ncfn=b\ncalls=1 1\n"[..]).unwrap();
        assert_eq!(g.warnings.len(), 2, "{:?}", g.warnings);
    }
}
