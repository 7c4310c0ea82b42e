//! HPCToolkit databases, both forms hpcprof has written:
//!
//! * **v4** (hpcprof ≥ 2022.10): a directory with `meta.db` (metric descriptions and the
//!   context tree), `profile.db` (sparse values per thread / GPU stream, the first profile
//!   being the summary), `cct.db` (the same values context-major; not needed here) and
//!   optionally `trace.db` (per-profile sample timelines, see [`read_traces`]). Binary,
//!   little-endian, absolute offsets, possibly unaligned fields: everything is read
//!   bytewise and bounds-checked, and every array is strided by the element size stored
//!   in the file (layout: HPCToolkit's `doc/FORMATS.md`).
//! * **old** (≤ 2022): `experiment.xml` (tables and the calling context tree, with
//!   summed metric values) and one big-endian `*.metric-db` per rank/thread (dense
//!   `[node][metric]` f64 values). The XML is read by a small tokenizer below.
//!
//! Both give one [`Profile`] per profile in the database: the summary first, then one per
//! thread / rank / GPU stream, all with the same tree (so node ids agree across them).
//! Each frame carries the database's context id (`ctx_id` in v4, `nid` in the old form).
//!
//! Metric columns use HPCToolkit's metric names: `CPUTIME (sec)` is the exclusive
//! (v4 "function" scope) value and `CPUTIME (sec) (inc)` the inclusive ("execution"
//! scope) value. Summary statistics other than the sum get a suffix (`:min`, `:max`,
//! `:count`, ...). A value missing from the sparse data is NaN.

pub mod timeline;

use std::collections::HashMap;
use std::fmt::Display;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::model::metrics::inclusive_name;
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

const MAGIC: &[u8; 10] = b"HPCTOOLKIT";

/// True when `path` is an HPCToolkit database directory: it holds a `meta.db` with the
/// `HPCTOOLKIT` magic and format `meta`, or an `experiment.xml`. (`head` is unused.)
pub fn sniff(path: &Path, _head: &[u8]) -> bool {
    if !path.is_dir() {
        return false;
    }
    let mut head = [0u8; 14];
    if let Ok(mut f) = File::open(path.join("meta.db")) {
        if f.read_exact(&mut head).is_ok() && &head[..10] == MAGIC && &head[10..] == b"meta" {
            return true;
        }
    }
    path.join("experiment.xml").is_file()
}

/// The HPCToolkit reader: a database directory, or its `meta.db` or `experiment.xml`
/// named as the input.
pub struct HpcToolkit;

/// The database a probed input stands for, if it is one.
fn database_of(probe: &super::Probe) -> Option<PathBuf> {
    let path = probe.path?;
    if probe.is_dir {
        return Some(path.to_path_buf());
    }
    if probe.name != "meta.db" && probe.name != "experiment.xml" {
        return None;
    }
    Some(match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    })
}

impl super::Reader for HpcToolkit {
    fn name(&self) -> &'static str {
        "HPCToolkit databases"
    }

    fn format(&self) -> Format {
        Format::HpcToolkit
    }

    fn reads_path(&self) -> bool {
        true
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        database_of(probe).is_some_and(|dir| sniff(&dir, &[]))
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let path = input.into_path()?;
        let probe = if path.is_dir() {
            super::Probe::dir(&path)
        } else {
            super::Probe {
                path: Some(&path),
                name: super::probe::file_name(&path),
                ..super::Probe::bytes(&[])
            }
        };
        let dir = database_of(&probe).ok_or("not an HPCToolkit database")?;
        read(&dir)
    }
}

/// Reads every profile of the database: the summary first, then one per thread, rank or
/// GPU stream. `path` is the database directory (or its `meta.db` / `experiment.xml`).
pub fn read(path: &Path) -> Result<Vec<Profile>, String> {
    let dir = database_dir(path);
    if dir.join("meta.db").is_file() {
        read_v4(&dir)
    } else if dir.join("experiment.xml").is_file() {
        read_old(&dir)
    } else {
        Err("not an HPCToolkit database: no meta.db or experiment.xml".into())
    }
}

/// One profile's trace: (index of the profile in [`read`]'s `Vec`, samples as
/// (timestamp in ns since the epoch, ctx id)).
pub type Trace = (usize, Vec<(u64, u32)>);

/// The sample timelines of trace.db, one per traced profile: (index of the profile in
/// the `Vec` that [`read`] returns, samples as (timestamp in ns since the epoch, ctx id)).
/// A sample holds until the next one; ctx id 0 means the thread was idle. Map ctx ids to
/// nodes with [`ctx_nodes`]. Databases without trace.db (and old-format ones) give none.
pub fn read_traces(path: &Path) -> Result<Vec<Trace>, String> {
    let dir = database_dir(path);
    let file = dir.join("trace.db");
    if !dir.join("meta.db").is_file() || !file.is_file() {
        return Ok(Vec::new());
    }
    let kinds = meta_id_names(&read_file(&dir.join("meta.db"), "meta.db")?)?;
    let prof = read_file(&dir.join("profile.db"), "profile.db")?;
    let order = profile_order(&parse_profile_db(&prof)?, &kinds);
    let mut position = vec![usize::MAX; order.len()];
    for (pos, &i) in order.iter().enumerate() {
        position[i] = pos;
    }
    let data = read_file(&file, "trace.db")?;
    let mut traces = parse_traces(&data)?.traces;
    for (prof, _) in traces.iter_mut() {
        *prof = *position.get(*prof).ok_or_else(|| {
            format!(
                "trace.db: a trace belongs to profile {prof}, but profile.db has {}",
                order.len()
            )
        })?;
    }
    traces.sort_by_key(|t| t.0);
    Ok(traces)
}

/// Context id -> node of a tree read by [`read`] (from the frames' `ctx_id` / `nid`).
pub fn ctx_nodes(cct: &Cct) -> HashMap<u32, u32> {
    let mut out = HashMap::new();
    for n in 0..cct.len() as u32 {
        let f = cct.frame(n);
        if let Some(id) = f.attr("ctx_id").or_else(|| f.attr("nid")) {
            if let Ok(id) = id.parse() {
                out.insert(id, n);
            }
        }
    }
    out
}

fn database_dir(path: &Path) -> PathBuf {
    let is_member = path
        .file_name()
        .is_some_and(|n| n == "meta.db" || n == "experiment.xml");
    if is_member && path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.to_path_buf()
    }
}

fn read_file(path: &Path, name: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{name}: cannot read: {e}"))
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The unit in a metric name's parentheses: `CPUTIME (sec)` -> `s`,
/// `CPUTIME (usec) (I)` -> `us`; "" when none is recognised.
fn unit_of(name: &str) -> &'static str {
    for group in name.split('(').skip(1) {
        let inner = group.split(')').next().unwrap_or("").trim();
        let unit = match inner {
            "sec" | "s" | "seconds" => "s",
            "ms" | "msec" => "ms",
            "us" | "usec" | "µs" => "us",
            "ns" | "nsec" => "ns",
            "B" | "bytes" => "B",
            _ => continue,
        };
        return unit;
    }
    ""
}

// ---------------------------------------------------------------------------------------
// Bytewise, bounds-checked access to one v4 file.

#[derive(Clone, Copy)]
struct Bytes<'a> {
    name: &'static str,
    d: &'a [u8],
}

impl<'a> Bytes<'a> {
    fn err(&self, off: u64, msg: impl Display) -> String {
        format!("{}: at byte {off}: {msg}", self.name)
    }

    fn len(&self) -> u64 {
        self.d.len() as u64
    }

    fn bytes(&self, off: u64, n: u64) -> Result<&'a [u8], String> {
        match off.checked_add(n) {
            Some(end) if end <= self.len() => Ok(&self.d[off as usize..end as usize]),
            _ => Err(self.err(
                off,
                format!(
                    "{n} bytes needed but the file ends at byte {} (truncated or corrupt)",
                    self.len()
                ),
            )),
        }
    }

    fn arr<const N: usize>(&self, off: u64) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(off, N as u64)?);
        Ok(a)
    }

    fn u8(&self, off: u64) -> Result<u8, String> {
        Ok(self.arr::<1>(off)?[0])
    }

    fn u16(&self, off: u64) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.arr(off)?))
    }

    fn u32(&self, off: u64) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.arr(off)?))
    }

    fn u64(&self, off: u64) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.arr(off)?))
    }

    fn f64(&self, off: u64) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.arr(off)?))
    }

    /// A NUL-terminated UTF-8 string (invalid bytes replaced).
    fn cstr(&self, off: u64) -> Result<String, String> {
        if off >= self.len() {
            return Err(self.err(off, "string pointer past the end of the file"));
        }
        let rest = &self.d[off as usize..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.err(off, "string without a terminating NUL"))?;
        Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
    }

    /// Checks that `count` elements of `size` bytes from `off` lie inside [lo, hi).
    fn check_array(
        &self,
        off: u64,
        count: u64,
        size: u64,
        lo: u64,
        hi: u64,
        what: &str,
    ) -> Result<(), String> {
        let end = count.checked_mul(size).and_then(|n| n.checked_add(off));
        match end {
            Some(end) if off >= lo && end <= hi && hi <= self.len() => Ok(()),
            _ => Err(self.err(
                off,
                format!("{what} ({count} × {size} bytes) lies outside its section [{lo}, {hi})"),
            )),
        }
    }
}

/// A section: {size, pointer} from the file header.
#[derive(Clone, Copy, Debug)]
struct Section {
    p: u64,
    sz: u64,
}

impl Section {
    fn end(&self) -> u64 {
        self.p + self.sz
    }
}

/// Checks magic, format, major version and footer; returns the minor version and the
/// first `n` sections.
fn header(
    b: &Bytes,
    format: &[u8; 4],
    footer: &[u8; 8],
    names: &[&str],
) -> Result<(u8, Vec<Section>), String> {
    if b.len() < 16 || &b.d[..10] != MAGIC {
        return Err(b.err(0, "not an HPCToolkit v4 file (no HPCTOOLKIT magic)"));
    }
    if &b.d[10..14] != format {
        return Err(b.err(
            10,
            format!(
                "format is {:?}, expected {:?}",
                String::from_utf8_lossy(&b.d[10..14]),
                String::from_utf8_lossy(format)
            ),
        ));
    }
    let major = b.d[14];
    if major != 4 {
        return Err(b.err(
            14,
            format!("major version {major} is not supported (only 4 is)"),
        ));
    }
    let minor = b.d[15];
    if b.len() < 24 || &b.d[b.d.len() - 8..] != footer {
        return Err(b.err(
            b.len().saturating_sub(8),
            format!(
                "missing the {:?} footer (truncated file?)",
                String::from_utf8_lossy(footer)
            ),
        ));
    }
    let mut secs = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let at = 0x10 + 16 * i as u64;
        let sz = b.u64(at)?;
        let p = b.u64(at + 8)?;
        if p.checked_add(sz).is_none_or(|e| e > b.len()) {
            return Err(b.err(
                at,
                format!("section {name} [{p}, +{sz}) lies outside the file"),
            ));
        }
        secs.push(Section { p, sz });
    }
    Ok((minor, secs))
}

/// Checks that a section is big enough for the header fields this reader uses.
fn need(b: &Bytes, s: Section, n: u64, what: &str) -> Result<(), String> {
    if s.sz < n {
        return Err(b.err(
            s.p,
            format!("the {what} section is {} bytes, at least {n} needed", s.sz),
        ));
    }
    Ok(())
}

fn need_size(b: &Bytes, at: u64, size: u64, min: u64, what: &str) -> Result<(), String> {
    if size < min {
        return Err(b.err(at, format!("{what} size is {size}, at least {min} needed")));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// meta.db

#[derive(Debug, Clone)]
struct Scope {
    name: String,
    /// 0 custom, 1 point, 2 execution, 3 transitive.
    kind: u8,
}

#[derive(Debug, Clone)]
struct Summary {
    scope: Scope,
    formula: String,
    /// 0 sum, 1 min, 2 max.
    combine: u8,
    id: u16,
}

#[derive(Debug, Clone)]
struct Metric {
    name: String,
    /// (scope, propMetricId)
    scopes: Vec<(Scope, u16)>,
    summaries: Vec<Summary>,
}

struct Meta {
    minor: u8,
    title: String,
    description: String,
    id_names: Vec<String>,
    metrics: Vec<Metric>,
    cct: Cct,
    /// ctx id -> node
    node_of: HashMap<u32, u32>,
}

/// Caches of the strings behind module / file / function pointers.
#[derive(Default)]
struct Names {
    modules: HashMap<u64, Arc<str>>,
    files: HashMap<u64, Arc<str>>,
    functions: HashMap<u64, Function>,
}

#[derive(Clone)]
struct Function {
    name: Option<Arc<str>>,
    module: Option<Arc<str>>,
    offset: u64,
    file: Option<Arc<str>>,
    line: u32,
}

impl Names {
    fn module(&mut self, b: &Bytes, p: u64) -> Result<Arc<str>, String> {
        if let Some(s) = self.modules.get(&p) {
            return Ok(s.clone());
        }
        let s: Arc<str> = b.cstr(b.u64(p.saturating_add(8))?)?.into();
        self.modules.insert(p, s.clone());
        Ok(s)
    }

    fn file(&mut self, b: &Bytes, p: u64) -> Result<Arc<str>, String> {
        if let Some(s) = self.files.get(&p) {
            return Ok(s.clone());
        }
        let s: Arc<str> = b.cstr(b.u64(p.saturating_add(8))?)?.into();
        self.files.insert(p, s.clone());
        Ok(s)
    }

    fn function(&mut self, b: &Bytes, p: u64) -> Result<Function, String> {
        if let Some(f) = self.functions.get(&p) {
            return Ok(f.clone());
        }
        let p_name = b.u64(p)?;
        let p_module = b.u64(p.saturating_add(8))?;
        let offset = b.u64(p.saturating_add(0x10))?;
        let p_file = b.u64(p.saturating_add(0x18))?;
        let line = b.u32(p.saturating_add(0x20))?;
        let f = Function {
            name: if p_name != 0 {
                Some(b.cstr(p_name)?.into())
            } else {
                None
            },
            module: if p_module != 0 {
                Some(self.module(b, p_module)?)
            } else {
                None
            },
            offset,
            file: if p_file != 0 {
                Some(self.file(b, p_file)?)
            } else {
                None
            },
            line,
        };
        self.functions.insert(p, f.clone());
        Ok(f)
    }
}

fn read_scope(b: &Bytes, p: u64) -> Result<Scope, String> {
    Ok(Scope {
        name: b.cstr(b.u64(p)?)?,
        kind: b.u8(p.saturating_add(8))?,
    })
}

/// The Identifier Names section: the name of each id tuple `kind`.
fn read_id_names(b: &Bytes, idnames: Section) -> Result<Vec<String>, String> {
    need(b, idnames, 0x09, "IdNames")?;
    let pp_names = b.u64(idnames.p)?;
    let n_kinds = b.u8(idnames.p + 8)? as u64;
    b.check_array(pp_names, n_kinds, 8, 0, b.len(), "identifier names")?;
    let mut id_names = Vec::new();
    for k in 0..n_kinds {
        id_names.push(b.cstr(b.u64(pp_names + 8 * k)?)?);
    }
    Ok(id_names)
}

/// Just the identifier names of meta.db (for [`read_traces`]).
fn meta_id_names(d: &[u8]) -> Result<Vec<String>, String> {
    let b = Bytes { name: "meta.db", d };
    let (_, s) = header(&b, b"meta", b"_meta.db", &["General", "IdNames"])?;
    read_id_names(&b, s[1])
}

fn parse_meta(d: &[u8]) -> Result<Meta, String> {
    let b = Bytes { name: "meta.db", d };
    let names = [
        "General",
        "IdNames",
        "Metrics",
        "Context",
        "Strings",
        "Modules",
        "Files",
        "Functions",
    ];
    let (minor, s) = header(&b, b"meta", b"_meta.db", &names)?;
    let (general, idnames, metrics_sec, context) = (s[0], s[1], s[2], s[3]);

    // General properties.
    need(&b, general, 0x10, "General")?;
    let title = b.cstr(b.u64(general.p)?)?;
    let description = b.cstr(b.u64(general.p + 8)?)?;

    let id_names = read_id_names(&b, idnames)?;

    // Performance metrics.
    need(&b, metrics_sec, 0x1b, "Metrics")?;
    let m = metrics_sec.p;
    let p_metrics = b.u64(m)?;
    let n_metrics = b.u32(m + 8)? as u64;
    let sz_metric = b.u8(m + 0x0c)? as u64;
    let sz_scope_inst = b.u8(m + 0x0d)? as u64;
    let sz_summary = b.u8(m + 0x0e)? as u64;
    need_size(&b, m + 0x0c, sz_metric, 0x1c, "metric description")?;
    need_size(
        &b,
        m + 0x0d,
        sz_scope_inst,
        0x0a,
        "propagation scope instance",
    )?;
    need_size(&b, m + 0x0e, sz_summary, 0x14, "summary statistic")?;
    let (lo, hi) = (metrics_sec.p, metrics_sec.end());
    b.check_array(
        p_metrics,
        n_metrics,
        sz_metric,
        lo,
        hi,
        "metric descriptions",
    )?;
    let mut metrics = Vec::new();
    for i in 0..n_metrics {
        let md = p_metrics + i * sz_metric;
        let name = b.cstr(b.u64(md)?)?;
        let p_insts = b.u64(md + 8)?;
        let p_sums = b.u64(md + 0x10)?;
        let n_insts = b.u16(md + 0x18)? as u64;
        let n_sums = b.u16(md + 0x1a)? as u64;
        b.check_array(
            p_insts,
            n_insts,
            sz_scope_inst,
            lo,
            hi,
            "propagation scope instances",
        )?;
        b.check_array(p_sums, n_sums, sz_summary, lo, hi, "summary statistics")?;
        let mut scopes = Vec::new();
        for j in 0..n_insts {
            let si = p_insts + j * sz_scope_inst;
            scopes.push((read_scope(&b, b.u64(si)?)?, b.u16(si + 8)?));
        }
        let mut summaries = Vec::new();
        for j in 0..n_sums {
            let ss = p_sums + j * sz_summary;
            summaries.push(Summary {
                scope: read_scope(&b, b.u64(ss)?)?,
                formula: b.cstr(b.u64(ss + 8)?)?,
                combine: b.u8(ss + 0x10)?,
                id: b.u16(ss + 0x12)?,
            });
        }
        metrics.push(Metric {
            name,
            scopes,
            summaries,
        });
    }

    // Context tree.
    need(&b, context, 0x0b, "Context")?;
    let p_entries = b.u64(context.p)?;
    let n_entries = b.u16(context.p + 8)? as u64;
    let sz_entry = b.u8(context.p + 0x0a)? as u64;
    need_size(&b, context.p + 0x0a, sz_entry, 0x20, "entry point")?;
    let (lo, hi) = (context.p, context.end());
    b.check_array(p_entries, n_entries, sz_entry, lo, hi, "entry points")?;
    let mut cct = Cct::default();
    let mut node_of = HashMap::new();
    let mut names = Names::default();
    // Every context takes at least 32 bytes of the section: more visits mean a cycle.
    let max_contexts = context.sz / 0x20 + 1;
    let mut visited = 0u64;
    for i in 0..n_entries {
        let e = p_entries + i * sz_entry;
        let sz_children = b.u64(e)?;
        let p_children = b.u64(e + 8)?;
        let ctx_id = b.u32(e + 0x10)?;
        let kind = b.u16(e + 0x14)?;
        let p_pretty = b.u64(e + 0x18)?;
        let name = if p_pretty != 0 {
            b.cstr(p_pretty)?
        } else {
            match kind {
                1 => "main thread".into(),
                2 => "application thread".into(),
                _ => "unknown entry".into(),
            }
        };
        let mut frame = Frame::new(&name, "entry");
        frame
            .attrs
            .push(("ctx_id".into(), ctx_id.to_string().into()));
        let node = cct.add_node(None, frame);
        node_of.insert(ctx_id, node);
        let mut stack: Vec<(u64, u64, u32)> = Vec::new();
        if sz_children > 0 {
            b.check_array(
                p_children,
                sz_children,
                1,
                lo,
                hi,
                "children of an entry point",
            )?;
            stack.push((p_children, p_children + sz_children, node));
        }
        while let Some(top) = stack.last_mut() {
            let (at, end, parent) = *top;
            if at >= end {
                stack.pop();
                continue;
            }
            visited += 1;
            if visited > max_contexts {
                return Err(b.err(at, "the context tree loops back on itself"));
            }
            if at + 0x20 > end {
                return Err(b.err(at, "context overruns its parent's children block"));
            }
            let n_flex = b.u8(at + 0x17)? as u64;
            let size = 0x20 + 8 * n_flex;
            if at + size > end {
                return Err(b.err(at, "context overruns its parent's children block"));
            }
            top.0 = at + size;
            let (frame, ctx_id) = context_frame(&b, at, n_flex, &mut names)?;
            let node = cct.add_node(Some(parent), frame);
            if node_of.insert(ctx_id, node).is_some() {
                return Err(b.err(at + 0x10, format!("context id {ctx_id} appears twice")));
            }
            let sz_children = b.u64(at)?;
            let p_children = b.u64(at + 8)?;
            if sz_children > 0 {
                b.check_array(p_children, sz_children, 1, lo, hi, "children of a context")?;
                stack.push((p_children, p_children + sz_children, node));
            }
        }
    }
    cct.finish();
    Ok(Meta {
        minor,
        title,
        description,
        id_names,
        metrics,
        cct,
        node_of,
    })
}

/// Reads the flex area of the context at `at` and builds its frame.
fn context_frame(
    b: &Bytes,
    at: u64,
    n_flex: u64,
    names: &mut Names,
) -> Result<(Frame, u32), String> {
    let ctx_id = b.u32(at + 0x10)?;
    let flags = b.u8(at + 0x14)?;
    let relation = b.u8(at + 0x15)?;
    let lexical = b.u8(at + 0x16)?;
    // Flex sub-fields in packing order: u64 take a whole word, two u32 share one.
    let flex = at + 0x20;
    let mut word = 0u64;
    let mut half: Option<u64> = None;
    let mut next = |four: bool| -> Result<u64, String> {
        let off = if four {
            if let Some(h) = half.take() {
                h
            } else {
                let o = flex + 8 * word;
                word += 1;
                half = Some(o + 4);
                o
            }
        } else {
            let o = flex + 8 * word;
            word += 1;
            o
        };
        if word > n_flex {
            return Err(b.err(
                at,
                format!("context {ctx_id}: its flags need more than {n_flex} flex words"),
            ));
        }
        Ok(off)
    };
    let mut function = None;
    let mut src = None;
    let mut point = None;
    if flags & 1 != 0 {
        let p = b.u64(next(false)?)?;
        if p != 0 {
            function = Some(names.function(b, p)?);
        }
    }
    if flags & 2 != 0 {
        let p_file = b.u64(next(false)?)?;
        let line = b.u32(next(true)?)?;
        let file = if p_file != 0 {
            Some(names.file(b, p_file)?)
        } else {
            None
        };
        src = Some((file, line));
    }
    if flags & 4 != 0 {
        let p_module = b.u64(next(false)?)?;
        let offset = b.u64(next(false)?)?;
        let module = if p_module != 0 {
            Some(names.module(b, p_module)?)
        } else {
            None
        };
        point = Some((module, offset));
    }

    let file_line = |file: &Option<Arc<str>>, line: u32| -> String {
        match file {
            Some(f) => format!("{}:{line}", basename(f)),
            None => format!("<unknown file>:{line}"),
        }
    };
    let module_offset = |m: &Option<Arc<str>>, off: u64| -> String {
        match m {
            Some(m) => format!("{}+0x{off:x}", basename(m)),
            None => format!("0x{off:x}"),
        }
    };
    let (name, kind) = match lexical {
        0 => {
            let name = match (&function, &point) {
                (Some(Function { name: Some(n), .. }), _) => n.to_string(),
                (Some(f), _) => unknown_procedure(&f.module, f.offset),
                (None, Some((m, off))) => unknown_procedure(m, *off),
                (None, None) => "<unknown procedure>".into(),
            };
            (name, "function")
        }
        1 => (
            match &src {
                Some((f, l)) => format!("loop at {}", file_line(f, *l)),
                None => "loop".into(),
            },
            "loop",
        ),
        2 => (
            match &src {
                Some((f, l)) => file_line(f, *l),
                None => "<unknown line>".into(),
            },
            "line",
        ),
        3 => (
            match &point {
                Some((m, off)) => module_offset(m, *off),
                None => "<unknown instruction>".into(),
            },
            "instruction",
        ),
        _ => (format!("context {ctx_id}"), "context"),
    };
    let mut frame = Frame::new(&name, kind);
    let attrs = &mut frame.attrs;
    // Where: a function's definition, else the context's own source line.
    let (file, line) = match (&function, &src) {
        (
            Some(Function {
                file: Some(f),
                line,
                ..
            }),
            _,
        ) => (Some(f.clone()), Some(*line)),
        (_, Some((f, l))) => (f.clone(), Some(*l)),
        _ => (None, None),
    };
    if let Some(f) = file {
        attrs.push(("file".into(), f));
    }
    if let Some(l) = line {
        attrs.push(("line".into(), l.to_string().into()));
    }
    let module = match (&point, &function) {
        (Some((Some(m), _)), _) => Some(m.clone()),
        (
            _,
            Some(Function {
                module: Some(m), ..
            }),
        ) => Some(m.clone()),
        _ => None,
    };
    if let Some(m) = module {
        attrs.push(("module".into(), m));
    }
    if let Some((_, off)) = point {
        attrs.push(("offset".into(), format!("0x{off:x}").into()));
    }
    if relation == 2 {
        attrs.push(("inlined".into(), "true".into()));
    }
    attrs.push(("ctx_id".into(), ctx_id.to_string().into()));
    Ok((frame, ctx_id))
}

fn unknown_procedure(module: &Option<Arc<str>>, offset: u64) -> String {
    match module {
        Some(m) => format!("<unknown procedure> 0x{offset:x} [{}]", basename(m)),
        None => format!("<unknown procedure> 0x{offset:x}"),
    }
}

// ---------------------------------------------------------------------------------------
// Metric columns

/// One column of the metric table and where its values come from.
#[derive(Debug, Clone)]
struct Column {
    name: String,
    unit: &'static str,
    /// Index of the metric in meta.db.
    metric: usize,
    inclusive: bool,
}

/// Column for a metric in a scope: execution -> inclusive, function -> exclusive; other
/// scopes only when the metric has neither (point values then count as exclusive).
fn scope_column(metric: &Metric, scope: &Scope) -> Option<bool> {
    let is_inc = |s: &Scope| s.kind == 2 || s.name == "execution";
    let is_exc = |s: &Scope| s.name == "function";
    if is_inc(scope) {
        return Some(true);
    }
    if is_exc(scope) {
        return Some(false);
    }
    let standard = metric.scopes.iter().any(|(s, _)| is_inc(s) || is_exc(s))
        || metric
            .summaries
            .iter()
            .any(|s| is_inc(&s.scope) || is_exc(&s.scope));
    (!standard && (scope.kind == 1 || scope.name == "point")).then_some(false)
}

/// Column layout: per-thread profiles map propMetricIds, summary profiles statMetricIds.
struct Columns {
    cols: Vec<Column>,
    prop: HashMap<u16, usize>,
    stat: HashMap<u16, usize>,
}

fn columns(metrics: &[Metric]) -> Columns {
    let mut cols: Vec<Column> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut add = |cols: &mut Vec<Column>, c: Column| -> usize {
        *by_name.entry(c.name.clone()).or_insert_with(|| {
            cols.push(c);
            cols.len() - 1
        })
    };
    let mut prop = HashMap::new();
    let mut stat = HashMap::new();
    for (mi, m) in metrics.iter().enumerate() {
        let unit = unit_of(&m.name);
        for (scope, id) in &m.scopes {
            if let Some(inclusive) = scope_column(m, scope) {
                let name = if inclusive {
                    inclusive_name(&m.name)
                } else {
                    m.name.clone()
                };
                let c = add(
                    &mut cols,
                    Column {
                        name,
                        unit,
                        metric: mi,
                        inclusive,
                    },
                );
                prop.insert(*id, c);
            }
        }
        for s in &m.summaries {
            if let Some(inclusive) = scope_column(m, &s.scope) {
                let formula: String = s.formula.chars().filter(|c| !c.is_whitespace()).collect();
                let (suffix, unit) = match (formula.as_str(), s.combine) {
                    ("$$", 0) => (String::new(), unit),
                    ("$$", 1) => (":min".into(), unit),
                    ("$$", 2) => (":max".into(), unit),
                    ("1", 0) => (":count".into(), ""),
                    ("($$)^2" | "$$^2" | "($$^2)", 0) => (":sumsq".into(), ""),
                    (f, c) => {
                        let c = match c {
                            0 => "sum".to_string(),
                            1 => "min".to_string(),
                            2 => "max".to_string(),
                            c => format!("combine{c}"),
                        };
                        (format!(":{c}[{f}]"), "")
                    }
                };
                let base = format!("{}{suffix}", m.name);
                let name = if inclusive {
                    inclusive_name(&base)
                } else {
                    base
                };
                let c = add(
                    &mut cols,
                    Column {
                        name,
                        unit,
                        metric: mi,
                        inclusive,
                    },
                );
                stat.insert(s.id, c);
            }
        }
    }
    Columns { cols, prop, stat }
}

/// The metric shown first: a time metric when there is one, else the first metric
/// with values.
fn pick_default(metrics: &[Metric], cols: &[Column], has_values: &[bool]) -> Option<usize> {
    let exclusive = |mi: usize| {
        cols.iter()
            .position(|c| c.metric == mi && !c.inclusive && !c.name.contains(':'))
            .or_else(|| cols.iter().position(|c| c.metric == mi && !c.inclusive))
    };
    // CPU time first, then all GPU operations, GPU kernels, any time, anything.
    let rank = |c: usize| {
        let name = metrics[cols[c].metric].name.to_ascii_uppercase();
        let base = name.split(" (").next().unwrap_or(&name);
        if base.starts_with("CPUTIME")
            || base.starts_with("REALTIME")
            || base.ends_with("TASK-CLOCK")
            || base.ends_with("CPU-CLOCK")
            || base == "CYCLES"
        {
            0
        } else if base == "GPUOP" {
            1
        } else if base == "GKER" {
            2
        } else if matches!(cols[c].unit, "s" | "ms" | "us" | "ns") {
            3
        } else {
            4
        }
    };
    let with_values = |c: usize| has_values.get(c).copied().unwrap_or(false);
    (0..metrics.len())
        .filter_map(exclusive)
        .min_by_key(|&c| (!with_values(c), rank(c), c))
}

// ---------------------------------------------------------------------------------------
// profile.db

struct ProfInfo {
    n_values: u64,
    p_values: u64,
    n_ctxs: u64,
    p_ctx_indices: u64,
    /// (kind, is physical, logical id, physical id)
    id_tuple: Option<Vec<(u8, bool, u32, u64)>>,
    is_summary: bool,
}

struct ProfileDb<'a> {
    b: Bytes<'a>,
    profiles: Vec<ProfInfo>,
}

fn parse_profile_db(d: &[u8]) -> Result<ProfileDb<'_>, String> {
    let b = Bytes {
        name: "profile.db",
        d,
    };
    let (_minor, s) = header(&b, b"prof", b"_prof.db", &["ProfileInfos", "IdTuples"])?;
    let (infos, tuples) = (s[0], s[1]);
    need(&b, infos, 0x0d, "ProfileInfos")?;
    let p_profiles = b.u64(infos.p)?;
    let n_profiles = b.u32(infos.p + 8)? as u64;
    let sz_profile = b.u8(infos.p + 0x0c)? as u64;
    need_size(&b, infos.p + 0x0c, sz_profile, 0x2c, "profile info")?;
    b.check_array(
        p_profiles,
        n_profiles,
        sz_profile,
        infos.p,
        infos.end(),
        "profile infos",
    )?;
    let mut profiles = Vec::new();
    for i in 0..n_profiles {
        let pi = p_profiles + i * sz_profile;
        let n_values = b.u64(pi)?;
        let p_values = b.u64(pi + 8)?;
        let n_ctxs = b.u32(pi + 0x10)? as u64;
        let p_ctx_indices = b.u64(pi + 0x18)?;
        let p_tuple = b.u64(pi + 0x20)?;
        let flags = b.u32(pi + 0x28)?;
        b.check_array(p_values, n_values, 10, 0, b.len(), "profile values")?;
        b.check_array(
            p_ctx_indices,
            n_ctxs,
            12,
            0,
            b.len(),
            "profile context indices",
        )?;
        let id_tuple = if p_tuple != 0 {
            let n_ids = b.u16(p_tuple)? as u64;
            b.check_array(
                p_tuple + 8,
                n_ids,
                16,
                tuples.p,
                tuples.end(),
                "identifier tuple",
            )?;
            let mut ids = Vec::new();
            for k in 0..n_ids {
                let id = p_tuple + 8 + 16 * k;
                ids.push((
                    b.u8(id)?,
                    b.u16(id + 2)? & 1 != 0,
                    b.u32(id + 4)?,
                    b.u64(id + 8)?,
                ));
            }
            Some(ids)
        } else {
            None
        };
        profiles.push(ProfInfo {
            n_values,
            p_values,
            n_ctxs,
            p_ctx_indices,
            id_tuple,
            is_summary: flags & 1 != 0,
        });
    }
    Ok(ProfileDb { b, profiles })
}

impl ProfileDb<'_> {
    /// Calls `f(ctx_id, metric_id, value)` for every value of profile `i`.
    fn values(&self, i: usize, mut f: impl FnMut(u32, u16, f64)) -> Result<(), String> {
        let b = &self.b;
        let p = &self.profiles[i];
        let mut prev: Option<(u32, u64)> = None;
        for k in 0..=p.n_ctxs {
            let cur = if k < p.n_ctxs {
                let at = p.p_ctx_indices + 12 * k;
                Some((b.u32(at)?, b.u64(at + 4)?))
            } else {
                None
            };
            if let Some((ctx, start)) = prev {
                let end = cur.map(|c| c.1).unwrap_or(p.n_values);
                if start > end || end > p.n_values {
                    let at = p.p_ctx_indices + 12 * (k - 1) + 4;
                    return Err(b.err(at, format!("value range [{start}, {end}) of context {ctx} is outside the {} values", p.n_values)));
                }
                for v in start..end {
                    let at = p.p_values + 10 * v;
                    f(ctx, b.u16(at)?, b.f64(at + 2)?);
                }
            }
            prev = cur;
        }
        Ok(())
    }
}

/// `rank 0 thread 1`, `GPU context 0 stream 2`, ... for one id tuple.
fn tuple_label(ids: &[(u8, bool, u32, u64)], kinds: &[String], with_hw: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut gpu = false;
    for &(kind, physical, logical, phys) in ids {
        let k = kinds.get(kind as usize).map(|s| s.as_str()).unwrap_or("");
        let hw = matches!(k, "NODE" | "CORE");
        if hw && !with_hw {
            continue;
        }
        let value = if physical && k == "NODE" {
            format!("{phys:#x}")
        } else {
            logical.to_string()
        };
        let word = match k {
            "RANK" => "rank".to_string(),
            "THREAD" => "thread".to_string(),
            "NODE" => "node".to_string(),
            "CORE" => "core".to_string(),
            "SUMMARY" => "summary".to_string(),
            "GPUDEVICE" | "GPUCONTEXT" | "GPUSTREAM" => {
                let w = match k {
                    "GPUDEVICE" => "device",
                    "GPUCONTEXT" => "context",
                    _ => "stream",
                };
                let w = if gpu {
                    w.to_string()
                } else {
                    format!("GPU {w}")
                };
                gpu = true;
                w
            }
            "" => format!("kind{kind}"),
            other => other.to_ascii_lowercase(),
        };
        parts.push(format!("{word} {value}"));
    }
    parts.join(" ")
}

fn tuple_text(ids: &[(u8, bool, u32, u64)], kinds: &[String]) -> String {
    ids.iter()
        .map(|&(kind, physical, logical, phys)| {
            let k = kinds
                .get(kind as usize)
                .cloned()
                .unwrap_or_else(|| format!("kind{kind}"));
            if physical {
                format!("{k} {logical} [{phys:#x}]")
            } else {
                format!("{k} {logical}")
            }
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

fn profile_labels(db: &ProfileDb, kinds: &[String]) -> Vec<String> {
    let make = |with_hw: bool| -> Vec<String> {
        db.profiles
            .iter()
            .enumerate()
            .map(|(i, p)| match (&p.id_tuple, p.is_summary) {
                (None, _) if i == 0 => "summary".to_string(),
                (None, _) => format!("profile {i}"),
                (Some(ids), true) => {
                    let l = tuple_label(ids, kinds, with_hw);
                    if l.is_empty() {
                        "summary".into()
                    } else {
                        format!("summary {l}")
                    }
                }
                (Some(ids), false) => {
                    let l = tuple_label(ids, kinds, with_hw);
                    if l.is_empty() {
                        format!("profile {i}")
                    } else {
                        l
                    }
                }
            })
            .collect()
    };
    let unique = |v: &[String]| {
        let mut s: Vec<&String> = v.iter().collect();
        s.sort();
        s.dedup();
        s.len() == v.len()
    };
    let short = make(false);
    if unique(&short) {
        return short;
    }
    let long = make(true);
    if unique(&long) {
        return long;
    }
    long.into_iter()
        .enumerate()
        .map(|(i, l)| format!("{l} (profile {i})"))
        .collect()
}

/// The order profiles are returned in: profile.db's first (the summary) first, then
/// other summaries, then by id tuple without node and core (rank, thread, GPU context,
/// stream), then by the whole tuple.
fn profile_order(db: &ProfileDb, kinds: &[String]) -> Vec<usize> {
    type Key = (bool, Vec<(u8, u32)>, Vec<(u8, u32, u64)>);
    let key = |p: &ProfInfo| -> Key {
        let ids = p.id_tuple.as_deref().unwrap_or(&[]);
        let hw = |k: u8| {
            matches!(
                kinds.get(k as usize).map(|s| s.as_str()),
                Some("NODE" | "CORE")
            )
        };
        (
            !p.is_summary,
            ids.iter()
                .filter(|id| !hw(id.0))
                .map(|id| (id.0, id.2))
                .collect(),
            ids.iter().map(|id| (id.0, id.2, id.3)).collect(),
        )
    };
    let mut order: Vec<usize> = (1..db.profiles.len()).collect();
    order.sort_by_cached_key(|&i| key(&db.profiles[i]));
    if !db.profiles.is_empty() {
        order.insert(0, 0);
    }
    order
}

fn dir_size(dir: &Path, files: &[&str]) -> u64 {
    files
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
        .map(|m| m.len())
        .sum()
}

fn read_v4(dir: &Path) -> Result<Vec<Profile>, String> {
    let meta = read_file(&dir.join("meta.db"), "meta.db")?;
    let prof = read_file(&dir.join("profile.db"), "profile.db")?;
    let size = dir_size(dir, &["meta.db", "profile.db", "cct.db", "trace.db"]);
    let mut out = parse_v4(&meta, &prof)?;
    for (i, p) in out.iter_mut().enumerate() {
        p.source.size = if i == 0 { size } else { 0 };
        p.meta
            .insert(0, ("database".into(), dir.display().to_string()));
    }
    Ok(out)
}

/// Builds the profiles from the bytes of meta.db and profile.db.
fn parse_v4(meta_bytes: &[u8], prof_bytes: &[u8]) -> Result<Vec<Profile>, String> {
    let meta = parse_meta(meta_bytes)?;
    let db = parse_profile_db(prof_bytes)?;
    let layout = columns(&meta.metrics);
    let rows = meta.cct.len();
    let labels = profile_labels(&db, &meta.id_names);
    let mut out = Vec::with_capacity(db.profiles.len());
    for i in profile_order(&db, &meta.id_names) {
        let info = &db.profiles[i];
        let ids = if info.is_summary {
            &layout.stat
        } else {
            &layout.prop
        };
        let mut data: Vec<Option<Vec<f64>>> = vec![None; layout.cols.len()];
        let mut unlisted = 0usize;
        let mut global: Vec<(usize, f64)> = Vec::new();
        db.values(i, |ctx, metric, v| {
            let Some(&c) = ids.get(&metric) else {
                return;
            };
            if ctx == 0 {
                global.push((c, v));
                return;
            }
            match meta.node_of.get(&ctx) {
                Some(&n) => data[c].get_or_insert_with(|| vec![f64::NAN; rows])[n as usize] = v,
                None => unlisted += 1,
            }
        })?;
        let has: Vec<bool> = data.iter().map(|c| c.is_some()).collect();
        let default = pick_default(&meta.metrics, &layout.cols, &has);
        let mut metrics = MetricTable::new(rows);
        for (c, col) in layout.cols.iter().enumerate() {
            let wanted = default.is_some_and(|d| {
                layout.cols[d].metric == col.metric
                    && (c == d || col.name == inclusive_name(&layout.cols[d].name))
            });
            match data[c].take() {
                Some(v) => metrics.set(&col.name, col.unit, v),
                None if wanted => metrics.set(&col.name, col.unit, vec![f64::NAN; rows]),
                None => {}
            }
        }
        let mut pmeta = vec![
            ("profile".to_string(), labels[i].clone()),
            ("profile index".to_string(), i.to_string()),
        ];
        if let Some(ids) = &info.id_tuple {
            pmeta.push(("id tuple".into(), tuple_text(ids, &meta.id_names)));
        }
        pmeta.push(("title".into(), meta.title.clone()));
        if !meta.description.is_empty() {
            pmeta.push(("description".into(), meta.description.clone()));
        }
        for (c, v) in &global {
            pmeta.push((format!("total {}", layout.cols[*c].name), v.to_string()));
        }
        if unlisted > 0 {
            // hpcprof keeps values of contexts it leaves out of meta.db's tree
            // (instruction-level leaves); their lines and functions hold them already.
            pmeta.push((
                "values on contexts outside the tree".into(),
                unlisted.to_string(),
            ));
        }
        let mut cct = meta.cct.clone();
        cct.finish();
        out.push(Profile {
            source: Source {
                path: None,
                format: Format::HpcToolkit,
                size: 0,
                gzip: false,
                label: labels[i].clone(),
            },
            dialect: format!("HPCToolkit database v4.{} (hpcprof)", meta.minor),
            cct,
            metrics,
            events: None,
            counters: None,
            meta: pmeta,
            warnings: Vec::new(),
            default_metric: default
                .map(|d| layout.cols[d].name.clone())
                .unwrap_or_default(),
        });
    }
    if out.is_empty() {
        return Err("profile.db: the database holds no profiles".into());
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// trace.db

struct Traces {
    traces: Vec<Trace>,
    #[cfg_attr(not(test), allow(dead_code))]
    range: (u64, u64),
}

fn parse_traces(d: &[u8]) -> Result<Traces, String> {
    let b = Bytes {
        name: "trace.db",
        d,
    };
    let (_minor, s) = header(&b, b"trce", b"trace.db", &["CtxTraces"])?;
    let sec = s[0];
    need(&b, sec, 0x20, "CtxTraces")?;
    let p_traces = b.u64(sec.p)?;
    let n_traces = b.u32(sec.p + 8)? as u64;
    let sz_trace = b.u8(sec.p + 0x0c)? as u64;
    need_size(&b, sec.p + 0x0c, sz_trace, 0x18, "trace header")?;
    let range = (b.u64(sec.p + 0x10)?, b.u64(sec.p + 0x18)?);
    b.check_array(
        p_traces,
        n_traces,
        sz_trace,
        sec.p,
        sec.end(),
        "trace headers",
    )?;
    let mut traces = Vec::new();
    for i in 0..n_traces {
        let th = p_traces + i * sz_trace;
        let prof = b.u32(th)? as usize;
        let start = b.u64(th + 8)?;
        let end = b.u64(th + 0x10)?;
        if end < start || (end - start) % 12 != 0 || end > b.len() {
            return Err(b.err(th + 8, format!("trace line [{start}, {end}) is not a whole number of 12-byte samples inside the file")));
        }
        let mut line = Vec::with_capacity(((end - start) / 12) as usize);
        let mut at = start;
        while at < end {
            line.push((b.u64(at)?, b.u32(at + 8)?));
            at += 12;
        }
        traces.push((prof, line));
    }
    Ok(Traces { traces, range })
}

// ---------------------------------------------------------------------------------------
// Old format: a minimal XML tokenizer.

#[derive(Debug)]
enum Tok {
    Start {
        name: String,
        attrs: Vec<(String, String)>,
        empty: bool,
        pos: usize,
    },
    End {
        name: String,
        pos: usize,
    },
    Eof,
}

struct Xml<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Xml<'a> {
    fn new(s: &'a [u8]) -> Xml<'a> {
        let s = s.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(s);
        Xml { s, pos: 0 }
    }

    fn err(&self, pos: usize, msg: impl Display) -> String {
        let pos = pos.min(self.s.len());
        let line = 1 + self.s[..pos].iter().filter(|&&b| b == b'\n').count();
        format!("experiment.xml: line {line}: {msg}")
    }

    fn find(&self, from: usize, pat: &[u8]) -> Option<usize> {
        self.s
            .get(from..)?
            .windows(pat.len())
            .position(|w| w == pat)
            .map(|i| from + i)
    }

    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn name(&mut self) -> Result<String, String> {
        let start = self.pos;
        while self.pos < self.s.len() {
            let c = self.s[self.pos];
            if c.is_ascii_alphanumeric() || matches!(c, b'_' | b':' | b'.' | b'-') || c >= 0x80 {
                self.pos += 1;
            } else {
                break;
            }
        }
        if self.pos == start {
            return Err(self.err(start, "expected a name"));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    /// Skips `<!DOCTYPE ...>` (with an internal subset) or another `<!...>` declaration.
    fn skip_decl(&mut self) -> Result<(), String> {
        let start = self.pos;
        let mut depth = 0usize;
        let mut i = self.pos + 2;
        while i < self.s.len() {
            match self.s[i] {
                b'"' | b'\'' => {
                    let q = self.s[i];
                    i = match self.s[i + 1..].iter().position(|&c| c == q) {
                        Some(k) => i + 1 + k + 1,
                        None => break,
                    };
                    continue;
                }
                b'<' if self.s[i..].starts_with(b"<!--") => {
                    i = match self.find(i + 4, b"-->") {
                        Some(k) => k + 3,
                        None => break,
                    };
                    continue;
                }
                b'[' => depth += 1,
                b']' => depth = depth.saturating_sub(1),
                b'>' if depth == 0 => {
                    self.pos = i + 1;
                    return Ok(());
                }
                _ => {}
            }
            i += 1;
        }
        Err(self.err(start, "unterminated <! declaration"))
    }

    fn next(&mut self) -> Result<Tok, String> {
        loop {
            let Some(lt) = self.s[self.pos..].iter().position(|&c| c == b'<') else {
                self.pos = self.s.len();
                return Ok(Tok::Eof);
            };
            self.pos += lt;
            let rest = &self.s[self.pos..];
            let start = self.pos;
            if rest.starts_with(b"<!--") {
                let end = self
                    .find(self.pos + 4, b"-->")
                    .ok_or_else(|| self.err(start, "unterminated comment"))?;
                self.pos = end + 3;
            } else if rest.starts_with(b"<![CDATA[") {
                let end = self
                    .find(self.pos + 9, b"]]>")
                    .ok_or_else(|| self.err(start, "unterminated CDATA section"))?;
                self.pos = end + 3;
            } else if rest.starts_with(b"<?") {
                let end = self
                    .find(self.pos + 2, b"?>")
                    .ok_or_else(|| self.err(start, "unterminated <? ?> instruction"))?;
                self.pos = end + 2;
            } else if rest.starts_with(b"<!") {
                self.skip_decl()?;
            } else if rest.starts_with(b"</") {
                self.pos += 2;
                let name = self.name()?;
                self.skip_ws();
                if self.s.get(self.pos) != Some(&b'>') {
                    return Err(self.err(self.pos, format!("expected '>' to close </{name}")));
                }
                self.pos += 1;
                return Ok(Tok::End { name, pos: start });
            } else {
                self.pos += 1;
                let name = self.name()?;
                let mut attrs = Vec::new();
                loop {
                    self.skip_ws();
                    match self.s.get(self.pos) {
                        Some(b'>') => {
                            self.pos += 1;
                            return Ok(Tok::Start {
                                name,
                                attrs,
                                empty: false,
                                pos: start,
                            });
                        }
                        Some(b'/') if self.s.get(self.pos + 1) == Some(&b'>') => {
                            self.pos += 2;
                            return Ok(Tok::Start {
                                name,
                                attrs,
                                empty: true,
                                pos: start,
                            });
                        }
                        None => return Err(self.err(start, format!("unterminated <{name}> tag"))),
                        _ => {}
                    }
                    let key = self.name()?;
                    self.skip_ws();
                    if self.s.get(self.pos) != Some(&b'=') {
                        return Err(
                            self.err(self.pos, format!("expected '=' after attribute {key}"))
                        );
                    }
                    self.pos += 1;
                    self.skip_ws();
                    let q = match self.s.get(self.pos) {
                        Some(&q @ (b'"' | b'\'')) => q,
                        _ => {
                            return Err(
                                self.err(self.pos, format!("expected a quoted value for {key}"))
                            )
                        }
                    };
                    let vstart = self.pos + 1;
                    let len = self.s[vstart..]
                        .iter()
                        .position(|&c| c == q)
                        .ok_or_else(|| self.err(vstart, format!("unterminated value of {key}")))?;
                    let value = unescape(&String::from_utf8_lossy(&self.s[vstart..vstart + len]));
                    self.pos = vstart + len + 1;
                    attrs.push((key, value));
                }
            }
        }
    }
}

/// A loop or statement of experiment.xml: `loop at file.c:12` / `file.c:12`, named by
/// the innermost enclosing file.
fn source_frame(prefix: &str, kind: &str, file: &Option<Arc<str>>, line: &Option<String>) -> Frame {
    let l = line.as_deref().unwrap_or_default();
    let shown = file.as_deref().map(basename).unwrap_or("<unknown file>");
    let mut f = Frame::new(&format!("{prefix}{shown}:{l}"), kind);
    if let Some(file) = file {
        f.attrs.push(("file".into(), file.clone()));
    }
    f.attrs.push(("line".into(), l.into()));
    f
}

fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest.find(';').filter(|&e| e <= 12) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let ent = &rest[1..end];
        let c = match ent {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => ent
                .strip_prefix("#x")
                .or_else(|| ent.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| ent.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match c {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn attr<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

// ---------------------------------------------------------------------------------------
// Old format: experiment.xml + *.metric-db

#[derive(Debug, Clone)]
struct OldMetric {
    id: String,
    name: String,
    /// "inclusive", "exclusive" or "nil"
    kind: String,
    db_id: Option<usize>,
}

impl OldMetric {
    fn inclusive(&self) -> bool {
        self.kind == "inclusive"
    }

    fn exclusive(&self) -> bool {
        self.kind == "exclusive"
    }

    /// `CPUTIME (usec):Sum (I)` -> `CPUTIME (usec) (inc)`; `...:Max (E)` -> `...:max`.
    fn column(&self) -> String {
        let mut base = self.name.trim();
        for s in [" (I)", " (E)", " (X)"] {
            if let Some(b) = base.strip_suffix(s) {
                base = b;
                break;
            }
        }
        let mut base = base.to_string();
        if let Some((head, stat)) = base.rsplit_once(':') {
            if !stat.contains(' ') && !stat.is_empty() {
                base = match stat {
                    "Sum" => head.to_string(),
                    s => format!("{head}:{}", s.to_ascii_lowercase()),
                };
            }
        }
        if self.inclusive() {
            inclusive_name(&base)
        } else {
            base
        }
    }
}

struct OldTree {
    version: String,
    title: String,
    summary_metrics: Vec<OldMetric>,
    db_metrics: Vec<OldMetric>,
    cct: Cct,
    /// nid -> node
    node_of: HashMap<u32, u32>,
    /// (statement nid, XML parent nid): Hatchet moves statement costs out of parents.
    statements: Vec<(u32, u32)>,
    /// Summary values (nid, index into summary_metrics, value).
    values: Vec<(u32, usize, f64)>,
    totals: Vec<(usize, f64)>,
    warnings: Vec<String>,
}

#[derive(PartialEq, Clone, Copy)]
enum Place {
    Other,
    Header,
    Data,
}

fn parse_experiment(s: &[u8]) -> Result<OldTree, String> {
    let mut x = Xml::new(s);
    let mut t = OldTree {
        version: String::new(),
        title: String::new(),
        summary_metrics: Vec::new(),
        db_metrics: Vec::new(),
        cct: Cct::default(),
        node_of: HashMap::new(),
        statements: Vec::new(),
        values: Vec::new(),
        totals: Vec::new(),
        warnings: Vec::new(),
    };
    let mut modules: HashMap<String, Arc<str>> = HashMap::new();
    let mut files: HashMap<String, Arc<str>> = HashMap::new();
    let mut procs: HashMap<String, String> = HashMap::new();
    let mut metric_ix: HashMap<String, usize> = HashMap::new();
    // Open elements: (tag, place, node for children, nid, file for statements).
    struct Open {
        tag: String,
        place: Place,
        node: Option<u32>,
        nid: Option<u32>,
        file: Option<Arc<str>>,
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut sections = 0usize;
    let mut seen_root = false;
    let lookup = |table: &HashMap<String, Arc<str>>, key: Option<&str>| -> Option<Arc<str>> {
        let k = key?;
        Some(table.get(k).cloned().unwrap_or_else(|| k.into()))
    };
    loop {
        match x.next()? {
            Tok::Eof => break,
            Tok::End { name, pos } => match stack.pop() {
                Some(o) if o.tag == name => {}
                Some(o) => return Err(x.err(pos, format!("</{name}> closes <{}>", o.tag))),
                None => return Err(x.err(pos, format!("</{name}> without an open element"))),
            },
            Tok::Start {
                name,
                attrs,
                empty,
                pos,
            } => {
                if stack.is_empty() {
                    if seen_root {
                        return Err(x.err(pos, "a second root element"));
                    }
                    seen_root = true;
                    if name != "HPCToolkitExperiment" {
                        return Err(x.err(
                            pos,
                            format!("root element is <{name}>, not <HPCToolkitExperiment>"),
                        ));
                    }
                    t.version = attr(&attrs, "version").unwrap_or("").to_string();
                }
                let parent = stack.last();
                let place = parent.map(|p| p.place).unwrap_or(Place::Other);
                let parent_node = parent.and_then(|p| p.node);
                let parent_nid = parent.and_then(|p| p.nid);
                let parent_file = parent.and_then(|p| p.file.clone());
                let mut open = Open {
                    tag: name.clone(),
                    place,
                    node: parent_node,
                    nid: None,
                    file: parent_file.clone(),
                };
                let skip_section = sections > 1;
                match (place, name.as_str()) {
                    (_, "SecCallPathProfile") => {
                        sections += 1;
                        if sections > 1 {
                            t.warnings
                                .push("only the first call path profile section is read".into());
                        }
                    }
                    (_, "Header") if t.title.is_empty() => {
                        t.title = attr(&attrs, "n").unwrap_or("").to_string();
                    }
                    (_, "SecHeader") if !skip_section => open.place = Place::Header,
                    (_, "SecCallPathProfileData") if !skip_section => open.place = Place::Data,
                    (Place::Header, "Metric") => {
                        let m = OldMetric {
                            id: attr(&attrs, "i").unwrap_or("").to_string(),
                            name: attr(&attrs, "n").unwrap_or("").to_string(),
                            kind: attr(&attrs, "t").unwrap_or("nil").to_string(),
                            db_id: None,
                        };
                        metric_ix.insert(m.id.clone(), t.summary_metrics.len());
                        t.summary_metrics.push(m);
                    }
                    (Place::Header, "MetricDB") => {
                        let db_id = attr(&attrs, "db-id")
                            .or(attr(&attrs, "i"))
                            .and_then(|v| v.parse().ok());
                        t.db_metrics.push(OldMetric {
                            id: attr(&attrs, "i").unwrap_or("").to_string(),
                            name: attr(&attrs, "n").unwrap_or("").to_string(),
                            kind: attr(&attrs, "t").unwrap_or("nil").to_string(),
                            db_id,
                        });
                    }
                    (Place::Header, "LoadModule") => {
                        if let (Some(i), Some(n)) = (attr(&attrs, "i"), attr(&attrs, "n")) {
                            modules.insert(i.into(), n.into());
                        }
                    }
                    (Place::Header, "File") => {
                        if let (Some(i), Some(n)) = (attr(&attrs, "i"), attr(&attrs, "n")) {
                            files.insert(i.into(), n.into());
                        }
                    }
                    (Place::Header, "Procedure") => {
                        if let (Some(i), Some(n)) = (attr(&attrs, "i"), attr(&attrs, "n")) {
                            procs.insert(i.into(), n.into());
                        }
                    }
                    (Place::Data, "M") => {
                        let v = attr(&attrs, "v").and_then(|v| v.trim().parse::<f64>().ok());
                        let m = attr(&attrs, "n").and_then(|n| metric_ix.get(n)).copied();
                        if let (Some(v), Some(m)) = (v, m) {
                            match parent.and_then(|p| p.nid) {
                                Some(nid) => t.values.push((nid, m, v)),
                                None => t.totals.push((m, v)),
                            }
                        }
                    }
                    (Place::Data, tag @ ("PF" | "Pr" | "L" | "C" | "S")) => {
                        let nid: u32 =
                            attr(&attrs, "i")
                                .and_then(|v| v.parse().ok())
                                .ok_or_else(|| {
                                    x.err(pos, format!("<{tag}> without a numeric node id i"))
                                })?;
                        open.nid = Some(nid);
                        let line =
                            attr(&attrs, "l").map(|l| l.split('-').next().unwrap_or(l).to_string());
                        let file = lookup(&files, attr(&attrs, "f"));
                        if file.is_some() {
                            open.file = file.clone();
                        }
                        let frame = match tag {
                            "PF" | "Pr" => {
                                let n = attr(&attrs, "n").unwrap_or("");
                                let name = procs.get(n).cloned().unwrap_or_else(|| n.to_string());
                                if tag == "Pr" && name.is_empty() {
                                    None
                                } else {
                                    let mut f = Frame::new(&name, "function");
                                    if let Some(file) = &file {
                                        f.attrs.push(("file".into(), file.clone()));
                                    }
                                    if let Some(l) = &line {
                                        f.attrs.push(("line".into(), l.as_str().into()));
                                    }
                                    if let Some(m) = lookup(&modules, attr(&attrs, "lm")) {
                                        f.attrs.push(("module".into(), m));
                                    }
                                    if tag == "Pr" {
                                        f.attrs.push(("inlined".into(), "true".into()));
                                    }
                                    Some(f)
                                }
                            }
                            "L" => Some(source_frame("loop at ", "loop", &open.file, &line)),
                            "S" => Some(source_frame("", "line", &open.file, &line)),
                            // Call sites are not nodes (as in Hatchet): the callee hangs
                            // from the caller.
                            _ => None,
                        };
                        if let Some(mut frame) = frame {
                            frame.attrs.push(("nid".into(), nid.to_string().into()));
                            let node = t.cct.add_node(parent_node, frame);
                            if t.node_of.insert(nid, node).is_some() {
                                return Err(x.err(pos, format!("node id {nid} appears twice")));
                            }
                            open.node = Some(node);
                            if tag == "S" {
                                if let Some(p) = parent_nid {
                                    t.statements.push((nid, p));
                                }
                            }
                        }
                    }
                    _ => {}
                }
                if !empty {
                    stack.push(open);
                }
            }
        }
    }
    if let Some(o) = stack.last() {
        return Err(x.err(
            x.s.len(),
            format!("the file ends inside <{}> (truncated?)", o.tag),
        ));
    }
    if !seen_root {
        return Err(x.err(0, "no <HPCToolkitExperiment> element"));
    }
    t.cct.finish();
    Ok(t)
}

/// (rank, thread) from `1.cpi-000003-001-a8c00270-160446-0.metric-db`.
fn rank_thread(file: &str) -> Option<(u32, u32)> {
    let stem = file.strip_suffix(".metric-db")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() < 6 {
        return None;
    }
    let n = parts.len();
    Some((parts[n - 5].parse().ok()?, parts[n - 4].parse().ok()?))
}

/// A big-endian metric-db: `HPCPROF-metricdb__` + version + endianness (24 bytes), u32
/// node count, u32 metric count, then f64 values [node][metric] for nodes 1..=count.
fn parse_metric_db(name: &str, d: &[u8]) -> Result<(usize, usize, Vec<f64>), String> {
    let err = |off: usize, msg: &str| format!("{name}: at byte {off}: {msg}");
    if d.len() < 32 || !d.starts_with(b"HPCPROF-metricdb") {
        return Err(err(0, "not an HPCPROF-metricdb file (or truncated header)"));
    }
    if d[23] != b'b' {
        return Err(err(23, "only big-endian metric-db files are supported"));
    }
    let nodes = u32::from_be_bytes(d[24..28].try_into().unwrap()) as usize;
    let metrics = u32::from_be_bytes(d[28..32].try_into().unwrap()) as usize;
    let need = nodes
        .checked_mul(metrics)
        .and_then(|n| n.checked_mul(8))
        .and_then(|n| n.checked_add(32));
    match need {
        Some(n) if n <= d.len() => {}
        _ => {
            return Err(err(
                24,
                &format!(
                "{nodes} nodes × {metrics} metrics need more than the file's {} bytes (truncated?)",
                d.len()
            ),
            ))
        }
    }
    let values = d[32..32 + nodes * metrics * 8]
        .chunks_exact(8)
        .map(|c| f64::from_be_bytes(c.try_into().unwrap()))
        .collect();
    Ok((nodes, metrics, values))
}

/// Hatchet's statement rule: a statement's exclusive cost is subtracted from its XML
/// parent's (procedure frames and loops then keep only what no statement holds).
fn subtract_statements(vals: &mut HashMap<u32, f64>, statements: &[(u32, u32)]) {
    for &(s, p) in statements {
        if let Some(&v) = vals.get(&s) {
            if let Some(pv) = vals.get_mut(&p) {
                *pv -= v;
            }
        }
    }
}

fn read_old(dir: &Path) -> Result<Vec<Profile>, String> {
    let xml = read_file(&dir.join("experiment.xml"), "experiment.xml")?;
    let t = parse_experiment(&xml)?;
    let mut dbs: Vec<(Option<(u32, u32)>, String)> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".metric-db"))
        .map(|n| (rank_thread(&n), n))
        .collect();
    dbs.sort();
    let threads = dbs.iter().any(|(rt, _)| rt.is_some_and(|(_, t)| t != 0));
    let rows = t.cct.len();
    let dialect = format!("HPCToolkit experiment.xml {} (+ metric-db)", t.version);
    let mut size = dir_size(dir, &["experiment.xml"]);
    let mut out = Vec::new();
    let base_meta = |label: &str| {
        vec![
            ("database".to_string(), dir.display().to_string()),
            ("profile".to_string(), label.to_string()),
            ("title".to_string(), t.title.clone()),
        ]
    };
    let pick = |names: &[(String, bool)]| -> String {
        let exc: Vec<&String> = names
            .iter()
            .filter(|(_, inc)| !inc)
            .map(|(n, _)| n)
            .collect();
        exc.iter()
            .find(|n| {
                let u = n.to_ascii_uppercase();
                u.starts_with("CPUTIME") || u.starts_with("REALTIME")
            })
            .or(exc.first())
            .map(|s| s.to_string())
            .or_else(|| names.first().map(|n| n.0.clone()))
            .unwrap_or_default()
    };
    let to_column = |vals: &HashMap<u32, f64>| -> Vec<f64> {
        let mut col = vec![f64::NAN; rows];
        for (nid, v) in vals {
            if let Some(&n) = t.node_of.get(nid) {
                col[n as usize] = *v;
            }
        }
        col
    };

    // The summary: the values in experiment.xml (summed over ranks by hpcprof-mpi).
    if !t.values.is_empty() {
        let mut metrics = MetricTable::new(rows);
        let mut names = Vec::new();
        for (mi, m) in t.summary_metrics.iter().enumerate() {
            let mut vals: HashMap<u32, f64> = HashMap::new();
            for &(nid, k, v) in &t.values {
                if k == mi {
                    vals.insert(nid, v);
                }
            }
            if vals.is_empty() {
                continue;
            }
            if m.exclusive() {
                subtract_statements(&mut vals, &t.statements);
            }
            let name = m.column();
            // A coefficient of variation has no unit.
            let unit = if name.contains(":cfvar") {
                ""
            } else {
                unit_of(&name)
            };
            metrics.set(&name, unit, to_column(&vals));
            names.push((name, m.inclusive()));
        }
        let mut meta = base_meta("summary");
        for (m, v) in &t.totals {
            meta.push((
                format!("total {}", t.summary_metrics[*m].column()),
                v.to_string(),
            ));
        }
        out.push(Profile {
            source: Source {
                path: None,
                format: Format::HpcToolkit,
                size: 0,
                gzip: false,
                label: "summary".into(),
            },
            dialect: dialect.clone(),
            cct: t.cct.clone(),
            metrics,
            events: None,
            counters: None,
            meta,
            warnings: t.warnings.clone(),
            default_metric: pick(&names),
        });
    }

    for (rt, file) in &dbs {
        let data = read_file(&dir.join(file), file)?;
        size += data.len() as u64;
        let (nodes, nmetrics, values) = parse_metric_db(file, &data)?;
        let label = match rt {
            Some((r, th)) if threads => format!("rank {r} thread {th}"),
            Some((r, _)) => format!("rank {r}"),
            None => file.trim_end_matches(".metric-db").to_string(),
        };
        let mut metrics = MetricTable::new(rows);
        let mut names = Vec::new();
        let mut warnings = Vec::new();
        for m in &t.db_metrics {
            let Some(k) = m.db_id.filter(|&k| k < nmetrics) else {
                warnings.push(format!("{file}: metric {} is not in the file", m.name));
                continue;
            };
            let mut vals: HashMap<u32, f64> = HashMap::with_capacity(t.node_of.len());
            for &nid in t.node_of.keys() {
                if nid >= 1 && (nid as usize) <= nodes {
                    vals.insert(nid, values[(nid as usize - 1) * nmetrics + k]);
                }
            }
            if m.exclusive() {
                subtract_statements(&mut vals, &t.statements);
            }
            let name = m.column();
            metrics.set(&name, unit_of(&name), to_column(&vals));
            names.push((name, m.inclusive()));
        }
        if t.node_of.keys().any(|&nid| nid as usize > nodes) {
            warnings.push(format!(
                "{file}: holds {nodes} nodes, fewer than experiment.xml"
            ));
        }
        let mut meta = base_meta(&label);
        meta.push(("metric-db".into(), file.clone()));
        out.push(Profile {
            source: Source {
                path: None,
                format: Format::HpcToolkit,
                size: 0,
                gzip: false,
                label,
            },
            dialect: dialect.clone(),
            cct: t.cct.clone(),
            metrics,
            events: None,
            counters: None,
            meta,
            warnings,
            default_metric: pick(&names),
        });
    }
    if out.is_empty() {
        // A tree without values still shows the structure.
        out.push(Profile {
            source: Source {
                path: None,
                format: Format::HpcToolkit,
                size: 0,
                gzip: false,
                label: "summary".into(),
            },
            dialect,
            cct: t.cct.clone(),
            metrics: MetricTable::new(rows),
            events: None,
            counters: None,
            meta: base_meta("summary"),
            warnings: vec![
                "experiment.xml has no metric values and there are no *.metric-db files".into(),
            ],
            default_metric: String::new(),
        });
    }
    out[0].source.size = size;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const V4: &[&str] = &[
        "hpctoolkit/tests/data/dbase/small.d",
        "hpctoolkit/tests/data/dbase/small.nostruct.d",
        "hpctoolkit/tests/data/dbase/loops-cputime-t.d",
        "hpctoolkit/tests/data/dbase/loops-cputime-t.nostruct.d",
        "hpctoolkit/tests/data/dbase/loops-perf.d",
        "hpctoolkit/tests/data/dbase/loops-perf.nostruct.d",
        "hpctoolkit/tests/data/dbase/loops-cuda-nvidia-t.d",
        "hpctoolkit/tests/data/dbase/loops-cuda-nvidia-t.nostruct.d",
        "hpctoolkit/tests/data/dbase/loops-cuda-nvidiapc-t.d",
        "hpctoolkit/tests/data/dbase/loops-cuda-nvidiapc-t.nostruct.d",
        "hpctoolkit/tests/data/dbase/loops-hip-amd-t.d",
        "hpctoolkit/tests/data/dbase/loops-hip-amd-t.nostruct.d",
        "hpctoolkit/tests/data/dbase/recursion-cuda-nvidiapc-t.d",
        "hpctoolkit/tests/data/dbase/recursion-cuda-nvidiapc-t.nostruct.d",
        "pipit/pipit/tests/data/ping-pong-hpctoolkit",
    ];
    const OLD: &[&str] = &[
        "hatchet/hatchet/tests/data/hpctoolkit-cpi-database",
        "hatchet/hatchet/tests/data/hpctoolkit-allgather-database",
    ];

    fn corpus() -> Option<PathBuf> {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
        if p.is_dir() {
            Some(p)
        } else {
            eprintln!("skipped: the shared corpus {} is missing", p.display());
            None
        }
    }

    fn golden(name: &str) -> Value {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/hpctoolkit")
            .join(name);
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_str(&text).unwrap()
    }

    fn load(dir: &Path) -> Vec<Profile> {
        read(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
    }

    fn num(v: &Value) -> f64 {
        v.as_f64().unwrap_or(f64::NAN)
    }

    fn same(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
    }

    fn temp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("grove-hpctoolkit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn copy_dir(from: &Path, to: &Path) {
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }

    #[test]
    fn every_database_loads() {
        let Some(c) = corpus() else { return };
        for rel in V4.iter().chain(OLD) {
            let dir = c.join(rel);
            assert!(sniff(&dir, &[]), "{rel}: not sniffed");
            let ps = load(&dir);
            let p0 = &ps[0];
            assert_eq!(p0.source.label, "summary", "{rel}");
            assert!(p0.source.size > 0);
            let mut labels: Vec<&str> = ps.iter().map(|p| p.source.label.as_str()).collect();
            for p in &ps {
                assert!(p.cct.check(), "{rel}");
                assert_eq!(p.cct.len(), p0.cct.len());
                assert_eq!(p.metrics.rows(), p.cct.len(), "{rel}");
                assert_eq!(p.source.format, Format::HpcToolkit);
                assert!(!p.default_metric.is_empty(), "{rel} {}", p.source.label);
                assert!(
                    p.metrics.has(&p.default_metric),
                    "{rel}: {}",
                    p.default_metric
                );
                assert!(!p.source.label.contains('@'));
            }
            // Every node knows its context id.
            assert_eq!(ctx_nodes(&p0.cct).len(), p0.cct.len(), "{rel}");
            labels.sort();
            labels.dedup();
            assert_eq!(labels.len(), ps.len(), "{rel}: labels are not unique");
            eprintln!(
                "{rel}: {} profiles ({}), {} nodes, default {:?}, {} columns in the summary",
                ps.len(),
                ps.iter()
                    .map(|p| p.source.label.as_str())
                    .take(6)
                    .collect::<Vec<_>>()
                    .join(", "),
                p0.cct.len(),
                p0.default_metric,
                p0.metrics.names().len()
            );
        }
        let not_db = temp("not-a-db");
        assert!(!sniff(&not_db, &[]));
        assert!(read(&not_db).is_err());
        assert!(!sniff(&c.join(V4[0]).join("meta.db"), &[]));
        // The member files name their database too.
        assert_eq!(load(&c.join(V4[0]).join("meta.db")).len(), 2);
    }

    /// Column names for the metric ids of a YAML golden: (prop ids, stat ids).
    fn yaml_columns(g: &Value) -> (HashMap<u64, String>, HashMap<u64, String>) {
        let mut prop = HashMap::new();
        let mut stat = HashMap::new();
        for m in g["metrics"].as_array().unwrap() {
            let name = m["name"].as_str().unwrap();
            let col = |scope: &str| match scope {
                "execution" => Some(format!("{name} (inc)")),
                "function" => Some(name.to_string()),
                _ => None,
            };
            for s in m["scopes"].as_array().unwrap() {
                if let Some(c) = col(s[0].as_str().unwrap()) {
                    prop.insert(s[1].as_u64().unwrap(), c);
                }
            }
            for s in m["summaries"].as_array().unwrap() {
                assert_eq!(s[1], "$$");
                assert_eq!(s[2], "sum");
                if let Some(c) = col(s[0].as_str().unwrap()) {
                    stat.insert(s[3].as_u64().unwrap(), c);
                }
            }
        }
        (prop, stat)
    }

    fn check_yaml(rel: &str, golden_name: &str) {
        let Some(c) = corpus() else { return };
        let dir = c.join(rel);
        let g = golden(golden_name);
        let ps = load(&dir);
        let p0 = &ps[0];
        let contexts = g["contexts"].as_array().unwrap();
        assert_eq!(p0.cct.len(), contexts.len(), "context count");
        let nodes = ctx_nodes(&p0.cct);
        for ctx in contexts {
            let id = ctx["ctx_id"].as_u64().unwrap() as u32;
            let n = nodes[&id];
            let parent = ctx["parent"].as_u64().map(|p| nodes[&(p as u32)]);
            assert_eq!(p0.cct.parent(n), parent, "parent of ctx {id}");
            let f = p0.cct.frame(n);
            let file = ctx["file"].as_str();
            let line = ctx["line"].as_u64();
            let module = ctx["module"].as_str();
            let kind = ctx["lexical_type"].as_str().unwrap();
            let name = match kind {
                "entry" => ctx["pretty_name"].as_str().unwrap().to_string(),
                "function" => ctx["function"].as_str().unwrap().to_string(),
                "loop" => format!("loop at {}:{}", basename(file.unwrap()), line.unwrap()),
                "line" => format!("{}:{}", basename(file.unwrap()), line.unwrap()),
                "instruction" => format!(
                    "{}+0x{:x}",
                    basename(module.unwrap()),
                    ctx["offset"].as_u64().unwrap()
                ),
                k => panic!("unexpected lexical type {k}"),
            };
            assert_eq!(&*f.name, name, "ctx {id}");
            assert_eq!(&*f.kind, kind, "ctx {id}");
            if matches!(kind, "loop" | "line") {
                assert_eq!(f.attr("file"), file);
                assert_eq!(f.attr("line"), Some(line.unwrap().to_string().as_str()));
            }
            if let Some(m) = module {
                assert_eq!(f.attr("module"), Some(m), "ctx {id}");
                let off = format!("0x{:x}", ctx["offset"].as_u64().unwrap());
                assert_eq!(f.attr("offset"), Some(off.as_str()));
            }
            assert_eq!(
                f.attr("inlined").is_some(),
                ctx["relation"] == "inlined_call"
            );
        }

        // Values of every profile, both ways: present where the dump has them, NaN elsewhere.
        let (prop, stat) = yaml_columns(&g);
        let profiles = g["profiles"].as_array().unwrap();
        assert_eq!(ps.len(), profiles.len());
        let mut checked = 0;
        for (pi, gp) in profiles.iter().enumerate() {
            let p = &ps[pi];
            let summary = gp["is_summary"].as_bool().unwrap();
            assert_eq!(p.source.label, if pi == 0 { "summary" } else { "thread 0" });
            let ids = if summary { &stat } else { &prop };
            let mut expected: HashMap<(u32, &str), f64> = HashMap::new();
            for (ctx, mv) in gp["values"].as_object().unwrap() {
                let ctx: u32 = ctx.parse().unwrap();
                let Some(&n) = nodes.get(&ctx) else { continue };
                for (m, v) in mv.as_object().unwrap() {
                    if let Some(col) = ids.get(&m.parse::<u64>().unwrap()) {
                        expected.insert((n, col.as_str()), num(v));
                    }
                }
            }
            for col in ids.values() {
                for n in 0..p.cct.len() as u32 {
                    let want = expected
                        .get(&(n, col.as_str()))
                        .copied()
                        .unwrap_or(f64::NAN);
                    let got = p.metrics.get(col, n);
                    assert!(
                        same(got, want),
                        "profile {pi} node {n} {col}: {got} vs {want}"
                    );
                    checked += 1;
                }
            }
            let total = gp["values"]["0"]
                .as_object()
                .and_then(|m| {
                    m.iter().find(|(k, _)| {
                        ids.get(&k.parse::<u64>().unwrap())
                            .is_some_and(|c| c.ends_with("(inc)"))
                    })
                })
                .map(|(_, v)| num(v));
            if let Some(t) = total {
                let key = format!("total {}", g["metrics"][0]["name"].as_str().unwrap());
                let got: f64 = p
                    .meta_value(&format!("{key} (inc)"))
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(same(got, t));
            }
        }
        assert!(checked > 20);

        // trace.db
        let traces = read_traces(&dir).unwrap();
        let gt = g["traces"].as_array().unwrap();
        assert_eq!(traces.len(), gt.len());
        for ((prof, line), t) in traces.iter().zip(gt) {
            assert_eq!(*prof as u64, t["prof_index"].as_u64().unwrap());
            let want: Vec<(u64, u32)> = t["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| (s[0].as_u64().unwrap(), s[1].as_u64().unwrap() as u32))
                .collect();
            assert_eq!(line, &want);
        }
        let tr = parse_traces(&std::fs::read(dir.join("trace.db")).unwrap()).unwrap();
        let r = &g["timestamp_range"];
        assert_eq!(tr.range, (r[0].as_u64().unwrap(), r[1].as_u64().unwrap()));
    }

    #[test]
    fn small_matches_the_yaml_dump() {
        check_yaml("hpctoolkit/tests/data/dbase/small.d", "small.yaml.json");
        let Some(c) = corpus() else { return };
        // A few values by hand (small.yaml): caller's inclusive time, spinsleep's exclusive.
        let ps = load(&c.join("hpctoolkit/tests/data/dbase/small.d"));
        let p = &ps[1];
        let nodes = ctx_nodes(&p.cct);
        assert_eq!(p.default_metric, "CPUTIME (sec)");
        assert_eq!(p.metrics.unit("CPUTIME (sec)"), "s");
        assert_eq!(p.metrics.get("CPUTIME (sec) (inc)", nodes[&22]), 0.605316);
        assert_eq!(p.cct.name(nodes[&22]), "caller");
        assert_eq!(p.metrics.get("CPUTIME (sec)", nodes[&10]), 0.604943);
        assert!(p.metrics.get("CPUTIME (sec)", nodes[&4]).is_nan());
        assert_eq!(p.cct.name(nodes[&16]), "loop at small.c:3");
        assert_eq!(p.cct.name(nodes[&15]), "small.c:11");
        assert_eq!(p.cct.name(nodes[&1]), "main thread");
        assert_eq!(
            p.meta_value("id tuple"),
            Some("NODE 0 [0x11ac0300] / CORE 0 / THREAD 0")
        );
    }

    #[test]
    fn small_nostruct_matches_the_yaml_dump() {
        check_yaml(
            "hpctoolkit/tests/data/dbase/small.nostruct.d",
            "small.nostruct.yaml.json",
        );
    }

    /// Hatchet trims function names (`GOMP_parallel [libgomp.so]` -> `GOMP_parallel`).
    fn hatchet_function_name(name: &str) -> String {
        let mut name = name.to_string();
        let b = name.as_bytes();
        let mpi = name
            .strip_prefix("PMPI_")
            .or_else(|| name.strip_prefix("MPI_"));
        if let Some(rest) = mpi {
            if !rest.is_empty() {
                let keep = b.len() - rest.len()
                    + rest
                        .bytes()
                        .take_while(|c| c.is_ascii_alphabetic() || *c == b'_')
                        .count();
                name.truncate(keep);
            }
        }
        for item in [" [", ".", "@", "(", "<"] {
            if let Some(i) = name.find(item) {
                if i > 0 {
                    name.truncate(i);
                }
            }
        }
        name
    }

    fn hatchet_path(p: &str) -> &str {
        p.strip_prefix("src").unwrap_or(p)
    }

    #[test]
    fn v4_matches_hatchet() {
        let Some(c) = corpus() else { return };
        let mut compared = 0;
        for rel in V4 {
            let stem = basename(rel).trim_end_matches(".d");
            let g = golden(&format!("hatchet-{stem}.json"));
            if let Some(e) = g["error"].as_str() {
                // Hatchet 2026.2 reads only databases with a CPUTIME/REALTIME/cycles metric.
                eprintln!("{rel}: Hatchet could not read it ({e})");
                continue;
            }
            let ps = load(&c.join(rel));
            let p = &ps[0];
            let nodes = ctx_nodes(&p.cct);
            let time = p
                .metrics
                .names()
                .into_iter()
                .find(|n| {
                    let b = n.split('(').next().unwrap().trim().to_ascii_lowercase();
                    matches!(b.as_str(), "cputime" | "realtime" | "cycles")
                })
                .unwrap();
            let inc = inclusive_name(&time);
            // Hatchet keeps the first main-thread entry point only.
            let entry = p
                .cct
                .root_ids()
                .into_iter()
                .find(|&r| &*p.cct.frame(r).name == "main thread")
                .unwrap();
            let mut count = 0;
            let mut stack = vec![entry];
            while let Some(n) = stack.pop() {
                count += 1;
                stack.extend(p.cct.children(n));
            }
            assert_eq!(
                count as u64,
                g["node_count"].as_u64().unwrap(),
                "{rel}: node count"
            );
            for hn in g["nodes"].as_array().unwrap() {
                let nid = hn["nid"].as_u64().unwrap() as u32;
                let n = nodes[&nid];
                let f = p.cct.frame(n);
                let kind = hn["type"].as_str().unwrap();
                assert_eq!(&*f.kind, kind, "{rel} ctx {nid}");
                assert_eq!(p.cct.depth(n) as u64, hn["depth"].as_u64().unwrap());
                let hname = hn["name"].as_str().unwrap();
                let file = f.attr("file").map(hatchet_path).unwrap_or("");
                let line = f.attr("line").unwrap_or("");
                let want = match kind {
                    "entry" => "entry".to_string(),
                    "function" => format!("function: {}", hatchet_function_name(&f.name)),
                    "loop" | "line" => format!("{kind} {file}:{line}"),
                    "instruction" => {
                        let off = u64::from_str_radix(
                            f.attr("offset").unwrap().trim_start_matches("0x"),
                            16,
                        )
                        .unwrap();
                        format!("{}:{off}", f.attr("module").unwrap())
                    }
                    k => panic!("{k}"),
                };
                assert_eq!(hname, want, "{rel} ctx {nid}");
                let (t, ti) = (p.metrics.get(&time, n), p.metrics.get(&inc, n));
                assert!(
                    same(t, num(&hn["time"])),
                    "{rel} ctx {nid} time {t} vs {}",
                    hn["time"]
                );
                assert!(
                    same(ti, num(&hn["time (inc)"])),
                    "{rel} ctx {nid} time (inc) {ti} vs {}",
                    hn["time (inc)"]
                );
                compared += 1;
            }
        }
        assert!(compared > 250, "{compared}");
    }

    /// Splits one CSV line (double quotes, no embedded newlines).
    fn csv_fields(line: &str) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut quoted = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    out.last_mut().unwrap().push('"');
                }
                '"' => quoted = !quoted,
                ',' if !quoted => out.push(String::new()),
                c => out.last_mut().unwrap().push(c),
            }
        }
        out
    }

    /// Compares a node name with Hatchet's. Hatchet names a statement after the file of
    /// the procedure frame or loop it saw last in the XML, not the one enclosing it; such
    /// names differ in the file only, and their nids go to `quirks`.
    fn check_old_name(ours: &str, hatchet: &str, kind: &str, nid: u32, quirks: &mut Vec<u32>) {
        let hatchet = strip_call_line(hatchet);
        let hatchet = match hatchet.strip_prefix("Loop@") {
            Some(rest) => format!("loop at {rest}"),
            None => hatchet.to_string(),
        };
        if ours == hatchet {
            return;
        }
        assert_eq!(kind, "line", "nid {nid}: {ours:?} vs {hatchet:?}");
        assert_eq!(
            ours.rsplit(':').next(),
            hatchet.rsplit(':').next(),
            "nid {nid}"
        );
        quirks.push(nid);
    }

    /// Hatchet names a procedure called from line L `L:name`.
    fn strip_call_line(name: &str) -> &str {
        match name.split_once(':') {
            Some((l, rest)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => rest,
            _ => name,
        }
    }

    #[test]
    fn old_cpi_matches_hatchet_csv() {
        let Some(c) = corpus() else { return };
        let ps = load(&c.join(OLD[0]));
        let labels: Vec<&str> = ps.iter().map(|p| p.source.label.as_str()).collect();
        assert_eq!(labels, ["summary", "rank 0", "rank 1", "rank 2", "rank 3"]);
        let text = std::fs::read_to_string(
            c.join("hatchet/hatchet/tests/data/hpctoolkit-cpi-graphframe.csv"),
        )
        .unwrap();
        let mut lines = text.lines();
        let head = csv_fields(lines.next().unwrap());
        let col = |n: &str| head.iter().position(|h| h == n).unwrap();
        let (rank, inc, exc, nid, name, ty) = (
            col("rank"),
            col("time (inc)"),
            col("time"),
            col("nid"),
            col("name"),
            col("type"),
        );
        let mut nids = std::collections::BTreeSet::new();
        let mut quirks = Vec::new();
        let mut rows = 0;
        for l in lines {
            let f = csv_fields(l);
            let r: usize = f[rank].parse().unwrap();
            let p = &ps[1 + r];
            let nodes = ctx_nodes(&p.cct);
            let id: u32 = f[nid].parse().unwrap();
            nids.insert(id);
            let n = nodes[&id];
            let kind = match f[ty].as_str() {
                "PF" => "function",
                "S" => "line",
                "L" => "loop",
                t => panic!("{t}"),
            };
            assert_eq!(&*p.cct.frame(n).kind, kind);
            check_old_name(p.cct.name(n), &f[name], kind, id, &mut quirks);
            let (want_inc, want_exc): (f64, f64) =
                (f[inc].parse().unwrap(), f[exc].parse().unwrap());
            assert_eq!(
                p.metrics.get("CPUTIME (usec) (inc)", n),
                want_inc,
                "rank {r} nid {id}"
            );
            assert_eq!(
                p.metrics.get("CPUTIME (usec)", n),
                want_exc,
                "rank {r} nid {id}"
            );
            rows += 1;
        }
        assert_eq!(rows, 136);
        // Statement 60 sits in an <unknown procedure> of <unknown file>; Hatchet calls it
        // interp.c:0 after the frame it read just before.
        assert_eq!(quirks, [60, 60, 60, 60]);
        assert_eq!(nids.len(), 34);
        assert_eq!(ps[1].cct.len(), 34);
        assert_eq!(ps[1].default_metric, "CPUTIME (usec)");
        assert_eq!(ps[1].metrics.unit("CPUTIME (usec)"), "us");
        assert_eq!(ps[1].metrics.unit("CPUTIME (usec) (inc)"), "us");
        assert_eq!(ps[0].metrics.unit("CPUTIME (usec) (inc)"), "us");
        // The summary (experiment.xml's values) is the sum over the four ranks.
        let s = &ps[0];
        for n in 0..s.cct.len() as u32 {
            let sum: f64 = ps[1..]
                .iter()
                .map(|p| p.metrics.get("CPUTIME (usec) (inc)", n))
                .sum();
            let got = s.metrics.get("CPUTIME (usec) (inc)", n);
            if sum == 0.0 {
                assert!(got.is_nan() || got == 0.0);
            } else {
                assert!((got - sum).abs() <= 1e-5 * sum, "node {n}: {got} vs {sum}");
            }
        }
    }

    #[test]
    fn old_databases_match_hatchet() {
        let Some(c) = corpus() else { return };
        for rel in OLD {
            let g = golden(&format!("hatchet-{}.json", basename(rel)));
            let ps = load(&c.join(rel));
            let want_label = g["profile"].as_str().unwrap();
            let p = ps.iter().find(|p| p.source.label == want_label).unwrap();
            assert_eq!(
                p.cct.len() as u64,
                g["node_count"].as_u64().unwrap(),
                "{rel}"
            );
            let nodes = ctx_nodes(&p.cct);
            let mut quirks = Vec::new();
            for hn in g["nodes"].as_array().unwrap() {
                let id = hn["nid"].as_u64().unwrap() as u32;
                let n = nodes[&id];
                let kind = match hn["type"].as_str().unwrap() {
                    "PF" | "Pr" => "function",
                    "L" => "loop",
                    _ => "line",
                };
                assert_eq!(&*p.cct.frame(n).kind, kind, "{rel} nid {id}");
                let hname = hn["name"].as_str().unwrap();
                check_old_name(p.cct.name(n), hname, kind, id, &mut quirks);
                assert_eq!(
                    p.cct.depth(n) as u64,
                    hn["depth"].as_u64().unwrap(),
                    "{rel} nid {id}"
                );
                let inc = p.metrics.get(&format!("{} (inc)", p.default_metric), n);
                let exc = p.metrics.get(&p.default_metric, n);
                assert!(
                    same(inc, num(&hn["time (inc)"])),
                    "{rel} nid {id}: {inc} vs {}",
                    hn["time (inc)"]
                );
                assert!(
                    same(exc, num(&hn["time"])),
                    "{rel} nid {id}: {exc} vs {}",
                    hn["time"]
                );
            }
            eprintln!("{rel}: statements Hatchet names after another file: {quirks:?}");
            if rel == &OLD[0] {
                assert_eq!(quirks, [60]);
            }
        }
        let ps = load(&c.join(OLD[1]));
        assert_eq!(ps.len(), 21);
        assert_eq!(ps[2].source.label, "rank 0 thread 1");
    }

    /// cct.db holds the same tensor as profile.db, context-major: a check of both parsers.
    fn cct_db_values(d: &[u8]) -> Result<HashMap<(u32, u16, u32), f64>, String> {
        let b = Bytes { name: "cct.db", d };
        let (_, s) = header(&b, b"ctxt", b"__ctx.db", &["CtxInfos"])?;
        let p_ctxs = b.u64(s[0].p)?;
        let n_ctxs = b.u32(s[0].p + 8)? as u64;
        let sz_ctx = b.u8(s[0].p + 0x0c)? as u64;
        b.check_array(p_ctxs, n_ctxs, sz_ctx, s[0].p, s[0].end(), "contexts")?;
        let mut out = HashMap::new();
        for ctx in 0..n_ctxs {
            let at = p_ctxs + ctx * sz_ctx;
            let n_values = b.u64(at)?;
            let p_values = b.u64(at + 8)?;
            let n_metrics = b.u16(at + 0x10)? as u64;
            let p_idx = b.u64(at + 0x18)?;
            for k in 0..n_metrics {
                let metric = b.u16(p_idx + 10 * k)?;
                let start = b.u64(p_idx + 10 * k + 2)?;
                let end = if k + 1 < n_metrics {
                    b.u64(p_idx + 10 * (k + 1) + 2)?
                } else {
                    n_values
                };
                for v in start..end {
                    let prof = b.u32(p_values + 12 * v)?;
                    out.insert((ctx as u32, metric, prof), b.f64(p_values + 12 * v + 4)?);
                }
            }
        }
        Ok(out)
    }

    #[test]
    fn profile_db_agrees_with_cct_db() {
        let Some(c) = corpus() else { return };
        for rel in V4 {
            let dir = c.join(rel);
            let prof = std::fs::read(dir.join("profile.db")).unwrap();
            let db = parse_profile_db(&prof).unwrap();
            let mut from_prof = HashMap::new();
            for (i, p) in db.profiles.iter().enumerate() {
                if p.is_summary {
                    continue;
                }
                db.values(i, |ctx, m, v| {
                    from_prof.insert((ctx, m, i as u32), v);
                })
                .unwrap();
            }
            let from_cct = cct_db_values(&std::fs::read(dir.join("cct.db")).unwrap()).unwrap();
            assert_eq!(from_prof.len(), from_cct.len(), "{rel}");
            assert_eq!(from_prof, from_cct, "{rel}");
        }
    }

    #[test]
    fn traces_load() {
        let Some(c) = corpus() else { return };
        for rel in V4 {
            let dir = c.join(rel);
            let ps = load(&dir);
            let nodes = ctx_nodes(&ps[0].cct);
            let traces = read_traces(&dir).unwrap();
            assert_eq!(traces.is_empty(), !dir.join("trace.db").exists(), "{rel}");
            for (prof, line) in &traces {
                assert!(*prof > 0 && *prof < ps.len(), "{rel}: profile {prof}");
                assert!(line.windows(2).all(|w| w[0].0 <= w[1].0), "{rel}: unsorted");
                for (_, ctx) in line {
                    assert!(*ctx == 0 || nodes.contains_key(ctx), "{rel}: ctx {ctx}");
                }
            }
        }
        let pp = read_traces(&c.join("pipit/pipit/tests/data/ping-pong-hpctoolkit")).unwrap();
        assert!(!pp.is_empty());
        assert!(read_traces(&c.join(OLD[0])).unwrap().is_empty());
    }

    #[test]
    fn truncated_or_corrupt_v4_files_are_errors() {
        let Some(c) = corpus() else { return };
        for rel in [V4[0], V4[1]] {
            let dir = c.join(rel);
            let meta = std::fs::read(dir.join("meta.db")).unwrap();
            let prof = std::fs::read(dir.join("profile.db")).unwrap();
            assert!(parse_v4(&meta, &prof).is_ok());
            // Every truncation loses the footer at least.
            for cut in 0..meta.len() {
                let e = parse_v4(&meta[..cut], &prof).expect_err("truncated meta.db");
                assert!(e.starts_with("meta.db: at byte "), "{e}");
            }
            for cut in 0..prof.len() {
                let e = parse_v4(&meta, &prof[..cut]).expect_err("truncated profile.db");
                assert!(e.starts_with("profile.db: at byte "), "{e}");
            }
            // Any corrupted byte: an error or a tree, never a panic.
            for (i, v) in (0..meta.len()).flat_map(|i| [(i, 0xffu8), (i, 0x00)]) {
                let mut m = meta.clone();
                m[i] = v;
                let _ = parse_v4(&m, &prof);
            }
            for (i, v) in (0..prof.len()).flat_map(|i| [(i, 0xffu8), (i, 0x00)]) {
                let mut p = prof.clone();
                p[i] = v;
                let _ = parse_v4(&meta, &p);
            }
            let trace = std::fs::read(dir.join("trace.db")).unwrap();
            for cut in 0..trace.len() {
                assert!(parse_traces(&trace[..cut]).is_err());
            }
            for i in 0..trace.len() {
                let mut t = trace.clone();
                t[i] ^= 0xff;
                let _ = parse_traces(&t);
            }
        }
        // Larger databases: a sample of offsets.
        let dir = c.join("hpctoolkit/tests/data/dbase/recursion-cuda-nvidiapc-t.d");
        let meta = std::fs::read(dir.join("meta.db")).unwrap();
        let prof = std::fs::read(dir.join("profile.db")).unwrap();
        for i in (0..meta.len()).step_by(61) {
            let mut m = meta.clone();
            m[i] ^= 0xff;
            let _ = parse_v4(&m, &prof);
        }
        for i in (0..prof.len()).step_by(53) {
            let mut p = prof.clone();
            p[i] ^= 0xff;
            let _ = parse_v4(&meta, &p);
        }
        // The same through the files.
        let tmp = temp("v4");
        copy_dir(&c.join(V4[0]), &tmp);
        let full = std::fs::read(tmp.join("profile.db")).unwrap();
        std::fs::write(tmp.join("profile.db"), &full[..full.len() / 2]).unwrap();
        let e = read(&tmp).unwrap_err();
        assert!(e.starts_with("profile.db: at byte "), "{e}");
        std::fs::remove_file(tmp.join("profile.db")).unwrap();
        assert!(read(&tmp)
            .unwrap_err()
            .starts_with("profile.db: cannot read"));
        std::fs::write(tmp.join("profile.db"), &full).unwrap();
        assert_eq!(read(&tmp).unwrap().len(), 2);
        let m = std::fs::read(tmp.join("meta.db")).unwrap();
        std::fs::write(tmp.join("meta.db"), &m[..100]).unwrap();
        assert!(read(&tmp).unwrap_err().starts_with("meta.db: at byte "));
        assert!(read_traces(&tmp).unwrap_err().starts_with("meta.db: "));
        std::fs::write(tmp.join("meta.db"), &m).unwrap();
        assert_eq!(read_traces(&tmp).unwrap().len(), 1);
        let t = std::fs::read(tmp.join("trace.db")).unwrap();
        std::fs::write(tmp.join("trace.db"), &t[..t.len() - 3]).unwrap();
        assert!(read_traces(&tmp).unwrap_err().starts_with("trace.db: "));
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn truncated_or_corrupt_old_files_are_errors() {
        let Some(c) = corpus() else { return };
        let dir = c.join(OLD[0]);
        let xml = std::fs::read(dir.join("experiment.xml")).unwrap();
        assert!(parse_experiment(&xml).is_ok());
        // Cutting inside the element tree leaves elements open.
        let root = xml
            .windows(21)
            .position(|w| w == b"<HPCToolkitExperiment")
            .unwrap();
        for cut in (root..xml.len() - 2).step_by(7) {
            let e = parse_experiment(&xml[..cut])
                .err()
                .expect("truncated experiment.xml");
            assert!(e.starts_with("experiment.xml: line "), "{e}");
        }
        for i in (0..xml.len()).step_by(5) {
            let mut x = xml.clone();
            x[i] = b'<';
            let _ = parse_experiment(&x);
            x[i] = b'"';
            let _ = parse_experiment(&x);
        }
        let e =
            parse_experiment(b"<HPCToolkitExperiment version=\"2.0\">\n<Header n=\"x\">\n</Foo>")
                .err()
                .unwrap();
        assert_eq!(e, "experiment.xml: line 3: </Foo> closes <Header>");

        let tmp = temp("old");
        copy_dir(&dir, &tmp);
        let name = "1.cpi-000002-000-a8c00270-160445-0.metric-db";
        let db = std::fs::read(tmp.join(name)).unwrap();
        for cut in [0, 10, 31, 40, db.len() - 1] {
            std::fs::write(tmp.join(name), &db[..cut]).unwrap();
            let e = read(&tmp).unwrap_err();
            assert!(e.starts_with(&format!("{name}: at byte ")), "{e}");
        }
        std::fs::write(tmp.join(name), &db).unwrap();
        std::fs::write(tmp.join("experiment.xml"), &xml[..xml.len() / 2]).unwrap();
        assert!(read(&tmp).unwrap_err().starts_with("experiment.xml: line "));
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn databases_merge_into_an_ensemble() {
        let Some(c) = corpus() else { return };
        let dir = c.join("hpctoolkit/tests/data/dbase/loops-cputime-t.d");
        let p = crate::load::load_path(&dir).unwrap();
        let m = &p.metrics;
        for l in ["summary", "thread_0", "thread_3"] {
            assert!(m.has(&format!("CPUTIME (sec)@{l}")), "{l}: {:?}", m.names());
            assert!(m.has(&format!("CPUTIME (sec) (inc)@{l}")));
        }
        // The union merges sibling contexts of the same name and kind (a function called
        // from two call sites on one line, ...), so it can be smaller.
        let single = load(&dir);
        assert!(p.cct.len() <= single[0].cct.len());
        assert!(
            p.default_metric.starts_with("CPUTIME (sec)@"),
            "{}",
            p.default_metric
        );
    }

    #[test]
    fn xml_tokenizer() {
        let mut x = Xml::new(b"<?xml version=\"1.0\"?>\n<!DOCTYPE a [ <!ELEMENT a (b)*> <!-- ] > --> <!ATTLIST a v (x|y) \"x\"> ]>\n<a v='1 &amp; &lt;2&gt; &#65;&#x42;'><!-- c --><b/></a>");
        match x.next().unwrap() {
            Tok::Start {
                name, attrs, empty, ..
            } => {
                assert_eq!(name, "a");
                assert_eq!(attrs, [("v".to_string(), "1 & <2> AB".to_string())]);
                assert!(!empty);
            }
            t => panic!("{t:?}"),
        }
        assert!(matches!(x.next().unwrap(), Tok::Start { empty: true, .. }));
        assert!(matches!(x.next().unwrap(), Tok::End { .. }));
        assert!(matches!(x.next().unwrap(), Tok::Eof));
        assert_eq!(unescape("a &bogus; &"), "a &bogus; &");
    }

    #[test]
    fn labels_and_units() {
        let kinds: Vec<String> = [
            "SUMMARY",
            "NODE",
            "RANK",
            "THREAD",
            "GPUDEVICE",
            "GPUCONTEXT",
            "GPUSTREAM",
            "CORE",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let ids = [
            (1u8, true, 0u32, 0x11u64),
            (2, false, 3, 3),
            (3, false, 1, 1),
        ];
        assert_eq!(tuple_label(&ids, &kinds, false), "rank 3 thread 1");
        assert_eq!(tuple_label(&ids, &kinds, true), "node 0x11 rank 3 thread 1");
        let gpu = [
            (1u8, true, 0u32, 0x11u64),
            (5, false, 0, 0),
            (6, false, 2, 2),
        ];
        assert_eq!(tuple_label(&gpu, &kinds, false), "GPU context 0 stream 2");
        assert_eq!(unit_of("CPUTIME (sec)"), "s");
        assert_eq!(unit_of("GXCOPY:H2D (B)"), "B");
        assert_eq!(unit_of("GKER:COUNT"), "");
        assert_eq!(unit_of("CPUTIME (usec) (inc)"), "us");
        assert_eq!(unit_of("GSAMP:PER (cyc)"), "");
        assert_eq!(
            rank_thread("1.cpi-000003-001-a8c00270-160446-0.metric-db"),
            Some((3, 1))
        );
        let m = OldMetric {
            id: "2".into(),
            name: "CPUTIME (usec):Sum (I)".into(),
            kind: "inclusive".into(),
            db_id: None,
        };
        assert_eq!(m.column(), "CPUTIME (usec) (inc)");
        let m = OldMetric {
            id: "3".into(),
            name: "CPUTIME (usec):Max (E)".into(),
            kind: "exclusive".into(),
            db_id: None,
        };
        assert_eq!(m.column(), "CPUTIME (usec):max");
    }
}
