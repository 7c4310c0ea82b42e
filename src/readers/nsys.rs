//! Nsight Systems SQLite exports (`nsys export --type sqlite`).
//!
//! The CUPTI tables (kernels, copies, sets, runtime and driver calls), NVTX ranges and
//! OS runtime calls become the same event table a Kineto trace gives, so the CCT, the
//! kernel table, the timeline and HTA's breakdowns work unchanged: GPU rows sit on
//! pid = device, tid = stream with Kineto's args; CPU rows on the thread that
//! `globalTid` encodes. The CCT is built by `trace_cct`, as for Chrome traces.
//!
//! Tables are created lazily and drift by version (docs/formats.md §7): every table may
//! be missing, columns are selected by name (`pragma table_info`), a missing column reads
//! as NULL, and what is missing becomes a warning, never an error. Times are ns already.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Row};

use super::chrome::ChromeTrace;
use super::trace_cct;
use crate::model::events::{CounterTable, EventKind, NONE_I64};
use crate::model::{Format, Profile, Source};

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
const MEMCPY: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
const MEMSET: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
const NVTX: &str = "NVTX_EVENTS";
const OSRT: &str = "OSRT_API";

/// NVTX event types (ENUM_NSYS_EVENT_TYPE): marks, push/pop and start/end ranges, for
/// the C API and for NVTX-text (`Nvtxt*`) annotations.
const NVTX_MARK: [i64; 2] = [34, 65];
const NVTX_PUSH_POP: [i64; 2] = [59, 70];
const NVTX_START_END: [i64; 2] = [60, 71];

/// The Nsight Systems reader: SQLite exports (by the SQLite magic; it refuses
/// databases without its tables). It also claims Nsight's own `.nsys-rep`/`.qdrep`
/// reports, to answer with the command that exports one.
pub struct Nsys;

impl super::Reader for Nsys {
    fn name(&self) -> &'static str {
        "Nsight Systems SQLite exports"
    }

    fn format(&self) -> Format {
        Format::NsightSqlite
    }

    fn reads_path(&self) -> bool {
        true
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        !probe.is_dir
            && (!probe.gzip && probe.head.starts_with(SQLITE_MAGIC)
                || matches!(probe.extension(), Some("nsys-rep" | "qdrep")))
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let path = input.into_path()?;
        let mut magic = [0u8; 16];
        let sqlite = std::fs::File::open(&path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
            .is_ok()
            && magic[..] == *SQLITE_MAGIC;
        if !sqlite {
            return Err(format!(
                "Nsight Systems reports are proprietary; export one first: nsys export --type sqlite -o {} {}",
                path.with_extension("sqlite").display(),
                path.display()
            ));
        }
        read(&path)
    }
}

/// True when the file is an SQLite database with a CUPTI activity or NVTX table.
pub fn sniff(path: &Path, head: &[u8]) -> bool {
    if !head.starts_with(SQLITE_MAGIC) {
        return false;
    }
    match Db::open(path) {
        Ok(db) => db.tables.values().any(|t| is_nsys_table(t)),
        Err(_) => false,
    }
}

fn is_nsys_table(name: &str) -> bool {
    name.starts_with("CUPTI_ACTIVITY_KIND_") || name == NVTX
}

/// Reads an export into one profile. Errors are one line; the loader adds the path.
pub fn read(path: &Path) -> Result<Vec<Profile>, String> {
    let db = Db::open(path)?;
    if !db.tables.values().any(|t| is_nsys_table(t)) {
        let mut names: Vec<&str> = db.tables.values().map(|s| s.as_str()).collect();
        names.sort_unstable();
        let shown = if names.is_empty() {
            "it has no tables".to_string()
        } else if names.len() > 6 {
            format!("its tables: {}, ...", names[..6].join(", "))
        } else {
            format!("its tables: {}", names.join(", "))
        };
        return Err(format!(
            "an SQLite database, but not an Nsight Systems export: no CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table ({shown})"
        ));
    }
    let mut r = Reader::new(db);
    r.load()?;
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let label = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let source = Source {
        path: Some(path.to_path_buf()),
        format: Format::NsightSqlite,
        size,
        gzip: false,
        label,
    };
    Ok(vec![r.finish(source)])
}

/// An open export with its table names (lower case -> as written).
struct Db {
    conn: Connection,
    tables: HashMap<String, String>,
}

/// A prepared selection: the SQL and the wanted columns the table lacks.
struct Plan {
    table: String,
    sql: String,
    missing: Vec<&'static str>,
}

impl Db {
    fn open(path: &Path) -> Result<Db, String> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| format!("cannot open as an SQLite database: {e}"))?;
        let mut tables = HashMap::new();
        {
            let mut stmt = conn
                .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
                .map_err(|e| format!("cannot read the database schema: {e}"))?;
            let mut rows = stmt
                .query([])
                .map_err(|e| format!("cannot read the database schema: {e}"))?;
            while let Some(row) = rows
                .next()
                .map_err(|e| format!("cannot read the database schema: {e}"))?
            {
                if let Ok(ValueRef::Text(t)) = row.get_ref(0) {
                    let name = String::from_utf8_lossy(t).into_owned();
                    tables.insert(name.to_ascii_lowercase(), name);
                }
            }
        }
        Ok(Db { conn, tables })
    }

    fn table(&self, name: &str) -> Option<&str> {
        self.tables
            .get(&name.to_ascii_lowercase())
            .map(|s| s.as_str())
    }

    /// Selects `wanted` from `table` by name, NULL for the columns it lacks; None when
    /// the table is missing.
    fn plan(&self, table: &str, wanted: &[&'static str]) -> Result<Option<Plan>, String> {
        let Some(real) = self.table(table) else {
            return Ok(None);
        };
        let mut have = HashSet::new();
        {
            let mut stmt = self
                .conn
                .prepare("SELECT name FROM pragma_table_info(?1)")
                .map_err(|e| format!("cannot read the columns of {real}: {e}"))?;
            let mut rows = stmt
                .query([real])
                .map_err(|e| format!("cannot read the columns of {real}: {e}"))?;
            while let Some(row) = rows
                .next()
                .map_err(|e| format!("cannot read the columns of {real}: {e}"))?
            {
                if let Ok(ValueRef::Text(t)) = row.get_ref(0) {
                    have.insert(String::from_utf8_lossy(t).to_ascii_lowercase());
                }
            }
        }
        let mut missing = Vec::new();
        let list: Vec<String> = wanted
            .iter()
            .map(|&c| {
                if have.contains(&c.to_ascii_lowercase()) {
                    format!("\"{c}\"")
                } else {
                    missing.push(c);
                    "NULL".to_string()
                }
            })
            .collect();
        Ok(Some(Plan {
            table: real.to_string(),
            sql: format!(
                "SELECT {} FROM \"{}\"",
                list.join(", "),
                real.replace('"', "\"\"")
            ),
            missing,
        }))
    }

    /// Runs a plan, calling `f` on every row (columns in the order wanted).
    fn run(&self, plan: &Plan, mut f: impl FnMut(&Rec)) -> Result<(), String> {
        let err = |e: rusqlite::Error| format!("cannot read table {}: {e}", plan.table);
        let mut stmt = self.conn.prepare(&plan.sql).map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            f(&Rec { row });
        }
        Ok(())
    }

    /// A missing table gives no rows, without a warning.
    fn scan(
        &self,
        table: &str,
        wanted: &[&'static str],
        f: impl FnMut(&Rec),
    ) -> Result<bool, String> {
        match self.plan(table, wanted)? {
            Some(p) => self.run(&p, f).map(|_| true),
            None => Ok(false),
        }
    }
}

/// One row, read leniently: integers may come as reals or text, NULL is None.
struct Rec<'a, 'b> {
    row: &'a Row<'b>,
}

impl Rec<'_, '_> {
    fn int(&self, i: usize) -> Option<i64> {
        match self.row.get_ref(i).ok()? {
            ValueRef::Integer(v) => Some(v),
            ValueRef::Real(f) if f.is_finite() => Some(f as i64),
            ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
            _ => None,
        }
    }

    fn text(&self, i: usize) -> Option<String> {
        match self.row.get_ref(i).ok()? {
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Integer(v) => Some(v.to_string()),
            ValueRef::Real(f) => Some(f.to_string()),
            _ => None,
        }
    }

    /// A name column read as text: a StringIds id, or plain text.
    fn name_text(&self, i: usize, strings: &HashMap<i64, String>) -> Option<String> {
        match self.row.get_ref(i).ok()? {
            ValueRef::Integer(id) => strings.get(&id).cloned(),
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            _ => None,
        }
        .filter(|s| !s.is_empty())
    }
}

/// `globalTid`/`globalPid` -> (pid, tid).
fn decode_global(g: i64) -> (i64, i64) {
    ((g >> 24) & 0xFF_FFFF, g & 0xFF_FFFF)
}

/// Kineto's runtime names have no ABI version: `cudaLaunchKernel_v7000` ->
/// `cudaLaunchKernel` (`cudaGetDeviceProperties_v2_v12000` -> `..._v2`). Driver names
/// keep theirs (`cuGetProcAddress_v2` is the real symbol).
fn runtime_name(name: &str) -> &str {
    if !name.starts_with("cuda") {
        return name;
    }
    match name.rfind("_v") {
        Some(p) if name.len() - p - 2 >= 4 && name[p + 2..].bytes().all(|b| b.is_ascii_digit()) => {
            &name[..p]
        }
        _ => name,
    }
}

/// `CUDA_MEMCPY_KIND_HTOD` -> `HtoD`, `CUDA_MEMCPY_KIND_UVM_DTOH` -> `UVM DtoH`.
fn copy_kind_from_enum(name: &str) -> Option<String> {
    let s = name.strip_prefix("CUDA_MEMCPY_KIND_")?;
    let (uvm, s) = match s.strip_prefix("UVM_") {
        Some(r) => ("UVM ", r),
        None => ("", s),
    };
    let (a, b) = s.split_once("TO")?;
    (a.len() == 1 && b.len() == 1).then(|| format!("{uvm}{a}to{b}"))
}

/// CUPTI's memcpy kinds (ENUM_CUDA_MEMCPY_OPER has the same ids).
fn copy_kind_fallback(k: i64) -> String {
    let s = match k {
        0 => "Unknown",
        1 => "HtoD",
        2 => "DtoH",
        3 => "HtoA",
        4 => "AtoH",
        5 => "AtoA",
        6 => "AtoD",
        7 => "DtoA",
        8 => "DtoD",
        9 => "HtoH",
        10 => "PtoP",
        11 => "UVM HtoD",
        12 => "UVM DtoH",
        13 => "UVM DtoD",
        _ => return format!("kind {k}"),
    };
    s.to_string()
}

/// Nsight's memory kinds (ENUM_CUDA_MEM_KIND; not CUPTI's numbering).
fn mem_kind_fallback(k: i64) -> String {
    let s = match k {
        0 => "Pageable",
        1 => "Pinned",
        2 => "Device",
        3 => "Array",
        4 => "Managed",
        5 => "Device Static",
        6 => "Managed Static",
        7 => "Unknown",
        _ => return format!("kind {k}"),
    };
    s.to_string()
}

/// Args JSON text in Kineto's key order. Keys are literals without quotes or escapes.
struct Args(String);

impl Args {
    fn new() -> Args {
        let mut s = String::with_capacity(256);
        s.push('{');
        Args(s)
    }

    fn key(&mut self, k: &str) {
        if self.0.len() > 1 {
            self.0.push_str(", ");
        }
        self.0.push('"');
        self.0.push_str(k);
        self.0.push_str("\": ");
    }

    fn int(&mut self, k: &str, v: Option<i64>) {
        if let Some(v) = v {
            self.key(k);
            let _ = write!(self.0, "{v}");
        }
    }

    fn float(&mut self, k: &str, v: f64) {
        self.key(k);
        match serde_json::Number::from_f64(v) {
            Some(n) => {
                let _ = write!(self.0, "{n}");
            }
            None => self.0.push('0'),
        }
    }

    fn text(&mut self, k: &str, v: &str) {
        self.key(k);
        self.0
            .push_str(&serde_json::to_string(v).unwrap_or_else(|_| "\"\"".into()));
    }

    fn triple(&mut self, k: &str, v: [Option<i64>; 3]) {
        if v.iter().any(|x| x.is_some()) {
            self.key(k);
            let [a, b, c] = v.map(|x| x.unwrap_or(1));
            let _ = write!(self.0, "[{a}, {b}, {c}]");
        }
    }

    fn done(mut self) -> Box<str> {
        self.0.push('}');
        self.0.into_boxed_str()
    }
}

/// Reads the tables through `Db` into `State`; the two are apart so that row callbacks
/// can fill the event table while a statement runs.
struct Reader {
    db: Db,
    s: State,
}

/// Everything the reader builds.
#[derive(Default)]
struct State {
    tr: ChromeTrace,
    strings: HashMap<i64, String>,
    /// StringIds id -> interned name (None: unknown or empty).
    names: HashMap<i64, Option<u32>>,
    /// StringIds id -> (cleaned runtime name, category).
    runtime_names: HashMap<i64, (u32, u32)>,
    /// globalTid -> interned (pid, tid) text of a CPU lane.
    cpu_lanes: HashMap<Option<i64>, (u32, u32)>,
    /// (device, stream) -> interned (pid, tid) text of a GPU lane.
    gpu_lanes: HashMap<(Option<i64>, Option<i64>), (u32, u32)>,
    /// Decoded (pid, tid) of the CPU lanes in use.
    lanes: HashSet<(i64, i64)>,
    /// The process of each event with a correlation (runtime calls, GPU activities):
    /// CUPTI correlation ids are per process.
    corr_pid: Vec<(u32, i64)>,
    max_end: i64,
    unclosed: Vec<usize>,
    /// (table, why) -> rows dropped.
    dropped: Vec<(&'static str, &'static str, u64)>,
    cats: HashMap<&'static str, u32>,
    meta: Vec<(String, String)>,
    product: Option<String>,
    schema: Option<String>,
}

impl State {
    fn warn(&mut self, w: String) {
        self.tr.warnings.push(w);
    }

    /// Warns about the columns that matter when a table lacks them.
    fn warn_missing(&mut self, plan: &Plan, important: &[&str]) {
        let lost: Vec<&str> = plan
            .missing
            .iter()
            .copied()
            .filter(|c| important.contains(c))
            .collect();
        if !lost.is_empty() {
            self.warn(format!(
                "{} has no column {} (older or newer export schema); read as empty",
                plan.table,
                lost.join(", ")
            ));
        }
    }

    fn cat(&mut self, c: &'static str) -> u32 {
        let strings = &mut self.tr.events.strings;
        *self.cats.entry(c).or_insert_with(|| strings.intern(c))
    }

    fn intern(&mut self, s: &str) -> u32 {
        self.tr.events.strings.intern(s)
    }

    /// A name column: a StringIds id in every known schema, plain text tolerated.
    fn name(&mut self, r: &Rec, i: usize) -> Option<u32> {
        match r.row.get_ref(i).ok()? {
            ValueRef::Integer(id) => {
                if let Some(&n) = self.names.get(&id) {
                    return n;
                }
                let n = match self.strings.get(&id) {
                    Some(s) if !s.is_empty() => Some(self.tr.events.strings.intern(s)),
                    _ => None,
                };
                self.names.insert(id, n);
                n
            }
            ValueRef::Text(t) if !t.is_empty() => Some(self.tr.events.strings.intern_bytes(t)),
            _ => None,
        }
    }

    fn cpu_lane(&mut self, global_tid: Option<i64>) -> (u32, u32) {
        if let Some(&l) = self.cpu_lanes.get(&global_tid) {
            return l;
        }
        let l = match global_tid {
            Some(g) => {
                let (p, t) = decode_global(g);
                self.lanes.insert((p, t));
                (self.intern(&p.to_string()), self.intern(&t.to_string()))
            }
            None => (self.intern(""), self.intern("")),
        };
        self.cpu_lanes.insert(global_tid, l);
        l
    }

    fn gpu_lane(&mut self, device: Option<i64>, stream: Option<i64>) -> (u32, u32) {
        if let Some(&l) = self.gpu_lanes.get(&(device, stream)) {
            return l;
        }
        let text = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
        let l = (self.intern(&text(device)), self.intern(&text(stream)));
        self.gpu_lanes.insert((device, stream), l);
        l
    }

    fn drop_row(&mut self, table: &'static str, why: &'static str) {
        match self.dropped.iter_mut().find(|d| d.0 == table && d.1 == why) {
            Some(d) => d.2 += 1,
            None => self.dropped.push((table, why, 1)),
        }
    }

    /// Pushes one row; None when its times are unusable (counted per table).
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        table: &'static str,
        name: u32,
        cat: u32,
        kind: EventKind,
        start: Option<i64>,
        end: Option<i64>,
        lane: (u32, u32),
    ) -> Option<usize> {
        let Some(start) = start else {
            self.drop_row(table, "no start");
            return None;
        };
        let dur = match end {
            Some(e) if e >= start => e - start,
            Some(_) => {
                self.drop_row(table, "end before start");
                return None;
            }
            None if kind == EventKind::Instant => 0,
            None => {
                self.drop_row(table, "no end");
                return None;
            }
        };
        self.max_end = self.max_end.max(start.saturating_add(dur));
        Some(
            self.tr
                .events
                .push(name, cat, kind, start, dur, lane.0, lane.1),
        )
    }

    /// Sets an event's correlation id and remembers its process.
    fn correlate(&mut self, i: usize, pid: Option<i64>, corr: Option<i64>) {
        if let Some(c) = corr {
            self.tr.events.correlation[i] = c;
            if let Some(p) = pid {
                self.corr_pid.push((i as u32, p));
            }
        }
    }

    /// With several processes, correlation ids are keyed by pid ((pid << 40) | id):
    /// each process numbers its own from 1.
    fn key_correlations(&mut self) {
        let pids: HashSet<i64> = self.corr_pid.iter().map(|x| x.1).collect();
        if pids.len() < 2 {
            return;
        }
        let ev = &mut self.tr.events;
        for &(i, p) in &self.corr_pid {
            let c = &mut ev.correlation[i as usize];
            *c = (p << 40) | (*c & ((1 << 40) - 1));
        }
        self.meta.push((
            "correlation ids".into(),
            format!(
                "keyed by process ((pid << 40) | id; args keep the original): {} processes have CUDA activity",
                pids.len()
            ),
        ));
    }

    /// Sets the GPU-lane fields shared by kernels, copies and sets.
    fn gpu_fields(&mut self, i: usize, device: Option<i64>, stream: Option<i64>, args: Args) {
        let ev = &mut self.tr.events;
        ev.device[i] = device.unwrap_or(NONE_I64);
        ev.stream[i] = stream.unwrap_or(NONE_I64);
        ev.args[i] = ev.args_text.len() as u32;
        ev.args_text.push(args.done());
    }
}

impl Reader {
    fn new(db: Db) -> Reader {
        Reader {
            db,
            s: State {
                max_end: i64::MIN,
                ..State::default()
            },
        }
    }

    fn load(&mut self) -> Result<(), String> {
        self.read_meta()?;
        self.read_strings()?;
        self.read_runtime()?;
        self.read_nvtx()?;
        self.read_osrt()?;
        self.read_kernels()?;
        self.read_copies()?;
        self.read_sets()?;
        self.s.key_correlations();
        self.close_unclosed();
        self.read_names()?;
        let dropped = std::mem::take(&mut self.s.dropped);
        for (table, why, n) in dropped {
            self.s.warn(format!("{n} row(s) of {table} dropped: {why}"));
        }
        Ok(())
    }

    fn read_meta(&mut self) -> Result<(), String> {
        let mut export = Vec::new();
        self.db.scan("META_DATA_EXPORT", &["name", "value"], |r| {
            if let (Some(k), Some(v)) = (r.text(0), r.text(1)) {
                export.push((k, v));
            }
        })?;
        let s = &mut self.s;
        for (k, v) in export {
            match k.as_str() {
                "EXPORT_PRODUCT_VERSION" => s.product = Some(v.clone()),
                "EXPORT_SCHEMA_VERSION" => s.schema = Some(v.clone()),
                _ => continue,
            }
            s.meta.push((k, v));
        }
        let mut start = None;
        self.db.scan(
            "TARGET_INFO_SESSION_START_TIME",
            &["utcEpochNs", "utcTime"],
            |r| start = Some((r.int(0), r.text(1))),
        )?;
        if let Some((ns, utc)) = start {
            if let Some(ns) = ns {
                s.meta
                    .push(("session start (UTC epoch ns)".into(), ns.to_string()));
            }
            if let Some(utc) = utc {
                s.meta.push(("session start (UTC)".into(), utc));
            }
        }
        let mut gpus = Vec::new();
        self.db
            .scan("TARGET_INFO_GPU", &["cuDevice", "id", "name"], |r| {
                if let Some(name) = r.text(2) {
                    gpus.push((r.int(0).or(r.int(1)), name));
                }
            })?;
        gpus.sort_by_key(|g| g.0);
        gpus.dedup();
        for (id, name) in gpus {
            let id = id.map(|i| i.to_string()).unwrap_or("?".into());
            s.meta.push((format!("device {id}"), name));
        }
        Ok(())
    }

    fn read_strings(&mut self) -> Result<(), String> {
        let strings = &mut self.s.strings;
        let found = self.db.scan("StringIds", &["id", "value"], |r| {
            if let (Some(id), Some(v)) = (r.int(0), r.text(1)) {
                strings.insert(id, v);
            }
        })?;
        if !found {
            self.s
                .warn("no StringIds table: kernel, call and range names are unknown".into());
        }
        Ok(())
    }

    fn read_runtime(&mut self) -> Result<(), String> {
        let s = &mut self.s;
        let Some(plan) = self.db.plan(
            RUNTIME,
            &["start", "end", "globalTid", "correlationId", "nameId"],
        )?
        else {
            s.warn(format!(
                "no {RUNTIME} table: GPU activities cannot be linked to their launches"
            ));
            return Ok(());
        };
        s.warn_missing(
            &plan,
            &["start", "end", "globalTid", "correlationId", "nameId"],
        );
        let (rt, drv) = (s.cat("cuda_runtime"), s.cat("cuda_driver"));
        let unknown = s.intern("<unknown CUDA call>");
        self.db.run(&plan, |r| {
            let (name, cat) = match r.int(4) {
                Some(id) => match s.runtime_names.get(&id) {
                    Some(&x) => x,
                    None => {
                        let x = match s.strings.get(&id).filter(|n| !n.is_empty()) {
                            Some(n) => {
                                let clean = runtime_name(n);
                                let cat = if clean.starts_with("cu") && !clean.starts_with("cuda") {
                                    drv
                                } else {
                                    rt
                                };
                                (s.tr.events.strings.intern(clean), cat)
                            }
                            None => (unknown, rt),
                        };
                        s.runtime_names.insert(id, x);
                        x
                    }
                },
                None => (unknown, rt),
            };
            let gtid = r.int(2);
            let lane = s.cpu_lane(gtid);
            if let Some(i) = s.push(
                RUNTIME,
                name,
                cat,
                EventKind::Runtime,
                r.int(0),
                r.int(1),
                lane,
            ) {
                s.correlate(i, gtid.map(|g| decode_global(g).0), r.int(3));
            }
        })
    }

    fn read_nvtx(&mut self) -> Result<(), String> {
        let s = &mut self.s;
        let Some(plan) = self.db.plan(
            NVTX,
            &["start", "end", "eventType", "text", "textId", "globalTid"],
        )?
        else {
            return Ok(());
        };
        s.warn_missing(&plan, &["start", "end", "eventType", "globalTid"]);
        let no_type = plan.missing.contains(&"eventType");
        let cat = s.cat("nvtx");
        let unnamed = s.intern("<unnamed NVTX range>");
        self.db.run(&plan, |r| {
            let (start, end) = (r.int(0), r.int(1));
            let kind = match r.int(2) {
                Some(t) if NVTX_PUSH_POP.contains(&t) || NVTX_START_END.contains(&t) => {
                    EventKind::Cpu
                }
                Some(t) if NVTX_MARK.contains(&t) => EventKind::Instant,
                // Without eventType, rows with a time span are taken as ranges.
                None if no_type && end.is_some() => EventKind::Cpu,
                // Domain and category definitions and the like are not events.
                _ => return,
            };
            let name = s.name(r, 3).or_else(|| s.name(r, 4)).unwrap_or(unnamed);
            let lane = s.cpu_lane(r.int(5));
            // A range still open when the capture stopped has no end: closed later.
            let open = kind == EventKind::Cpu && end.is_none() && start.is_some();
            let end = if open { start } else { end };
            if let Some(i) = s.push(NVTX, name, cat, kind, start, end, lane) {
                if open {
                    s.unclosed.push(i);
                }
            }
        })
    }

    fn read_osrt(&mut self) -> Result<(), String> {
        let s = &mut self.s;
        let Some(plan) = self
            .db
            .plan(OSRT, &["start", "end", "globalTid", "nameId"])?
        else {
            return Ok(());
        };
        s.warn_missing(&plan, &["start", "end", "globalTid", "nameId"]);
        let cat = s.cat("osrt");
        let unknown = s.intern("<unknown OS call>");
        self.db.run(&plan, |r| {
            let name = s.name(r, 3).unwrap_or(unknown);
            let lane = s.cpu_lane(r.int(2));
            s.push(OSRT, name, cat, EventKind::Cpu, r.int(0), r.int(1), lane);
        })
    }

    fn read_kernels(&mut self) -> Result<(), String> {
        const COLS: [&str; 20] = [
            "start",                // 0
            "end",                  // 1
            "deviceId",             // 2
            "contextId",            // 3
            "streamId",             // 4
            "correlationId",        // 5
            "globalPid",            // 6
            "demangledName",        // 7
            "shortName",            // 8
            "mangledName",          // 9
            "registersPerThread",   // 10
            "gridX",                // 11
            "gridY",                // 12
            "gridZ",                // 13
            "blockX",               // 14
            "blockY",               // 15
            "blockZ",               // 16
            "staticSharedMemory",   // 17
            "dynamicSharedMemory",  // 18
            "localMemoryPerThread", // 19
        ];
        let s = &mut self.s;
        let Some(plan) = self.db.plan(KERNEL, &COLS)? else {
            s.warn(format!(
                "no {KERNEL} table: the export has no kernels (CUDA trace off, or none ran)"
            ));
            return Ok(());
        };
        s.warn_missing(
            &plan,
            &["start", "end", "deviceId", "streamId", "correlationId"],
        );
        if ["demangledName", "shortName", "mangledName"]
            .iter()
            .all(|c| plan.missing.contains(c))
        {
            s.warn(format!("{KERNEL} has no name column: kernels are unnamed"));
        }
        let cat = s.cat("kernel");
        let unknown = s.intern("<unknown kernel>");
        self.db.run(&plan, |r| {
            let name = s
                .name(r, 7)
                .or_else(|| s.name(r, 8))
                .or_else(|| s.name(r, 9))
                .unwrap_or(unknown);
            let (device, stream) = (r.int(2), r.int(4));
            let lane = s.gpu_lane(device, stream);
            let Some(i) = s.push(
                KERNEL,
                name,
                cat,
                EventKind::Kernel,
                r.int(0),
                r.int(1),
                lane,
            ) else {
                return;
            };
            let mut a = Args::new();
            a.int("device", device);
            a.int("context", r.int(3));
            a.int("stream", stream);
            a.int("correlation", r.int(5));
            a.int("registers per thread", r.int(10));
            let (st, dy) = (r.int(17), r.int(18));
            if st.is_some() || dy.is_some() {
                a.int("shared memory", Some(st.unwrap_or(0) + dy.unwrap_or(0)));
            }
            a.triple("grid", [r.int(11), r.int(12), r.int(13)]);
            a.triple("block", [r.int(14), r.int(15), r.int(16)]);
            a.int("static shared memory", st);
            a.int("dynamic shared memory", dy);
            a.int("local memory per thread", r.int(19));
            s.gpu_fields(i, device, stream, a);
            s.correlate(i, r.int(6).map(|g| decode_global(g).0), r.int(5));
        })
    }

    /// An `ENUM_*` table as id -> (name, label).
    fn read_enum(&self, table: &str) -> Result<HashMap<i64, (String, String)>, String> {
        let mut m = HashMap::new();
        self.db.scan(table, &["id", "name", "label"], |r| {
            if let Some(id) = r.int(0) {
                m.insert(
                    id,
                    (r.text(1).unwrap_or_default(), r.text(2).unwrap_or_default()),
                );
            }
        })?;
        Ok(m)
    }

    fn mem_kind(kinds: &HashMap<i64, (String, String)>, k: Option<i64>) -> String {
        match k {
            None => "Unknown".into(),
            Some(k) => match kinds.get(&k) {
                Some((_, label)) if !label.is_empty() => label.clone(),
                _ => mem_kind_fallback(k),
            },
        }
    }

    fn read_copies(&mut self) -> Result<(), String> {
        const COLS: [&str; 15] = [
            "start",         // 0
            "end",           // 1
            "deviceId",      // 2
            "contextId",     // 3
            "streamId",      // 4
            "correlationId", // 5
            "globalPid",     // 6
            "bytes",         // 7
            "copyKind",      // 8
            "srcKind",       // 9
            "dstKind",       // 10
            "srcDeviceId",   // 11
            "dstDeviceId",   // 12
            "srcContextId",  // 13
            "dstContextId",  // 14
        ];
        let Some(plan) = self.db.plan(MEMCPY, &COLS)? else {
            return Ok(());
        };
        let opers = self.read_enum("ENUM_CUDA_MEMCPY_OPER")?;
        let kinds = self.read_enum("ENUM_CUDA_MEM_KIND")?;
        let s = &mut self.s;
        s.warn_missing(
            &plan,
            &[
                "start",
                "end",
                "deviceId",
                "streamId",
                "correlationId",
                "bytes",
                "copyKind",
                "srcKind",
                "dstKind",
            ],
        );
        let cat = s.cat("gpu_memcpy");
        // (copyKind, srcKind, dstKind) -> interned name.
        let mut names: HashMap<[Option<i64>; 3], u32> = HashMap::new();
        self.db.run(&plan, |r| {
            let copy = r.int(8);
            let key = [copy, r.int(9), r.int(10)];
            let name = *names.entry(key).or_insert_with(|| {
                let short = match copy {
                    Some(k) => match opers.get(&k) {
                        Some((name, label)) => copy_kind_from_enum(name)
                            .or_else(|| (!label.is_empty()).then(|| label.clone()))
                            .unwrap_or_else(|| copy_kind_fallback(k)),
                        None => copy_kind_fallback(k),
                    },
                    None => "Unknown".into(),
                };
                s.intern(&format!(
                    "Memcpy {short} ({} -> {})",
                    Self::mem_kind(&kinds, key[1]),
                    Self::mem_kind(&kinds, key[2])
                ))
            });
            let (start, end, bytes) = (r.int(0), r.int(1), r.int(7));
            let (device, stream) = (r.int(2), r.int(4));
            let lane = s.gpu_lane(device, stream);
            let Some(i) = s.push(MEMCPY, name, cat, EventKind::Memcpy, start, end, lane) else {
                return;
            };
            let mut a = Args::new();
            a.int("device", device);
            a.int("context", r.int(3));
            a.int("stream", stream);
            a.int("correlation", r.int(5));
            a.int("bytes", bytes);
            a.float("memory bandwidth (GB/s)", bandwidth(bytes, start, end));
            if copy == Some(10) {
                a.int("fromDevice", r.int(11));
                a.int("toDevice", r.int(12));
                a.int("fromContext", r.int(13));
                a.int("toContext", r.int(14));
            }
            if let Some((_, label)) = copy.and_then(|k| opers.get(&k)) {
                if !label.is_empty() {
                    a.text("copy kind", label);
                }
            }
            s.gpu_fields(i, device, stream, a);
            s.correlate(i, r.int(6).map(|g| decode_global(g).0), r.int(5));
        })
    }

    fn read_sets(&mut self) -> Result<(), String> {
        const COLS: [&str; 10] = [
            "start",         // 0
            "end",           // 1
            "deviceId",      // 2
            "contextId",     // 3
            "streamId",      // 4
            "correlationId", // 5
            "globalPid",     // 6
            "bytes",         // 7
            "value",         // 8
            "memKind",       // 9
        ];
        let Some(plan) = self.db.plan(MEMSET, &COLS)? else {
            return Ok(());
        };
        let kinds = self.read_enum("ENUM_CUDA_MEM_KIND")?;
        let s = &mut self.s;
        s.warn_missing(
            &plan,
            &[
                "start",
                "end",
                "deviceId",
                "streamId",
                "correlationId",
                "bytes",
            ],
        );
        let cat = s.cat("gpu_memset");
        let mut names: HashMap<Option<i64>, u32> = HashMap::new();
        self.db.run(&plan, |r| {
            // Kineto names every set after its memory kind: "Memset (Device)".
            let kind = r.int(9);
            let name = *names
                .entry(kind)
                .or_insert_with(|| s.intern(&format!("Memset ({})", Self::mem_kind(&kinds, kind))));
            let (start, end, bytes) = (r.int(0), r.int(1), r.int(7));
            let (device, stream) = (r.int(2), r.int(4));
            let lane = s.gpu_lane(device, stream);
            let Some(i) = s.push(MEMSET, name, cat, EventKind::Memset, start, end, lane) else {
                return;
            };
            let mut a = Args::new();
            a.int("device", device);
            a.int("context", r.int(3));
            a.int("stream", stream);
            a.int("correlation", r.int(5));
            a.int("bytes", bytes);
            a.float("memory bandwidth (GB/s)", bandwidth(bytes, start, end));
            a.int("value", r.int(8));
            s.gpu_fields(i, device, stream, a);
            s.correlate(i, r.int(6).map(|g| decode_global(g).0), r.int(5));
        })
    }

    /// NVTX ranges still open when the capture stopped end with the last event.
    fn close_unclosed(&mut self) {
        let s = &mut self.s;
        if s.unclosed.is_empty() {
            return;
        }
        let ev = &mut s.tr.events;
        for &i in &s.unclosed {
            ev.dur[i] = (s.max_end - ev.ts[i]).max(0);
        }
        let n = s.unclosed.len();
        s.warn(format!(
            "{n} NVTX range(s) never ended; closed at the end of the trace"
        ));
    }

    /// Thread names (ThreadNames) and process names (PROCESSES) of the lanes in use.
    fn read_names(&mut self) -> Result<(), String> {
        let s = &mut self.s;
        let mut threads: HashMap<(i64, i64), (i64, String)> = HashMap::new();
        self.db
            .scan("ThreadNames", &["nameId", "priority", "globalTid"], |r| {
                let Some(g) = r.int(2) else { return };
                let key = decode_global(g);
                if !s.lanes.contains(&key) {
                    return;
                }
                let Some(name) = r.name_text(0, &s.strings) else {
                    return;
                };
                let prio = r.int(1).unwrap_or(0);
                match threads.get(&key) {
                    Some((p, _)) if *p > prio => {}
                    _ => {
                        threads.insert(key, (prio, name));
                    }
                }
            })?;
        let pids: HashSet<i64> = s.lanes.iter().map(|l| l.0).collect();
        let mut procs: HashMap<i64, String> = HashMap::new();
        self.db
            .scan("PROCESSES", &["globalPid", "pid", "name"], |r| {
                let pid = r.int(0).map(|g| decode_global(g).0).or(r.int(1));
                if let (Some(pid), Some(name)) = (pid, r.text(2)) {
                    if pids.contains(&pid) && !name.is_empty() {
                        procs.insert(pid, name);
                    }
                }
            })?;
        for ((p, t), (_, name)) in threads {
            let (pk, tk) = (s.intern(&p.to_string()), s.intern(&t.to_string()));
            s.tr.thread_names.insert((pk, tk), name);
        }
        for (p, name) in procs {
            let pk = s.intern(&p.to_string());
            s.tr.process_names.insert(pk, name);
        }
        Ok(())
    }

    fn finish(self, source: Source) -> Profile {
        let State {
            mut tr,
            mut meta,
            product,
            schema,
            ..
        } = self.s;
        let tree = trace_cct::build(&tr);
        tr.events.node = tree.node_of_event;
        tr.events.launch = tree.launch_of_event;
        let mut cct = tree.cct;
        cct.finish();
        let mut warnings = tr.warnings;
        warnings.extend(tree.warnings);
        meta.extend(tr.meta);
        let dialect = match (product, schema) {
            (Some(p), Some(s)) => format!("Nsight Systems {p}, export schema {s}"),
            (None, Some(s)) => format!("Nsight Systems, export schema {s}"),
            (Some(p), None) => format!("Nsight Systems {p}"),
            (None, None) => "Nsight Systems, an older export without META_DATA_EXPORT".into(),
        };
        Profile {
            source,
            dialect,
            cct,
            metrics: tree.metrics,
            events: Some(tr.events),
            counters: Some(CounterTable::default()),
            meta,
            warnings,
            default_metric: "time".into(),
        }
    }
}

/// Kineto's bandwidth: bytes per ns, i.e. GB/s (0 for a zero-length copy).
fn bandwidth(bytes: Option<i64>, start: Option<i64>, end: Option<i64>) -> f64 {
    match (bytes, start, end) {
        (Some(b), Some(s), Some(e)) if e > s => b as f64 / (e - s) as f64,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::events::{EventTable, NONE_U32};
    use std::path::PathBuf;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    fn fixture(name: &str) -> PathBuf {
        root().join("testdata/nsys").join(name)
    }

    fn load(path: &Path) -> Profile {
        let mut all = read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(all.len(), 1);
        let p = all.remove(0);
        assert!(p.cct.check(), "{}", path.display());
        let ev = p.events.as_ref().unwrap();
        assert_eq!((ev.node.len(), ev.launch.len()), (ev.len(), ev.len()));
        p
    }

    fn count(ev: &EventTable, k: EventKind) -> usize {
        ev.kind.iter().filter(|&&x| x == k).count()
    }

    fn find(ev: &EventTable, name: &str) -> usize {
        (0..ev.len())
            .find(|&i| ev.name_of(i) == name)
            .unwrap_or_else(|| panic!("no event {name}"))
    }

    fn args(ev: &EventTable, i: usize) -> serde_json::Value {
        serde_json::from_str(ev.args_of(i).expect("GPU rows have args")).unwrap()
    }

    /// Every GPU activity with a launch hangs under its runtime call's node.
    fn check_launches(p: &Profile) -> usize {
        let ev = p.events.as_ref().unwrap();
        let mut linked = 0;
        for i in 0..ev.len() {
            if !ev.kind[i].is_gpu_activity() || ev.launch[i] == NONE_U32 {
                continue;
            }
            let l = ev.launch[i] as usize;
            assert_eq!(ev.kind[l], EventKind::Runtime);
            assert_eq!(ev.correlation[l], ev.correlation[i]);
            assert_eq!(p.cct.parent(ev.node[i]), Some(ev.node[l]));
            linked += 1;
        }
        linked
    }

    fn root_named(p: &Profile, name: &str) -> u32 {
        p.cct
            .root_ids()
            .into_iter()
            // Lane roots are named by thread role, maybe with " (main thread)" or " #2".
            .find(|&r| {
                let n = p.cct.name(r);
                n == name || n.strip_prefix(name).is_some_and(|x| x.starts_with(' '))
            })
            .unwrap_or_else(|| {
                let names: Vec<&str> = p.cct.root_ids().iter().map(|&r| p.cct.name(r)).collect();
                panic!("no root {name} among {names:?}")
            })
    }

    #[test]
    fn fuser_report() {
        let path = root().join("../shared/corpus/Fuser/report1.sqlite");
        if !path.exists() {
            eprintln!("skipped: {} is not here", path.display());
            return;
        }
        let head = std::fs::read(&path).unwrap();
        assert!(sniff(&path, &head[..4096]));
        let p = load(&path);
        assert_eq!(p.source.format, Format::NsightSqlite);
        let ev = p.events.as_ref().unwrap();
        assert_eq!(count(ev, EventKind::Kernel), 19);
        assert_eq!(count(ev, EventKind::Memcpy), 1);
        assert_eq!(count(ev, EventKind::Memset), 1);
        assert_eq!(count(ev, EventKind::Runtime), 967);
        // All 639 NVTX rows are push/pop ranges; there is no OSRT_API table.
        assert_eq!(count(ev, EventKind::Cpu), 639);
        assert_eq!(ev.len(), 19 + 1 + 1 + 967 + 639);

        // Every GPU activity is attached under the runtime call that launched it.
        assert_eq!(check_launches(&p), 21);
        for i in 0..ev.len() {
            if ev.kind[i] == EventKind::Kernel {
                let l = ev.launch[i] as usize;
                assert!(
                    ["cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx"]
                        .contains(&ev.name_of(l)),
                    "{}",
                    ev.name_of(l)
                );
                assert_eq!((ev.device[i], ev.stream[i]), (0, 7));
            }
        }
        assert!(!p.warnings.iter().any(|w| w.contains("unattributed")));

        // GPU time equals the tables' own sum of end - start.
        let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let sql: i64 = conn
            .query_row(
                "SELECT (SELECT SUM(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL)
                      + (SELECT SUM(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY)
                      + (SELECT SUM(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_MEMSET)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let gpu: i64 = (0..ev.len())
            .filter(|&i| ev.kind[i].is_gpu_activity())
            .map(|i| ev.dur[i])
            .sum();
        assert_eq!(gpu, sql);
        let inc = p.metrics.values("gpu_time (inc)").unwrap();
        let roots: f64 = p.cct.root_ids().iter().map(|&r| inc[r as usize]).sum();
        assert_eq!(roots, sql as f64);
        let kernel_sql: i64 = conn
            .query_row(
                "SELECT SUM(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let kernel: i64 = (0..ev.len())
            .filter(|&i| ev.kind[i] == EventKind::Kernel)
            .map(|i| ev.dur[i])
            .sum();
        assert_eq!(kernel, kernel_sql);

        // Names, args and metadata.
        let m = find(ev, "Memcpy DtoH (Device -> Pinned)");
        assert_eq!(ev.kind[m], EventKind::Memcpy);
        assert_eq!(args(ev, m)["bytes"], 1);
        assert_eq!(ev.kind[find(ev, "Memset (Device)")], EventKind::Memset);
        let k = (0..ev.len())
            .find(|&i| ev.kind[i] == EventKind::Kernel)
            .unwrap();
        let a = args(ev, k);
        assert_eq!(a["grid"], serde_json::json!([1056, 1, 1]));
        assert_eq!(a["block"], serde_json::json!([256, 1, 1]));
        assert_eq!(a["registers per thread"], 40);
        assert_eq!(a["correlation"], 1019);
        assert!(ev.name_of(k).starts_with("void at::native::"));
        assert_eq!(p.meta_value("EXPORT_SCHEMA_VERSION"), Some("3.16.1"));
        assert_eq!(p.meta_value("device 0"), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(
            p.meta_value("session start (UTC epoch ns)"),
            Some("1733860139400912216")
        );
        assert_eq!(
            p.dialect,
            "Nsight Systems 2024.6.2.25, export schema 3.16.1"
        );
        // The main thread's root is named after the thread.
        let main = root_named(&p, "test_matmul");
        assert!(p.metrics.get("gpu_time (inc)", main) > 0.0);
    }

    #[test]
    fn schema_3_4_0_without_enums_or_metadata() {
        let p = load(&fixture("schema_3_4_0.sqlite"));
        let ev = p.events.as_ref().unwrap();
        assert_eq!(count(ev, EventKind::Kernel), 3);
        assert_eq!(count(ev, EventKind::Memcpy), 1);
        assert_eq!(count(ev, EventKind::Memset), 1);
        assert_eq!(count(ev, EventKind::Runtime), 4);
        // 4 NVTX ranges and 1 OS runtime call; the mark is an instant, the domain skipped.
        assert_eq!(count(ev, EventKind::Cpu), 5);
        assert_eq!(count(ev, EventKind::Instant), 1);
        assert_eq!(p.meta_value("EXPORT_SCHEMA_VERSION"), None);
        assert!(p.dialect.contains("older export"), "{}", p.dialect);
        assert_eq!(p.meta_value("device 0"), Some("NVIDIA A100-SXM4-40GB"));

        // Copy and memory kinds by number; Kineto's names and bandwidth.
        let m = find(ev, "Memcpy HtoD (Pageable -> Device)");
        let a = args(ev, m);
        assert_eq!(a["bytes"], 4000);
        assert_eq!(a["memory bandwidth (GB/s)"], 2.0);
        assert_eq!(ev.correlation[m], 11);
        assert_eq!(ev.kind[find(ev, "Memset (Device)")], EventKind::Memset);

        let g = find(ev, "void gemm_kernel<float>(float *)");
        let a = args(ev, g);
        assert_eq!(a["grid"], serde_json::json!([4, 2, 1]));
        assert_eq!(a["shared memory"], 3072);
        assert_eq!(a["registers per thread"], 40);
        assert_eq!((ev.device[g], ev.stream[g], ev.dur[g]), (0, 7, 2000));
        let launch = ev.launch[g] as usize;
        assert_eq!(ev.name_of(launch), "cudaLaunchKernel");
        assert_eq!(ev.strings.resolve(ev.cat[launch]), "cuda_runtime");
        // The launch sits inside the NVTX ranges step > forward on the main thread.
        let c = &p.cct;
        let path: Vec<&str> = c.path(ev.node[g]).iter().map(|&n| c.name(n)).collect();
        assert_eq!(
            path,
            [
                c.name(root_named(&p, "python")),
                "step",
                "forward",
                "cudaLaunchKernel",
                "void gemm_kernel<float>(float *)"
            ]
        );
        // Short name when there is no demangled name; driver calls are cuda_driver.
        let r = find(ev, "relu_kernel");
        let l = ev.launch[r] as usize;
        assert_eq!(ev.name_of(l), "cuLaunchKernel");
        assert_eq!(ev.strings.resolve(ev.cat[l]), "cuda_driver");
        assert_eq!(check_launches(&p), 4);

        // The orphan kernel has its own root; GPU time is preserved.
        let o = find(ev, "orphan_kernel");
        assert_eq!(ev.launch[o], NONE_U32);
        let u = root_named(&p, "<unattributed> stream 9");
        assert_eq!(c.parent(ev.node[o]), Some(u));
        let inc = p.metrics.values("gpu_time (inc)").unwrap();
        let total: f64 = c.root_ids().iter().map(|&r| inc[r as usize]).sum();
        assert_eq!(total, (2000 + 500 + 1000 + 2000 + 100) as f64);

        // The unclosed range ends with the trace; the worker's rows are on its lane.
        let e = find(ev, "epilogue");
        assert_eq!(ev.ts[e] + ev.dur[e], 12000);
        assert!(p.warnings.iter().any(|w| w.contains("never ended")));
        let io = find(ev, "io");
        let wait = find(ev, "pthread_cond_wait");
        assert_eq!(ev.strings.resolve(ev.cat[wait]), "osrt");
        assert_eq!(ev.strings.resolve(ev.tid[io]), "1001");
        assert_eq!(ev.strings.resolve(ev.pid[io]), "1000");
        assert_eq!(ev.tid[io], ev.tid[wait]);
        let w = root_named(&p, "worker");
        assert_eq!(c.parent(ev.node[io]), Some(w));
        assert_eq!(ev.kind[find(ev, "checkpoint")], EventKind::Instant);
    }

    #[test]
    fn schema_3_16_by_name_with_processes_and_peers() {
        let p = load(&fixture("schema_3_16.sqlite"));
        let ev = p.events.as_ref().unwrap();
        assert_eq!(p.meta_value("EXPORT_SCHEMA_VERSION"), Some("3.16.1"));
        assert_eq!(
            p.dialect,
            "Nsight Systems 2024.6.1.90, export schema 3.16.1"
        );
        assert_eq!(p.meta_value("device 1"), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(count(ev, EventKind::Kernel), 2);
        assert!(p
            .warnings
            .iter()
            .any(|w| w.contains("1 row(s) of CUPTI_ACTIVITY_KIND_KERNEL dropped")));
        // Shuffled columns read by name.
        let a = find(ev, "kernel_a");
        assert_eq!(
            (ev.ts[a], ev.dur[a], ev.device[a], ev.stream[a]),
            (1000, 400, 0, 7)
        );
        // Correlation 1 in both processes: each kernel under its own process's launch.
        let b = find(ev, "kernel_b");
        assert_eq!(ev.name_of(ev.launch[a] as usize), "cudaLaunchKernel");
        assert_eq!(ev.name_of(ev.launch[b] as usize), "cudaLaunchKernelExC");
        assert_eq!(args(ev, b)["correlation"], 1);
        assert_ne!(ev.correlation[a], ev.correlation[b]);
        assert_eq!(check_launches(&p), 4);
        assert!(p
            .meta_value("correlation ids")
            .is_some_and(|v| v.contains("2 processes")));
        // Peer copy with Kineto's peer args; labels from the ENUM tables.
        let peer = find(ev, "Memcpy PtoP (Device -> Device)");
        let pa = args(ev, peer);
        assert_eq!(pa["memory bandwidth (GB/s)"], 1000.0);
        assert_eq!(
            (pa["fromDevice"].clone(), pa["toDevice"].clone()),
            (0.into(), 1.into())
        );
        assert_eq!(pa["copy kind"], "Peer-to-Peer");
        assert_eq!(ev.name_of(ev.launch[peer] as usize), "cudaMemcpyPeerAsync");
        let d = find(ev, "Memcpy DtoH (Device -> Pinned)");
        assert_eq!(ev.name_of(ev.launch[d] as usize), "cudaMemcpyAsync");
        // Runtime ABI suffixes go, real `_v2` names stay.
        find(ev, "cudaGetDeviceProperties_v2");
        // Thread names by priority; NVTX text by textId or text.
        let r0 = root_named(&p, "rank0");
        let r1 = root_named(&p, "rank1");
        assert_eq!(p.metrics.get("gpu_time (inc)", r0), (400 + 1000) as f64);
        assert_eq!(p.metrics.get("gpu_time (inc)", r1), (600 + 100) as f64);
        assert_eq!(count(ev, EventKind::Cpu), 2);
        assert!((0..ev.len()).all(|i| ev.kind[i] != EventKind::Cpu || ev.name_of(i) == "iteration"));
    }

    #[test]
    fn export_without_kernel_table() {
        let p = load(&fixture("no_kernel.sqlite"));
        let ev = p.events.as_ref().unwrap();
        assert_eq!(count(ev, EventKind::Kernel), 0);
        assert!(p
            .warnings
            .iter()
            .any(|w| w.contains("no CUPTI_ACTIVITY_KIND_KERNEL table")));
        assert!(p
            .warnings
            .iter()
            .any(|w| w.contains("no column srcKind, dstKind")));
        let m = find(ev, "Memcpy HtoD (Unknown -> Unknown)");
        assert_eq!(ev.name_of(ev.launch[m] as usize), "cudaMemcpy");
        assert_eq!(check_launches(&p), 1);
        assert_eq!(ev.kind[find(ev, "copy phase")], EventKind::Cpu);
        // Without ThreadNames or PROCESSES the lane still has a root.
        let c = ev.node[find(ev, "copy phase")];
        assert!(p.cct.parent(c).is_some_and(|r| p.cct.parent(r).is_none()));
        assert_eq!(p.meta_value("EXPORT_SCHEMA_VERSION"), Some("3.13.2"));
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("grove-nsys-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn corrupt_and_foreign_databases_are_errors() {
        let good = std::fs::read(fixture("schema_3_4_0.sqlite")).unwrap();
        // The header and the first pages only.
        let cut = temp("truncated.sqlite");
        std::fs::write(&cut, &good[..8192]).unwrap();
        let e = read(&cut).unwrap_err();
        assert!(!e.contains('\n'), "{e}");
        // The magic, then garbage.
        let bad = temp("garbage.sqlite");
        let mut bytes = SQLITE_MAGIC.to_vec();
        bytes.extend((0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8));
        std::fs::write(&bad, &bytes).unwrap();
        let e = read(&bad).unwrap_err();
        assert!(!e.contains('\n'), "{e}");
        // A damaged page inside a table.
        let mut damaged = good.clone();
        for b in &mut damaged[4096..good.len().min(4096 * 6)] {
            *b = 0xA5;
        }
        let dmg = temp("damaged.sqlite");
        std::fs::write(&dmg, &damaged).unwrap();
        assert!(read(&dmg).is_err());
        // An SQLite database of another tool.
        let other = temp("other.sqlite");
        let _ = std::fs::remove_file(&other);
        let c = Connection::open(&other).unwrap();
        c.execute_batch("CREATE TABLE rocpd_op (id INTEGER); INSERT INTO rocpd_op VALUES (1);")
            .unwrap();
        drop(c);
        let head = std::fs::read(&other).unwrap();
        assert!(!sniff(&other, &head));
        let e = read(&other).unwrap_err();
        assert!(e.contains("not an Nsight Systems export"), "{e}");
        assert!(e.contains("rocpd_op"), "{e}");
        // Through the loader the message names the file.
        let e = crate::readers::load_all(&other).unwrap_err().to_string();
        assert!(e.starts_with(&other.display().to_string()), "{e}");
        assert!(!sniff(&other, b"{\"traceEvents\": []}"));
        let _ = std::fs::remove_dir_all(cut.parent().unwrap());
    }

    #[test]
    fn fixtures_sniff() {
        for f in [
            "schema_3_4_0.sqlite",
            "schema_3_16.sqlite",
            "no_kernel.sqlite",
        ] {
            let path = fixture(f);
            let head = std::fs::read(&path).unwrap();
            assert!(sniff(&path, &head), "{f}");
        }
    }

    #[test]
    fn names() {
        assert_eq!(runtime_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
        assert_eq!(
            runtime_name("cudaOccupancyMaxActiveClusters_v11070"),
            "cudaOccupancyMaxActiveClusters"
        );
        assert_eq!(
            runtime_name("cudaGetDeviceProperties_v2_v12000"),
            "cudaGetDeviceProperties_v2"
        );
        assert_eq!(runtime_name("cuGetProcAddress_v2"), "cuGetProcAddress_v2");
        assert_eq!(runtime_name("cudaFoo_v"), "cudaFoo_v");
        assert_eq!(
            copy_kind_from_enum("CUDA_MEMCPY_KIND_HTOD").as_deref(),
            Some("HtoD")
        );
        assert_eq!(
            copy_kind_from_enum("CUDA_MEMCPY_KIND_UVM_DTOH").as_deref(),
            Some("UVM DtoH")
        );
        assert_eq!(copy_kind_from_enum("CUDA_MEMCPY_KIND_UNKNOWN"), None);
        assert_eq!(decode_global(285298772900428), (227916, 227916));
    }
}
