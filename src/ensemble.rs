//! Several profiles at once: the union of their trees by call path, with one metric
//! column per profile (`time@gcc`) and per-node ensemble statistics. A node missing
//! from a profile has no value there (NaN), not zero. Pure model work: which inputs
//! make an ensemble, and loading them, is `crate::load`'s.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::metrics::{base_of_inclusive, INC_SUFFIX};
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};

/// Statistics computed per node over the profiles, for every metric column.
pub const STATS: [&str; 6] = ["mean", "min", "max", "std", "cv", "argmax"];

/// The column of a metric in one profile: `time@gcc`, `time (inc)@gcc`.
pub fn column(metric: &str, label: &str) -> String {
    format!("{metric}@{label}")
}

/// Splits `time (inc)@gcc` into (`time (inc)`, `gcc`).
pub fn split_column(name: &str) -> Option<(&str, &str)> {
    name.rsplit_once('@')
}

/// A label per profile: the given ones, else distributedInfo rank, else the file stem;
/// made unique.
pub fn labels(profiles: &[Profile], given: &HashMap<String, String>) -> Vec<String> {
    // Profiles per input path, counted once (a scan per profile is quadratic at 10,000).
    let mut per_path: HashMap<Option<&std::path::Path>, usize> = HashMap::new();
    for p in profiles {
        *per_path.entry(p.source.path.as_deref()).or_default() += 1;
    }
    let mut out: Vec<String> = profiles
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let stem = p
                .source
                .path
                .as_ref()
                .and_then(|x| x.file_name())
                .map(|s| {
                    let s = s.to_string_lossy();
                    s.split('.').next().unwrap_or(&s).to_string()
                })
                .unwrap_or_else(|| p.source.label.clone());
            if let Some(l) = given.get(&stem).or_else(|| given.get(&i.to_string())) {
                return l.clone();
            }
            if let Some(r) = p
                .meta_value("distributedInfo.rank")
                .or_else(|| p.meta_value("mpi.rank"))
            {
                return format!("rank{r}");
            }
            // Readers that split one input into several profiles label them.
            let siblings = per_path[&p.source.path.as_deref()];
            if (p.source.path.is_none() || siblings > 1) && !p.source.label.is_empty() {
                return p.source.label.replace(' ', "_");
            }
            stem
        })
        .collect();
    // A label may not pass for a statistics column.
    for l in out.iter_mut() {
        if STATS.contains(&l.as_str()) {
            l.push('_');
        }
    }
    // Same stems (rank-0/trace.json, rank-1/trace.json): number them.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for l in &out {
        *seen.entry(l.clone()).or_default() += 1;
    }
    let mut count: HashMap<String, usize> = HashMap::new();
    for l in out.iter_mut() {
        if seen[l.as_str()] > 1 {
            let k = count.entry(l.clone()).or_default();
            *l = format!("{l}#{k}");
            *k += 1;
        }
    }
    out
}

/// Merges profiles into one: the union tree, `metric@label` columns, and for every
/// metric `metric@mean`, `@min`, `@max`, `@std`, `@cv` and `@argmax` (index of the
/// profile with the largest value). Per-profile metadata goes to `meta` as
/// `label.key = value`.
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
        // A database's summary profile (HPCToolkit) aggregates the others: it is a
        // column of its own but not a member of the statistics. Masking it (rather than
        // dropping it) keeps argmax an index into all members.
        let masked: Vec<Vec<f64>> = per
            .iter()
            .zip(profiles)
            .map(|(c, p)| {
                if is_summary(p) {
                    vec![f64::NAN; rows]
                } else {
                    c.clone()
                }
            })
            .collect();
        let all_masked = profiles.iter().all(is_summary);
        let stats = stats_columns(if all_masked { &per } else { &masked }, rows);
        for (name, vals) in STATS.iter().zip(stats) {
            let u = if matches!(*name, "cv" | "argmax") {
                ""
            } else {
                unit.as_str()
            };
            table.set(&column(m, name), u, vals);
        }
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
        dialect: format!("ensemble of {} ({})", profiles.len(), labels.join(", ")),
        cct,
        metrics: table,
        events: None,
        counters: None,
        meta,
        warnings,
        default_metric,
    }
}

/// HPCToolkit's summary profile (the sum over threads), as its reader labels it.
fn is_summary(p: &Profile) -> bool {
    p.source.format == Format::HpcToolkit && p.source.label == "summary"
}

fn stats_columns(per: &[Vec<f64>], rows: usize) -> [Vec<f64>; 6] {
    let mut out: [Vec<f64>; 6] = std::array::from_fn(|_| vec![f64::NAN; rows]);
    for r in 0..rows {
        let vals: Vec<(usize, f64)> = per
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c[r]))
            .filter(|(_, x)| !x.is_nan())
            .collect();
        if vals.is_empty() {
            continue;
        }
        let n = vals.len() as f64;
        let mean = vals.iter().map(|x| x.1).sum::<f64>() / n;
        let min = vals.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
        let (arg, max) =
            vals.iter().fold(
                (0, f64::NEG_INFINITY),
                |acc, &(i, x)| if x > acc.1 { (i, x) } else { acc },
            );
        let std = if vals.len() > 1 {
            (vals.iter().map(|x| (x.1 - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        out[0][r] = mean;
        out[1][r] = min;
        out[2][r] = max;
        out[3][r] = std;
        out[4][r] = if mean != 0.0 { std / mean } else { f64::NAN };
        out[5][r] = arg as f64;
    }
    out
}

/// The base metric of an ensemble column: `time (inc)@gcc` -> `time`.
pub fn base_metric(column: &str) -> String {
    let m = split_column(column).map(|x| x.0).unwrap_or(column);
    base_of_inclusive(m).unwrap_or_else(|| m.to_string())
}

/// `time@gcc` -> `time (inc)@gcc` when that column exists.
pub fn inclusive_column(table: &MetricTable, column: &str) -> Option<String> {
    let (m, l) = split_column(column)?;
    if base_of_inclusive(m).is_some() {
        return None;
    }
    let c = format!("{m}{INC_SUFFIX}@{l}");
    table.has(&c).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prof(paths: &[(&str, f64)]) -> Profile {
        let mut cct = Cct::default();
        let mut time = Vec::new();
        for (path, t) in paths {
            let mut parent = None;
            for seg in path.split('/') {
                parent = Some(cct.child(parent, seg, "function"));
            }
            time.resize(cct.len(), 0.0);
            time[parent.unwrap() as usize] += t;
        }
        time.resize(cct.len(), 0.0);
        let mut m = MetricTable::new(cct.len());
        m.set("time", "s", time);
        m.derive_inclusive(&cct, &["time"]);
        Profile {
            source: Source {
                path: None,
                format: Format::Folded,
                size: 0,
                gzip: false,
                label: "p".into(),
            },
            dialect: String::new(),
            cct,
            metrics: m,
            events: None,
            counters: None,
            meta: vec![("compiler".into(), "x".into())],
            warnings: Vec::new(),
            default_metric: "time".into(),
        }
    }

    #[test]
    fn union_by_path() {
        let a = prof(&[("main/solve", 3.0), ("main/io", 1.0)]);
        let b = prof(&[("main/solve", 5.0), ("main/mpi", 2.0)]);
        let u = unify(&[a, b], &["gcc".into(), "llvm".into()]);
        assert_eq!(u.cct.len(), 4);
        let m = &u.metrics;
        let io = (0..4).find(|&n| u.cct.name(n) == "io").unwrap();
        let solve = (0..4).find(|&n| u.cct.name(n) == "solve").unwrap();
        assert_eq!(m.get("time@gcc", io), 1.0);
        assert!(m.get("time@llvm", io).is_nan());
        assert_eq!(m.get("time (inc)@llvm", 0), 7.0);
        assert_eq!(m.get("time@mean", solve), 4.0);
        assert_eq!(m.get("time@max", solve), 5.0);
        assert_eq!(m.get("time@argmax", solve), 1.0);
        assert!((m.get("time@std", solve) - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(m.get("time@mean", io), 1.0);
        assert_eq!(u.meta_value("gcc.compiler"), Some("x"));
        assert_eq!(base_metric("time (inc)@gcc"), "time");
        assert_eq!(
            inclusive_column(m, "time@gcc").as_deref(),
            Some("time (inc)@gcc")
        );
    }
}
