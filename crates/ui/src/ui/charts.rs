//! Charts as lines of styled text: stacked horizontal bars (parts of a whole), bars
//! (one value per row) and horizontal histograms. Each segment has a theme colour and a
//! fill of its own (`█ ▓ ▒ ░ …`, in ASCII `# = + . …`), and every chart has a legend,
//! so a chart reads without colour (NO_COLOR, the mono theme) and under `--ascii`.
//! The data comes from `gpu::charts`, derived once; a frame only lays it out.

use ratatui::style::Style;

use crate::gpu::charts::{Histogram, Stacked};
use crate::present::format;
use crate::present::glyphs::Glyphs;
use crate::present::heads::distinct_heads;
use crate::ui::theme::Theme;

pub type Span = (String, Style);
pub type Line = Vec<Span>;

/// Fills per series, from dense to light; the ASCII set is told apart without shades.
pub const FILLS: [&str; 8] = ["█", "▓", "▒", "░", "▚", "▞", "▙", "▟"];
pub const ASCII_FILLS: [&str; 8] = ["#", "=", "+", ".", "%", "@", "o", "*"];
/// Eighths of a cell, for single bars.
const EIGHTHS: [&str; 9] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"];

pub fn fill(i: usize, g: &Glyphs) -> &'static str {
    let set = if g.ascii { &ASCII_FILLS } else { &FILLS };
    set[i % set.len()]
}

/// Cells of a bar `width` wide split among parts in proportion (negative parts count
/// as nothing): largest remainders get the spare cells, so the cells add up to the
/// width exactly and no part gets a cell more than its share rounded up.
pub fn stack_cells(parts: &[i64], width: usize) -> Vec<usize> {
    let total: i128 = parts.iter().map(|&p| p.max(0) as i128).sum();
    if total == 0 {
        return vec![0; parts.len()];
    }
    let exact: Vec<(usize, i128)> = parts
        .iter()
        .map(|&p| {
            let n = p.max(0) as i128 * width as i128;
            ((n / total) as usize, n % total)
        })
        .collect();
    let mut cells: Vec<usize> = exact.iter().map(|e| e.0).collect();
    let spare = width - cells.iter().sum::<usize>();
    let mut by_rem: Vec<usize> = (0..parts.len()).collect();
    // Ties go to the earlier part, so equal parts split the same way every frame.
    by_rem.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
    for &i in by_rem.iter().take(spare) {
        cells[i] += 1;
    }
    cells
}

/// A bar of `value` against `max` in `width` cells: whole cells and eighths of one.
pub fn bar_cells(value: f64, max: f64, width: usize) -> (usize, usize) {
    if max <= 0.0 || value <= 0.0 || !value.is_finite() {
        return (0, 0);
    }
    let frac = (value / max).min(1.0) * width as f64;
    let full = frac.floor() as usize;
    let rem = ((frac - full as f64) * 8.0).round() as usize;
    if rem == 8 {
        ((full + 1).min(width), 0)
    } else if full >= width {
        (width, 0)
    } else {
        (full, rem)
    }
}

/// What a chart needs from the screen: theme, glyphs and width.
pub struct Look<'a> {
    pub theme: &'a Theme,
    pub g: &'a Glyphs,
    pub width: usize,
}

impl Look<'_> {
    fn text(&self) -> Style {
        self.theme.style("ui.text")
    }
    fn dim(&self) -> Style {
        self.theme.style("ui.dim")
    }
    pub fn title(&self, s: &str) -> Line {
        vec![(s.to_string(), self.theme.style("ui.title"))]
    }
    pub fn note(&self, s: &str) -> Line {
        vec![(s.to_string(), self.dim())]
    }
    fn pct(&self, part: i64, total: i64) -> String {
        if total <= 0 {
            return "-".into();
        }
        format!("{:.1}%", part.max(0) as f64 * 100.0 / total as f64)
    }
    fn time(&self, ns: i64) -> String {
        format::duration_ns(ns as f64, self.g.micro)
    }
}

/// The style of a series: its category colour, else the chart's role for its place.
fn paint(look: &Look, chart: &Stacked, i: usize, roles: &[&str]) -> Style {
    match chart.series.get(i).and_then(|s| s.color) {
        Some(c) => look.theme.category(c),
        None => look.theme.style(roles.get(i).copied().unwrap_or("ui.dim")),
    }
}

/// How a stacked chart paints its series: theme roles for the series without a
/// category colour, and fills (indices into `FILLS`; empty: in series order).
pub struct Paint<'a> {
    pub roles: &'a [&'a str],
    pub fills: &'a [usize],
}

impl Paint<'_> {
    fn fill(&self, i: usize, g: &Glyphs) -> &'static str {
        fill(self.fills.get(i).copied().unwrap_or(i), g)
    }
}

/// What a stacked bar says at its right: the shares of its first three parts, or the
/// name and share of its largest part (charts of many series).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Right {
    Shares,
    Largest,
}

/// Bars wider than this read no better and push the figures away from them.
const MAX_BAR: usize = 100;

/// The legend: each series' fill (twice, in its colour) and name.
fn legend(look: &Look, chart: &Stacked, p: &Paint) -> Line {
    let roles = p.roles;
    let mut line: Line = vec![("  ".into(), look.text())];
    for (i, s) in chart.series.iter().enumerate() {
        line.push((p.fill(i, look.g).repeat(2), paint(look, chart, i, roles)));
        line.push((format!(" {}   ", s.name), look.text()));
    }
    line
}

/// Labels cut to one width, told apart where they differ (`distinct_cuts`), padded.
fn labels(names: &[&str], w: usize, g: &Glyphs) -> Vec<String> {
    distinct_heads(names, w, g.ellipsis)
        .into_iter()
        .map(|l| format!("{l:<w$}"))
        .collect()
}

fn label_width(names: &[&str], width: usize) -> usize {
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    longest.clamp(4, (width / 4).clamp(12, 40))
}

/// Stacked bars, each the whole of its row (100 %): the label, the bar, then the
/// shares (`right`) and the row's total time.
pub fn stacked(look: &Look, chart: &Stacked, p: &Paint, right: Right) -> Vec<Line> {
    let roles = p.roles;
    let mut out = vec![legend(look, chart, p)];
    let names: Vec<&str> = chart.bars.iter().map(|b| b.label.as_str()).collect();
    let lw = label_width(&names, look.width);
    let shown = labels(&names, lw, look.g);
    let nshare = chart.series.len().min(3);
    let name_w = chart
        .series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    let right_w = match right {
        Right::Shares => nshare * 7,
        Right::Largest => name_w + 7,
    } + 10;
    let bar_w = look
        .width
        .saturating_sub(lw + right_w + 2)
        .clamp(8, MAX_BAR);
    for (b, label) in chart.bars.iter().zip(shown) {
        let total: i64 = b.parts.iter().map(|&p| p.max(0)).sum();
        let mut line: Line = vec![(format!("{label} "), look.text())];
        for (i, n) in stack_cells(&b.parts, bar_w).into_iter().enumerate() {
            line.push((p.fill(i, look.g).repeat(n), paint(look, chart, i, roles)));
        }
        if total == 0 {
            line.push((" ".repeat(bar_w), look.text()));
        }
        let figures = match right {
            Right::Shares => b.parts[..nshare]
                .iter()
                .map(|&p| format!("{:>6}", look.pct(p, total)))
                .collect::<Vec<_>>()
                .join(" "),
            Right::Largest => {
                let (i, &most) = b
                    .parts
                    .iter()
                    .enumerate()
                    .max_by_key(|(i, &v)| (v, std::cmp::Reverse(*i)))
                    .unwrap_or((0, &0));
                let name = chart.series.get(i).map_or("", |s| s.name.as_str());
                format!("{name:>name_w$} {:>6}", look.pct(most, total))
            }
        };
        line.push((format!(" {figures} {:>9}", look.time(total)), look.dim()));
        out.push(line);
    }
    out
}

/// One bar per row, the longest the full width; `colors` gives each row's category
/// slot. Right of each bar its time and share of the sum.
pub fn bars(look: &Look, chart: &Stacked, colors: &[u8]) -> Vec<Line> {
    let names: Vec<&str> = chart.bars.iter().map(|b| b.label.as_str()).collect();
    let lw = label_width(&names, look.width);
    let shown = labels(&names, lw, look.g);
    let vals: Vec<i64> = chart.bars.iter().map(|b| b.parts[0]).collect();
    let sum: i64 = vals.iter().map(|&v| v.max(0)).sum();
    let max = vals.iter().copied().max().unwrap_or(0) as f64;
    let bar_w = look.width.saturating_sub(lw + 20).clamp(8, MAX_BAR);
    let mut out = Vec::new();
    for (i, (v, label)) in vals.iter().zip(shown).enumerate() {
        let st = look.theme.category(colors.get(i).copied().unwrap_or(0));
        let mut line: Line = vec![(format!("{label} "), look.text())];
        line.push((one_bar(*v as f64, max, bar_w, look.g), st));
        line.push((
            format!(" {:>9} {:>6}", look.time(*v), look.pct(*v, sum)),
            look.dim(),
        ));
        out.push(line);
    }
    out
}

/// A bar `width` cells wide (padded), in eighths, or whole `#` cells under ASCII.
fn one_bar(v: f64, max: f64, width: usize, g: &Glyphs) -> String {
    let (full, eighths) = bar_cells(v, max, width);
    let mut s = if g.ascii {
        let n = if eighths >= 4 { full + 1 } else { full };
        "#".repeat(n.min(width))
    } else {
        let mut s = EIGHTHS[8].repeat(full);
        s.push_str(EIGHTHS[eighths]);
        s
    };
    let n = s.chars().count();
    s.push_str(&" ".repeat(width.saturating_sub(n)));
    s
}

/// `1–2 µs`, `< 1 µs`, `500–1000 µs`: a bin's range in the unit of its lower end.
pub fn bin_label(lo: i64, hi: Option<i64>, micro: &str) -> String {
    let unit = |x: i64| -> (i64, &str) {
        if x >= 1_000_000_000 {
            (1_000_000_000, "s")
        } else if x >= 1_000_000 {
            (1_000_000, "ms")
        } else if x >= 1_000 {
            (1_000, micro)
        } else {
            (1, "ns")
        }
    };
    match hi {
        None => {
            let (d, u) = unit(lo);
            format!(">= {} {u}", lo / d)
        }
        Some(h) if lo == 0 => {
            let (d, u) = unit(h);
            format!("< {} {u}", h / d)
        }
        Some(h) => {
            let (d, u) = unit(lo);
            format!("{}–{} {u}", lo / d, h / d)
        }
    }
}

/// A horizontal histogram: one row per bin, its count and share at the right.
pub fn histogram(look: &Look, h: &Histogram, role: &str) -> Vec<Line> {
    let labels: Vec<String> = h
        .bins
        .iter()
        .map(|b| bin_label(b.lo, b.hi, look.g.micro))
        .collect();
    let lw = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let max = h.bins.iter().map(|b| b.count).max().unwrap_or(0) as f64;
    let bar_w = look.width.saturating_sub(lw + 22).clamp(8, MAX_BAR);
    let st = look.theme.style(role);
    h.bins
        .iter()
        .zip(labels)
        .map(|(b, l)| {
            vec![
                (format!("  {l:>lw$} "), look.text()),
                (one_bar(b.count as f64, max, bar_w, look.g), st),
                (
                    format!(
                        " {:>9} {:>6}",
                        crate::present::readable::thousands(b.count as i128),
                        look.pct(b.count as i64, h.n as i64)
                    ),
                    look.dim(),
                ),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::glyphs::{ASCII, UNICODE};

    #[test]
    fn stacked_cells_fill_the_width_in_proportion() {
        assert_eq!(stack_cells(&[50, 25, 25], 20), [10, 5, 5]);
        assert_eq!(stack_cells(&[1, 1, 1], 10), [4, 3, 3]);
        // Largest remainder: 2/3 of 10 = 6.67 -> 7, 1/3 -> 3.33 -> 3.
        assert_eq!(stack_cells(&[2, 1], 10), [7, 3]);
        assert_eq!(stack_cells(&[0, 0], 10), [0, 0]);
        // Negative parts (HTA's overlapping gaps) count as nothing.
        assert_eq!(stack_cells(&[-5, 10], 8), [0, 8]);
        // Huge nanosecond totals do not overflow.
        let big = stack_cells(&[i64::MAX / 2, i64::MAX / 2], 9);
        assert_eq!(big.iter().sum::<usize>(), 9);
        for w in 0..50 {
            assert_eq!(stack_cells(&[7, 13, 1, 0, 29], w).iter().sum::<usize>(), w);
        }
    }

    #[test]
    fn single_bars_in_eighths() {
        assert_eq!(bar_cells(50.0, 100.0, 10), (5, 0));
        assert_eq!(bar_cells(55.0, 100.0, 10), (5, 4));
        assert_eq!(bar_cells(100.0, 100.0, 10), (10, 0));
        assert_eq!(bar_cells(99.99, 100.0, 10), (10, 0));
        assert_eq!(bar_cells(0.0, 100.0, 10), (0, 0));
        assert_eq!(bar_cells(5.0, 0.0, 10), (0, 0));
        assert_eq!(one_bar(55.0, 100.0, 10, &UNICODE), "█████▌    ");
        assert_eq!(one_bar(55.0, 100.0, 10, &ASCII), "######    ");
    }

    #[test]
    fn fills_differ_per_series() {
        for g in [UNICODE, ASCII] {
            let mut f: Vec<&str> = (0..8).map(|i| fill(i, &g)).collect();
            f.sort();
            f.dedup();
            assert_eq!(f.len(), 8);
        }
        assert!(ASCII_FILLS.iter().all(|f| f.is_ascii()));
    }

    #[test]
    fn bin_labels_use_the_lower_unit() {
        assert_eq!(bin_label(0, Some(1000), "µs"), "< 1 µs");
        assert_eq!(bin_label(1000, Some(2000), "µs"), "1–2 µs");
        assert_eq!(bin_label(500_000, Some(1_000_000), "us"), "500–1000 us");
        assert_eq!(bin_label(2_000_000, Some(5_000_000), "µs"), "2–5 ms");
    }
}
