//! Metric columns and the builder common to every Caliper form.

use super::*;

/// How several values of one column at one (node, rank) combine (Caliper's aggregation
/// operator, the first `op#` of the attribute name).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Agg {
    Sum,
    Min,
    Max,
    Avg,
}

#[derive(Debug, Clone)]
pub(super) struct Col {
    pub(super) name: String,
    pub(super) unit: String,
    pub(super) inclusive: bool,
    pub(super) agg: Agg,
    /// An exclusive sum: `<name> (inc)` is derived as subtree sums when missing.
    pub(super) summable: bool,
}

/// The name grove shows for a Caliper attribute: the alias, Hatchet's renames, and the
/// `(inc)` suffix for inclusive metrics (` (exc)` is dropped from exclusive ones).
pub(super) fn display_name(native: &str, alias: Option<&str>) -> (String, bool) {
    let base = alias.filter(|a| !a.trim().is_empty()).unwrap_or(native);
    let renamed = match base {
        "sum#time.duration" | "sum#avg#sum#time.duration" => "time",
        "inclusive#sum#time.duration" | "sum#avg#inclusive#sum#time.duration" => "time (inc)",
        other => other,
    };
    let inclusive = native.contains("inclusive") || renamed.ends_with("(inc)");
    let name = if inclusive && !renamed.ends_with("(inc)") {
        format!("{}{INC_SUFFIX}", renamed.replacen("inclusive#", "", 1))
    } else if !inclusive && renamed.ends_with(" (exc)") {
        renamed.trim_end_matches(" (exc)").to_string()
    } else {
        renamed.to_string()
    };
    (name, inclusive)
}

pub(super) fn agg_of(native: &str) -> Agg {
    match native.split('#').next().unwrap_or("") {
        "min" => Agg::Min,
        "max" => Agg::Max,
        "avg" => Agg::Avg,
        _ => Agg::Sum,
    }
}

pub(super) fn summable(native: &str, name: &str) -> bool {
    if native.contains('#') {
        return matches!(
            native.split('#').next().unwrap_or(""),
            "sum" | "scsum" | "scale" | "count"
        );
    }
    name == "time"
        || native == "count"
        || ((native.ends_with(".duration") || native.ends_with(".duration.ns"))
            && !native.starts_with("timeseries."))
}

/// The major Caliper version from `cali.caliper.version` ("2.10.0-dev" -> 2).
pub(super) fn major_version(meta: &[(String, String)]) -> Option<u32> {
    let v = meta.iter().find(|(k, _)| k == "cali.caliper.version")?;
    let digits: String =
        v.1.trim()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
    digits.parse().ok()
}

/// Unit strings grove formats: "s", "ns", "us", "ms"; other declared units pass through.
pub(super) fn unit_of(
    native: &str,
    declared: Option<&str>,
    major: Option<u32>,
    integral: bool,
) -> String {
    if let Some(u) = declared.map(str::trim).filter(|u| !u.is_empty()) {
        return match u {
            "sec" | "s" | "seconds" | "second" => "s",
            "nsec" | "ns" | "nanoseconds" => "ns",
            "usec" | "us" | "µs" | "microseconds" => "us",
            "msec" | "ms" | "milliseconds" => "ms",
            other => other,
        }
        .to_string();
    }
    let base = native.rsplit('#').next().unwrap_or(native);
    if base.contains('/') {
        return String::new(); // a rate such as loop.iterations/time.duration
    }
    if base.ends_with(".ns") {
        return "ns".into();
    }
    if matches!(
        base,
        "time.duration" | "time.inclusive.duration" | "time" | "time (inc)"
    ) {
        // Caliper 1.x measured time.duration in integer microseconds; 2.x in seconds.
        return match major {
            Some(1) => "us",
            Some(_) => "s",
            None if integral => "us",
            None => "s",
        }
        .into();
    }
    if (base.starts_with("cupti.") || base.starts_with("rocm.")) && base.ends_with("duration") {
        return if native.contains("scale#") { "s" } else { "ns" }.into();
    }
    String::new()
}

pub(super) fn is_order_column(native: &str, alias: Option<&str>) -> bool {
    alias == Some("Node order")
        || native == "Node order"
        || native == "aggregate.slot"
        || native.ends_with("#aggregate.slot")
}

#[derive(Default)]
pub(super) struct Acc {
    pub(super) vals: Vec<f64>,
    pub(super) counts: Vec<u32>,
}

/// The tree, metric values per rank and metadata every dialect produces.
#[derive(Default)]
pub(super) struct Builder {
    pub(super) cct: Cct,
    pub(super) cols: Vec<Col>,
    pub(super) col_of: HashMap<String, usize>,
    /// rank (None: no `mpi.rank`) -> per column accumulated values.
    pub(super) data: BTreeMap<Option<i64>, Vec<Acc>>,
    /// Caliper's node order (`min#min#aggregate.slot`, "Node order") per node.
    pub(super) order: Vec<f64>,
    pub(super) meta: Vec<(String, String)>,
    pub(super) warnings: Vec<String>,
}

impl Builder {
    pub(super) fn column(&mut self, col: Col) -> usize {
        if let Some(&i) = self.col_of.get(&col.name) {
            return i;
        }
        self.col_of.insert(col.name.clone(), self.cols.len());
        self.cols.push(col);
        self.cols.len() - 1
    }

    /// Notes that a rank has data rows (even without values).
    pub(super) fn touch(&mut self, rank: Option<i64>) {
        self.data.entry(rank).or_default();
    }

    pub(super) fn add(&mut self, rank: Option<i64>, node: u32, col: usize, v: f64) {
        if v.is_nan() {
            return;
        }
        let agg = self.cols[col].agg;
        let per = self.data.entry(rank).or_default();
        if per.len() <= col {
            per.resize_with(col + 1, Acc::default);
        }
        let acc = &mut per[col];
        let n = node as usize;
        if acc.vals.len() <= n {
            acc.vals.resize(n + 1, f64::NAN);
            acc.counts.resize(n + 1, 0);
        }
        let cur = &mut acc.vals[n];
        *cur = if cur.is_nan() {
            v
        } else {
            match agg {
                Agg::Sum | Agg::Avg => *cur + v,
                Agg::Min => cur.min(v),
                Agg::Max => cur.max(v),
            }
        };
        acc.counts[n] += 1;
    }

    pub(super) fn set_order(&mut self, node: u32, v: f64) {
        if v.is_nan() {
            return;
        }
        let n = node as usize;
        if self.order.len() <= n {
            self.order.resize(n + 1, f64::NAN);
        }
        let o = &mut self.order[n];
        if o.is_nan() || v < *o {
            *o = v;
        }
    }

    /// The tree with siblings in Caliper's node order when the file gives one; and the
    /// new id of every old node.
    pub(super) fn ordered_tree(&mut self) -> (Cct, Vec<u32>) {
        let cct = std::mem::take(&mut self.cct);
        if !self.order.iter().any(|v| !v.is_nan()) {
            let ids = (0..cct.len() as u32).collect();
            return (cct, ids);
        }
        let order = &self.order;
        let key = |n: u32| {
            order
                .get(n as usize)
                .copied()
                .filter(|v| !v.is_nan())
                .unwrap_or(f64::INFINITY)
        };
        let po = PreOrder::build(&cct, |v| {
            v.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)))
        });
        let mut out = Cct::default();
        let mut new_of = vec![0u32; cct.len()];
        for (p, &old) in po.node.iter().enumerate() {
            let parent = match po.parent(p as u32) {
                NO_NODE => None,
                q => Some(new_of[po.node[q as usize] as usize]),
            };
            new_of[old as usize] = out.add_node(parent, cct.frame(old).clone());
        }
        (out, new_of)
    }

    pub(super) fn into_profiles(
        mut self,
        path: &Path,
        size: u64,
        gzip: bool,
        dialect: &str,
    ) -> Result<Vec<Profile>, String> {
        if self.cct.is_empty() {
            return Err(
                "no snapshot record has a region or call path (nothing to build a tree from)"
                    .into(),
            );
        }
        let (cct, new_of) = self.ordered_tree();
        let n = cct.len();
        let mut ranks: Vec<Option<i64>> = self.data.keys().copied().collect();
        if ranks.is_empty() {
            ranks.push(None);
        }
        // Rows without a rank in a file with ranks: counted in the lowest rank.
        if ranks.len() > 1 && ranks[0].is_none() {
            ranks.remove(0);
            let target = ranks[0];
            let lost = self.data.remove(&None).unwrap_or_default();
            for (ci, acc) in lost.iter().enumerate() {
                for (node, &v) in acc.vals.iter().enumerate() {
                    self.add(target, node as u32, ci, v);
                }
            }
            self.warnings.push(format!(
                "records without mpi.rank were counted in rank {}",
                target.unwrap_or(0)
            ));
        }
        let several = ranks.len() > 1;
        let file_name = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        // A time metric when there is one (RAJAPerf's profiles have only inclusive
        // times, after counters such as BlockSize that would otherwise come first).
        let is_time = |c: &&Col| crate::model::metrics::is_time_metric(&c.name, &c.unit);
        let default_metric = if self.col_of.contains_key("time") {
            "time".to_string()
        } else {
            let times: Vec<&Col> = self.cols.iter().filter(is_time).collect();
            times
                .iter()
                .find(|c| !c.inclusive)
                .or_else(|| {
                    times
                        .iter()
                        .find(|c| c.name.to_ascii_lowercase().starts_with("avg"))
                })
                .or(times.first())
                .copied()
                .or_else(|| self.cols.iter().find(|c| !c.inclusive))
                .or(self.cols.first())
                .map(|c| c.name.clone())
                .unwrap_or_default()
        };
        let derive: Vec<String> = self
            .cols
            .iter()
            .filter(|c| {
                !c.inclusive && c.summable && !self.col_of.contains_key(&inclusive_name(&c.name))
            })
            .map(|c| c.name.clone())
            .collect();
        let derive: Vec<&str> = derive.iter().map(|s| s.as_str()).collect();
        let mut out = Vec::with_capacity(ranks.len());
        for r in ranks {
            let accs = self.data.remove(&r).unwrap_or_default();
            let mut metrics = MetricTable::new(n);
            for (ci, col) in self.cols.iter().enumerate() {
                let mut vals = vec![f64::NAN; n];
                if let Some(acc) = accs.get(ci) {
                    for (old, &v) in acc.vals.iter().enumerate() {
                        let Some(&new) = new_of.get(old) else {
                            continue;
                        };
                        if v.is_nan() {
                            continue;
                        }
                        let c = acc.counts.get(old).copied().unwrap_or(1).max(1);
                        vals[new as usize] = if col.agg == Agg::Avg { v / c as f64 } else { v };
                    }
                }
                metrics.set(&col.name, &col.unit, vals);
            }
            metrics.derive_inclusive(&cct, &derive);
            let mut meta = self.meta.clone();
            if let Some(r) = r {
                meta.push(("mpi.rank".into(), r.to_string()));
            }
            let label = match (several, r) {
                (true, Some(r)) => format!("{file_name} rank {r}"),
                _ => file_name.clone(),
            };
            let mut tree = cct.clone();
            tree.finish();
            out.push(Profile {
                call_graph: None,
                source: Source {
                    path: Some(path.to_path_buf()),
                    format: Format::Caliper,
                    size,
                    gzip,
                    label,
                },
                dialect: dialect.to_string(),
                cct: tree,
                metrics,
                events: None,
                counters: None,
                meta,
                warnings: self.warnings.clone(),
                default_metric: default_metric.clone(),
            });
        }
        Ok(out)
    }
}
