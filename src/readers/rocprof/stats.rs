//! rocprof's `results.stats.csv` (`--stats`): one row per kernel name with its call
//! count and total, mean and share of the kernel time. No times of day, so no events:
//! it opens as a flat tree of kernels with those figures as metrics.

use crate::model::demangle::RAW_NAME;
use crate::model::{Cct, MetricTable, Profile, Source};

const COLUMNS: [&str; 4] = ["Name", "Calls", "TotalDurationNs", "AverageNs"];

pub fn is_stats(header: &[String]) -> bool {
    COLUMNS.iter().all(|c| header.iter().any(|h| h == c))
}

pub fn read(rows: &[Vec<String>], source: Source) -> Result<Profile, String> {
    let at = |k: &str| rows[0].iter().position(|h| h == k).unwrap_or(0);
    let (name, calls, total, avg) = (
        at("Name"),
        at("Calls"),
        at("TotalDurationNs"),
        at("AverageNs"),
    );
    let num = |r: &[String], i: usize| r.get(i).and_then(|s| s.trim().parse::<f64>().ok());
    let mut cct = Cct::default();
    let (mut t, mut c, mut a) = (Vec::new(), Vec::new(), Vec::new());
    let mut bad = 0u64;
    for (line, r) in rows.iter().enumerate().skip(1) {
        let (Some(n), Some(tot)) = (r.get(name), num(r, total)) else {
            bad += 1;
            let _ = line;
            continue;
        };
        let node = cct.child(None, n, "kernel");
        if let Some(d) = crate::model::demangle::demangle(n) {
            let f = cct.frame_mut(node);
            f.name = d.as_str().into();
            f.set_attr(RAW_NAME, n);
        }
        t.resize(cct.len(), 0.0);
        c.resize(cct.len(), 0.0);
        a.resize(cct.len(), 0.0);
        t[node as usize] += tot;
        c[node as usize] += num(r, calls).unwrap_or(0.0);
        a[node as usize] = num(r, avg).unwrap_or(0.0);
    }
    if cct.is_empty() {
        return Err("a rocprof stats CSV with no kernel row".into());
    }
    let mut warnings = vec![
        "a per-kernel summary (rocprof --stats): no dispatch times, so no timeline or kernel chart; open results.csv or results.db for those".to_string(),
    ];
    if bad > 0 {
        warnings.push(format!("{bad} row(s) without a name or total; left out"));
    }
    let len = cct.len();
    let mut metrics = MetricTable::new(len);
    metrics.set("time", "ns", t);
    metrics.set("count", "", c);
    metrics.set("mean", "ns", a);
    metrics.derive_inclusive(&cct, &["time"]);
    cct.finish();
    Ok(Profile {
        source,
        dialect: "rocprof kernel stats CSV (legacy rocprof --stats)".into(),
        cct,
        metrics,
        events: None,
        counters: None,
        meta: vec![("kernels".into(), len.to_string())],
        warnings,
        default_metric: "time".into(),
    })
}
