//! `grove sql`: a query over the inputs' tables (crates/analysis/src/sql/, docs/sql.md), printed as
//! text, CSV, JSON or Parquet. Several inputs (or a directory of `grove summarize`
//! summaries) are read one by one and their tables stacked with a `profile` column.

use std::path::PathBuf;

use grove::cli::{Format, SqlArgs, Writes};
use grove::export::formats::refusal;
use grove::model::Profile;
use grove::sql::{self, Member, Tables};

use super::{input, output};

pub fn run(args: SqlArgs) -> Result<(), String> {
    let cats = grove::gpu::classify::Categories::load(args.categories.as_deref())?;
    let mut words = args.args;
    let query = match &args.sql_file {
        Some(f) => std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?,
        None if words.len() < 2 => {
            return Err("expected FILE... QUERY (or FILE... --sql-file Q.sql)".into())
        }
        None => words.pop().unwrap_or_default(),
    };
    let files: Vec<PathBuf> = words.into_iter().map(PathBuf::from).collect();
    let phases = std::env::var_os("GROVE_PHASES").is_some();
    let t0 = std::time::Instant::now();
    let mut tables = Tables::default();
    let profiles = load(&files, &query, &mut tables)?;
    let t_load = t0.elapsed();
    let cpu_load = cpu();
    let rss_load = phases.then(rss);
    let members: Vec<Member<'_>> = profiles
        .iter()
        .map(|p| Member::of(p.source.label.clone(), p))
        .collect();
    let t1 = std::time::Instant::now();
    tables
        .prepare(&members, &cats, &query)
        .map_err(|e| e.to_string())?;
    let t_tables = t1.elapsed();
    let cpu_tables = cpu();
    let rss_tables = phases.then(rss);
    let df = tables
        .query(&members, &cats, &query)
        .map_err(|e| e.to_string())?;
    if phases {
        // `GROVE_PHASES=1`: where the time went (docs/performance.md).
        eprintln!(
            "sql: load {:.3}s, tables {:.3}s, query {:.3}s",
            t_load.as_secs_f64(),
            t_tables.as_secs_f64(),
            (t1.elapsed() - t_tables).as_secs_f64()
        );
        eprintln!(
            "sql: CPU (all threads) load {:.3}s, tables {:.3}s, query {:.3}s",
            cpu_load,
            cpu_tables - cpu_load,
            cpu() - cpu_tables
        );
        eprintln!(
            "sql: RSS after the load {}, the tables {}, the query {}",
            rss_load.unwrap_or_default(),
            rss_tables.unwrap_or_default(),
            rss()
        );
        for (t, rows, bytes) in tables.sizes() {
            eprintln!("sql: table {t}: {rows} rows, {:.1} MB", bytes as f64 / 1e6);
        }
    }
    drop(members);
    if args.format == Format::Parquet {
        output::binary_to_pipe()?;
    }
    let mut failed = None;
    output::to_stdout(|out| match args.format {
        Format::Csv => sql::write::csv(out, &df),
        Format::Json => sql::write::json(out, &df),
        Format::Parquet => sql::write::parquet(out, &df).or_else(|e| {
            failed = Some(e);
            Ok(())
        }),
        Format::Text => sql::write::text(out, &df),
        // Listed, not `_`: a new format is a compile error here until sql says whether
        // it writes it. `--format`'s parser refuses these already.
        f @ (Format::Hatchet | Format::Folded | Format::Thicket | Format::Svg) => {
            failed = Some(refusal(f, Writes::Query));
            Ok(())
        }
    })?;
    super::leave(profiles);
    failed.map_or(Ok(()), Err)
}

/// CPU seconds the process has used so far, every thread (`GROVE_PHASES`).
fn cpu() -> f64 {
    grove::readers::trace_cct::phases::process_cpu()
}

/// Resident memory now, its anonymous part, and its peak so far (`GROVE_PHASES`;
/// Linux).
fn rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        let v = status.lines().find_map(|l| l.strip_prefix(name));
        v.map(|v| v.trim().to_string()).unwrap_or_default()
    };
    // Anonymous memory apart: the rest is the binary's code paged in (polars' query
    // engine the first time it runs), not data.
    format!(
        "{} (anon {}, peak {})",
        field("VmRSS:"),
        field("RssAnon:"),
        field("VmHWM:")
    )
}

/// Each input as its own profile (the tables keep members apart): the summaries a
/// directory holds, else every file the paths name. Of summaries, the tables read
/// from their own files (`kernels`) are given to `tables` whole, and the trees are
/// read only when the query names a table made from them.
fn load(files: &[PathBuf], query: &str, tables: &mut Tables) -> Result<Vec<Profile>, String> {
    if let Some(found) = grove::summary::read::find(files) {
        let named = sql::named_tables(query).map_err(|e| e.to_string())?;
        for t in sql::summaries::TABLES {
            if named.contains(&t) {
                tables.preset(t, sql::summaries::read_table(&found, t, query)?);
            }
        }
        if named.iter().all(|t| sql::summaries::TABLES.contains(t)) {
            return Ok(Vec::new());
        }
        return found
            .iter()
            .map(|f| grove::summary::read::read(f).map_err(|e| format!("{}: {e}", f.display())))
            .collect();
    }
    let paths = grove::load::expand_inputs(files).map_err(|e| e.to_string())?;
    paths.iter().map(|f| input::load_warning(f)).collect()
}
