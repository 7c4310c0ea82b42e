//! Several profiles at once: the union of their trees by call path, with one metric
//! column per profile (`time@gcc`) and per-node ensemble statistics. A node missing
//! from a profile has no value there (NaN), not zero. Pure model work: which inputs
//! make an ensemble, and loading them, is `crate::load`'s.

use std::collections::HashMap;
use std::path::Path;
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
/// made unique. When stems repeat (Thicket's `<config>/<run>/Base_CUDA-block_128.cali`,
/// `rank-0/trace.json`), the file-named members are labelled by the parts of their
/// paths that differ instead (`1/Base_CUDA-block_128`, `rank-0`); only what is still
/// equal after that is numbered (`#0`, `#1`).
pub fn labels(profiles: &[Profile], given: &HashMap<String, String>) -> Vec<String> {
    // Profiles per input path, counted once (a scan per profile is quadratic at 10,000).
    let mut per_path: HashMap<Option<&std::path::Path>, usize> = HashMap::new();
    for p in profiles {
        *per_path.entry(p.source.path.as_deref()).or_default() += 1;
    }
    // Which members are labelled by their file (and may be relabelled by their path).
    let mut by_file = vec![false; profiles.len()];
    let mut out: Vec<String> = profiles
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let stem = p
                .source
                .path
                .as_ref()
                .map(|x| stem_of(x))
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
            by_file[i] = p.source.path.is_some();
            stem
        })
        .collect();
    // Counted once: a scan per member is quadratic at 10,000 summaries.
    let mut times: HashMap<&str, usize> = HashMap::new();
    for l in &out {
        *times.entry(l.as_str()).or_default() += 1;
    }
    let repeated = (0..out.len()).any(|i| by_file[i] && times[out[i].as_str()] > 1);
    if repeated {
        let members: Vec<usize> = (0..out.len()).filter(|&i| by_file[i]).collect();
        let paths: Vec<&Path> = members
            .iter()
            .filter_map(|&i| profiles[i].source.path.as_deref())
            .collect();
        for (&i, l) in members.iter().zip(path_labels(&paths)) {
            if !l.is_empty() {
                out[i] = l;
            }
        }
    }
    // A label may not pass for a statistics column.
    for l in out.iter_mut() {
        if STATS.contains(&l.as_str()) {
            l.push('_');
        }
    }
    // Still the same (one file given twice): number them.
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

/// `runs/1/trace.json.gz` -> `trace`.
fn stem_of(path: &Path) -> String {
    path.file_name()
        .map(|s| {
            let s = s.to_string_lossy();
            s.split('.').next().unwrap_or(&s).to_string()
        })
        .unwrap_or_default()
}

/// Labels from the parts of the paths that differ. The parts every path shares at its
/// start are dropped; when the rest are equally deep, each label keeps the components
/// that are not the same in every path (`gcc_1/O3/1/x` and `gcc_2/O3/1/x` give
/// `gcc_1`, `gcc_2`), joined by `/`; otherwise the fewest trailing components that
/// tell all members apart. The file's stem stands for its name.
fn path_labels(paths: &[&Path]) -> Vec<String> {
    let parts: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            let mut v: Vec<String> = p
                .parent()
                .into_iter()
                .flat_map(|d| d.components())
                .filter(|c| matches!(c, std::path::Component::Normal(_)))
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            v.push(stem_of(p));
            v
        })
        .collect();
    let shortest = parts.iter().map(Vec::len).min().unwrap_or(0);
    let common = (0..shortest.saturating_sub(1))
        .take_while(|&k| parts.iter().all(|v| v[k] == parts[0][k]))
        .count();
    let rest: Vec<&[String]> = parts.iter().map(|v| &v[common..]).collect();
    let depth = rest.first().map(|v| v.len()).unwrap_or(0);
    if rest.iter().all(|v| v.len() == depth) {
        let differs: Vec<bool> = (0..depth)
            .map(|k| rest.iter().any(|v| v[k] != rest[0][k]))
            .collect();
        return rest
            .iter()
            .map(|v| {
                (0..depth)
                    .filter(|&k| differs[k])
                    .map(|k| v[k].as_str())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect();
    }
    let tail = |v: &[String], k: usize| v[v.len().saturating_sub(k)..].join("/");
    let longest = rest.iter().map(|v| v.len()).max().unwrap_or(0);
    let k = (1..=longest)
        .find(|&k| {
            let mut all: Vec<String> = rest.iter().map(|v| tail(v, k)).collect();
            all.sort();
            all.windows(2).all(|w| w[0] != w[1])
        })
        .unwrap_or(longest);
    rest.iter().map(|v| tail(v, k)).collect()
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
        let masked: Vec<bool> = profiles.iter().map(is_summary).collect();
        let has: Vec<bool> = profiles.iter().map(|p| p.metrics.has(m)).collect();
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

/// How the ensemble statistics treat a node that a member lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stats {
    /// For additive metrics (inclusive ones, exclusive ones with an inclusive partner,
    /// times), a node absent from a member counts as 0 there: the mean is over every
    /// member that has the metric, so a child's inclusive mean never exceeds its
    /// parent's. Other metrics (a block size, a count of repetitions) are over the
    /// members where the node is present.
    #[default]
    Zero,
    /// Over the members where the node is present, for every metric (a node's mean
    /// then says what it costs where it runs, but a child's may exceed its parent's).
    Present,
}

impl Stats {
    pub fn name(self) -> &'static str {
        match self {
            Stats::Zero => "zero",
            Stats::Present => "present",
        }
    }

    pub fn parse(s: &str) -> Option<Stats> {
        match s {
            "zero" | "absent-zero" => Some(Stats::Zero),
            "present" => Some(Stats::Present),
            _ => None,
        }
    }
}

/// Whether a node's absence from a member means "none of it there": inclusive
/// metrics, exclusive ones with an inclusive partner, and times.
fn is_additive(metrics: &[String], m: &str, unit: &str) -> bool {
    base_of_inclusive(m).is_some()
        || metrics.iter().any(|x| *x == format!("{m}{INC_SUFFIX}"))
        || crate::model::metrics::is_time_metric(m, unit)
}

/// Writes the statistics columns of metric `m` from its per-member columns `per`.
/// `masked`: members left out of the statistics (a database's summary profile, which
/// aggregates the others; masked rather than dropped so that argmax stays an index
/// into all members). `has`: members that have the metric at all (only those count
/// as 0 where a node is absent).
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

/// Recomputes the statistics columns of an ensemble's table under `mode`, from its
/// per-member columns (`members`: the labels, in member order; `is_hpctoolkit`: its
/// member `summary` is then the database's summary profile, left out as in `unify`).
/// Works on a filtered tree too: it reads only the columns.
pub fn restat(table: &mut MetricTable, members: &[String], is_hpctoolkit: bool, mode: Stats) {
    let names = table.names();
    let metrics: Vec<String> = names
        .iter()
        .filter_map(|n| n.strip_suffix("@mean").map(String::from))
        .collect();
    let rows = table.rows();
    let masked: Vec<bool> = members
        .iter()
        .map(|l| is_hpctoolkit && l == "summary")
        .collect();
    for m in &metrics {
        let unit = table.unit(&column(m, "mean")).to_string();
        let per: Vec<Vec<f64>> = members
            .iter()
            .map(|l| {
                table
                    .values(&column(m, l))
                    .map(<[f64]>::to_vec)
                    .unwrap_or_else(|| vec![f64::NAN; rows])
            })
            .collect();
        // A member without the metric has an all-NaN column (unify writes one).
        let has: Vec<bool> = per.iter().map(|c| c.iter().any(|x| !x.is_nan())).collect();
        let additive = is_additive(&metrics, m, &unit);
        set_stats(table, m, &unit, &per, &masked, &has, additive, mode);
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
        let mut p = crate::model::profile_of_paths(paths, "s");
        p.meta = vec![("compiler".into(), "x".into())];
        p
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
        // Absent from llvm: counts as 0 there by default, so the mean is over both.
        assert_eq!(m.get("time@mean", io), 0.5);
        assert_eq!(m.get("time (inc)@mean", io), 0.5);
        let mut present = m.clone();
        restat(
            &mut present,
            &["gcc".into(), "llvm".into()],
            false,
            Stats::Present,
        );
        assert_eq!(present.get("time@mean", io), 1.0);
        assert_eq!(present.get("time@mean", solve), 4.0);
        let mut back = present.clone();
        restat(
            &mut back,
            &["gcc".into(), "llvm".into()],
            false,
            Stats::Zero,
        );
        assert_eq!(back.get("time@mean", io), 0.5);
        assert_eq!(u.meta_value("gcc.compiler"), Some("x"));
        assert_eq!(base_metric("time (inc)@gcc"), "time");
        assert_eq!(
            inclusive_column(m, "time@gcc").as_deref(),
            Some("time (inc)@gcc")
        );
    }

    #[test]
    fn labels_from_the_parts_of_paths_that_differ() {
        let at = |path: &str| {
            let mut p = prof(&[("main", 1.0)]);
            p.source.path = Some(path.into());
            p
        };
        let ps: Vec<Profile> = [
            "r/lassen/clang_1048576/1/Base_CUDA-block_128.cali",
            "r/lassen/clang_1048576/1/Base_CUDA-block_256.cali",
            "r/lassen/clang_1048576/2/Base_CUDA-block_128.cali",
        ]
        .iter()
        .map(|x| at(x))
        .collect();
        assert_eq!(
            labels(&ps, &HashMap::new()),
            vec![
                "1/Base_CUDA-block_128",
                "1/Base_CUDA-block_256",
                "2/Base_CUDA-block_128"
            ]
        );
        // A constant part in the middle is left out; distinct stems stay as they are.
        let ps: Vec<Profile> = ["q/gcc_1/O3/1/x.cali", "q/gcc_2/O3/1/x.cali"]
            .iter()
            .map(|x| at(x))
            .collect();
        assert_eq!(labels(&ps, &HashMap::new()), vec!["gcc_1", "gcc_2"]);
        let ps: Vec<Profile> = ["a/27_cores.cali", "a/64_cores.cali"]
            .iter()
            .map(|x| at(x))
            .collect();
        assert_eq!(labels(&ps, &HashMap::new()), vec!["27_cores", "64_cores"]);
        // Different depths: the fewest trailing parts that tell them apart.
        let ps: Vec<Profile> = ["r/a/1/t.json", "r/b/c/1/t.json", "r/a/2/t.json"]
            .iter()
            .map(|x| at(x))
            .collect();
        assert_eq!(
            labels(&ps, &HashMap::new()),
            vec!["a/1/t", "c/1/t", "a/2/t"]
        );
    }
}
