//! Several profiles at once: the union of their trees by call path, with one metric
//! column per profile (`time@gcc`) and per-node ensemble statistics. A node missing
//! from a profile has no value there (NaN), not zero. Pure model work: which inputs
//! make an ensemble, and loading them, is `crate::load`'s.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::model::intern::FxBuild;
use crate::model::metrics::{base_of_inclusive, INC_SUFFIX};
use crate::model::{Cct, Format, MetricTable, Profile, Source, NO_NODE};

pub mod events;

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
    // Which are labelled by their rank: two runs of rank 1 (`base/base.json.gz`,
    // `test/test.json.gz`) are told apart by their paths, not numbered.
    let mut by_rank = vec![false; profiles.len()];
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
                by_rank[i] = p.source.path.is_some();
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
    let twins: Vec<usize> = (0..out.len())
        .filter(|&i| by_rank[i] && times[out[i].as_str()] > 1)
        .collect();
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
    let twin_paths: Vec<&Path> = twins
        .iter()
        .filter_map(|&i| profiles[i].source.path.as_deref())
        .collect();
    let mut distinct_paths = twin_paths.clone();
    distinct_paths.sort();
    distinct_paths.dedup();
    if distinct_paths.len() == twin_paths.len() && twins.len() > 1 {
        for (&i, l) in twins.iter().zip(path_labels(&twin_paths)) {
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
                let mut kept: Vec<&str> = (0..depth)
                    .filter(|&k| differs[k])
                    .map(|k| v[k].as_str())
                    .collect();
                // `base/base.json.gz` reads `base`, not `base/base`.
                kept.dedup();
                kept.join("/")
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
    let mut u = Union::default();
    for p in profiles {
        u.add(p);
    }
    u.finish(labels)
}

/// The union of an ensemble built as its members arrive (`add`, in member order), so
/// that a member's tree and table can be dropped once merged: 10,000 summaries never
/// sit in memory at once. `finish` gives what `unify` gives, column for column.
#[derive(Default)]
pub struct Union {
    cct: Cct,
    /// (union parent or NO_NODE, name, kind) -> union node, the texts by their ids
    /// (packed in one integer: the Fx hasher then takes two words, not twelve bytes).
    index: HashMap<u128, u32, FxBuild>,
    /// An id per distinct text of names and kinds, found by the string's address
    /// first: the summaries one thread reads share their strings, so most lookups are
    /// a pointer's rather than a hash and a comparison of a long kernel name.
    texts: HashMap<Arc<str>, u32, FxBuild>,
    by_address: HashMap<usize, u32, FxBuild>,
    /// The strings whose addresses are keys, held so that no address is reused for
    /// another text while the union is built.
    held: Vec<Arc<str>>,
    /// Set once addresses turned out not to repeat (readers that give every node its
    /// own string): remembering each one would cost more memory than it saves time.
    by_text_only: bool,
    /// Metric names in first-seen order, and their positions there.
    metrics: Vec<String>,
    position: HashMap<String, usize>,
    /// Per metric, per member: its values on the union's nodes as they were when it
    /// was merged (nodes added later lie past the end: no value there), None where the
    /// member lacks the metric; and the unit of its column (the last unit seen for the
    /// metric up to that member, as members are read in order).
    columns: Vec<Vec<Option<Vec<f64>>>>,
    units: Vec<Vec<String>>,
    /// The members without their tree and table: what labels and metadata need.
    members: Vec<Profile>,
}

impl Union {
    /// Merges one member, after those added before it; gives its nodes' ids in the
    /// union (what its events' nodes become, `events::merge`).
    pub fn add(&mut self, p: &Profile) -> Vec<u32> {
        let mut map = vec![0u32; p.cct.len()];
        // Parents have smaller ids than their children.
        for n in 0..p.cct.len() as u32 {
            let f = p.cct.frame(n);
            let parent = p.cct.parent(n).map(|x| map[x as usize]);
            let key = (parent.unwrap_or(NO_NODE) as u128) << 64
                | (self.text_id(&f.name) as u128) << 32
                | self.text_id(&f.kind) as u128;
            map[n as usize] = match self.index.get(&key) {
                Some(&u) => u,
                None => {
                    let u = self.cct.add_node(parent, f.clone());
                    self.index.insert(key, u);
                    u
                }
            };
        }
        let member = self.members.len();
        for m in p.metrics.name_refs() {
            if !self.position.contains_key(m) {
                self.position.insert(m.to_string(), self.metrics.len());
                self.metrics.push(m.to_string());
                self.columns.push(Vec::new());
                self.units.push(Vec::new());
            }
        }
        let rows = self.cct.len();
        for k in 0..self.metrics.len() {
            let m = &self.metrics[k];
            let col = p.metrics.values(m).map(|v| {
                let mut col = vec![f64::NAN; rows];
                for (&u, &x) in map.iter().zip(v) {
                    // Nodes that merged within one profile (same path twice) add up.
                    if !x.is_nan() {
                        let c = &mut col[u as usize];
                        *c = if c.is_nan() { x } else { *c + x };
                    }
                }
                col
            });
            let unit = match &col {
                Some(_) => p.metrics.unit(m).to_string(),
                None => self.units[k].last().cloned().unwrap_or_default(),
            };
            // Members merged before the metric first appeared lack it.
            self.columns[k].resize(member, None);
            self.units[k].resize(member, String::new());
            self.columns[k].push(col);
            self.units[k].push(unit);
        }
        self.members.push(Profile {
            call_graph: p
                .estimated_paths()
                .then(crate::model::call_graph::CallGraph::estimated_marker),
            source: p.source.clone(),
            dialect: String::new(),
            cct: Cct::default(),
            metrics: MetricTable::new(0),
            events: None,
            counters: None,
            meta: p.meta.clone(),
            warnings: p.warnings.clone(),
            default_metric: p.default_metric.clone(),
        });
        map
    }

    fn text_id(&mut self, s: &Arc<str>) -> u32 {
        let address = Arc::as_ptr(s) as *const u8 as usize;
        if let Some(&id) = self.by_address.get(&address) {
            return id;
        }
        let next = self.texts.len() as u32;
        let id = *self.texts.entry(s.clone()).or_insert(next);
        if !self.by_text_only {
            if self.held.len() > 8 * self.texts.len() + 4096 {
                self.by_text_only = true;
                self.by_address = HashMap::default();
                self.held = Vec::new();
            } else {
                self.by_address.insert(address, id);
                self.held.push(s.clone());
            }
        }
        id
    }

    /// The members merged so far, without their trees and tables (for `labels`).
    pub fn members(&self) -> &[Profile] {
        &self.members
    }

    /// The ensemble, its members labelled by `labels` (one per member, in order).
    pub fn finish(mut self, labels: &[String]) -> Profile {
        self.cct.finish();
        let rows = self.cct.len();
        let n = self.members.len();
        let mut table = MetricTable::new(rows);
        let masked: Vec<bool> = self.members.iter().map(is_summary).collect();
        let metrics = std::mem::take(&mut self.metrics);
        for (k, m) in metrics.iter().enumerate() {
            let mut units = std::mem::take(&mut self.units[k]);
            let unit = units.last().cloned().unwrap_or_default();
            units.resize(n, unit.clone());
            let cols = std::mem::take(&mut self.columns[k]);
            // A member has the metric when it holds a value of it somewhere, as in
            // `restat`: a column of NaN only (HPCToolkit's placeholder for a profile's
            // default metric when the profile has no values, a GPU stream's `GPUOP`)
            // is no value, and counting it as 0 halved `GPUOP@mean` beside `GKER@mean`.
            let mut has: Vec<bool> = cols
                .iter()
                .map(|c| c.as_ref().is_some_and(|c| c.iter().any(|x| !x.is_nan())))
                .collect();
            has.resize(n, false);
            // Every member's column on every node, each allocated once.
            let mut per: Vec<Vec<f64>> = cols
                .into_iter()
                .map(|c| {
                    let mut c = c.unwrap_or_default();
                    c.resize(rows, f64::NAN);
                    c
                })
                .collect();
            per.resize(n, vec![f64::NAN; rows]);
            let additive = is_additive(&metrics, m, &unit);
            let stats = member_stats(&per, &masked, &has, additive, Stats::default(), rows);
            for ((col, l), u) in per.into_iter().zip(labels).zip(&units) {
                table.set(&column(m, l), u, col);
            }
            put_stats(&mut table, m, &unit, stats);
        }
        let mut meta = Vec::new();
        for (p, l) in self.members.iter().zip(labels) {
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
        let mut warnings = Vec::new();
        for (p, l) in self.members.iter().zip(labels) {
            for w in &p.warnings {
                warnings.push(format!("{l}: {w}"));
            }
        }
        let first = self.members.first();
        // A tree merged from estimated trees is estimated.
        let estimated = self.members.iter().any(Profile::estimated_paths);
        Profile {
            call_graph: estimated.then(crate::model::call_graph::CallGraph::estimated_marker),
            source: Source {
                path: None,
                format: first
                    .map(|p| p.source.format)
                    .unwrap_or(Format::HatchetLiteral),
                size: self.members.iter().map(|p| p.source.size).sum(),
                gzip: false,
                label: format!("{n} profiles"),
            },
            // Bounded: 10,000 members' labels made a 100 KB line of `grove info`.
            dialect: format!(
                "ensemble of {n} ({})",
                crate::present::format::list_bounded(labels, 8)
            ),
            // A CUBE profile opens on its summary over locations, as Cube does (when it
            // is the one summary: several files given together relabel theirs).
            default_metric: first
                .map(|p| match p.source.format {
                    Format::Cube
                        if is_summary(p)
                            && labels.first().map(String::as_str) == Some("summary") =>
                    {
                        column(&p.default_metric, "summary")
                    }
                    _ => column(&p.default_metric, "mean"),
                })
                .unwrap_or_default(),
            cct: self.cct,
            metrics: table,
            events: None,
            counters: None,
            meta,
            warnings,
        }
    }
}

/// HPCToolkit's (or a CUBE4 profile's) summary profile (the sum over threads), as
/// its reader labels it.
fn is_summary(p: &Profile) -> bool {
    matches!(p.source.format, Format::HpcToolkit | Format::Cube) && p.source.label == "summary"
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

/// The statistics of metric `m` from its per-member columns `per`. `masked`: members
/// left out of the statistics (a database's summary profile, which aggregates the
/// others; masked rather than dropped so that argmax stays an index into all members).
/// `has`: members that have the metric at all (only those count as 0 where a node is
/// absent, when the metric is `additive` and the mode is `Stats::Zero`).
fn member_stats(
    per: &[Vec<f64>],
    masked: &[bool],
    has: &[bool],
    additive: bool,
    mode: Stats,
    rows: usize,
) -> [Vec<f64>; 6] {
    let all_masked = masked.iter().all(|&x| x);
    let zero = additive && mode == Stats::Zero;
    // Read in place, each member as it would be seen (masked: not at all; absent
    // counted as 0 where that applies): a copy of every column was as large as the
    // ensemble's table.
    let members: Vec<(usize, &[f64], bool)> = per
        .iter()
        .enumerate()
        .filter(|&(i, _)| !masked[i] || all_masked)
        .map(|(i, c)| (i, &c[..], zero && has[i]))
        .collect();
    stats_columns(&members, rows)
}

/// Writes the statistics columns of metric `m` (`member_stats`) after its other columns.
fn put_stats(table: &mut MetricTable, m: &str, unit: &str, stats: [Vec<f64>; 6]) {
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
        let stats = member_stats(&per, &masked, &has, additive, mode, rows);
        put_stats(table, m, &unit, stats);
    }
}

/// The six statistics per row over `per`: (the member's index, its column, whether
/// a NaN there counts as 0).
fn stats_columns(per: &[(usize, &[f64], bool)], rows: usize) -> [Vec<f64>; 6] {
    // Column by column (each member's column is read straight through, which matters
    // at 10,000 members), summing in member order as a row-wise loop would.
    let value = |x: f64, nan_is_zero: bool| if nan_is_zero && x.is_nan() { 0.0 } else { x };
    let mut n = vec![0usize; rows];
    let mut sum = vec![0.0f64; rows];
    let mut min = vec![f64::INFINITY; rows];
    let mut max = vec![f64::NEG_INFINITY; rows];
    let mut arg = vec![0usize; rows];
    for &(i, c, z) in per {
        for (r, &x) in c.iter().enumerate().take(rows) {
            let x = value(x, z);
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
    for &(_, c, z) in per {
        for (r, &x) in c.iter().enumerate().take(rows) {
            let x = value(x, z);
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
mod reference;

#[cfg(test)]
mod tests {
    use super::*;

    fn prof(paths: &[(&str, f64)]) -> Profile {
        let mut p = crate::model::profile_of_paths(paths, "s");
        p.meta = vec![("compiler".into(), "x".into())];
        p
    }

    /// A member whose column of a metric is NaN everywhere (an HPCToolkit profile's
    /// placeholder for its default metric) does not have the metric: two metrics with
    /// the same values get the same statistics, whether streamed, all at once or
    /// recomputed by `restat`.
    #[test]
    fn an_all_nan_column_is_no_member_of_the_statistics() {
        let a = prof(&[("main/kernel", 3.0)]);
        let mut b = prof(&[("main/kernel", 1.0)]);
        let rows = b.cct.len();
        b.metrics = MetricTable::new(rows);
        b.metrics.set("time", "s", vec![f64::NAN; rows]);
        b.metrics.set("time (inc)", "s", vec![f64::NAN; rows]);
        let l: Vec<String> = vec!["thread".into(), "stream".into()];
        let ps = vec![a, b];
        for u in [unify(&ps, &l), reference::unify(&ps, &l)] {
            let m = &u.metrics;
            assert_eq!(m.get("time (inc)@mean", 0), 3.0);
            assert_eq!(m.get("time (inc)@min", 0), 3.0);
            assert_eq!(m.get("time@std", 1), 0.0);
            let mut again = m.clone();
            restat(&mut again, &l, false, Stats::Zero);
            assert_eq!(again.get("time (inc)@mean", 0), 3.0);
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

    /// Every part of two profiles that a view or an export reads, NaN equal to NaN.
    fn assert_same(a: &Profile, b: &Profile) {
        assert_eq!(a.cct.len(), b.cct.len());
        for n in 0..a.cct.len() as u32 {
            assert_eq!(a.cct.frame(n), b.cct.frame(n), "node {n}");
            assert_eq!(a.cct.parent(n), b.cct.parent(n), "node {n}");
            assert_eq!(
                a.cct.children(n).collect::<Vec<_>>(),
                b.cct.children(n).collect::<Vec<_>>()
            );
        }
        assert_eq!(a.cct.root_ids(), b.cct.root_ids());
        assert_eq!(a.metrics.names(), b.metrics.names());
        for c in a.metrics.name_refs() {
            assert_eq!(a.metrics.unit(c), b.metrics.unit(c), "{c}");
            let bits = |t: &MetricTable| -> Vec<u64> {
                t.values(c).unwrap().iter().map(|x| x.to_bits()).collect()
            };
            assert_eq!(bits(&a.metrics), bits(&b.metrics), "{c}");
        }
        assert_eq!(a.meta, b.meta);
        assert_eq!(a.warnings, b.warnings);
        assert_eq!(a.default_metric, b.default_metric);
        assert_eq!(a.dialect, b.dialect);
        assert_eq!(
            (
                &a.source.path,
                a.source.format,
                a.source.size,
                &a.source.label
            ),
            (
                &b.source.path,
                b.source.format,
                b.source.size,
                &b.source.label
            )
        );
    }

    /// Members whose trees differ: nodes missing in some, a deeper branch, another
    /// root, a path twice in one member, a metric only one member has (with no
    /// inclusive partner: not additive) and another unit.
    fn members() -> Vec<Profile> {
        let mut a = prof(&[("main/solve", 3.0), ("main/io", 1.0)]);
        a.warnings.push("a warning".into());
        let mut b = prof(&[("main/solve", 5.0), ("main/mpi", 2.0), ("other/x", 0.5)]);
        b.meta.push(("distributedInfo.rank".into(), "7".into()));
        let mut c = prof(&[("main/solve/inner", 4.0), ("main/io", 0.0)]);
        let count = (0..c.cct.len()).map(|n| n as f64 + 1.0).collect();
        c.metrics.set("count", "", count);
        let mut d = crate::model::profile_of_paths(&[("main/solve", 2.0)], "ms");
        // The same path twice in one member: the union adds them up.
        let main = d.cct.root_ids()[0];
        d.cct
            .add_node(Some(main), crate::model::Frame::new("solve", "function"));
        let mut t = d.metrics.values("time").unwrap().to_vec();
        t.push(1.5);
        let mut m = MetricTable::new(d.cct.len());
        m.set("time", "ms", t);
        m.derive_inclusive(&d.cct, &["time"]);
        d.metrics = m;
        vec![a, b, c, d]
    }

    #[test]
    fn a_streamed_union_is_the_union_of_all_at_once() {
        let ps = members();
        let given = HashMap::new();
        let l = labels(&ps, &given);
        let mut streamed = Union::default();
        for p in &ps {
            streamed.add(p);
        }
        assert_eq!(labels(streamed.members(), &given), l);
        assert_same(&streamed.finish(&l), &reference::unify(&ps, &l));
        assert_same(&unify(&ps, &l), &reference::unify(&ps, &l));
        // A database's summary profile stays out of the statistics.
        let mut masked = members();
        masked[1].source.format = Format::HpcToolkit;
        masked[1].source.label = "summary".into();
        assert_same(&unify(&masked, &l), &reference::unify(&masked, &l));
    }

    #[test]
    fn a_union_of_members_with_a_string_per_node_is_the_same() {
        // Every node has its own strings here (as most readers give them): past a
        // bound the union stops remembering addresses and goes by text alone.
        let paths: Vec<String> = (0..2000)
            .map(|i| format!("a{}/b{}", i % 50, (i / 50) % 40))
            .collect();
        let ps: Vec<Profile> = (0..4)
            .map(|k| {
                let ps: Vec<(&str, f64)> = paths
                    .iter()
                    .skip(k * 100)
                    .map(|x| (x.as_str(), k as f64 + 1.0))
                    .collect();
                let mut p = prof(&ps);
                // The tree shares one frame per name; give each node strings of its own.
                for n in 0..p.cct.len() as u32 {
                    let (name, kind) = (p.cct.name(n).to_string(), p.cct.frame(n).kind.to_string());
                    *p.cct.frame_mut(n) = crate::model::Frame::new(&name, &kind);
                }
                p
            })
            .collect();
        let l: Vec<String> = (0..4).map(|k| format!("m{k}")).collect();
        let mut u = Union::default();
        for p in &ps {
            u.add(p);
        }
        assert!(u.by_text_only);
        assert_same(&u.finish(&l), &reference::unify(&ps, &l));
    }

    #[test]
    fn summaries_read_in_parallel_merge_as_read_one_by_one() {
        let dir = std::env::temp_dir().join(format!("grove-union-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // More members than workers, so that they arrive out of order.
        let ps: Vec<Profile> = (0..24).flat_map(|_| members()).collect();
        for (i, p) in ps.iter().enumerate() {
            crate::summary::write::write_tree(p, &format!("m{i:02}"), &dir).unwrap();
        }
        let files = crate::summary::read::find(std::slice::from_ref(&dir)).unwrap();
        let read: Vec<Profile> = files
            .iter()
            .map(|f| crate::summary::read::read(f).unwrap())
            .collect();
        let l = labels(&read, &HashMap::new());
        let all_at_once = reference::unify(&read, &l);
        let streamed = crate::load::load_summaries(std::slice::from_ref(&dir), &HashMap::new())
            .unwrap()
            .unwrap();
        assert_same(&streamed, &all_at_once);
        // A bad member is the error, named.
        std::fs::write(dir.join("m05.cct.parquet"), b"not parquet").unwrap();
        let err =
            crate::load::load_summaries(std::slice::from_ref(&dir), &HashMap::new()).unwrap_err();
        assert!(err.contains("m05.cct.parquet"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
