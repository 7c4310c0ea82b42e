//! Headless output of the GPU views: `grove kernels` and `grove summary` as text, CSV or
//! JSON. The CSV columns are fixed (scripts depend on them; docs/formats.md lists them).

use std::fmt::Write;

use super::breakdown::{self, Options};
use super::kernels::{self, KernelRow};
use super::GpuModel;
use crate::export::formats::{refusal, Format, Writes};
use crate::model::Profile;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Temporal,
    Idle,
    Overlap,
    Launch,
    Queue,
    Memory,
    Overhead,
}

impl Table {
    pub const ALL: [Table; 7] = [
        Table::Temporal,
        Table::Idle,
        Table::Overlap,
        Table::Launch,
        Table::Queue,
        Table::Memory,
        Table::Overhead,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Temporal => "temporal",
            Table::Idle => "idle",
            Table::Overlap => "overlap",
            Table::Launch => "launch",
            Table::Queue => "queue",
            Table::Memory => "memory",
            Table::Overhead => "overhead",
        }
    }

    pub fn header(self) -> &'static str {
        match self {
            Table::Temporal => breakdown::TEMPORAL_HEADER,
            Table::Idle => breakdown::IDLE_HEADER,
            Table::Overlap => breakdown::OVERLAP_HEADER,
            Table::Launch => breakdown::LAUNCH_HEADER,
            Table::Queue => breakdown::QUEUE_HEADER,
            Table::Memory => breakdown::MEMORY_HEADER,
            Table::Overhead => breakdown::OVERHEAD_HEADER,
        }
    }
}

/// The rank of a profile: distributedInfo.rank, else its position among the inputs.
pub fn rank_of(p: &Profile, index: usize) -> i64 {
    p.meta_value("distributedInfo.rank")
        .and_then(|r| r.parse().ok())
        .unwrap_or(index as i64)
}

fn num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.4}")
    }
}

/// Rows of one table for one profile, as CSV fields.
pub fn table_rows(
    p: &Profile,
    gpu: &GpuModel,
    rank: i64,
    table: Table,
    opt: &Options,
) -> Vec<Vec<String>> {
    let Some(ev) = p.events.as_ref() else {
        return Vec::new();
    };
    match table {
        Table::Temporal => breakdown::temporal(ev, gpu, rank, opt)
            .into_iter()
            .map(|t| {
                vec![
                    t.rank.to_string(),
                    breakdown::stream_label(t.stream),
                    t.kernel_time_ns.to_string(),
                    t.compute_time_ns.to_string(),
                    t.non_compute_time_ns.to_string(),
                    t.idle_time_ns.to_string(),
                    format!("{:.2}", t.compute_pct),
                    format!("{:.2}", t.non_compute_pct),
                    format!("{:.2}", t.idle_pct),
                ]
            })
            .collect(),
        Table::Idle => breakdown::idle(ev, gpu, rank, opt)
            .into_iter()
            .map(|r| {
                vec![
                    r.rank.to_string(),
                    r.stream.to_string(),
                    r.category.to_string(),
                    r.idle_time_ns.to_string(),
                    format!("{:.4}", r.idle_time_ratio),
                ]
            })
            .collect(),
        Table::Overlap => vec![vec![
            rank.to_string(),
            format!("{:.2}", breakdown::overlap(ev, gpu, opt)),
        ]],
        Table::Launch => {
            let l = breakdown::launch_summary(ev, gpu, rank, opt);
            vec![vec![
                l.rank.to_string(),
                l.launches.to_string(),
                format!("{:.1}", l.cpu_duration_mean_ns),
                format!("{:.1}", l.gpu_duration_mean_ns),
                format!("{:.1}", l.launch_delay_mean_ns),
                l.launch_delay_max_ns.to_string(),
                l.short_kernels.to_string(),
                l.runtime_outliers.to_string(),
                l.launch_delay_outliers.to_string(),
            ]]
        }
        Table::Queue => breakdown::queue(ev, gpu, opt)
            .into_iter()
            .map(|((_, s), d)| {
                let mut row = vec![rank.to_string(), s.to_string()];
                row.extend(d.iter().map(|x| num(*x)));
                row
            })
            .collect(),
        Table::Memory => breakdown::memory(ev, gpu, opt)
            .into_iter()
            .map(|(ty, d)| {
                let mut row = vec![rank.to_string(), ty];
                row.extend(d.iter().map(|x| num(*x)));
                row
            })
            .collect(),
        Table::Overhead => breakdown::overhead(ev, rank, opt)
            .into_iter()
            .map(|o| {
                vec![
                    o.rank.to_string(),
                    o.step,
                    o.step_ns.to_string(),
                    o.launch_ns.to_string(),
                    o.before_first_launch_ns.to_string(),
                    o.after_last_launch_ns.to_string(),
                    o.between_launches_ns.to_string(),
                    o.gap_between_ops_ns.to_string(),
                ]
            })
            .collect(),
    }
}

/// Renders rows under a header in the chosen format.
/// `4.57 ms`, `120 µs`: a number with a time unit (right-aligned like numbers).
fn is_duration(f: &str) -> bool {
    f.split_once(' ').is_some_and(|(n, u)| {
        n.parse::<f64>().is_ok() && matches!(u, "ns" | "µs" | "us" | "ms" | "s")
    })
}

/// Rows with every `*_ns` column shown as a duration with its unit, and the header
/// without the `_ns` suffixes (the TUI's summary panel; `grove summary` keeps the raw
/// numbers, and csv/json always do).
pub fn humanize_ns(header: &str, rows: &[Vec<String>], micro: &str) -> (String, Vec<Vec<String>>) {
    let cols: Vec<&str> = header.split(',').collect();
    let ns: Vec<bool> = cols.iter().map(|c| c.ends_with("_ns")).collect();
    // `step_ns` beside `step` (the overhead table) reads `step time`, not `step step`.
    let head: Vec<String> = cols
        .iter()
        .map(|c| match c.strip_suffix("_ns") {
            Some(b) if cols.contains(&b) => format!("{b} time"),
            Some(b) => b.to_string(),
            None => c.to_string(),
        })
        .collect();
    let rows = rows
        .iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(i, f)| match f.parse::<f64>() {
                    Ok(v) if ns.get(i).copied().unwrap_or(false) => {
                        crate::present::format::duration_ns(v, micro)
                    }
                    _ => f.clone(),
                })
                .collect()
        })
        .collect();
    (head.join(","), rows)
}

/// A table as `format` writes it; a format that writes no tables is refused.
pub fn render(
    header: &str,
    rows: &[Vec<String>],
    format: Format,
    title: &str,
) -> Result<String, String> {
    let cols: Vec<&str> = header.split(',').collect();
    Ok(match format {
        Format::Text => render_text(header, rows, title),
        Format::Csv => {
            let mut s = format!("{header}\n");
            for r in rows {
                let fields: Vec<String> = r.iter().map(|f| kernels::csv_field(f)).collect();
                let _ = writeln!(s, "{}", fields.join(","));
            }
            s
        }
        Format::Json => {
            let recs: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| {
                    let mut m = serde_json::Map::new();
                    for (c, v) in cols.iter().zip(r) {
                        let val = v
                            .parse::<i64>()
                            .map(serde_json::Value::from)
                            .or_else(|_| v.parse::<f64>().map(serde_json::Value::from))
                            .unwrap_or_else(|_| serde_json::Value::from(v.clone()));
                        m.insert(c.to_string(), val);
                    }
                    serde_json::Value::Object(m)
                })
                .collect();
            serde_json::to_string_pretty(&recs).unwrap_or_default() + "\n"
        }
        other => return Err(refusal(other, Writes::Tables)),
    })
}

/// A table as aligned text under `title` (none when empty).
pub fn render_text(header: &str, rows: &[Vec<String>], title: &str) -> String {
    let cols: Vec<&str> = header.split(',').collect();
    let mut widths: Vec<usize> = cols.iter().map(|c| c.len()).collect();
    for r in rows {
        for (i, f) in r.iter().enumerate() {
            widths[i] = widths[i].max(f.chars().count());
        }
    }
    let mut s = if title.is_empty() {
        String::new()
    } else {
        format!("{title}\n")
    };
    let line = |fields: Vec<&str>| -> String {
        fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i == 0 || !(f.parse::<f64>().is_ok() || is_duration(f)) {
                    format!("{f:<w$}", w = widths[i])
                } else {
                    format!("{f:>w$}", w = widths[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let _ = writeln!(s, "{}", line(cols.clone()).trim_end());
    for r in rows {
        let _ = writeln!(
            s,
            "{}",
            line(r.iter().map(|x| x.as_str()).collect()).trim_end()
        );
    }
    s
}

/// `grove kernels` output.
pub fn kernels_report(
    rows: &[KernelRow],
    top: usize,
    format: Format,
    glyphs_block: &str,
) -> Result<String, String> {
    let rows = &rows[..top.min(rows.len())];
    // Several profiles side by side: a profile column (`gpu::kernels::side_by_side`).
    let side_by_side = rows.iter().any(|r| r.profile.is_some());
    Ok(match format {
        Format::Csv => {
            let profile = if side_by_side { "profile," } else { "" };
            let mut s = format!("{profile}{}\n", kernels::CSV_HEADER);
            for r in rows {
                let _ = writeln!(s, "{}", kernels::csv_row(r));
            }
            s
        }
        Format::Json => {
            let v: Vec<serde_json::Value> = rows.iter().map(kernels::json_row).collect();
            serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
        }
        Format::Text => {
            let mut s = String::new();
            let max = rows.iter().map(|r| r.total_ns).max().unwrap_or(1).max(1) as f64;
            let pw = rows
                .iter()
                .filter_map(|r| r.profile.as_deref())
                .map(|p| p.chars().count())
                .max()
                .map_or(0, |w| w.max("profile".len()) + 2);
            let profile = |p: &str| format!("{p:<w$}", w = pw);
            let _ = writeln!(
                s,
                "{}{:>7}  {:>12}  {:>10}  {:>9}  {:<11}  {:<20}  name",
                if side_by_side {
                    profile("profile")
                } else {
                    String::new()
                },
                "time%",
                "total",
                "count",
                "mean",
                "category",
                "bar"
            );
            let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
            let short = super::short_names::distinct_short_names(&names, "...");
            for (r, short) in rows.iter().zip(&short) {
                let w = (r.total_ns as f64 / max * 20.0).round() as usize;
                let _ = writeln!(
                    s,
                    "{}{:>6.2}%  {:>12}  {:>10}  {:>9}  {:<11}  {:<20}  {}",
                    r.profile.as_deref().map(profile).unwrap_or_default(),
                    r.pct,
                    crate::present::format::duration_ns(r.total_ns as f64, "us"),
                    r.count,
                    crate::present::format::duration_ns(r.mean_ns, "us"),
                    r.category,
                    glyphs_block.repeat(w),
                    short
                );
            }
            s
        }
        other => return Err(refusal(other, Writes::Tables)),
    })
}
