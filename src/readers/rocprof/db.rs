//! rocprof's SQLite outputs, read through the CSV's column mapping: legacy rocprof's
//! `results.db`, whose `KERN` table holds the same columns as `results.csv`, and
//! rocprofv3's rocpd database, through its `kernels` view.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::{csv, dispatch};
use crate::model::{Format, Profile, Source};

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// An SQLite file whose schema (on its first pages, inside the probe's head) creates
/// rocprof's `KERN` table. Content, not name: a renamed `results.db` is still claimed,
/// another SQLite file is left to the other readers.
pub fn claims_db(head: &[u8]) -> bool {
    head.starts_with(SQLITE_MAGIC)
        && (head.windows(17).any(|w| w == b"CREATE TABLE KERN")
            || head.windows(21).any(|w| w == b"rocpd_kernel_dispatch"))
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
    let has = |name: &str| -> bool {
        db.query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .unwrap_or(false)
    };
    // Legacy rocprof's KERN table, else rocprofv3's rocpd database through its
    // `kernels` view (the joined kernel dispatches rocpd documents as its interface).
    let (table, dialect) = if has("KERN") {
        ("KERN", "rocprof SQLite, table KERN (legacy rocprof)")
    } else if has("kernels") {
        ("kernels", "rocprofv3 rocpd SQLite database, view kernels")
    } else {
        return Err(
            "a rocpd database without its kernels view (rocprofv3 --output-format rocpd writes one)"
                .into(),
        );
    };
    let mut st = db
        .prepare(&format!("SELECT * FROM {table}"))
        .map_err(|e| format!("cannot read {table}: {e}"))?;
    // Column names through the pragma, read lossily: rusqlite's `column_names` panics
    // on a name that is not UTF-8 (a damaged schema).
    let header = column_names(&db, table)?;
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
    let (ds, _, warnings) = csv::dispatches(&rows)?;
    let source = Source::of_file(path, Format::Rocprof);
    Ok(dispatch::profile(ds, source, dialect.into(), warnings))
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
