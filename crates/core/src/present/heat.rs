//! Hatchet's six fixed heat bins: p = (v - min) / (max - min); bin 0 is the hottest
//! (p > 0.9), bin 5 the coolest (p >= 0). Negative p has no bin.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeatScale {
    pub min: f64,
    pub max: f64,
}

impl Default for HeatScale {
    fn default() -> Self {
        HeatScale { min: 0.0, max: 0.0 }
    }
}

pub const BINS: usize = 6;
const THRESHOLDS: [f64; 5] = [0.9, 0.7, 0.5, 0.3, 0.1];

impl HeatScale {
    /// Min and max over the finite values.
    pub fn from_values(values: impl Iterator<Item = f64>) -> HeatScale {
        let mut min = f64::INFINITY;
        let mut max = f64::NEG_INFINITY;
        for v in values.filter(|v| v.is_finite()) {
            min = min.min(v);
            max = max.max(v);
        }
        if min > max {
            HeatScale::default()
        } else {
            HeatScale { min, max }
        }
    }

    /// 0 = hottest .. 5 = coolest; None for NaN or below the minimum.
    pub fn bin(&self, v: f64) -> Option<usize> {
        if !v.is_finite() {
            return None;
        }
        let range = self.max - self.min;
        let p = if range > 0.0 {
            (v - self.min) / range
        } else {
            0.0
        };
        if p < 0.0 {
            return None;
        }
        Some(THRESHOLDS.iter().position(|&t| p > t).unwrap_or(BINS - 1))
    }

    /// Value ranges of the bins, hottest first (the legend's lines).
    pub fn ranges(&self) -> [(f64, f64); BINS] {
        let r = self.max - self.min;
        let at = |f: f64| self.min + f * r;
        [
            (at(0.9), self.max),
            (at(0.7), at(0.9)),
            (at(0.5), at(0.7)),
            (at(0.3), at(0.5)),
            (at(0.1), at(0.3)),
            (self.min, at(0.1)),
        ]
    }
}

/// A diverging bin for a signed difference: increases are hot (bins 0..=2, by their
/// size against the largest increase `hi`), decreases cool (bins 3..=5, against the
/// largest decrease `lo`); zero and NaN have none, so the sign alone decides hot or
/// cool, as the tree's `diff` column's sign does.
pub fn signed_bin(v: f64, lo: f64, hi: f64) -> Option<usize> {
    if !v.is_finite() || v == 0.0 {
        return None;
    }
    let (p, base) = if v > 0.0 {
        (if hi > 0.0 { v / hi } else { 1.0 }, 0)
    } else {
        (if lo < 0.0 { v / lo } else { 1.0 }, 3)
    };
    // Larger changes get the stronger colour: hot 0 for the largest increase, cool 5
    // for the largest decrease.
    Some(if v > 0.0 {
        base + if p > 2.0 / 3.0 {
            0
        } else if p > 1.0 / 3.0 {
            1
        } else {
            2
        }
    } else {
        base + if p > 2.0 / 3.0 {
            2
        } else if p > 1.0 / 3.0 {
            1
        } else {
            0
        }
    })
}

/// The SGR colours of the six heat bins (hot first) in headless text, for the
/// terminal's colour depth: Hatchet's 256-colour ramp, or on an 8/16-colour terminal
/// SGR 30-37 (and 90-97), which such a terminal shows (it ignores `38;5;N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sgr {
    Ansi8,
    Ansi16,
    #[default]
    Ansi256,
}

impl Sgr {
    /// The escape that starts bin `b`'s colour.
    pub fn heat(self, b: usize) -> String {
        const HATCHET_ANSI: [u8; 6] = [196, 208, 220, 46, 34, 22];
        // Red, magenta, yellow, green, cyan, blue: six bins told apart in eight colours.
        const BASE: [u8; 6] = [31, 35, 33, 32, 36, 34];
        const BRIGHT: [u8; 6] = [91, 31, 93, 92, 32, 36];
        let b = b.min(5);
        match self {
            Sgr::Ansi256 => format!("\x1b[38;5;{}m", HATCHET_ANSI[b]),
            Sgr::Ansi16 => format!("\x1b[{}m", BRIGHT[b]),
            Sgr::Ansi8 => format!("\x1b[{}m", BASE[b]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_bins_follow_the_sign() {
        assert_eq!(signed_bin(10.0, -5.0, 10.0), Some(0));
        assert_eq!(signed_bin(1.0, -5.0, 10.0), Some(2));
        assert_eq!(signed_bin(-5.0, -5.0, 10.0), Some(5));
        assert_eq!(signed_bin(-0.5, -5.0, 10.0), Some(3));
        assert_eq!(signed_bin(0.0, -5.0, 10.0), None);
        assert_eq!(signed_bin(f64::NAN, -5.0, 10.0), None);
    }

    #[test]
    fn hatchet_bins() {
        let s = HeatScale::from_values([0.0, 15.0, f64::NAN].into_iter());
        assert_eq!(s.bin(15.0), Some(0));
        assert_eq!(s.bin(13.5), Some(1)); // p = 0.9 is not > 0.9
        assert_eq!(s.bin(0.0), Some(5));
        assert_eq!(s.bin(-1.0), None);
        assert_eq!(s.ranges()[0], (13.5, 15.0));
        assert_eq!(s.ranges()[5], (0.0, 1.5));
    }
}
