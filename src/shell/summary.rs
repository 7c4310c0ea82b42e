//! `grove summary`: HTA's breakdowns per rank and stream; inputs whose ranks do not
//! tell them apart (two runs of rank 1) get a `profile` column first, labelled as an
//! ensemble of them is.

use grove::cli::{Format, SummaryArgs};
use grove::gpu::{self, report};

use super::{input, output};

pub fn run(args: SummaryArgs, labels: Option<&str>) -> Result<(), String> {
    let kernel_wait = &args.kernel_wait;
    // A plain number is µs, as HTA's parameter.
    let kw = kernel_wait
        .trim()
        .parse::<f64>()
        .ok()
        .map(|us| (us * 1000.0).round() as i64)
        .or_else(|| parse_duration(kernel_wait))
        .ok_or_else(|| format!("--kernel-wait {kernel_wait:?}: give a time such as 30us"))?;
    let opt = gpu::breakdown::Options {
        hta_rounding: args.hta_rounding,
        kernel_wait_ns: kw,
        ..Default::default()
    };
    let tables = &args.table.0;
    // The breakdowns use HTA's types, not grove's categories: a broken user
    // categories file must not stop them.
    let cats = gpu::classify::Categories::load(None).unwrap_or_else(|e| {
        eprintln!("grove: warning: {e}; using the built-in categories");
        gpu::classify::Categories::builtin()
    });
    let mut rows: Vec<Vec<Vec<String>>> = vec![Vec::new(); tables.len()];
    // Which file each row is of, and each file's rank and bare profile: two runs of
    // one rank (`base/`, `test/`) get a profile column to tell them apart.
    let mut of_file: Vec<Vec<usize>> = vec![Vec::new(); tables.len()];
    let mut ranks = Vec::new();
    let mut members = Vec::new();
    // Every subcommand takes the same inputs: a directory or quoted glob of rank
    // traces is its files, one rank each.
    let files = input::expand(&args.files)?;
    for (i, f) in files.iter().enumerate() {
        let p = input::load_warning(f)?;
        let Some(ev) = p.events.as_ref() else {
            return Err(format!("{}: not a trace: it has no events", f.display()));
        };
        let model = gpu::GpuModel::new(ev, cats.clone());
        let rank = report::rank_of(&p, i);
        let opt = gpu::breakdown::Options {
            hta_base_ns: p
                .meta_value("baseTimeNanoseconds")
                .and_then(|b| b.parse().ok())
                .unwrap_or(0),
            ..opt
        };
        for (t, table) in tables.iter().enumerate() {
            let r = report::table_rows(&p, &model, rank, *table, &opt);
            of_file[t].extend(std::iter::repeat_n(i, r.len()));
            rows[t].extend(r);
        }
        ranks.push(rank);
        members.push(super::kernels::bare(&p));
        // The last rank stays until the process ends; the others are freed as they
        // go, so many ranks do not pile up.
        if i + 1 == files.len() {
            super::leave((p, model));
        }
    }
    let mut distinct = ranks.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let by_profile = distinct.len() < ranks.len();
    if by_profile {
        let labels = input::labels_of(&members, labels)?;
        for (t, rs) in rows.iter_mut().enumerate() {
            for (r, &i) in rs.iter_mut().zip(&of_file[t]) {
                r.insert(0, labels[i].clone());
            }
        }
    }
    let header = |t: &report::Table| -> String {
        if by_profile {
            format!("profile,{}", t.header())
        } else {
            t.header().to_string()
        }
    };
    let format = args.format;
    if format == Format::Json && tables.len() > 1 {
        // One JSON document: {"temporal": [...], "idle": [...], ...}.
        let mut obj = serde_json::Map::new();
        for (t, table) in tables.iter().enumerate() {
            let one = report::render(&header(table), &rows[t], Format::Json, "")?;
            let v: serde_json::Value = serde_json::from_str(&one).unwrap_or_default();
            obj.insert(table.name().to_string(), v);
        }
        let doc = serde_json::Value::Object(obj);
        return output::text(&(serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"));
    }
    let mut text = String::new();
    for (t, table) in tables.iter().enumerate() {
        let title = if tables.len() > 1 { table.name() } else { "" };
        text.push_str(&report::render(&header(table), &rows[t], format, title)?);
        if tables.len() > 1 && format == Format::Text {
            text.push('\n');
        }
    }
    output::text(&text)
}

/// `30us`, `1.5ms`, `200ns`, `2s` -> ns.
fn parse_duration(s: &str) -> Option<i64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let v: f64 = s[..split].parse().ok()?;
    grove::query::convert_unit(v, &s[split..], "ns").map(|x| x.round() as i64)
}
