//! The summary panel's view.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::put;
use crate::app::panels::summary::LineStyle;
use crate::app::App;
use crate::ui::theme::Theme;

/// The summary panel: HTA's breakdowns for this trace, or the metadata. The lines are
/// derived once (`App::summary_lines`); a frame draws the rows on screen.
pub fn summary(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let lines = app.summary_lines();
    for (i, (l, kind)) in lines
        .iter()
        .skip(app.summary.scroll)
        .take(area.height as usize)
        .enumerate()
    {
        let st = match kind {
            LineStyle::Title => theme.style("ui.title"),
            LineStyle::Header => theme.style("ui.column.header"),
            LineStyle::Text => theme.style("ui.text"),
            LineStyle::Dim => theme.style("ui.dim"),
        };
        // Scrolled sideways: the columns to the right of the first come into view
        // (titles stay).
        let skip = if *kind == LineStyle::Title {
            0
        } else {
            app.summary.hscroll
        };
        let l: String = l.chars().skip(skip).collect();
        put(buf, area.x, area.y + i as u16, &l, area.right(), st);
    }
}

impl super::View for crate::app::panels::summary::Summary {
    fn draw(
        &self,
        app: &App,
        theme: &Theme,
        _: &crate::present::glyphs::Glyphs,
        area: Rect,
        buf: &mut Buffer,
    ) {
        summary(app, theme, area, buf)
    }

    /// The tables need the width.
    fn details(&self) -> super::Details {
        super::Details::Hidden
    }

    fn legend(&self) -> super::Legend {
        super::Legend::Heat
    }
}
