//! The union as `unify` built it before it was streamed (every member held until the
//! union was built, statistics from copies of the columns): the reference the streamed
//! union is checked against.

use std::collections::HashMap;
use std::sync::Arc;

use super::{column, is_additive, is_summary, Stats, STATS};
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

pub fn unify(profiles: &[Profile], labels: &[String]) -> Profile {
    let mut cct = Cct::default();
    let mut index: HashMap<(u32, Arc<str>, Arc<str>), u32> = HashMap::new();
    // For each profile: its node -> union node.
    let mut maps: Vec<Vec<u32>> = Vec::new();
    for p in profiles {
        let mut map = vec![0u32; p.cct.len()];
        // Parents have smaller ids than their children.
        for n in 0..p.cct.len() as u32 {
            let f = p.cct.frame(n);
            let parent = p.cct.parent(n).map(|x| map[x as usize]);
            let key = (parent.unwrap_or(u32::MAX), f.name.clone(), f.kind.clone());
            let u = match index.get(&key) {
                Some(&u) => u,
                None => {
                    let u = cct.add_node(
                        parent,
                        Frame {
                            name: f.name.clone(),
                            kind: f.kind.clone(),
                            attrs: f.attrs.clone(),
                        },
                    );
                    index.insert(key, u);
                    u
                }
            };
            map[n as usize] = u;
        }
        maps.push(map);
    }
    let rows = cct.len();
    let mut table = MetricTable::new(rows);
    // Metric names in first-seen order.
    let mut metrics: Vec<String> = Vec::new();
    for p in profiles {
        for m in p.metrics.names() {
            if !metrics.contains(&m) {
                metrics.push(m);
            }
        }
    }
    for m in &metrics {
        let mut per: Vec<Vec<f64>> = Vec::new();
        let mut unit = String::new();
        for (pi, p) in profiles.iter().enumerate() {
            let mut col = vec![f64::NAN; rows];
            if let Some(v) = p.metrics.values(m) {
                unit = p.metrics.unit(m).to_string();
                for (n, &u) in maps[pi].iter().enumerate() {
                    // Nodes that merged within one profile (same path twice) add up.
                    let x = v[n];
                    if !x.is_nan() {
                        let c = &mut col[u as usize];
                        *c = if c.is_nan() { x } else { *c + x };
                    }
                }
            }
            table.set(&column(m, &labels[pi]), &unit, col.clone());
            per.push(col);
        }
        let masked: Vec<bool> = profiles.iter().map(is_summary).collect();
        // A member has the metric when it holds a value of it somewhere (an all-NaN
        // column, such as a reader's placeholder for its default metric, is none).
        let has: Vec<bool> = per.iter().map(|c| c.iter().any(|x| !x.is_nan())).collect();
        let additive = is_additive(&metrics, m, &unit);
        set_stats(
            &mut table,
            m,
            &unit,
            &per,
            &masked,
            &has,
            additive,
            Stats::default(),
        );
    }
    let mut meta = Vec::new();
    for (p, l) in profiles.iter().zip(labels) {
        meta.push((
            format!("{l}.file"),
            p.source
                .path
                .as_ref()
                .map(|x| x.display().to_string())
                .unwrap_or_default(),
        ));
        for (k, v) in &p.meta {
            meta.push((format!("{l}.{k}"), v.clone()));
        }
    }
    let default_metric = profiles
        .first()
        .map(|p| column(&p.default_metric, "mean"))
        .unwrap_or_default();
    let mut warnings = Vec::new();
    for (p, l) in profiles.iter().zip(labels) {
        for w in &p.warnings {
            warnings.push(format!("{l}: {w}"));
        }
    }
    cct.finish();
    Profile {
        call_graph: None,
        source: Source {
            path: None,
            format: profiles
                .first()
                .map(|p| p.source.format)
                .unwrap_or(Format::HatchetLiteral),
            size: profiles.iter().map(|p| p.source.size).sum(),
            gzip: false,
            label: format!("{} profiles", profiles.len()),
        },
        dialect: format!(
            "ensemble of {} ({})",
            profiles.len(),
            crate::present::format::list_bounded(labels, 8)
        ),
        cct,
        metrics: table,
        events: None,
        counters: None,
        meta,
        warnings,
        default_metric,
    }
}

#[allow(clippy::too_many_arguments)]
fn set_stats(
    table: &mut MetricTable,
    m: &str,
    unit: &str,
    per: &[Vec<f64>],
    masked: &[bool],
    has: &[bool],
    additive: bool,
    mode: Stats,
) {
    let rows = table.rows();
    let all_masked = masked.iter().all(|&x| x);
    let zero = additive && mode == Stats::Zero;
    let members: Vec<Vec<f64>> = per
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if masked[i] && !all_masked {
                vec![f64::NAN; rows]
            } else if zero && has[i] {
                c.iter()
                    .map(|&x| if x.is_nan() { 0.0 } else { x })
                    .collect()
            } else {
                c.clone()
            }
        })
        .collect();
    let stats = stats_columns(&members, rows);
    for (name, vals) in STATS.iter().zip(stats) {
        let u = if matches!(*name, "cv" | "argmax") {
            ""
        } else {
            unit
        };
        table.set_in_place(&column(m, name), u, vals);
    }
}

fn stats_columns(per: &[Vec<f64>], rows: usize) -> [Vec<f64>; 6] {
    // Column by column (each member's column is read straight through, which matters
    // at 10,000 members), summing in member order as a row-wise loop would.
    let mut n = vec![0usize; rows];
    let mut sum = vec![0.0f64; rows];
    let mut min = vec![f64::INFINITY; rows];
    let mut max = vec![f64::NEG_INFINITY; rows];
    let mut arg = vec![0usize; rows];
    for (i, c) in per.iter().enumerate() {
        for (r, &x) in c.iter().enumerate().take(rows) {
            if x.is_nan() {
                continue;
            }
            n[r] += 1;
            sum[r] += x;
            min[r] = min[r].min(x);
            if x > max[r] {
                max[r] = x;
                arg[r] = i;
            }
        }
    }
    let mean: Vec<f64> = (0..rows).map(|r| sum[r] / n[r] as f64).collect();
    let mut dev = vec![0.0f64; rows];
    for c in per {
        for (r, &x) in c.iter().enumerate().take(rows) {
            if !x.is_nan() {
                dev[r] += (x - mean[r]).powi(2);
            }
        }
    }
    let mut out: [Vec<f64>; 6] = std::array::from_fn(|_| vec![f64::NAN; rows]);
    for r in 0..rows {
        if n[r] == 0 {
            continue;
        }
        let std = if n[r] > 1 {
            (dev[r] / (n[r] as f64 - 1.0)).sqrt()
        } else {
            0.0
        };
        out[0][r] = mean[r];
        out[1][r] = min[r];
        out[2][r] = max[r];
        out[3][r] = std;
        out[4][r] = if mean[r] != 0.0 {
            std / mean[r]
        } else {
            f64::NAN
        };
        out[5][r] = arg[r] as f64;
    }
    out
}
