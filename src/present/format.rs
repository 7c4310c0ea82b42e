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

pub fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let i = v as i64;
        if i.abs() >= 10_000_000 {
            return format!("{:.3e}", v);
        }
        return i.to_string();
    }
    let a = v.abs();
    if a >= 1e7 || (a > 0.0 && a < 1e-3) {
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
    fn units() {
        assert_eq!(value(1_500_000.0, "ns", "µs"), "1.50 ms");
        assert_eq!(value(999.0, "ns", "us"), "999 ns");
        assert_eq!(value(12_345.0, "ns", "us"), "12.3 us");
        assert_eq!(value(2.0, "s", "us"), "2.00 s");
        assert_eq!(value(1500.0, "us", "us"), "1.50 ms");
        assert_eq!(value(1536.0, "B", "us"), "1.50 KiB");
        assert_eq!(value(42.0, "", "us"), "42");
        assert_eq!(value(0.5, "", "us"), "0.500");
        assert_eq!(value(f64::NAN, "", "us"), "-");
        assert_eq!(percent(1.0, 3.0), "33.3%");
    }
}
