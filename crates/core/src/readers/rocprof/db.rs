//! rocprof's SQLite outputs: legacy rocprof's `results.db`, whose `KERN` table holds the
//! same columns as `results.csv` (read through the CSV's column mapping) or, for a
//! `--hip-trace` run, whose `OPS`, `COPY` and `HIP` tables hold the kernels, copies and
//! HIP calls (`v1db`); and rocprofv3's rocpd database, through its `kernels` view.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::dispatch::Dispatch;
use super::{csv, dispatch, v1db};
use crate::model::{Format, Profile, Source};

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Tables only legacy rocprof's `tblextr.py` creates, as its `sqlitedb.add_table` writes
/// them (`CREATE TABLE <name> (` then the quoted columns).
const V1_TABLES: [&[u8]; 5] = [
    b"CREATE TABLE KERN (",
    b"CREATE TABLE OPS (",
    b"CREATE TABLE COPY (",
    b"CREATE TABLE HIP (",
    b"CREATE TABLE HSA (",
];

/// An SQLite file whose schema (on its first pages, inside the probe's head) creates
/// legacy rocprof's tables (`KERN`, or the `--hip-trace` tables `OPS`, `COPY`, `HIP`,
/// `HSA`) or rocpd's. Content, not name: a renamed `results.db` is still claimed,
/// another SQLite file is left to the other readers.
pub fn claims_db(head: &[u8]) -> bool {
    let has = |pat: &[u8]| head.windows(pat.len()).any(|w| w == pat);
    head.starts_with(SQLITE_MAGIC)
        && (V1_TABLES.iter().any(|t| has(t)) || has(b"rocpd_kernel_dispatch"))
}

pub struct RocprofDb;

impl crate::readers::Reader for RocprofDb {
    fn name(&self) -> &'static str {
        "rocprof SQLite (results.db)"
    }

    fn format(&self) -> Format {
        Format::Rocprof
    }

    fn reads_path(&self) -> bool {
        true
    }

    fn claims(&self, probe: &crate::readers::Probe) -> bool {
        !probe.is_dir && !probe.gzip && claims_db(probe.head)
    }

    fn read(&self, input: crate::readers::Input) -> Result<Vec<Profile>, String> {
        let path = input.into_path()?;
        Ok(vec![read(&path)?])
    }
}

fn read(path: &Path) -> Result<Profile, String> {
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("cannot open as SQLite: {e}"))?;
    let tables = table_names(&db)?;
    let has = |name: &str| tables.iter().any(|t| t == name);
    let source = Source::of_file(path, Format::Rocprof);
    // Legacy rocprof's KERN table when it holds dispatches (tblextr creates it empty, with
    // only `Index`, `KernelName`, for a `--hip-trace` run without counters); else its
    // OPS table; else rocprofv3's rocpd database through its `kernels` view (the joined
    // kernel dispatches rocpd documents as its interface).
    if has("KERN") && kern_has_dispatches(&db)? {
        let rows = table_rows(&db, "KERN")?;
        let (ds, _, warnings) = csv::dispatches(&rows)?;
        return with_v1_tables(&db, &tables, ds, false, warnings, source, KERN_DIALECT);
    }
    if has("OPS") {
        let rows = table_rows(&db, "OPS")?;
        let mut sk = v1db::Skipped::default();
        let ds = v1db::ops(&rows, false, has("HIP"), &mut sk);
        let mut warnings = Vec::new();
        skipped_warnings("OPS", &sk, &mut warnings);
        return with_v1_tables(&db, &tables, ds, has("HIP"), warnings, source, OPS_DIALECT);
    }
    if has("kernels") {
        let rows = table_rows(&db, "kernels")?;
        let (ds, _, warnings) = csv::dispatches(&rows)?;
        return Ok(dispatch::profile(
            ds,
            source,
            ROCPD_DIALECT.into(),
            warnings,
        ));
    }
    Err(not_readable(&db, &tables))
}

const KERN_DIALECT: &str = "rocprof SQLite, table KERN (legacy rocprof)";
const OPS_DIALECT: &str = "rocprof SQLite, tables OPS/COPY/HIP (legacy rocprof --hip-trace)";
const ROCPD_DIALECT: &str = "rocprofv3 rocpd SQLite database, view kernels";

/// The names of the file's tables and views.
fn table_names(db: &Connection) -> Result<Vec<String>, String> {
    let err = |e: rusqlite::Error| format!("cannot read the schema: {e}");
    let mut st = db
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        .map_err(err)?;
    let mut q = st.query([]).map_err(err)?;
    let mut out = Vec::new();
    while let Some(r) = q.next().map_err(err)? {
        if let Ok(ValueRef::Text(t)) = r.get_ref(0) {
            out.push(String::from_utf8_lossy(t).into_owned());
        }
    }
    Ok(out)
}

/// KERN with the begin and end columns and at least one row.
fn kern_has_dispatches(db: &Connection) -> Result<bool, String> {
    let cols = column_names(db, "KERN")?;
    if !cols.iter().any(|c| c == "BeginNs") || !cols.iter().any(|c| c == "EndNs") {
        return Ok(false);
    }
    db.query_row("SELECT count(*) FROM KERN", [], |r| r.get::<_, i64>(0))
        .map(|n| n > 0)
        .map_err(|e| format!("cannot read KERN: {e}"))
}

/// The dispatches read so far plus legacy rocprof's COPY and HIP tables where the file
/// has them. `link`: the dispatches carry correlation ids that HIP's `Index` matches.
fn with_v1_tables(
    db: &Connection,
    tables: &[String],
    mut ds: Vec<Dispatch>,
    link: bool,
    mut warnings: Vec<String>,
    source: Source,
    dialect: &str,
) -> Result<Profile, String> {
    let has = |name: &str| tables.iter().any(|t| t == name);
    if has("COPY") {
        let mut sk = v1db::Skipped::default();
        ds.extend(v1db::ops(&table_rows(db, "COPY")?, true, link, &mut sk));
        skipped_warnings("COPY", &sk, &mut warnings);
    }
    let mut calls = Vec::new();
    if has("HIP") {
        let mut sk = v1db::Skipped::default();
        calls = v1db::hip(&table_rows(db, "HIP")?, &mut sk);
        skipped_warnings("HIP", &sk, &mut warnings);
    }
    if ds.is_empty() && calls.is_empty() {
        let which: Vec<&str> = ["KERN", "OPS", "COPY", "HIP"]
            .into_iter()
            .filter(|t| has(t))
            .collect();
        return Err(format!(
            "a legacy rocprof SQLite database (results.db) whose tables {} hold no row with times",
            which.join(", ")
        ));
    }
    let linked = ds.iter().filter(|d| d.launch_key.is_some()).count();
    let p = dispatch::profile_with_calls(ds, calls, source, dialect.into(), warnings);
    Ok(unlinked_warning(p, linked))
}

/// Ops that name a HIP call the HIP table does not have: said, not hidden.
fn unlinked_warning(mut p: Profile, keyed: usize) -> Profile {
    let linked = p
        .meta
        .iter()
        .find(|(k, _)| k == "linked to their call")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    if keyed > linked {
        p.warnings.push(format!(
            "{} device op(s) name a HIP call (pid, Index) that the HIP table does not hold; shown without their launch",
            keyed - linked
        ));
    }
    p
}

fn skipped_warnings(table: &str, sk: &v1db::Skipped, warnings: &mut Vec<String>) {
    if sk.no_times > 0 {
        warnings.push(format!(
            "{} {table} row(s) without readable BeginNs/EndNs times; left out",
            sk.no_times
        ));
    }
    if sk.no_device > 0 {
        warnings.push(format!(
            "{} {table} row(s) name no GPU (no dev-id column); placed on GPU 0",
            sk.no_device
        ));
    }
}

/// What a claimed file is when none of its tables holds dispatches.
fn not_readable(db: &Connection, tables: &[String]) -> String {
    let mut names: Vec<&str> = tables.iter().map(String::as_str).collect();
    names.sort_unstable();
    if names.iter().any(|t| t.starts_with("rocpd_")) {
        return "a rocpd database without its kernels view (rocprofv3 --output-format rocpd writes one)"
            .into();
    }
    let shown = if names.len() > 8 {
        format!("{}, ...", names[..8].join(", "))
    } else {
        names.join(", ")
    };
    let kern = if names.contains(&"KERN") {
        let empty = kern_has_dispatches(db).map(|b| !b).unwrap_or(true);
        if empty {
            "its KERN table holds no dispatch with times"
        } else {
            "its KERN table cannot be read"
        }
    } else {
        "it has no KERN table"
    };
    format!(
        "a legacy rocprof SQLite database (results.db) without kernel dispatches: {kern} and no OPS table (its tables: {shown}); rocprof writes them with --stats or --hip-trace"
    )
}

/// A table's rows as text, its column names first (the CSV reader's input).
fn table_rows(db: &Connection, table: &str) -> Result<Vec<Vec<String>>, String> {
    let mut st = db
        .prepare(&format!("SELECT * FROM \"{table}\""))
        .map_err(|e| format!("cannot read {table}: {e}"))?;
    // Column names through the pragma, read lossily: rusqlite's `column_names` panics
    // on a name that is not UTF-8 (a damaged schema).
    let header = column_names(db, table)?;
    let n = header.len();
    if n != st.column_count() {
        return Err(format!(
            "{table}: its columns cannot be read (a damaged schema?)"
        ));
    }
    let mut rows = vec![header];
    let mut q = st
        .query([])
        .map_err(|e| format!("cannot read {table}: {e}"))?;
    loop {
        let row = match q.next() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(format!("{table}, row {}: {e}", rows.len())),
        };
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            out.push(match row.get_ref(i) {
                Ok(ValueRef::Integer(v)) => v.to_string(),
                Ok(ValueRef::Real(v)) => v.to_string(),
                Ok(ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned(),
                _ => String::new(),
            });
        }
        rows.push(out);
    }
    Ok(rows)
}

fn column_names(db: &Connection, table: &str) -> Result<Vec<String>, String> {
    let err = |e: rusqlite::Error| format!("cannot read the columns of {table}: {e}");
    let mut st = db
        .prepare("SELECT name FROM pragma_table_info(?1)")
        .map_err(err)?;
    let mut q = st.query([table]).map_err(err)?;
    let mut out = Vec::new();
    while let Some(r) = q.next().map_err(err)? {
        out.push(match r.get_ref(0) {
            Ok(ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned(),
            _ => String::new(),
        });
    }
    Ok(out)
}
