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
use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Row};

use super::chrome::ChromeTrace;
use super::trace_cct;
use crate::model::events::{CounterTable, EventKind, NONE_I64};
use crate::model::{Format, Profile, Source};

// The parts: the database, Kineto's names, the state built, and the table readers.
mod db;
mod names;
mod state;
mod tables;

use db::*;
use names::*;
use state::*;

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
        // Every export has META_DATA_EXPORT: one without event tables is still an
        // export, of a run that traced nothing grove reads.
        if names.contains(&"META_DATA_EXPORT") {
            return Err(format!(
                "an Nsight Systems export without event tables: no CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table ({shown}); profile with -t cuda,nvtx"
            ));
        }
        return Err(format!(
            "an SQLite database, but not an Nsight Systems export: no CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table ({shown})"
        ));
    }
    let mut r = TableReader::new(db);
    r.load()?;
    let source = Source::of_file(path, Format::NsightSqlite);
    Ok(vec![r.finish(source)])
}

#[cfg(test)]
mod tests;
