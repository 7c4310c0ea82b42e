//! The `gaps` overlay: the longest idle gaps per GPU stream, one row each, the
//! selected one highlighted. Draws only the rows that fit.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use super::help::{frame, popup};
use super::theme::Theme;
use crate::app::panels::gaps::GapRow;
use crate::app::App;
use crate::present::format;
use crate::present::glyphs::Glyphs;

pub fn render_gaps(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    rows: &[GapRow],
    selected: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let h = (rows.len() as u16 + 3)
        .min(area.height.saturating_sub(2))
        .max(4);
    let r = popup(area, area.width.saturating_sub(4).max(20), h);
    Clear.render(r, buf);
    let title = format!(
        " {} longest idle gaps (j/k move, Enter jumps, any other key closes) ",
        rows.len()
    );
    let block = frame(g, &title, theme).style(theme.style("ui.popup"));
    let inner = block.inner(r);
    block.render(r, buf);
    if inner.height == 0 {
        return;
    }
    let width = inner.width as usize;
    let head = format!(
        "{:<10} {:>12} {:>12}  cpu call path",
        "lane", "start", "length"
    );
    buf.set_stringn(
        inner.x,
        inner.y,
        head,
        width,
        theme.style("ui.column.header"),
    );
    let body = inner.height.saturating_sub(1) as usize;
    // Keep the selected row on screen: scroll by whole pages of the list.
    let first = selected.saturating_sub(body.saturating_sub(1));
    for (i, row) in rows.iter().enumerate().skip(first).take(body) {
        let fixed = format!(
            "{:<10} {:>12} {:>12}  ",
            row.lane,
            // Three significant digits read at a glance (`1.53 ms`); the exact figure
            // is in `grove gaps` and the details pane after Enter.
            format::duration_ns(app.rel(row.start) as f64, g.micro),
            format::duration_ns(row.len as f64, g.micro)
        );
        // A long call path keeps its end (the innermost frames), cut at the left.
        let room = width.saturating_sub(fixed.chars().count());
        let n = row.cpu.chars().count();
        let path: String = if n > room && room > 1 {
            let tail: String = row.cpu.chars().skip(n - (room - 1)).collect();
            format!("{}{tail}", g.ellipsis)
        } else {
            row.cpu.clone()
        };
        let style = if i == selected {
            theme.style("ui.selection")
        } else {
            theme.style("ui.popup")
        };
        let y = inner.y + 1 + (i - first) as u16;
        buf.set_stringn(inner.x, y, format!("{fixed}{path}"), width, style);
    }
}
