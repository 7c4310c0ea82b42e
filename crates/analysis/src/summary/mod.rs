//! Trace summaries: what grove shows for one input, as Parquet files any Parquet reader
//! loads (polars, DuckDB, Spark, pandas), written where the traces are (`grove summarize`,
//! one task per rank) and reopened as an ensemble without the traces (`grove DIR`).
//!
//! The schema is defined here and documented in docs/scale-out.md; it is versioned by
//! [`SCHEMA_VERSION`] (in every file's key-value metadata, `grove.summary.version`, and
//! in the meta table). Any change to a column's name, type or meaning bumps it; grove
//! refuses summaries of a newer version than its own.
//!
//! Files per input NAME (NAME is the ensemble label: `rank{R}` from the trace's rank,
//! else the file stem):
//! - `NAME.cct.parquet`: one row per CCT node in id order (parents first): `input`,
//!   `node`, `parent` (null for roots), `depth`, `name`, `type`, `path` (as in `grove
//!   tree --format csv`), `attrs` (the node's attributes as a JSON object of strings,
//!   or empty), then one Float64 column per metric (null: no value).
//! - `NAME.meta.parquet`: `input`, `section`, `key`, `value` (strings): section `summary`
//!   (schema version, grove version), `source` (path, size, mtime, format, dialect, gzip,
//!   default metric), `unit` (metric -> unit), `meta` (the trace's metadata, in order),
//!   `warning`.
//! - Traces only: `NAME.kernels.parquet` (the kernel table with memcpy/memset rows:
//!   `input`, `name`, `category`, `kind`, `count`, `total_ns`, `mean_ns`, `median_ns`,
//!   `min_ns`, `max_ns`, `std_ns`, `pct`) and `NAME.<table>.parquet` for HTA's
//!   breakdowns (`temporal`, `idle`, `overlap`, `launch`, `queue`, `memory`,
//!   `overhead`): `input`, then the columns of `grove summary --table T --format csv`,
//!   typed (Int64 where every value is whole, Float64 where numeric, else String).

pub mod cache;
pub mod mapped;
pub mod read;
pub mod tree_file;
pub mod write;

/// The summary schema's version (see the module doc).
pub const SCHEMA_VERSION: u32 = 1;

/// Suffix of the file that marks a summary (one per input).
pub const CCT_SUFFIX: &str = ".cct.parquet";
