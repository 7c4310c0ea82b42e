//! rocprof's `results.stats.csv` (`--stats`) and rocprofv3's `kernel_stats.csv`: one
//! row per kernel name with its call count and total, mean and share of the kernel
//! time (rocprofv3 adds min, max and standard deviation). No times of day, so no events:
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
    // rocprofv3's `kernel_stats.csv` adds MinNs, MaxNs and StdDev.
    let opt = |k: &str| rows[0].iter().position(|h| h == k);
    let (min_at, max_at) = (opt("MinNs"), opt("MaxNs"));
    let v3 = min_at.is_some();
    let (mut lo, mut hi) = (Vec::new(), Vec::new());
    let num = |r: &[String], i: usize| r.get(i).and_then(|s| s.trim().parse::<f64>().ok());
    let mut cct = Cct::default();
    let (mut t, mut c, mut a) = (Vec::new(), Vec::new(), Vec::new());
    let columns = rows[0].len();
    let (mut short, mut no_total, mut mended) = (0u64, 0u64, 0u64);
    let mut fixed;
    for r in rows.iter().skip(1) {
        let r = if r.len() > columns {
            fixed = r.clone();
            mended += u64::from(super::csv::mend_name(&mut fixed, columns, name));
            &fixed
        } else {
            r
        };
        if r.len() < columns {
            short += 1;
            continue;
        }
        let (Some(n), Some(tot)) = (r.get(name), num(r, total)) else {
            no_total += 1;
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
        lo.resize(cct.len(), 0.0);
        hi.resize(cct.len(), 0.0);
        lo[node as usize] = min_at.and_then(|i| num(r, i)).unwrap_or(0.0);
        hi[node as usize] = max_at.and_then(|i| num(r, i)).unwrap_or(0.0);
    }
    if cct.is_empty() {
        return Err("a rocprof stats CSV with no kernel row".into());
    }
    let mut warnings = vec![
        "a per-kernel summary (rocprof --stats): no dispatch times, so no timeline or kernel chart; open results.csv or results.db for those".to_string(),
    ];
    if mended > 0 {
        warnings.push(super::csv::mended_warning(mended));
    }
    // Rows left out hide their share of the file's kernels (by rows: their times are
    // what could not be read).
    let share = |k: u64| k as f64 / (rows.len() - 1).max(1) as f64;
    if short > 0 {
        warnings.push(crate::model::hidden::hidden_warning(
            format!("{short} row(s) have fewer fields than the header's {columns}; left out"),
            share(short),
        ));
    }
    if no_total > 0 {
        warnings.push(crate::model::hidden::hidden_warning(
            format!("{no_total} row(s) whose TotalDurationNs is not a number; left out"),
            share(no_total),
        ));
    }
    let len = cct.len();
    let mut metrics = MetricTable::new(len);
    metrics.set("time", "ns", t);
    metrics.set("count", "", c);
    metrics.set("mean", "ns", a);
    if v3 {
        metrics.set("min", "ns", lo);
        metrics.set("max", "ns", hi);
    }
    metrics.derive_inclusive(&cct, &["time"]);
    cct.finish();
    Ok(Profile {
        call_graph: None,
        source,
        dialect: if v3 {
            "rocprofv3 kernel stats CSV (--stats)"
        } else {
            "rocprof kernel stats CSV (legacy rocprof --stats)"
        }
        .into(),
        cct,
        metrics,
        events: None,
        counters: None,
        meta: vec![("kernels".into(), len.to_string())],
        warnings,
        default_metric: "time".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;

    fn src() -> Source {
        Source {
            path: None,
            format: Format::Rocprof,
            size: 0,
            gzip: false,
            label: "t".into(),
        }
    }

    fn read_text(text: &str) -> Profile {
        read(&super::super::csv::parse(text).unwrap(), src()).unwrap()
    }

    /// Older rocprof leaves names unquoted: the surplus fields are the name's, taken
    /// back with their commas, and the trailing numbers stay numbers.
    #[test]
    fn unquoted_commas_belong_to_the_name() {
        let p = read_text(
            "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n\
             void k<int, float>(int*, float, int) [clone .kd],3,900,300,90.0\n\
             \"copy.kd\",2,100,50,10.0\n",
        );
        assert_eq!(p.cct.len(), 2);
        assert_eq!(
            p.cct.name(0),
            "void k<int, float>(int*, float, int) [clone .kd]"
        );
        assert_eq!(p.metrics.values("time").unwrap(), &[900.0, 100.0]);
        assert_eq!(p.metrics.values("count").unwrap(), &[3.0, 2.0]);
        assert!(p
            .warnings
            .iter()
            .any(|w| w.contains("1 row(s) have unquoted commas")));
        assert!(
            !p.warnings.iter().any(|w| w.contains("left out")),
            "{:?}",
            p.warnings
        );
    }

    /// A row that is really short, or whose total is not a number, is left out with
    /// its own reason.
    #[test]
    fn short_rows_and_bad_totals_say_so() {
        let p = read_text(
            "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n\
             \"a\",1,10,10,50.0\n\"b\",1\n\"c\",1,x,1,1.0\n",
        );
        assert_eq!(p.cct.len(), 1);
        let w = p.warnings.join("\n");
        assert!(
            w.contains("1 row(s) have fewer fields than the header's 5"),
            "{w}"
        );
        assert!(
            w.contains("1 row(s) whose TotalDurationNs is not a number"),
            "{w}"
        );
    }
}
