//! The timeline's ruler: ticks at a round step, labelled from the window's start in a
//! unit that fits the step (`+0`, `+50 µs`, `+100 µs`), with the window's start itself
//! written once at the left edge, to a thousandth of the step's unit. Labels stay exact at any
//! zoom: a window of 800 ns 28 ms into the trace reads `28.614321 ms … +200 ns`, the
//! trace's first 6 ms `8 µs … +2 ms`.

/// Units a step may be written in, largest first.
const UNITS: [(i64, &str); 4] = [
    (1_000_000_000, "s"),
    (1_000_000, "ms"),
    (1_000, "µs"),
    (1, "ns"),
];

/// A round step of 1, 2 or 5 × 10^k ns giving a label about every `every` columns of
/// `width` over `span` ns, and the unit (ns per unit, name) to write it in.
pub fn step(span: i64, width: u16, every: f64) -> (i64, (i64, &'static str)) {
    let raw = (span.max(1) as f64 * every / width.max(1) as f64).max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
        .round()
        .max(1.0) as i64;
    let unit = *UNITS.iter().find(|(u, _)| *u <= step).unwrap_or(&UNITS[3]);
    (step, unit)
}

/// A whole number of units, with µs written as the glyph set says.
fn amount(v: i64, (per, name): (i64, &str), micro: &str) -> String {
    let name = if name == "µs" { micro } else { name };
    format!("{} {name}", v / per)
}

/// The labels of a window `span` ns wide over `width` columns: `(column, text)`, the
/// first `+0`, the others the time since the window's start.
pub fn labels(span: i64, width: u16, micro: &str) -> Vec<(u16, String)> {
    let (step, unit) = step(span, width, 14.0);
    let mut out = Vec::new();
    let mut t = 0i64;
    while t < span {
        let col = (t as f64 / span.max(1) as f64 * width as f64) as u16;
        let text = if t == 0 {
            "+0".to_string()
        } else {
            format!("+{}", amount(t, unit, micro))
        };
        out.push((col, text));
        t += step;
    }
    out
}

/// The window's start (`rel` ns from the trace's start) in the largest unit it
/// reaches, to a thousandth of the unit the ruler counts in: `28.614 ms` when the
/// ruler counts ms, `28.614321 ms` when µs, `8.807 µs` when ns.
pub fn absolute(rel: i64, span: i64, width: u16, micro: &str) -> String {
    let (_, (per, _)) = step(span, width, 14.0);
    let per = (per / 1000).max(1);
    let a = rel.unsigned_abs() as i64;
    let (div, name) = *UNITS[..3]
        .iter()
        .find(|(u, _)| a >= *u)
        .unwrap_or(&UNITS[3]);
    let name = if name == "µs" { micro } else { name };
    // Decimals that resolve a thousandth of the ruler's unit.
    let decimals = ((div / per.min(div)) as f64).log10().round() as usize;
    let sign = if rel < 0 { "-" } else { "" };
    if decimals == 0 {
        return format!("{sign}{} {name}", a / div);
    }
    let frac = (a % div) / (div / 10i64.pow(decimals as u32));
    format!("{sign}{}.{frac:0decimals$} {name}", a / div)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_count_from_the_window_start() {
        let l = labels(776_000, 70, "µs");
        assert_eq!(l[0], (0, "+0".to_string()));
        assert_eq!(l[1].1, "+200 µs");
        assert!(l.iter().all(|(_, t)| t.starts_with('+')));
        // Deep zoom: 800 ns.
        let l = labels(800, 80, "us");
        assert_eq!(l[1].1, "+200 ns");
        // Seconds.
        let l = labels(20_000_000_000, 100, "µs");
        assert_eq!(l[1].1, "+5 s");
    }

    #[test]
    fn the_start_keeps_the_step_precision() {
        let abs = |r, s, w| absolute(r, s, w, "µs");
        assert_eq!(abs(28_614_321, 800, 80), "28.614321 ms");
        assert_eq!(abs(28_614_321, 776_000, 70), "28.614321 ms");
        assert_eq!(abs(28_614_321, 50_000_000, 70), "28.614 ms");
        assert_eq!(abs(2_500_000_000, 1_000_000, 70), "2.500000000 s");
        assert_eq!(abs(28_614_321, 20_000_000_000, 70), "28 ms");
        assert_eq!(abs(8_807, 6_310_000, 70), "8 µs");
        assert_eq!(abs(8_807, 631_000, 70), "8.807 µs");
        assert_eq!(abs(0, 1_000, 70), "0 ns");
    }

    #[test]
    fn steps_are_round() {
        assert_eq!(step(1_000_000, 70, 14.0), (200_000, (1_000, "µs")));
        assert_eq!(step(10, 80, 14.0), (2, (1, "ns")));
    }
}
