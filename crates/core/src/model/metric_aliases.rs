//! The names Hatchet and Thicket give metrics that grove names differently, so the
//! names in a Thicket user's notebook work in grove's commands, `--metric` and filter
//! expressions. One table, consulted only when a name is not a column of the profile
//! (`MetricTable::resolve`); the caller says on the status line (or stderr) which
//! column the name stood for.
//!
//! Found by loading the corpus in Hatchet 2024.1 and comparing its columns with
//! grove's (docs/formats.md, "Hatchet metric names"):
//! - Caliper `.cali` through `GraphFrame.from_caliperreader`: the spot metrics keep
//!   their aliases without a suffix (`Avg time/rank`, `Min time/rank`,
//!   `Max time/rank`, `Total time`) and count as exclusive; grove knows they are
//!   inclusive and names them `Avg time/rank (inc)`, ...;
//! - the same reader keeps Caliper's `inclusive#` prefix
//!   (`inclusive#scale#sum#cupti.host.duration`), which grove writes as a ` (inc)`
//!   suffix;
//! - `GraphFrame.from_caliper` (cali-query) names the spot columns by their Caliper
//!   attributes (`avg#inclusive#sum#time.duration`);
//! - `GraphFrame.from_hpctoolkit_latest` renames HPCToolkit's CPU time, real time and
//!   cycles to `time` and `time (inc)`; grove keeps HPCToolkit's names
//!   (`CPUTIME (sec)`, with `@summary` and one column per thread).

use super::metrics::{base_of_inclusive, inclusive_name, MetricTable};

/// Caliper attribute names Hatchet's cali-query reader shows, and grove's column.
const CALIPER_ATTRIBUTES: &[(&str, &str)] = &[
    ("min#inclusive#sum#time.duration", "Min time/rank (inc)"),
    ("max#inclusive#sum#time.duration", "Max time/rank (inc)"),
    ("avg#inclusive#sum#time.duration", "Avg time/rank (inc)"),
    ("sum#inclusive#sum#time.duration", "Total time (inc)"),
    ("inclusive#sum#time.duration", "time (inc)"),
    ("sum#avg#inclusive#sum#time.duration", "time (inc)"),
    ("sum#time.duration", "time"),
    ("sum#avg#sum#time.duration", "time"),
];

/// HPCToolkit metrics Hatchet calls `time`, in the order tried.
const HPCTOOLKIT_TIME: &[&str] = &["CPUTIME (sec)", "REALTIME (sec)", "CYCLES"];

/// grove's column for a Hatchet/Thicket metric name that is not a column itself.
pub fn resolve(table: &MetricTable, name: &str) -> Option<String> {
    let has = |c: &str| table.has(c).then(|| c.to_string());
    if let Some((_, grove)) = CALIPER_ATTRIBUTES.iter().find(|(h, _)| *h == name) {
        if let Some(c) = has(grove) {
            return Some(c);
        }
    }
    if let Some(rest) = name.strip_prefix("inclusive#") {
        if let Some(c) = has(&inclusive_name(rest)) {
            return Some(c);
        }
    }
    // An exclusive name whose column grove only has as inclusive (the spot metrics).
    if base_of_inclusive(name).is_none() {
        if let Some(c) = has(&inclusive_name(name)) {
            return Some(c);
        }
    }
    let (base, label) = match name.rsplit_once('@') {
        Some((b, l)) => (b, Some(l)),
        None => (name, None),
    };
    let inc = match base {
        "time" => false,
        "time (inc)" => true,
        _ => return ensemble_statistic(table, name),
    };
    for m in HPCTOOLKIT_TIME {
        let col = if inc {
            inclusive_name(m)
        } else {
            m.to_string()
        };
        let candidates = match label {
            Some(l) => vec![format!("{col}@{l}")],
            None => vec![col.clone(), format!("{col}@summary")],
        };
        if let Some(c) = candidates.iter().find_map(|c| has(c)) {
            return Some(c);
        }
    }
    ensemble_statistic(table, name)
}

/// An ensemble's metric by its base name (`Ir`, the members' own name): the
/// ensemble's default statistic of it, `Ir@mean` (the caller notes which column).
fn ensemble_statistic(table: &MetricTable, name: &str) -> Option<String> {
    if name.contains('@') {
        return None;
    }
    let c = format!("{name}@mean");
    table.has(&c).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(cols: &[&str]) -> MetricTable {
        let mut t = MetricTable::new(1);
        for c in cols {
            t.set(c, "s", vec![1.0]);
        }
        t
    }

    #[test]
    fn an_ensembles_base_name_is_its_mean() {
        let t = table(&["Ir@a", "Ir@b", "Ir@mean", "Ir (inc)@mean"]);
        assert_eq!(resolve(&t, "Ir").as_deref(), Some("Ir@mean"));
        assert_eq!(resolve(&t, "Ir (inc)").as_deref(), Some("Ir (inc)@mean"));
        assert_eq!(resolve(&t, "Dr"), None);
    }

    #[test]
    fn hatchet_names() {
        let t = table(&["Avg time/rank (inc)", "Total time (inc)", "Reps"]);
        assert_eq!(
            resolve(&t, "Avg time/rank").as_deref(),
            Some("Avg time/rank (inc)")
        );
        assert_eq!(
            resolve(&t, "avg#inclusive#sum#time.duration").as_deref(),
            Some("Avg time/rank (inc)")
        );
        assert_eq!(
            resolve(&t, "Total time").as_deref(),
            Some("Total time (inc)")
        );
        assert_eq!(resolve(&t, "Reps (inc)"), None);
        assert_eq!(resolve(&t, "time"), None);
        let t = table(&["scale#sum#cupti.host.duration (inc)"]);
        assert_eq!(
            resolve(&t, "inclusive#scale#sum#cupti.host.duration").as_deref(),
            Some("scale#sum#cupti.host.duration (inc)")
        );
        let t = table(&["CPUTIME (sec)@summary", "CPUTIME (sec) (inc)@summary"]);
        assert_eq!(
            resolve(&t, "time").as_deref(),
            Some("CPUTIME (sec)@summary")
        );
        assert_eq!(
            resolve(&t, "time (inc)").as_deref(),
            Some("CPUTIME (sec) (inc)@summary")
        );
        let t = table(&["Avg time/rank (inc)@gcc"]);
        assert_eq!(
            resolve(&t, "Avg time/rank@gcc").as_deref(),
            Some("Avg time/rank (inc)@gcc")
        );
    }
}
