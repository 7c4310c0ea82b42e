//! The SQL results panel: the query and row count on top, the column names, then the
//! rows on screen (numbers right-aligned, a column at most 40 cells wide), from the
//! panel's first column (`scroll table N`). A frame reads only the cells it draws.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::put;
use crate::app::App;
use crate::present::glyphs::Glyphs;
use crate::sql::write::{cell_text, numeric};
use crate::ui::text::fit_name;
use crate::ui::theme::Theme;

/// `text` in lines of at most `width` characters, broken at spaces (a word longer
/// than the width stays whole on its own line and is cut by the screen).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let n = line.chars().count();
        if n > 0 && n + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// The widest a column is drawn.
const MAX_WIDTH: usize = 40;

pub fn sql(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    let v = &app.sql;
    let header = theme.style("ui.column.header");
    let text = theme.style("ui.text");
    let Some(a) = &v.answer else {
        let hint = format!(
            "no query yet: :sql QUERY over the tables {} (docs/sql.md)",
            crate::sql::TABLES.join(", ")
        );
        // Wrapped at spaces: at 80 columns the table list ran off the edge.
        for (i, line) in wrap_words(&hint, area.width as usize)
            .iter()
            .take(area.height as usize)
            .enumerate()
        {
            let y = area.y + i as u16;
            put(buf, area.x, y, line, area.right(), theme.style("ui.dim"));
        }
        return;
    };
    let df = &a.df;
    let sort = match &v.sort {
        Some((c, d)) => format!(" · by {c} {}", if *d { "desc" } else { "asc" }),
        None => String::new(),
    };
    let title = format!(
        "{} rows{sort} · {} — s: sort  r: reverse  Enter: go  f: filter  H/L: columns",
        df.height(),
        a.query
    );
    put(buf, area.x, area.y, &title, area.right(), header);
    let rows = area.height.saturating_sub(2) as usize;
    let cursor = v.cursor.min(df.height().saturating_sub(1));
    let offset = if cursor >= v.offset + rows {
        cursor + 1 - rows
    } else {
        v.offset.min(cursor)
    };
    let end = (offset + rows).min(df.height());
    let sel = text.patch(theme.style("ui.selection"));
    let mut x = area.x;
    for c in df.columns().iter().skip(v.column) {
        if x >= area.right() {
            break;
        }
        let cells: Vec<String> = (offset..end)
            .map(|r| c.get(r).map(|x| cell_text(&x)).unwrap_or_default())
            .collect();
        let name = c.name().to_string();
        let w = cells
            .iter()
            .map(|s| s.chars().count())
            .chain([name.chars().count()])
            .max()
            .unwrap_or(1)
            .min(MAX_WIDTH);
        let right = numeric(c.dtype());
        let fit = |s: &str| {
            let s = fit_name(s, w, g);
            let pad = w.saturating_sub(s.chars().count());
            if right {
                format!("{}{s}", " ".repeat(pad))
            } else {
                format!("{s}{}", " ".repeat(pad))
            }
        };
        put(buf, x, area.y + 1, &fit(&name), area.right(), header);
        for (i, s) in cells.iter().enumerate() {
            let y = area.y + 2 + i as u16;
            let st = if offset + i == cursor { sel } else { text };
            if offset + i == cursor {
                buf.set_style(Rect::new(area.x, y, area.width, 1), st);
            }
            put(buf, x, y, &fit(s), area.right(), st);
        }
        x = x.saturating_add(w as u16 + 2);
    }
}

impl super::View for crate::app::panels::sql::Sql {
    fn draw(&self, app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
        sql(app, theme, g, area, buf)
    }

    /// The answer is a wide table: it takes the whole width.
    fn details(&self) -> super::Details {
        super::Details::Hidden
    }

    fn legend(&self) -> super::Legend {
        super::Legend::Heat
    }
}
