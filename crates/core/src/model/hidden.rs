//! Warnings that say how much of the file's data they leave out.
//!
//! A reader that skips part of a file knows what share it skipped (rows, lines,
//! events, samples). A warning that hides more than [`SERIOUS_SHARE`] of the data is
//! not a footnote: `--strict` fails on it, the TUI header and `grove info` show it,
//! headless commands print it first (docs/formats.md, "Warnings that hide data").
//!
//! The share is written into the warning text itself, as a fixed suffix
//! `[hides 98.9% of the data]`, rather than kept beside it: warnings stay plain
//! `String`s that every reader already pushes, and the share survives every place a
//! warning travels (an ensemble's `label: warning`, summaries and grove's cache,
//! sessions). The number shown is the number judged: [`share_of`] reads it back.

/// A warning hiding more than this share of the data is serious (10%).
pub const SERIOUS_SHARE: f64 = 0.10;

const OPEN: &str = " [hides ";
const CLOSE: &str = "% of the data]";

/// `text` with the share of the file's data it hides (0.0..=1.0; out-of-range or NaN
/// shares are clamped) written as a suffix: `N row(s) skipped [hides 98.9% of the data]`.
/// Readers push this where they would push `text`.
pub fn hidden_warning(text: impl Into<String>, share: f64) -> String {
    let share = if share.is_nan() {
        1.0
    } else {
        share.clamp(0.0, 1.0)
    };
    let pct = share * 100.0;
    // One decimal, but never "0.0%" for something hidden nor "100.0%" for less than all.
    let shown = if pct > 0.0 && pct < 0.1 {
        0.1
    } else if pct < 100.0 && pct > 99.9 {
        99.9
    } else {
        (pct * 10.0).round() / 10.0
    };
    format!("{}{OPEN}{shown:.1}{CLOSE}", text.into())
}

/// The share (0.0..=1.0) a warning says it hides, read back from its suffix; None for
/// a warning that does not say.
pub fn share_of(warning: &str) -> Option<f64> {
    let body = warning.strip_suffix(CLOSE)?;
    let (_, num) = body.rsplit_once(OPEN)?;
    num.parse::<f64>().ok().map(|p| p / 100.0)
}

/// Whether a warning hides more than [`SERIOUS_SHARE`] of the data.
pub fn is_serious(warning: &str) -> bool {
    share_of(warning).is_some_and(|s| s > SERIOUS_SHARE)
}

impl super::Profile {
    /// Records a warning that hides `share` (0.0..=1.0) of the file's data; see
    /// [`hidden_warning`] for a reader that collects its warnings before the profile exists.
    pub fn warn_hidden(&mut self, text: impl Into<String>, share: f64) {
        self.warnings.push(hidden_warning(text, share));
    }

    /// The warnings that hide more than [`SERIOUS_SHARE`] of the data, largest share
    /// first (ties in load order).
    pub fn serious_warnings(&self) -> Vec<&str> {
        let mut w: Vec<&str> = self
            .warnings
            .iter()
            .map(String::as_str)
            .filter(|w| is_serious(w))
            .collect();
        w.sort_by(|a, b| {
            share_of(b)
                .unwrap_or(0.0)
                .total_cmp(&share_of(a).unwrap_or(0.0))
        });
        w
    }

    /// The largest share of the data a serious warning hides.
    pub fn hidden_share(&self) -> Option<f64> {
        self.serious_warnings().first().and_then(|w| share_of(w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_written_and_read_back() {
        let w = hidden_warning("5 row(s) skipped", 0.989);
        assert_eq!(w, "5 row(s) skipped [hides 98.9% of the data]");
        let near = |s: Option<f64>| s.is_some_and(|s| (s - 0.989).abs() < 1e-12);
        assert!(near(share_of(&w)));
        assert!(is_serious(&w));
        // An ensemble prefixes the member's label; the suffix still reads.
        assert!(near(share_of(&format!("a.json: {w}"))));
        assert_eq!(share_of("5 row(s) skipped"), None);
    }

    #[test]
    fn edges_round_so_that_the_text_does_not_lie() {
        assert!(hidden_warning("x", 0.0001).ends_with("[hides 0.1% of the data]"));
        assert!(hidden_warning("x", 0.0).ends_with("[hides 0.0% of the data]"));
        assert!(hidden_warning("x", 0.99999).ends_with("[hides 99.9% of the data]"));
        assert!(hidden_warning("x", 1.0).ends_with("[hides 100.0% of the data]"));
        assert!(hidden_warning("x", 7.0).ends_with("[hides 100.0% of the data]"));
        assert!(hidden_warning("x", f64::NAN).ends_with("[hides 100.0% of the data]"));
    }

    #[test]
    fn ten_percent_is_the_line() {
        assert!(!is_serious(&hidden_warning("x", 0.10)));
        assert!(is_serious(&hidden_warning("x", 0.101)));
        assert!(!is_serious(&hidden_warning("x", 0.02)));
    }

    #[test]
    fn the_profile_lists_serious_warnings_largest_first() {
        let mut p = crate::model::profile_of_paths(&[("a", 1.0)], "s");
        p.warnings.push("plain".into());
        p.warn_hidden("small", 0.05);
        p.warn_hidden("big", 0.3);
        p.warn_hidden("bigger", 0.9);
        assert_eq!(
            p.serious_warnings(),
            vec![
                "bigger [hides 90.0% of the data]",
                "big [hides 30.0% of the data]"
            ]
        );
        assert_eq!(p.hidden_share(), Some(0.9));
    }
}
