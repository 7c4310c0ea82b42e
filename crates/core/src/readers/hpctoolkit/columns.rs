//! Metric columns: which table column each metric becomes.

use super::*;

/// One column of the metric table and where its values come from.
#[derive(Debug, Clone)]
pub(super) struct Column {
    pub(super) name: String,
    pub(super) unit: &'static str,
    /// Index of the metric in meta.db.
    pub(super) metric: usize,
    pub(super) inclusive: bool,
}

/// Column for a metric in a scope: execution -> inclusive, function -> exclusive; other
/// scopes only when the metric has neither (point values then count as exclusive).
pub(super) fn scope_column(metric: &Metric, scope: &Scope) -> Option<bool> {
    let is_inc = |s: &Scope| s.kind == 2 || s.name == "execution";
    let is_exc = |s: &Scope| s.name == "function";
    if is_inc(scope) {
        return Some(true);
    }
    if is_exc(scope) {
        return Some(false);
    }
    let standard = metric.scopes.iter().any(|(s, _)| is_inc(s) || is_exc(s))
        || metric
            .summaries
            .iter()
            .any(|s| is_inc(&s.scope) || is_exc(&s.scope));
    (!standard && (scope.kind == 1 || scope.name == "point")).then_some(false)
}

/// Column layout: per-thread profiles map propMetricIds, summary profiles statMetricIds.
pub(super) struct Columns {
    pub(super) cols: Vec<Column>,
    pub(super) prop: HashMap<u16, usize>,
    pub(super) stat: HashMap<u16, usize>,
}

pub(super) fn columns(metrics: &[Metric]) -> Columns {
    let mut cols: Vec<Column> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut add = |cols: &mut Vec<Column>, c: Column| -> usize {
        *by_name.entry(c.name.clone()).or_insert_with(|| {
            cols.push(c);
            cols.len() - 1
        })
    };
    let mut prop = HashMap::new();
    let mut stat = HashMap::new();
    for (mi, m) in metrics.iter().enumerate() {
        let unit = unit_of(&m.name);
        for (scope, id) in &m.scopes {
            if let Some(inclusive) = scope_column(m, scope) {
                let name = if inclusive {
                    inclusive_name(&m.name)
                } else {
                    m.name.clone()
                };
                let c = add(
                    &mut cols,
                    Column {
                        name,
                        unit,
                        metric: mi,
                        inclusive,
                    },
                );
                prop.insert(*id, c);
            }
        }
        for s in &m.summaries {
            if let Some(inclusive) = scope_column(m, &s.scope) {
                let formula: String = s.formula.chars().filter(|c| !c.is_whitespace()).collect();
                let (suffix, unit) = match (formula.as_str(), s.combine) {
                    ("$$", 0) => (String::new(), unit),
                    ("$$", 1) => (":min".into(), unit),
                    ("$$", 2) => (":max".into(), unit),
                    ("1", 0) => (":count".into(), ""),
                    ("($$)^2" | "$$^2" | "($$^2)", 0) => (":sumsq".into(), ""),
                    (f, c) => {
                        let c = match c {
                            0 => "sum".to_string(),
                            1 => "min".to_string(),
                            2 => "max".to_string(),
                            c => format!("combine{c}"),
                        };
                        (format!(":{c}[{f}]"), "")
                    }
                };
                let base = format!("{}{suffix}", m.name);
                let name = if inclusive {
                    inclusive_name(&base)
                } else {
                    base
                };
                let c = add(
                    &mut cols,
                    Column {
                        name,
                        unit,
                        metric: mi,
                        inclusive,
                    },
                );
                stat.insert(s.id, c);
            }
        }
    }
    Columns { cols, prop, stat }
}

/// The metric shown first: a time metric when there is one, else the first metric
/// with values.
pub(super) fn pick_default(
    metrics: &[Metric],
    cols: &[Column],
    has_values: &[bool],
) -> Option<usize> {
    let exclusive = |mi: usize| {
        cols.iter()
            .position(|c| c.metric == mi && !c.inclusive && !c.name.contains(':'))
            .or_else(|| cols.iter().position(|c| c.metric == mi && !c.inclusive))
    };
    // CPU time first, then all GPU operations, GPU kernels, any time, anything.
    let rank = |c: usize| {
        let name = metrics[cols[c].metric].name.to_ascii_uppercase();
        let base = name.split(" (").next().unwrap_or(&name);
        if base.starts_with("CPUTIME")
            || base.starts_with("REALTIME")
            || base.ends_with("TASK-CLOCK")
            || base.ends_with("CPU-CLOCK")
            || base == "CYCLES"
        {
            0
        } else if base == "GPUOP" {
            1
        } else if base == "GKER" {
            2
        } else if matches!(cols[c].unit, "s" | "ms" | "us" | "ns") {
            3
        } else {
            4
        }
    };
    let with_values = |c: usize| has_values.get(c).copied().unwrap_or(false);
    (0..metrics.len())
        .filter_map(exclusive)
        .min_by_key(|&c| (!with_values(c), rank(c), c))
}
