//! A flame graph SVG of folded stacks (`grove tree --format svg`), drawn by inferno as
//! flamegraph.pl draws it: for people who copy a picture home.

use std::io::Write;

use inferno::flamegraph::{from_lines, Options};

/// Draws the folded stacks `folded` (`stack value` lines, as `export::folded` writes
/// them), the values in `unit`. inferno counts whole samples (it drops fractions), so
/// times are drawn in whole nanoseconds and other fractional values scaled up by a power
/// of ten, which the count's name says.
pub fn svg<W: Write>(out: &mut W, folded: &[u8], title: &str, unit: &str) -> std::io::Result<()> {
    let text = String::from_utf8_lossy(folded);
    let rows: Vec<(&str, f64)> = text
        .lines()
        .filter_map(|l| {
            let (stack, v) = l.rsplit_once(' ')?;
            Some((stack, v.parse::<f64>().ok()?))
        })
        .collect();
    let (scale, count_name) = whole_units(rows.iter().map(|r| r.1), unit);
    let lines: Vec<String> = rows
        .iter()
        .map(|(stack, v)| format!("{stack} {}", (v * scale).round() as u64))
        .collect();
    let mut opts = Options::default();
    opts.title = title.to_string();
    opts.count_name = count_name;
    // The same input gives the same picture (colours from the names, no random ids).
    opts.hash = true;
    opts.deterministic = true;
    if lines.is_empty() {
        // inferno refuses an empty input; an empty picture says what happened.
        return writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"40\"><text x=\"10\" y=\"24\">no samples to draw</text></svg>"
        );
    }
    from_lines(&mut opts, lines.iter().map(String::as_str), out)
}

/// What to multiply values by to draw them as whole numbers, and the name of the
/// count then: nanoseconds for times; for other units 1 when all values are whole,
/// else a power of ten that makes the smallest positive value at least 1000 (at most
/// 10^9), named `unit × 1e-K`.
fn whole_units(values: impl Iterator<Item = f64>, unit: &str) -> (f64, String) {
    let ns = match unit {
        "s" | "sec" => Some(1e9),
        "ms" | "msec" => Some(1e6),
        "us" | "µs" | "usec" => Some(1e3),
        "ns" | "nsec" => Some(1.0),
        _ => None,
    };
    if let Some(f) = ns {
        return (f, "ns".into());
    }
    let name = if unit.is_empty() { "samples" } else { unit };
    let mut whole = true;
    let mut min = f64::INFINITY;
    for v in values.filter(|v| *v > 0.0) {
        whole &= v.fract() == 0.0;
        min = min.min(v);
    }
    if whole || !min.is_finite() {
        return (1.0, name.to_string());
    }
    let mut k = 0;
    while min * 10f64.powi(k) < 1000.0 && k < 9 {
        k += 1;
    }
    (10f64.powi(k), format!("{name} × 1e-{k}"))
}

/// The current tree's folded stacks (`--format folded`) drawn as a flame graph, titled
/// with the profile's label and default metric.
pub fn write_tree(t: &super::formats::Tree<'_>, mut out: &mut dyn Write) -> std::io::Result<()> {
    let mut folded = Vec::new();
    super::folded::write_tree(t, &mut folded)?;
    let metric = &t.profile.default_metric;
    let title = format!("{} · {metric}", t.profile.source.label);
    let unit = t.profile.metrics.unit(metric).to_string();
    svg(&mut out, &folded, &title, &unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_whole_and_fractional_samples() {
        let title = |svg: &[u8], name: &str| {
            let s = String::from_utf8(svg.to_vec()).unwrap();
            let at = s
                .find(&format!("<title>{name} ("))
                .unwrap_or_else(|| panic!("{s}"));
            s[at..].split("</title>").next().unwrap().to_string()
        };
        let mut out = Vec::new();
        svg(&mut out, b"main;a 3\nmain;b 1\n", "t", "").unwrap();
        assert_eq!(title(&out, "a"), "<title>a (3 samples, 75.00%)");
        let mut out = Vec::new();
        svg(&mut out, b"main;a 0.000554\nmain;b 0.001\n", "t", "s").unwrap();
        assert_eq!(title(&out, "a"), "<title>a (554,000 ns, 35.65%)");
        assert_eq!(
            whole_units([0.25, 2.0].into_iter(), "B"),
            (10_000.0, "B × 1e-4".into())
        );
        assert_eq!(
            whole_units([3.0, 2.0].into_iter(), ""),
            (1.0, "samples".into())
        );
        let mut out = Vec::new();
        svg(&mut out, b"", "t", "s").unwrap();
        assert!(String::from_utf8(out).unwrap().contains("no samples"));
    }
}
