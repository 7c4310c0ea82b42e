//! `grove functions` as text, CSV and JSON: the functions table, or the callers or
//! callees of the functions a name matches (docs/formats.md, "grove functions").

use std::fmt::Write;

use crate::present::format;
use crate::transform::functions::edges::{Edge, Side, ROOT};
use crate::transform::functions::Functions;

/// The CSV header of the table.
pub const TABLE_HEADER: &str = "name,place,kind,metric,self,inclusive,self_pct,inclusive_pct,calls";
/// The CSV header of callers and callees.
pub const EDGES_HEADER: &str = "function,side,name,place,kind,metric,value,calls";

/// What the figures are, for the text header and the JSON `source` field.
pub fn source(t: &Functions) -> &'static str {
    if t.from_graph() {
        "the file's call graph"
    } else {
        "the call paths"
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A raw number for CSV (empty when missing).
fn raw(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        format!("{v}")
    }
}

fn json_num(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

fn pct(part: f64, total: f64) -> f64 {
    if total != 0.0 && total.is_finite() {
        part / total * 100.0
    } else {
        f64::NAN
    }
}

/// The table's rows `rows` (already sorted and cut) for metric `m` as text.
pub fn table_text(t: &Functions, m: usize, rows: &[u32]) -> String {
    let metric = &t.metrics[m];
    let fmt = |v: f64| format::value(v, &metric.unit, "µs");
    let total = t.totals[m];
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} functions · metric {} · total {} · figures from {}",
        t.len(),
        metric.name,
        fmt(total),
        source(t)
    );
    let calls = t.calls.as_ref();
    let mut lines = vec![[
        "self".to_string(),
        "self%".into(),
        "inclusive".into(),
        "inc%".into(),
        if calls.is_some() {
            t.calls_name.clone().unwrap_or_default()
        } else {
            String::new()
        },
    ]];
    for &f in rows {
        let f = f as usize;
        let (s, i) = (t.self_cost[m][f], t.inclusive[m][f]);
        lines.push([
            fmt(s),
            format::percent(s, total),
            fmt(i),
            format::percent(i, total),
            calls.map_or(String::new(), |c| format::number(c[f])),
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (k, l) in lines.iter().enumerate() {
        for (c, cell) in l.iter().enumerate() {
            if c == 4 && calls.is_none() {
                continue;
            }
            let _ = write!(out, "{cell:>w$}  ", w = widths[c]);
        }
        let name = match k {
            0 => "function".to_string(),
            _ => t.functions[rows[k - 1] as usize].label(),
        };
        let _ = writeln!(out, "{name}");
    }
    out
}

pub fn table_csv(t: &Functions, m: usize, rows: &[u32]) -> String {
    let metric = &t.metrics[m];
    let total = t.totals[m];
    let mut out = format!("{TABLE_HEADER}\n");
    for &f in rows {
        let f = f as usize;
        let func = &t.functions[f];
        let (s, i) = (t.self_cost[m][f], t.inclusive[m][f]);
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            csv_field(&func.name),
            csv_field(func.place.as_deref().unwrap_or("")),
            csv_field(&func.kind),
            csv_field(&metric.name),
            raw(s),
            raw(i),
            raw(pct(s, total)),
            raw(pct(i, total)),
            raw(t.calls.as_ref().map_or(f64::NAN, |c| c[f]))
        );
    }
    out
}

pub fn table_json(t: &Functions, m: usize, rows: &[u32]) -> String {
    let metric = &t.metrics[m];
    let total = t.totals[m];
    let functions: Vec<serde_json::Value> = rows
        .iter()
        .map(|&f| {
            let f = f as usize;
            let func = &t.functions[f];
            let (s, i) = (t.self_cost[m][f], t.inclusive[m][f]);
            serde_json::json!({
                "name": &*func.name,
                "place": func.place.as_deref(),
                "kind": &*func.kind,
                "self": json_num(s),
                "inclusive": json_num(i),
                "self_pct": json_num(pct(s, total)),
                "inclusive_pct": json_num(pct(i, total)),
                "calls": json_num(t.calls.as_ref().map_or(f64::NAN, |c| c[f])),
            })
        })
        .collect();
    let v = serde_json::json!({
        "metric": &metric.name,
        "unit": &metric.unit,
        "source": source(t),
        "total": json_num(total),
        "count": t.len(),
        "calls_column": t.calls_name.as_deref(),
        "functions": functions,
    });
    format!("{v}\n")
}

/// An edge's share of the function's inclusive cost, uncapped: callgrind's edge of a
/// recursive function to itself counts the recursion again (several times 100%).
fn share(part: f64, total: f64) -> String {
    let p = pct(part, total);
    if !p.is_finite() {
        "-".into()
    } else if (p - 100.0).abs() < 0.05 {
        "100%".into()
    } else {
        format!("{p:.1}%")
    }
}

/// The label of the other end of an edge.
fn other(t: &Functions, e: &Edge) -> (String, String, String) {
    if e.function == ROOT {
        return ("(root)".into(), String::new(), String::new());
    }
    let f = &t.functions[e.function as usize];
    (
        f.name.to_string(),
        f.place.as_deref().unwrap_or("").to_string(),
        f.kind.to_string(),
    )
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Callers => "callers",
        Side::Callees => "callees",
    }
}

/// Callers or callees of each function of `of` (each with its edges, sorted and cut)
/// as text.
pub fn edges_text(t: &Functions, m: usize, side: Side, of: &[(u32, Vec<Edge>)]) -> String {
    let metric = &t.metrics[m];
    let fmt = |v: f64| format::value(v, &metric.unit, "µs");
    let mut out = String::new();
    for (k, (f, edges)) in of.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let fu = *f as usize;
        let inc = t.inclusive[m][fu];
        let _ = writeln!(
            out,
            "{} of {} · {} self {} · inclusive {} · figures from {}",
            side_name(side),
            t.functions[fu].label(),
            metric.name,
            fmt(t.self_cost[m][fu]),
            fmt(inc),
            source(t)
        );
        let counted = edges.iter().any(|e| !e.calls.is_nan());
        let mut lines = vec![[
            metric.name.clone(),
            "of inc".into(),
            if counted {
                "calls".into()
            } else {
                String::new()
            },
        ]];
        for e in edges {
            lines.push([
                fmt(e.value[m]),
                share(e.value[m], inc),
                if counted {
                    format::number(e.calls)
                } else {
                    String::new()
                },
            ]);
        }
        let widths: Vec<usize> = (0..3)
            .map(|c| {
                lines
                    .iter()
                    .map(|l| l[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for (i, l) in lines.iter().enumerate() {
            for (c, cell) in l.iter().enumerate() {
                if c == 2 && !counted {
                    continue;
                }
                let _ = write!(out, "{cell:>w$}  ", w = widths[c]);
            }
            let name = match i {
                0 => match side {
                    Side::Callers => "caller".to_string(),
                    Side::Callees => "callee".to_string(),
                },
                _ => {
                    let (n, p, _) = other(t, &edges[i - 1]);
                    if p.is_empty() {
                        n
                    } else {
                        format!("{n} [{p}]")
                    }
                }
            };
            let _ = writeln!(out, "{name}");
        }
    }
    out
}

pub fn edges_csv(t: &Functions, m: usize, side: Side, of: &[(u32, Vec<Edge>)]) -> String {
    let mut out = format!("{EDGES_HEADER}\n");
    for (f, edges) in of {
        let label = t.functions[*f as usize].label();
        for e in edges {
            let (n, p, k) = other(t, e);
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                csv_field(&label),
                side_name(side),
                csv_field(&n),
                csv_field(&p),
                csv_field(&k),
                csv_field(&t.metrics[m].name),
                raw(e.value[m]),
                raw(e.calls)
            );
        }
    }
    out
}

pub fn edges_json(t: &Functions, m: usize, side: Side, of: &[(u32, Vec<Edge>)]) -> String {
    let list: Vec<serde_json::Value> = of
        .iter()
        .map(|(f, edges)| {
            let fu = *f as usize;
            let func = &t.functions[fu];
            let rows: Vec<serde_json::Value> = edges
                .iter()
                .map(|e| {
                    let (n, p, k) = other(t, e);
                    serde_json::json!({
                        "name": n,
                        "place": (!p.is_empty()).then_some(p),
                        "kind": k,
                        "value": json_num(e.value[m]),
                        "calls": json_num(e.calls),
                    })
                })
                .collect();
            serde_json::json!({
                "name": &*func.name,
                "place": func.place.as_deref(),
                "kind": &*func.kind,
                "self": json_num(t.self_cost[m][fu]),
                "inclusive": json_num(t.inclusive[m][fu]),
                side_name(side): rows,
            })
        })
        .collect();
    let v = serde_json::json!({
        "metric": &t.metrics[m].name,
        "unit": &t.metrics[m].unit,
        "source": source(t),
        "functions": list,
    });
    format!("{v}\n")
}
