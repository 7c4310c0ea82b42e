//! The metric heatmap: its rows are the tree's rows on screen (it scrolls with the tree),
//! its columns the profiles of an ensemble (or the metrics of a single profile). Cells
//! are coloured in six bins, normalised per column, per row, globally, or as z-scores
//! per row; the mono theme shows glyph density.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::panels::heatmap::Norm;
use crate::app::App;
use crate::present::format;
use crate::present::glyphs::Glyphs;
use crate::present::heat::HeatScale;
use crate::ui::theme::Theme;

/// Bin of a z-score: far above the row's mean is hot, far below cold.
fn z_bin(z: f64) -> Option<usize> {
    if !z.is_finite() {
        return None;
    }
    Some(if z >= 2.0 {
        0
    } else if z >= 1.0 {
        1
    } else if z >= 0.5 {
        2
    } else if z > -0.5 {
        3
    } else if z > -1.0 {
        4
    } else {
        5
    })
}

pub fn render(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    if area.height < 3 {
        return;
    }
    let m = &app.profile.metrics;
    // Columns and their ranges are derived once per change of the metrics; a frame
    // reads the cells of the rows on screen only.
    let columns = app.heatmap_columns();
    let names = &columns.names;
    let tree = &app.tree;
    let name_w = (area.width as usize / 3).clamp(10, 40) as u16;
    // Cells are as wide as the longest label needs (HPCToolkit's `rank_10_thread_3`),
    // within bounds; a longer label keeps its distinguishing end.
    let longest = names
        .iter()
        .map(|n| {
            crate::ensemble::split_column(n)
                .map_or(n.as_str(), |x| x.1)
                .chars()
                .count()
        })
        .max()
        .unwrap_or(0);
    let cell_w: u16 = (longest as u16 + 1).clamp(12, 18);
    let cols = ((area.width.saturating_sub(name_w)) / cell_w) as usize;
    let first_col = app.heatmap.col.saturating_sub(cols.saturating_sub(1));
    let shown: Vec<&String> = names.iter().skip(first_col).take(cols).collect();
    let header = theme.style("ui.column.header");
    let title = format!("norm {} (n)", app.heatmap.norm.name());
    buf.set_stringn(area.x, area.y, &title, name_w as usize, header);
    let values: Vec<&[f64]> = shown.iter().map(|n| m.values(n).unwrap_or(&[])).collect();
    let ranges = &columns.ranges[first_col.min(columns.len())..][..shown.len()];
    let col_scales: Vec<HeatScale> = ranges
        .iter()
        .map(|r| {
            r.map(|(min, max)| HeatScale { min, max })
                .unwrap_or_default()
        })
        .collect();
    // The shown columns' ranges together: the same min and max as a pass over them.
    let global = HeatScale::from_values(ranges.iter().flatten().flat_map(|&(a, b)| [a, b]));
    let limit = cell_w as usize - 1;
    // Member columns read best by their label, cut where the labels on screen differ.
    let labels: Vec<&str> = shown
        .iter()
        .map(|n| crate::ensemble::split_column(n).map_or(n.as_str(), |x| x.1))
        .collect();
    let own = labels
        .iter()
        .map(|l| format::clip_label(l, limit, g.ellipsis))
        .collect();
    let heads = crate::present::distinct::keep_apart(&labels, own, limit, g.ellipsis);
    for (c, t) in heads.iter().enumerate() {
        let x = area.x + name_w + c as u16 * cell_w;
        let mut st = header;
        if first_col + c == app.heatmap.col {
            st = st.patch(theme.style("ui.selection"));
        }
        buf.set_stringn(
            x,
            area.y,
            format!("{t:>w$}", w = limit),
            cell_w as usize,
            st,
        );
    }
    let start = tree.offset.min(tree.visible.len());
    let rows = (area.height - 1) as usize;
    for (i, row) in tree.visible.iter().skip(start).take(rows).enumerate() {
        let y = area.y + 1 + i as u16;
        let node = tree.po.node[row.pos as usize];
        let sel = start + i == tree.cursor;
        let base = if sel {
            theme.style("ui.text").patch(theme.style("ui.selection"))
        } else {
            theme.style("ui.text")
        };
        buf.set_style(Rect::new(area.x, y, area.width, 1), base);
        let depth = tree.po.depth[row.pos as usize] as usize;
        let indent = (depth * 2).min(name_w as usize / 2);
        let label = if row.is_node() {
            app.profile.cct.name(node).to_string()
        } else {
            format!("{} {} more", g.ellipsis, row.more)
        };
        buf.set_stringn(
            area.x + indent as u16,
            y,
            &label,
            (name_w as usize).saturating_sub(indent + 1),
            base,
        );
        if !row.is_node() {
            continue;
        }
        let cells: Vec<f64> = values
            .iter()
            .map(|v| v.get(node as usize).copied().unwrap_or(f64::NAN))
            .collect();
        let row_scale = HeatScale::from_values(cells.iter().copied());
        let finite: Vec<f64> = cells.iter().copied().filter(|x| x.is_finite()).collect();
        let mean = finite.iter().sum::<f64>() / finite.len().max(1) as f64;
        let std = if finite.len() > 1 {
            (finite.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (finite.len() - 1) as f64)
                .sqrt()
        } else {
            0.0
        };
        for (c, n) in shown.iter().enumerate() {
            let v = cells[c];
            let x = area.x + name_w + c as u16 * cell_w;
            let (bin, text) = match app.heatmap.norm {
                Norm::Column => (col_scales[c].bin(v), format::value(v, m.unit(n), g.micro)),
                Norm::Row => (row_scale.bin(v), format::value(v, m.unit(n), g.micro)),
                Norm::Global => (global.bin(v), format::value(v, m.unit(n), g.micro)),
                Norm::ZScore => {
                    let z = if std > 0.0 { (v - mean) / std } else { 0.0 };
                    let t = if v.is_nan() {
                        "-".to_string()
                    } else {
                        format!("{z:+.2}σ")
                    };
                    (if v.is_nan() { None } else { z_bin(z) }, t)
                }
            };
            let st = match bin {
                Some(b) => base.patch(theme.heat(b)),
                None => base.patch(theme.style("ui.dim")),
            };
            let glyph = if theme.heat_glyphs {
                bin.map(|b| g.density[5 - b]).unwrap_or(" ")
            } else {
                ""
            };
            let w = (cell_w as usize - 1).saturating_sub(glyph.chars().count());
            buf.set_stringn(x, y, format!("{glyph}{text:>w$}"), cell_w as usize, st);
        }
    }
}

impl super::View for crate::app::panels::heatmap::Heatmap {
    fn draw(&self, app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
        render(app, theme, g, area, buf)
    }

    /// The columns need the width.
    fn details(&self) -> super::Details {
        super::Details::Hidden
    }

    fn legend(&self) -> super::Legend {
        super::Legend::Heat
    }

    /// In z-score mode the colours are standard deviations from the row's mean, not
    /// the primary metric's values: the legend says so.
    fn draw_legend(&self, app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) -> bool {
        if app.heatmap.norm != Norm::ZScore {
            return false;
        }
        let mut x = r.x + 1;
        let label = "z-score (row): ";
        buf.set_stringn(x, r.y, label, r.width as usize, theme.style("ui.dim"));
        x += label.chars().count() as u16;
        for (b, range) in z_ranges(g.ascii).iter().enumerate() {
            if x >= r.right() {
                break;
            }
            let glyph = if theme.heat_glyphs {
                g.density[5 - b]
            } else {
                g.block
            };
            let glyph = if glyph == " " { "_" } else { glyph };
            let text = format!("{glyph} {range}  ");
            let left = r.right().saturating_sub(x) as usize;
            buf.set_stringn(x, r.y, &text, left, theme.heat(b));
            x += text.chars().count() as u16;
        }
        true
    }
}

/// The ranges of [`z_bin`]'s bins, hottest first.
fn z_ranges(ascii: bool) -> [&'static str; 6] {
    if ascii {
        [">=2", "1..2", "0.5..1", "-0.5..0.5", "-1..-0.5", "<-1"]
    } else {
        ["≥2σ", "1–2σ", "0.5–1σ", "±0.5σ", "−1–−0.5σ", "<−1σ"]
    }
}
