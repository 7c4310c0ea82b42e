//! The kernel table: GPU activities aggregated by name with the columns of nsys'
//! cuda_gpu_kern_sum (count, total, mean, median, min, max, std, % of GPU time).

use std::collections::HashMap;

use super::GpuModel;
use crate::model::{EventKind, EventTable};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelSort {
    Total,
    Mean,
    Count,
}

impl KernelSort {
    pub fn parse(s: &str) -> Option<KernelSort> {
        match s {
            "total" => Some(KernelSort::Total),
            "mean" => Some(KernelSort::Mean),
            "count" => Some(KernelSort::Count),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KernelSort::Total => "total",
            KernelSort::Mean => "mean",
            KernelSort::Count => "count",
        }
    }

    pub fn next(self) -> KernelSort {
        match self {
            KernelSort::Total => KernelSort::Mean,
            KernelSort::Mean => KernelSort::Count,
            KernelSort::Count => KernelSort::Total,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    pub name: String,
    /// grove category (or the category itself when grouped by category).
    pub category: String,
    pub color: u8,
    pub kind: EventKind,
    pub count: u64,
    pub total_ns: i64,
    pub mean_ns: f64,
    pub median_ns: f64,
    pub min_ns: i64,
    pub max_ns: i64,
    /// Sample standard deviation (n - 1), as nsys reports it; 0 for one instance.
    pub std_ns: f64,
    /// Share of the total time of the rows included (kernels, or all GPU activity).
    pub pct: f64,
    /// Event indices of the instances, in start order.
    pub instances: Vec<u32>,
    /// The profile the row is of, in a table of several profiles side by side
    /// (`side_by_side`); None in one profile's table or one merged over files.
    pub profile: Option<String>,
}

impl KernelRow {
    /// A row before its statistics (`fill_stats` sets count, total, mean, ...).
    pub fn new(name: String, category: String, color: u8, kind: EventKind) -> KernelRow {
        KernelRow {
            name,
            category,
            color,
            kind,
            count: 0,
            total_ns: 0,
            mean_ns: 0.0,
            median_ns: 0.0,
            min_ns: 0,
            max_ns: 0,
            std_ns: 0.0,
            pct: 0.0,
            instances: Vec::new(),
            profile: None,
        }
    }
}

pub struct TableOptions {
    /// Include memcpy and memset rows, not only kernels.
    pub all: bool,
    /// One row per category instead of per name.
    pub by_category: bool,
    pub sort: KernelSort,
}

pub fn table(ev: &EventTable, gpu: &GpuModel, opt: &TableOptions) -> Vec<KernelRow> {
    // Groups by the name's (or category's) text, in order of first appearance. A row's
    // group is found by its interned name id first: a String made and hashed for every
    // activity held up the first frame's events by a fifth of a second on a 1 GB trace.
    let mut by_id: HashMap<u32, usize, crate::model::intern::FxBuild> = HashMap::default();
    let mut by_text: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<(&str, Vec<u32>)> = Vec::new();
    for &i in &gpu.activities {
        let iu = i as usize;
        if !opt.all && ev.kind[iu] != EventKind::Kernel {
            continue;
        }
        let g = if opt.by_category {
            group_of(&mut by_text, &mut groups, gpu.category_name(i))
        } else {
            match by_id.get(&ev.name[iu]) {
                Some(&g) => g,
                None => {
                    let g = group_of(&mut by_text, &mut groups, ev.name_of(iu));
                    by_id.insert(ev.name[iu], g);
                    g
                }
            }
        };
        groups[g].1.push(i);
    }
    let grand: i64 = (groups.iter().flat_map(|g| &g.1))
        .map(|&i| ev.dur[i as usize])
        .sum();
    let mut rows: Vec<KernelRow> = groups
        .into_iter()
        .map(|(name, inst)| {
            let name = name.to_string();
            let mut durs: Vec<i64> = inst.iter().map(|&i| ev.dur[i as usize]).collect();
            let first = inst[0];
            let mut r = KernelRow {
                instances: inst,
                ..KernelRow::new(
                    name,
                    gpu.category_name(first).to_string(),
                    gpu.category_color(first),
                    ev.kind[first as usize],
                )
            };
            fill_stats(&mut r, &mut durs);
            r.pct = if grand > 0 {
                r.total_ns as f64 * 100.0 / grand as f64
            } else {
                0.0
            };
            r
        })
        .collect();
    sort_rows(&mut rows, opt.sort);
    rows
}

/// The group of a kernel's text (its place in `groups`), a new one at its first row.
fn group_of<'a>(
    by_text: &mut HashMap<&'a str, usize>,
    groups: &mut Vec<(&'a str, Vec<u32>)>,
    text: &'a str,
) -> usize {
    *by_text.entry(text).or_insert_with(|| {
        groups.push((text, Vec::new()));
        groups.len() - 1
    })
}

/// Merges the rows of several files (one per rank) by name: statistics are recomputed
/// from all instances' durations, so medians and deviations stay exact.
pub fn merge(per_file: Vec<(Vec<KernelRow>, Vec<Vec<i64>>)>, sort: KernelSort) -> Vec<KernelRow> {
    let mut order: Vec<String> = Vec::new();
    let mut by: HashMap<String, (KernelRow, Vec<i64>)> = HashMap::new();
    for (rows, durs) in per_file {
        for (r, d) in rows.into_iter().zip(durs) {
            match by.get_mut(&r.name) {
                Some(acc) => acc.1.extend(d),
                None => {
                    order.push(r.name.clone());
                    by.insert(r.name.clone(), (r, d));
                }
            }
        }
    }
    let mut rows: Vec<KernelRow> = order
        .into_iter()
        .filter_map(|n| by.remove(&n))
        .map(|(mut r, mut d)| {
            fill_stats(&mut r, &mut d);
            r.instances.clear();
            r
        })
        .collect();
    let grand: i64 = rows.iter().map(|r| r.total_ns).sum();
    for r in &mut rows {
        r.pct = if grand > 0 {
            r.total_ns as f64 * 100.0 / grand as f64
        } else {
            0.0
        };
    }
    sort_rows(&mut rows, sort);
    rows
}

/// The kernel tables of several profiles side by side, for comparing runs: one row
/// per profile and kernel, labelled with its profile. Kernels come in the order of
/// their sort value over all the profiles (the total summed, the mean over all
/// instances, the count summed), each kernel's rows in profile order, so the runs of a
/// kernel stand together. A row's `pct` stays its share of its own profile's table,
/// and its instances point into its own profile's events, so they are dropped.
pub fn side_by_side(
    per_profile: Vec<(String, Vec<KernelRow>)>,
    sort: KernelSort,
) -> Vec<KernelRow> {
    // Per kernel: (count, total) over the profiles, and its rows.
    let mut order: Vec<String> = Vec::new();
    let mut by: HashMap<String, (u64, i64, Vec<KernelRow>)> = HashMap::new();
    for (label, rows) in per_profile {
        for mut r in rows {
            r.profile = Some(label.clone());
            r.instances.clear();
            let e = by.entry(r.name.clone()).or_insert_with(|| {
                order.push(r.name.clone());
                (0, 0, Vec::new())
            });
            e.0 += r.count;
            e.1 += r.total_ns;
            e.2.push(r);
        }
    }
    let key = |count: u64, total: i64| -> f64 {
        match sort {
            KernelSort::Total => total as f64,
            KernelSort::Mean => total as f64 / count.max(1) as f64,
            KernelSort::Count => count as f64,
        }
    };
    let mut kernels: Vec<(f64, String, Vec<KernelRow>)> = order
        .into_iter()
        .filter_map(|n| by.remove(&n).map(|(c, t, rows)| (key(c, t), n, rows)))
        .collect();
    kernels.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    kernels.into_iter().flat_map(|(_, _, rows)| rows).collect()
}

/// The first `top` kernels of a table: rows, or in a table of several profiles side
/// by side, all the rows of the first `top` kernel names.
pub fn top_kernels(rows: &mut Vec<KernelRow>, top: usize) {
    let mut seen = 0;
    let mut last: Option<&str> = None;
    let mut keep = rows.len();
    for (i, r) in rows.iter().enumerate() {
        if last != Some(r.name.as_str()) || r.profile.is_none() {
            seen += 1;
            last = Some(r.name.as_str());
        }
        if seen > top {
            keep = i;
            break;
        }
    }
    rows.truncate(keep);
}

pub(crate) fn fill_stats(r: &mut KernelRow, durs: &mut [i64]) {
    durs.sort_unstable();
    let n = durs.len();
    let total: i64 = durs.iter().sum();
    let mean = total as f64 / n as f64;
    r.count = n as u64;
    r.total_ns = total;
    r.mean_ns = mean;
    r.median_ns = if n % 2 == 1 {
        durs[n / 2] as f64
    } else {
        (durs[n / 2 - 1] + durs[n / 2]) as f64 / 2.0
    };
    r.min_ns = durs[0];
    r.max_ns = durs[n - 1];
    let var = if n > 1 {
        durs.iter().map(|&d| (d as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    r.std_ns = var.sqrt();
}

pub(crate) fn sort_rows(rows: &mut [KernelRow], sort: KernelSort) {
    let key = |r: &KernelRow| -> f64 {
        match sort {
            KernelSort::Total => r.total_ns as f64,
            KernelSort::Mean => r.mean_ns,
            KernelSort::Count => r.count as f64,
        }
    };
    rows.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.name.cmp(&b.name)));
}

/// The durations of each row's instances (for `merge`).
pub fn durations(ev: &EventTable, rows: &[KernelRow]) -> Vec<Vec<i64>> {
    rows.iter()
        .map(|r| r.instances.iter().map(|&i| ev.dur[i as usize]).collect())
        .collect()
}

/// The fixed CSV columns of `grove kernels` (docs/formats.md); a table of several
/// profiles side by side has a `profile` column first.
pub const CSV_HEADER: &str =
    "name,category,count,total_ns,mean_ns,median_ns,min_ns,max_ns,std_ns,pct";

pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn csv_row(r: &KernelRow) -> String {
    let profile = r
        .profile
        .as_deref()
        .map(|p| format!("{},", csv_field(p)))
        .unwrap_or_default();
    format!(
        "{profile}{},{},{},{},{:.1},{:.1},{},{},{:.1},{:.4}",
        csv_field(&r.name),
        csv_field(&r.category),
        r.count,
        r.total_ns,
        r.mean_ns,
        r.median_ns,
        r.min_ns,
        r.max_ns,
        r.std_ns,
        r.pct
    )
}

pub fn json_row(r: &KernelRow) -> serde_json::Value {
    let mut v = serde_json::json!({
        "name": r.name, "category": r.category, "count": r.count, "total_ns": r.total_ns,
        "mean_ns": r.mean_ns, "median_ns": r.median_ns, "min_ns": r.min_ns, "max_ns": r.max_ns,
        "std_ns": r.std_ns, "pct": r.pct,
    });
    if let (Some(p), Some(o)) = (&r.profile, v.as_object_mut()) {
        o.insert("profile".into(), p.clone().into());
    }
    v
}
