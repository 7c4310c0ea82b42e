//! `perf script` text: one sample per block, a header line (`comm [pid/]tid [cpu] time:
//! [period] event: [ip sym (dso)]`) then the call chain, leaf first, one frame per
//! indented line `addr sym[+off] (dso)`, and a blank line. Any `-F` field set works as
//! long as the event name is there; `--header` comments become metadata.
//!
//! The CCT is the one FlameGraph's stackcollapse-perf.pl draws: the process name (comm)
//! as root, then the frames root-first. Each event is a metric: weighted by the sample
//! period when the header carries one (perf's `-F period`, on by default), else by sample
//! count; with periods, `<event> samples` counts samples too.

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::OnceLock;

use regex::Regex;

use crate::model::demangle::{demangle, RAW_NAME};
use crate::model::{Cct, Format, MetricTable, Profile, Source};

fn header_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^\s*(?P<comm>\S.*?)\s+(?:(?:(?P<pid>-?\d+)/)?(?P<tid>-?\d+)\s+)?(?:\[(?P<cpu>\d+)\]\s+)?(?:(?P<time>\d+\.\d+):\s+)?(?:(?P<period>\d+)\s+)?(?P<event>[^\s:][^\s]*?):(?:\s+(?P<rest>.*?))?\s*$",
        )
        .expect("valid regex")
    })
}

/// A sample header line, parsed.
struct Header<'a> {
    comm: &'a str,
    pid: Option<&'a str>,
    tid: Option<&'a str>,
    period: Option<f64>,
    event: &'a str,
    rest: &'a str,
}

fn parse_header(line: &str) -> Option<Header<'_>> {
    let c = header_re().captures(line)?;
    let get = |n: &str| c.name(n).map(|m| m.as_str());
    Some(Header {
        comm: get("comm")?,
        pid: get("pid"),
        tid: get("tid"),
        period: get("period").and_then(|p| p.parse().ok()),
        event: get("event")?,
        rest: get("rest").unwrap_or(""),
    })
}

/// A frame line `addr sym[+off] (dso)`: (sym, dso); the dso may be missing.
fn parse_frame(line: &str) -> Option<(&str, &str)> {
    let t = line.trim();
    let (addr, rest) = t.split_once(char::is_whitespace)?;
    if addr.is_empty() || !addr.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let rest = rest.trim();
    let (sym, dso) = match rest
        .strip_suffix(')')
        .and_then(|r| r.rfind(" (").map(|i| (r, i)))
    {
        Some((r, i)) => (r[..i].trim(), &r[i + 2..]),
        None if rest.starts_with('(') && rest.ends_with(')') => {
            ("[unknown]", &rest[1..rest.len() - 1])
        }
        None => (rest, ""),
    };
    Some((sym, dso))
}

/// A frame line written without indentation (some tools print `perf script` that way:
/// FlameGraph's `perf-java-stacks-02.txt`): `addr sym (dso)`, ending with a module in
/// parentheses, that does not read as a sample header (`comm ... event:`). A header
/// whose comm looks like an address and whose frame sits on the same line
/// (`dd 1234 1.0: 1 cycles: ffff f (dso)`, or without -g `dd cycles: ffff f (dso)`)
/// stays a header.
fn unindented_frame(line: &str) -> bool {
    line.trim_end().ends_with(')')
        && parse_frame(line).is_some_and(|(_, dso)| !dso.is_empty())
        && parse_header(line).is_none()
}

/// `main+0x1f` -> `main`: offsets split one function into many nodes.
fn strip_offset(sym: &str) -> &str {
    match sym.rfind("+0x") {
        Some(i) if sym[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) && i > 0 => &sym[..i],
        _ => sym,
    }
}

/// What kind of code a frame is, from its dso (FlameGraph's `_[k]`/`_[j]` annotations).
fn annotation(dso: &str) -> Option<&'static str> {
    if dso.starts_with("[kernel") || dso.contains("vmlinux") || dso.ends_with(".ko") {
        Some("kernel")
    } else if (dso.starts_with("/tmp/perf-") && dso.ends_with(".map")) || dso.contains("/jitted-") {
        Some("jit")
    } else {
        None
    }
}

/// Strict probe: the first non-comment line is a sample header, and the next one is a
/// frame, another header or a blank line.
pub fn claims(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    // Only whole lines: the last one may be cut by the probe's buffer.
    let text = match text.rfind('\n') {
        Some(i) if text.len() > 4096 => &text[..i],
        _ => &text[..],
    };
    let mut lines = text
        .lines()
        .skip_while(|l| l.starts_with('#') || l.trim().is_empty());
    let Some(first) = lines.next() else {
        return false;
    };
    if first.starts_with(char::is_whitespace) && parse_frame(first).is_some() {
        return false;
    }
    let Some(h) = parse_header(first) else {
        return false;
    };
    // A folded line or a callgrind header never ends in `event:`; `key: value` headers
    // of other formats have no number before the key.
    if h.tid.is_none() && h.period.is_none() {
        return false;
    }
    match lines.next() {
        None => true,
        Some(l) if l.trim().is_empty() => true,
        Some(l) => parse_frame(l).is_some() || parse_header(l).is_some(),
    }
}

pub(crate) struct Acc {
    cct: Cct,
    events: Vec<String>,
    event_ids: HashMap<String, usize>,
    /// Per event: weight at each node (exclusive), and the sample count.
    weight: Vec<Vec<f64>>,
    samples: Vec<Vec<f64>>,
    has_period: Vec<bool>,
    roots: HashMap<String, u32>,
    spellings: Vec<String>,
    pids: HashMap<String, ()>,
    tids: HashMap<String, ()>,
}

impl Acc {
    pub(crate) fn new() -> Acc {
        Acc {
            cct: Cct::default(),
            events: Vec::new(),
            event_ids: HashMap::new(),
            weight: Vec::new(),
            samples: Vec::new(),
            has_period: Vec::new(),
            roots: HashMap::new(),
            spellings: Vec::new(),
            pids: HashMap::new(),
            tids: HashMap::new(),
        }
    }

    /// Counts a process and a thread seen in a sample.
    pub(crate) fn saw(&mut self, pid: Option<&str>, tid: Option<&str>) {
        if let Some(p) = pid {
            self.pids.insert(p.to_string(), ());
        }
        if let Some(t) = tid {
            self.tids.insert(t.to_string(), ());
        }
    }

    pub(crate) fn add(&mut self, comm: &str, frames: &[PerfFrame], ev: usize, period: Option<f64>) {
        let root = match self.roots.get(comm) {
            Some(&r) => r,
            None => {
                let r = self.cct.child(None, comm, "process");
                self.roots.insert(comm.to_string(), r);
                r
            }
        };
        let mut node = root;
        // Frames are leaf first.
        for (name, ann, dso, raw) in frames.iter().rev() {
            let before = self.cct.len();
            node = self.cct.child(Some(node), name, "function");
            if self.cct.len() > before {
                let f = self.cct.frame_mut(node);
                if !dso.is_empty() {
                    f.set_attr("module", dso);
                }
                if let Some(a) = ann {
                    f.set_attr("annotation", a);
                }
                if let Some(r) = raw {
                    f.set_attr(RAW_NAME, r);
                }
            }
        }
        let n = self.cct.len();
        let (w, s) = (&mut self.weight[ev], &mut self.samples[ev]);
        if w.len() < n {
            w.resize(n, 0.0);
            s.resize(n, 0.0);
        }
        s[node as usize] += 1.0;
        match period {
            Some(p) => {
                self.has_period[ev] = true;
                w[node as usize] += p;
            }
            None => w[node as usize] += 1.0,
        }
    }

    /// The metric of an event: modifiers (`cycles:u`, `cpu-clock:uhH`) select what is
    /// counted, not another event, so they share one metric (as inferno does); the
    /// spellings seen go to the metadata.
    pub(crate) fn event(&mut self, full: &str) -> usize {
        if !self.spellings.iter().any(|s| s == full) {
            self.spellings.push(full.to_string());
        }
        let name = full.split(':').next().unwrap_or(full);
        if let Some(&i) = self.event_ids.get(name) {
            return i;
        }
        self.events.push(name.to_string());
        self.weight.push(Vec::new());
        self.samples.push(Vec::new());
        self.has_period.push(false);
        self.event_ids
            .insert(name.to_string(), self.events.len() - 1);
        self.events.len() - 1
    }
}

/// The open sample: its header fields and the frames read so far (leaf first).
struct Open {
    comm: String,
    event: usize,
    period: Option<f64>,
    frames: Vec<PerfFrame>,
}

/// (shown name, annotation, dso, raw name when demangled).
pub(crate) type PerfFrame = (String, Option<&'static str>, String, Option<String>);

pub(crate) fn frame_of(sym: &str, dso: &str) -> PerfFrame {
    let sym = strip_offset(sym);
    let name = if sym == "[unknown]" && !dso.is_empty() && dso != "[unknown]" {
        // Like stackcollapse-perf: an unknown symbol is named after its module.
        let base = dso.rsplit('/').next().unwrap_or(dso);
        format!("[{}]", base.trim_matches(|c| c == '[' || c == ']'))
    } else {
        sym.to_string()
    };
    match demangle(&name) {
        Some(d) => (d, annotation(dso), dso.to_string(), Some(name)),
        None => (name, annotation(dso), dso.to_string(), None),
    }
}

pub fn read(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    let mut acc = Acc::new();
    let mut meta: Vec<(String, String)> = Vec::new();
    let mut open: Option<Open> = None;
    let (mut bad, mut first_bad) = (0u64, 0u64);
    let mut nsamples = 0u64;
    let mut lines = super::lines::Lines::new(input);
    while let Some((lineno, line)) = lines.next_line()? {
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            if let Some(o) = open.take() {
                acc.add(&o.comm, &o.frames, o.event, o.period);
            }
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            // `--header`: `# key : value` lines.
            if let Some((k, v)) = comment.split_once(" : ") {
                let (k, v) = (k.trim(), v.trim());
                if !k.is_empty() && !v.is_empty() && meta.len() < 64 {
                    meta.push((k.to_string(), v.to_string()));
                }
            }
            continue;
        }
        // A frame line belongs to the open sample; anything else may start one.
        if let Some(o) = open
            .as_mut()
            .filter(|_| line.starts_with(char::is_whitespace) || unindented_frame(line))
        {
            if let Some((sym, dso)) = parse_frame(line) {
                o.frames.push(frame_of(sym, dso));
                continue;
            }
        }
        if let Some(h) = parse_header(line) {
            if let Some(o) = open.take() {
                acc.add(&o.comm, &o.frames, o.event, o.period);
            }
            nsamples += 1;
            let ev = acc.event(h.event);
            acc.saw(h.pid, h.tid);
            let mut frames = Vec::new();
            // Without -g the one frame may sit on the header line.
            if let Some((sym, dso)) = parse_frame(h.rest) {
                frames.push(frame_of(sym, dso));
            }
            open = Some(Open {
                comm: h.comm.trim().replace(' ', "_"),
                event: ev,
                period: h.period,
                frames,
            });
            continue;
        }
        bad += 1;
        if first_bad == 0 {
            first_bad = lineno;
        }
    }
    let mut unclosed = false;
    if let Some(o) = open.take() {
        // perf closes every sample with a blank line: a missing one may mean a cut file.
        unclosed = true;
        acc.add(&o.comm, &o.frames, o.event, o.period);
    }
    if nsamples == 0 {
        return Err(format!(
            "no sample header ('comm pid time: event:') in {} lines: not perf script output",
            lines.count()
        ));
    }
    let mut warnings = Vec::new();
    if bad > 0 {
        warnings.push(format!(
            "{bad} line(s) are neither sample headers nor frames and were skipped (first at line {first_bad})"
        ));
    }
    if lines.lossy() {
        warnings.push("invalid UTF-8 in names was replaced".into());
    }
    if unclosed {
        warnings.push(
            "the last sample has no closing blank line (a truncated file?); it was kept".into(),
        );
    }
    let mut p = finish(acc, meta, warnings, nsamples, source);
    p.source.format = Format::PerfScript;
    p.dialect = "perf script".into();
    Ok(p)
}

/// The profile of the samples gathered: one metric per event (with a samples column
/// when weighted by period), inclusive columns, and the sample/event metadata.
pub(crate) fn finish(
    mut acc: Acc,
    mut meta: Vec<(String, String)>,
    warnings: Vec<String>,
    nsamples: u64,
    source: Source,
) -> Profile {
    let n = acc.cct.len();
    let mut metrics = MetricTable::new(n);
    let mut bases = Vec::new();
    let mut weights = Vec::new();
    for (i, ev) in acc.events.iter().enumerate() {
        let mut w = std::mem::take(&mut acc.weight[i]);
        w.resize(n, 0.0);
        if acc.has_period[i] {
            let unit = if matches!(ev.as_str(), "cpu-clock" | "task-clock") {
                "ns"
            } else {
                ""
            };
            metrics.set(ev, unit, w);
            let mut s = std::mem::take(&mut acc.samples[i]);
            s.resize(n, 0.0);
            let sname = format!("{ev} samples");
            metrics.set(&sname, "", s);
            bases.push(ev.clone());
            bases.push(sname);
            weights.push(format!("{ev}: period"));
        } else {
            metrics.set(ev, "", w);
            bases.push(ev.clone());
            weights.push(format!("{ev}: samples"));
        }
    }
    let b: Vec<&str> = bases.iter().map(String::as_str).collect();
    metrics.derive_inclusive(&acc.cct, &b);
    meta.push(("samples".into(), nsamples.to_string()));
    meta.push(("events".into(), acc.spellings.join(", ")));
    meta.push(("weights".into(), weights.join(", ")));
    if !acc.pids.is_empty() {
        meta.push(("processes".into(), acc.pids.len().to_string()));
    }
    if !acc.tids.is_empty() {
        meta.push(("threads".into(), acc.tids.len().to_string()));
    }
    Profile {
        call_graph: None,
        source,
        dialect: String::new(),
        cct: acc.cct,
        metrics,
        events: None,
        counters: None,
        meta,
        warnings,
        default_metric: acc.events[0].clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src() -> Source {
        Source {
            path: None,
            format: Format::PerfScript,
            size: 0,
            gzip: false,
            label: "t".into(),
        }
    }

    #[test]
    fn headers_and_frames() {
        let h =
            parse_header("spin 22301/22302 [000]   996.928879:    1000000 cpu-clock: ").unwrap();
        assert_eq!(
            (h.comm, h.pid, h.tid, h.period, h.event),
            ("spin", Some("22301"), Some("22302"), Some(1e6), "cpu-clock")
        );
        let h = parse_header("V8 WorkerThread 25607 4794564.109216: cycles:u:").unwrap();
        assert_eq!((h.comm, h.event), ("V8 WorkerThread", "cycles:u"));
        let h = parse_header("           false 39654 19115.489713:          1 cycles:u:  ffffffff9b201293 [unknown] ([unknown])").unwrap();
        assert_eq!(h.rest, "ffffffff9b201293 [unknown] ([unknown])");
        assert!(parse_header("main;a;b 12").is_none());
        assert_eq!(
            parse_frame("\t  7f72 Ljava/io/PrintStream;::print (/tmp/perf-1.map)"),
            Some(("Ljava/io/PrintStream;::print", "/tmp/perf-1.map"))
        );
        assert_eq!(strip_offset("main+0x1f"), "main");
        assert!(claims(
            b"# ====\n# cmdline : perf\n#\nspin 1 cpu-clock: \n\t  118a inner (/x)\n"
        ));
        assert!(!claims(b"a;b 3\n"));
        assert!(!claims(b"events: Ir\n"));
    }

    /// Frames at the start of the line still belong to the sample above them; a header
    /// that carries its frame on the same line is still a header.
    #[test]
    fn unindented_frames() {
        assert!(unindented_frame(
            "ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])"
        ));
        assert!(unindented_frame(
            "7f722d12e1d4 LBusy;::main (/tmp/perf-19982.map)"
        ));
        assert!(!unindented_frame("java 19983 cycles:"));
        assert!(!unindented_frame(
            "dd 1234 1.000: 1 cycles: ffff f (/bin/dd)"
        ));
        assert!(!unindented_frame("beef 7 cycles: 7f00 g (/x)"));
        assert!(!unindented_frame("dd cycles: ffff f (/bin/dd)"));
        assert!(!unindented_frame("7f72 no_module"));
        let text = "java 1 cycles:\nff01 leaf (/x)\nff02 main (/x)\n\n\
                    java 1 cycles:\n\tff03 other (/x)\nff02 main (/x)\n\n";
        let p = read(&mut text.as_bytes(), src()).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let names: Vec<&str> = (0..p.cct.len() as u32).map(|n| p.cct.name(n)).collect();
        assert_eq!(names, ["java", "main", "leaf", "other"]);
        assert_eq!(p.cct.parent(2), Some(1));
    }

    #[test]
    fn weights_and_events() {
        let text = "a 1 1.0: 10 cycles: \n\t1 f (/x)\n\t2 main (/x)\n\na 1 2.0: 5 instructions: \n\t1 g (/x)\n\n\
                    a 1 3.0: 7 cycles: \n\t1 [unknown] (/lib/libc.so)\n";
        let p = read(&mut text.as_bytes(), src()).unwrap();
        let total = |m: &str| p.metrics.values(m).unwrap().iter().sum::<f64>();
        assert_eq!(total("cycles"), 17.0);
        assert_eq!(total("cycles samples"), 2.0);
        assert_eq!(total("instructions"), 5.0);
        assert!((0..p.cct.len() as u32).any(|n| p.cct.name(n) == "[libc.so]"));
        assert!(read(&mut &b"hello\n"[..], src()).is_err());
    }
}
