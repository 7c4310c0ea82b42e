//! The kernels panel: a bar per kernel (or category), coloured by category, and the
//! selected row's details.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::{put, ASCII_BLOCKS, BLOCKS};
use crate::app::panels::kernels::bar_value;
use crate::app::App;
use crate::present::glyphs::Glyphs;
use crate::present::{format, readable};
use crate::ui::theme::Theme;

/// The kernel bar chart: one bar per kernel (or category), coloured by category.
pub fn kernels(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    let k = &app.kernels;
    let header = theme.style("ui.column.header");
    let by = k.sort.name();
    let mut title = format!(
        "{} by {by}{}{}",
        if k.by_category {
            "categories"
        } else {
            "kernels"
        },
        if k.memory {
            " (with memcpy/memset)"
        } else {
            ""
        },
        k.top.map(|t| format!(", top {t}")).unwrap_or_default(),
    );
    // The key hints that fit, whole (at 80 columns the last one was cut mid-word).
    let mut sep = " — ";
    for hint in HINTS {
        if title.chars().count() + sep.chars().count() + hint.chars().count() > area.width as usize
        {
            break;
        }
        title.push_str(sep);
        title.push_str(hint);
        sep = "  ";
    }
    put(buf, area.x, area.y, &title, area.right(), header);
    if k.rows.is_empty() {
        put(
            buf,
            area.x,
            area.y + 1,
            &if app.loading() {
                app.loading_note()
            } else {
                "no GPU kernels".to_string()
            },
            area.right(),
            theme.style("ui.dim"),
        );
        return;
    }
    let rows = (area.height as usize).saturating_sub(1);
    let offset = if k.cursor >= k.offset + rows {
        k.cursor + 1 - rows
    } else {
        k.offset.min(k.cursor)
    };
    let value = |r: &crate::gpu::kernels::KernelRow| bar_value(k.sort, r);
    let max = k.bar_max;
    // Several profiles side by side: their label before the name, never cut.
    let pw = k
        .rows
        .iter()
        .filter_map(|r| r.profile.as_deref())
        .map(|p| p.chars().count() + 1)
        .max()
        .unwrap_or(0)
        .min(area.width as usize / 4);
    let (name_w, bar_w, cat_w) = columns(k, (area.width as usize).saturating_sub(pw));
    let cuts = k.cut_names(name_w, g.ellipsis);
    let blocks = if g.ascii { ASCII_BLOCKS } else { BLOCKS };
    for (i, r) in k.rows.iter().enumerate().skip(offset).take(rows) {
        let y = area.y + 1 + (i - offset) as u16;
        let sel = i == k.cursor;
        let base = if sel {
            theme.style("ui.text").patch(theme.style("ui.selection"))
        } else {
            theme.style("ui.text")
        };
        buf.set_style(Rect::new(area.x, y, area.width, 1), base);
        let marked = k.selected.as_deref() == Some(r.name.as_str());
        let name = if k.hscroll > 0 {
            // Scrolled sideways: the full name from the scrolled column on.
            let rest: String = r.name.chars().skip(k.hscroll).collect();
            crate::ui::text::fit(&format!("{}{rest}", g.ellipsis), name_w, g)
        } else {
            cuts.get(i).cloned().unwrap_or_default()
        };
        let mut x = area.x;
        if let Some(p) = r.profile.as_deref() {
            let p = crate::ui::text::fit(p, pw.saturating_sub(1), g);
            put(
                buf,
                x,
                y,
                &p,
                area.right(),
                base.patch(theme.style("ui.dim")),
            );
            x += pw as u16;
        }
        x = put(
            buf,
            x,
            y,
            &format!("{name:<name_w$} "),
            area.right(),
            if marked {
                base.patch(theme.style("ui.match"))
            } else {
                base
            },
        );
        // Bars in eighths of a cell.
        let frac = value(r) / max * bar_w as f64;
        let full = frac.floor() as usize;
        let rem = ((frac - full as f64) * 8.0).round() as usize;
        let mut bar = blocks[8].repeat(full.min(bar_w));
        if full < bar_w && rem > 0 {
            bar.push_str(blocks[rem]);
        }
        let cat = base.patch(theme.category(r.color));
        let bar_end = x + bar_w as u16;
        put(buf, x, y, &bar, bar_end, cat);
        x = bar_end + 1;
        let shown = match k.sort {
            crate::gpu::kernels::KernelSort::Count => readable::thousands(r.count as i128),
            crate::gpu::kernels::KernelSort::Mean => format::duration_ns(r.mean_ns, g.micro),
            crate::gpu::kernels::KernelSort::Total => {
                format::duration_ns(r.total_ns as f64, g.micro)
            }
        };
        let text = format!(
            "{shown:>9} {:>5.1}% {:>8}× {:<cat_w$}",
            r.pct,
            readable::thousands(r.count as i128),
            r.category
        );
        put(
            buf,
            x,
            y,
            &text,
            area.right(),
            base.patch(theme.style("ui.dim")),
        );
    }
}

/// The title's key hints, most useful first.
const HINTS: [&str; 4] = [
    "s: order",
    "c/n: category/name",
    "M/m: memory on/off",
    "Enter: select",
];

/// The statistics after the bar: `{total:>9} {pct:>5.1}% {count:>8}× `.
const STATS_W: usize = 9 + 1 + 6 + 1 + 9 + 1;

/// The widths of the name, bar and category columns. The category is never cut (it is
/// as wide as the longest one), the statistics keep theirs, and the name takes a third
/// of the width from what is left, the bar the rest.
fn columns(k: &crate::app::panels::kernels::KernelsView, width: usize) -> (usize, usize, usize) {
    let cat_w = k
        .rows
        .iter()
        .map(|r| r.category.chars().count())
        .max()
        .unwrap_or(0)
        .max(8);
    // Name, a space, the bar, a space, the statistics, the category.
    let avail = width.saturating_sub(STATS_W + cat_w + 2);
    let name_w = (width / 3)
        .clamp(12, 80)
        .min(avail.saturating_sub(4))
        .max(8);
    let bar_w = avail.saturating_sub(name_w).max(4);
    (name_w, bar_w, cat_w)
}

/// Details of the selected kernel row (right pane).
pub fn kernel_details(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    r: Rect,
    lines: &mut Vec<(String, Style)>,
) {
    let k = &app.kernels;
    let Some(row) = k.rows.get(k.cursor) else {
        return;
    };
    let title = theme.style("ui.title");
    let text = theme.style("ui.text");
    lines.push((row.name.clone(), title));
    if let Some(p) = &row.profile {
        lines.push((format!("profile   {p}"), text));
    }
    lines.push((format!("category  {}", row.category), text));
    let d = |x: f64| format::duration_ns(x, g.micro);
    for (label, v) in [
        ("total", d(row.total_ns as f64)),
        ("count", readable::thousands(row.count as i128)),
        ("mean", d(row.mean_ns)),
        ("median", d(row.median_ns)),
        ("min", d(row.min_ns as f64)),
        ("max", d(row.max_ns as f64)),
        ("std", d(row.std_ns)),
        ("% of table", format!("{:.2}%", row.pct)),
    ] {
        lines.push((format!("{label:<9} {v:>12}"), text));
    }
    if let (Some(ev), Some(&first)) = (app.profile.events.as_ref(), row.instances.first()) {
        if let Some(gpu) = &app.gpu {
            lines.push((
                format!("HTA type  {}", gpu.model.hta_of(first).label()),
                text,
            ));
        }
        if let Some(a) = ev.args_of(first as usize) {
            lines.push((String::new(), text));
            // Keys whole (`registers per thread`), numbers readable (`5.82`, `1,024`).
            let kw = a
                .iter()
                .map(|(k, _)| k.chars().count())
                .max()
                .unwrap_or(0)
                .min(26);
            // The pane's text width (`ui::layout` draws from r.x + 2, one column short).
            let w = r.width.saturating_sub(3) as usize;
            for (k, v) in a.iter() {
                let v = readable::arg_value(&a, k, v);
                let line = format!("{k:<kw$} {v}");
                if line.chars().count() <= w {
                    lines.push((line, theme.style("ui.dim")));
                } else {
                    // Too wide for the pane: the value under its key, not wrapped
                    // mid-value (`[384,1` / `,1]`).
                    lines.push((k.to_string(), theme.style("ui.dim")));
                    lines.push((format!("  {v}"), theme.style("ui.dim")));
                }
            }
        }
    }
}

impl super::View for crate::app::panels::kernels::Kernels {
    fn draw(&self, app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
        kernels(app, theme, g, area, buf)
    }

    /// The kernel row under the cursor.
    fn details(&self) -> super::Details {
        super::Details::Lines(kernel_details)
    }

    fn legend(&self) -> super::Legend {
        super::Legend::Categories
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::panels::kernels::KernelsView;
    use crate::gpu::kernels::KernelRow;
    use crate::model::EventKind;

    /// From 80 columns on, the name, the bar, the figures and the longest category fit:
    /// the category is never cut.
    #[test]
    fn the_category_column_fits() {
        let rows = ["gemm", "elementwise", "attention"]
            .map(|cat| KernelRow::new("k".into(), cat.into(), 0, EventKind::Kernel));
        let k = KernelsView {
            rows: std::sync::Arc::new(rows.to_vec()),
            ..Default::default()
        };
        for width in [80usize, 100, 120, 200] {
            let (name_w, bar_w, cat_w) = columns(&k, width);
            assert_eq!(cat_w, "elementwise".len());
            assert!(
                name_w + 1 + bar_w + 1 + STATS_W + cat_w <= width,
                "width {width}: {name_w} {bar_w} {cat_w}"
            );
            assert!(name_w >= 12 && bar_w >= 4, "width {width}");
        }
    }
}
