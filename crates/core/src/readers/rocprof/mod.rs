//! AMD rocprof outputs that carry no CPU call path: the legacy `rocprof` per-dispatch
//! CSV (`results.csv`), its SQLite copy (`results.db`, table `KERN`, or the `OPS`,
//! `COPY` and `HIP` tables of a `--hip-trace` run), its per-kernel
//! `results.stats.csv`, and rocprofv3's `kernel_trace.csv` and `results.json`.
//!
//! Dispatches become GPU kernel events on lanes pid = GPU id, tid = queue id (device
//! and stream set), so the kernel chart and the timeline read them as they read a
//! Kineto trace. The tree is flat (docs/formats.md): `GPU <id>` → `queue <id>` →
//! kernel, since the files name no host call that launched a kernel.

pub mod chrome;
pub(crate) mod csv;
mod db;
mod dispatch;
mod stats;
mod v1db;
mod v3json;

use std::io::BufRead;

use crate::model::{Profile, Source};

pub use csv::claims as claims_csv;
pub use db::{claims_db, RocprofDb};
pub use v3json::{claims as claims_v3json, read as read_v3json};

/// Reads a rocprof CSV: a per-dispatch trace (legacy or rocprofv3) or a stats table.
pub fn read_csv(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    let mut text = Vec::new();
    input
        .read_to_end(&mut text)
        .map_err(|e| format!("cannot read: {e}"))?;
    let text = String::from_utf8_lossy(&text);
    let rows = csv::parse(&text)?;
    let Some(header) = rows.first() else {
        return Err("empty CSV".into());
    };
    if stats::is_stats(header) {
        return stats::read(&rows, source);
    }
    let (dispatches, dialect, warnings) = csv::dispatches(&rows)?;
    Ok(dispatch::profile(dispatches, source, dialect, warnings))
}
