//! Numbers for reading rather than for round trips: thousands grouped (`1,234,567`),
//! fractions to three significant digits (`blocks per SM 5.818181818181818` -> `5.82`).
//! Exports keep the exact text; the details panes show these.

use crate::model::args::{ArgValue, Args};

/// `1234567` -> `1,234,567`.
pub fn thousands(v: i128) -> String {
    let digits = v.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if v < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A float shown to about three significant digits, its integer part grouped:
/// `5.818181818181818` -> `5.82`, `17.09091` -> `17.1`, `123456.7` -> `123,457`,
/// `0.0012345` -> `0.00123`; whole numbers as integers.
pub fn float(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if v.fract() == 0.0 && a < 1e18 {
        return thousands(v as i128);
    }
    if a >= 1e18 || (a > 0.0 && a < 1e-4) {
        return format!("{v:.3e}");
    }
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        // Three significant digits below 1: 0.0012345 -> 0.00123.
        (2 - a.log10().floor() as i32).clamp(2, 6) as usize
    };
    let s = format!("{v:.decimals$}");
    match s.split_once('.') {
        Some((int, frac)) => {
            let int = int.parse::<i128>().map(thousands).unwrap_or(int.into());
            // `-0` keeps its sign only when the value has one.
            let int = if v < 0.0 && !int.starts_with('-') {
                format!("-{int}")
            } else {
                int
            };
            format!("{int}.{frac}")
        }
        None => s.parse::<i128>().map(thousands).unwrap_or(s),
    }
}

/// Keys whose numbers are identifiers (correlation 8218, stream 7): shown as written.
fn is_id(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k == "id"
        || k.ends_with(" id")
        || k.ends_with("_id")
        || k.contains("correlation")
        || matches!(
            k.as_str(),
            "stream" | "device" | "context" | "pid" | "tid" | "sequence number" | "seq"
        )
}

/// One argument's value for reading: numbers grouped and rounded (identifiers as
/// written), other values as their text.
pub fn arg_value(args: &Args<'_>, key: &str, v: ArgValue) -> String {
    match v {
        ArgValue::Int(i) if !is_id(key) => thousands(i as i128),
        ArgValue::UInt(u) if !is_id(key) => thousands(u as i128),
        ArgValue::Float(f) => float(f),
        other => args.text(other).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_and_rounded() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(-1234567), "-1,234,567");
        assert_eq!(float(5.818181818181818), "5.82");
        assert_eq!(float(17.09091), "17.1");
        assert_eq!(float(4.272727), "4.27");
        assert_eq!(float(123456.7), "123,457");
        assert_eq!(float(27.0), "27");
        assert_eq!(float(1e6), "1,000,000");
        assert_eq!(float(0.0012345), "0.00123");
        assert_eq!(float(0.5), "0.500");
        assert_eq!(float(-0.25), "-0.250");
        assert_eq!(float(-1234.6), "-1,235");
    }

    #[test]
    fn ids_stay_as_written() {
        assert!(is_id("correlation"));
        assert!(is_id("External id"));
        assert!(is_id("stream"));
        assert!(!is_id("registers per thread"));
        assert!(!is_id("grid"));
    }
}
