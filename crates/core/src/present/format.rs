//! Human-readable metric values: times with units, counts, percentages.

/// Formats a value of a metric with the given unit into at most ~9 characters.
pub fn value(v: f64, unit: &str, micro: &str) -> String {
    if v.is_nan() {
        return "-".into();
    }
    match unit {
        "ns" => duration_ns(v, micro),
        "us" | "µs" | "usec" => duration_ns(v * 1e3, micro),
        "ms" | "msec" => duration_ns(v * 1e6, micro),
        "s" | "sec" => duration_ns(v * 1e9, micro),
        "B" | "bytes" => bytes(v),
        _ => number(v),
    }
}

/// Bytes with a binary prefix: `1.50 MiB`.
pub fn bytes(v: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = v;
    let mut i = 0;
    while x.abs() >= 1024.0 && i + 1 < units.len() {
        x /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{} B", v.round() as i64)
    } else {
        format!("{x:.2} {}", units[i])
    }
}

pub fn duration_ns(ns: f64, micro: &str) -> String {
    let a = ns.abs();
    let (v, u) = if a >= 1e9 {
        (ns / 1e9, "s")
    } else if a >= 1e6 {
        (ns / 1e6, "ms")
    } else if a >= 1e3 {
        (ns / 1e3, micro)
    } else {
        return format!("{} ns", ns.round() as i64);
    };
    format!("{} {u}", sig3(v))
}

/// Three significant digits, without exponent.
fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A count or a plain value in at most 9 characters: whole digits up to 9 of them (so
/// a column of counts reads `12360000` above `1396684`, not `1.236e7` above
/// `1396684`), an exponent only beyond.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        return format!("{v:.3e}");
    }
    if v.fract() == 0.0 || a >= 1e7 {
        return format!("{v:.0}");
    }
    if a > 0.0 && a < 1e-3 {
        format!("{v:.3e}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

pub fn percent(part: f64, total: f64) -> String {
    if !part.is_finite() || total <= 0.0 {
        return "-".into();
    }
    let p = part / total * 100.0;
    if p >= 99.95 {
        "100%".into()
    } else {
        format!("{p:.1}%")
    }
}

/// A legend's range `lo-hi`. When `signed` (a scale with negative values) the bounds
/// are joined by ` … ` and written with a true minus sign (`−43.8 ms … −11.4 ms`), or in
/// ASCII by ` .. ` (`-43.8 ms .. -11.4 ms`), so no minus reads as the dash.
pub fn range(lo: f64, hi: f64, unit: &str, micro: &str, signed: bool, ascii: bool) -> String {
    let (lo, hi) = (value(lo, unit, micro), value(hi, unit, micro));
    match (signed, ascii) {
        (false, _) => format!("{lo}-{hi}"),
        (true, true) => format!("{lo} .. {hi}"),
        (true, false) => {
            let minus = |s: String| match s.strip_prefix('-') {
                Some(rest) if !rest.is_empty() => format!("\u{2212}{rest}"),
                _ => s,
            };
            format!("{} \u{2026} {}", minus(lo), minus(hi))
        }
    }
}

/// An ensemble member's label cut to `w` characters so that what tells members apart
/// survives: the end (`…0_thread_3`), and for a label made of path parts its first
/// part too (`1/…block_128`, from `1/Base_CUDA-block_128`).
pub fn clip_label(label: &str, w: usize, ellipsis: &str) -> String {
    if label.chars().count() <= w {
        return label.to_string();
    }
    if let Some((first, _)) = label.split_once('/') {
        let head = first.chars().count() + 1;
        let e = ellipsis.chars().count();
        // Room for the first part and at least 4 characters of the end.
        if head + e + 4 <= w {
            let n = label.chars().count();
            let tail: String = label.chars().skip(n - (w - head - e)).collect();
            return format!("{first}/{ellipsis}{tail}");
        }
    }
    super::distinct::keep_end(label, w, ellipsis)
}

/// A column title cut to `w` characters, keeping its distinguishing end: the whole
/// `@label` of an ensemble column with as much of the metric as fits before it
/// (`…(inc)@rank3`), or the label cut by [`clip_label`] when it alone is too long;
/// the end of a plain name (units and `(inc)` matter most). An ellipsis marks the cut.
pub fn clip_title(title: &str, w: usize, ellipsis: &str) -> String {
    if title.chars().count() <= w {
        return title.to_string();
    }
    match title.rsplit_once('@') {
        Some((_, label)) if label.chars().count() + 1 + ellipsis.chars().count() > w => {
            clip_label(label, w, ellipsis)
        }
        _ => super::distinct::keep_end(title, w, ellipsis),
    }
}

/// A column title whose label does not tell the columns apart (an ensemble
/// statistic: every metric has an `@mean`) cut to `w` characters keeping the start of
/// the metric and the whole label: `Avg time/rank (inc)@mean` -> `Avg time…@mean`.
pub fn clip_metric(title: &str, w: usize, ellipsis: &str) -> String {
    if title.chars().count() <= w {
        return title.to_string();
    }
    let Some((metric, label)) = title.rsplit_once('@') else {
        return clip_title(title, w, ellipsis);
    };
    let tail = label.chars().count() + 1 + ellipsis.chars().count();
    if tail + 3 > w {
        return clip_title(title, w, ellipsis);
    }
    let head: String = metric.chars().take(w - tail).collect();
    format!("{head}{ellipsis}@{label}")
}

/// At most `n` items of a list joined by `, `, then how many more there are:
/// `r1, r2, r3, r4 and 9996 more` (a list of 10,000 labels is not a line to print).
pub fn list_bounded<S: AsRef<str>>(items: &[S], n: usize) -> String {
    let shown: Vec<&str> = items.iter().take(n).map(|s| s.as_ref()).collect();
    let mut out = shown.join(", ");
    if items.len() > n {
        out.push_str(&format!(" and {} more", items.len() - n));
    }
    out
}

/// Paths in natural order (`r2/` before `r10/`), for the members of an ensemble.
pub fn natural_path_cmp(a: &std::path::Path, b: &std::path::Path) -> std::cmp::Ordering {
    natural_cmp(&a.to_string_lossy(), &b.to_string_lossy())
}

/// Natural order: runs of digits compare by their value, so `r2` comes before `r10`
/// and ranks and run numbers list as `r1, r2, ..., r10`, not `r1, r10, r100, r2`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let dx = x.iter().take_while(|c| c.is_ascii_digit()).count();
                let dy = y.iter().take_while(|c| c.is_ascii_digit()).count();
                let (nx, ny) = (&x[..dx], &y[..dy]);
                // Compare the values without parsing (runs may exceed u64): leading
                // zeros dropped, a longer number is larger, then digit by digit.
                let tx = &nx[nx.iter().take_while(|c| **c == b'0').count()..];
                let ty = &ny[ny.iter().take_while(|c| **c == b'0').count()..];
                let o = tx.len().cmp(&ty.len()).then_with(|| tx.cmp(ty));
                if o != Ordering::Equal {
                    return o;
                }
                x = &x[dx..];
                y = &y[dy..];
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_ranges_read_unambiguously() {
        assert_eq!(range(1e3, 2e3, "ns", "µs", false, false), "1.00 µs-2.00 µs");
        assert_eq!(
            range(-43.8e6, -11.4e6, "ns", "µs", true, false),
            "\u{2212}43.8 ms \u{2026} \u{2212}11.4 ms"
        );
        assert_eq!(
            range(-43.8e6, -11.4e6, "ns", "us", true, true),
            "-43.8 ms .. -11.4 ms"
        );
        assert_eq!(
            range(f64::NAN, 0.0, "ns", "us", true, false),
            "- \u{2026} 0 ns"
        );
    }

    #[test]
    fn titles_keep_their_distinguishing_end() {
        assert_eq!(clip_title("time (inc)@rank3", 12, "…"), "…(inc)@rank3");
        assert_eq!(clip_title("time@mean", 12, "…"), "time@mean");
        assert_eq!(
            clip_title("time (inc)@1/Base_CUDA-block_128", 12, "…"),
            "1/…block_128"
        );
        assert_eq!(clip_label("rank_0_thread_13", 11, "…"), "…_thread_13");
        assert_eq!(clip_label("1/Base_CUDA-block_256", 11, "~"), "1/~lock_256");
        assert_eq!(clip_title("Avg time/rank (inc)", 10, "~"), "~ank (inc)");
        assert_eq!(
            clip_metric("Avg time/rank (inc)@mean", 14, "…"),
            "Avg time…@mean"
        );
    }

    #[test]
    fn natural_order_and_bounded_lists() {
        let mut v = vec!["r10", "r2", "r1", "r10000", "r100", "r1001", "a", "r02"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            ["a", "r1", "r02", "r2", "r10", "r100", "r1001", "r10000"]
        );
        let many: Vec<String> = (1..=10_000).map(|i| format!("r{i}")).collect();
        assert_eq!(list_bounded(&many, 3), "r1, r2, r3 and 9997 more");
        assert_eq!(list_bounded(&["a", "b"], 3), "a, b");
    }

    #[test]
    fn units() {
        assert_eq!(value(1_500_000.0, "ns", "µs"), "1.50 ms");
        assert_eq!(value(999.0, "ns", "us"), "999 ns");
        assert_eq!(value(12_345.0, "ns", "us"), "12.3 us");
        assert_eq!(value(2.0, "s", "us"), "2.00 s");
        assert_eq!(value(1500.0, "us", "us"), "1.50 ms");
        assert_eq!(value(1536.0, "B", "us"), "1.50 KiB");
        assert_eq!(value(42.0, "", "us"), "42");
        // One notation down a column of counts (issue 28: `1.649e8` above `3366404`).
        assert_eq!(value(164_900_000.0, "", "us"), "164900000");
        assert_eq!(value(3_366_404.0, "", "us"), "3366404");
        assert_eq!(value(12_360_000.4, "", "us"), "12360000");
        assert_eq!(value(1.5e12, "", "us"), "1.500e12");
        assert_eq!(value(0.5, "", "us"), "0.500");
        assert_eq!(value(f64::NAN, "", "us"), "-");
        assert_eq!(percent(1.0, 3.0), "33.3%");
    }
}
