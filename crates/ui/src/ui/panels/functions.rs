//! The functions panel: the table of every function on top, the selected function's
//! callers (left) and callees (right) below, each edge with its value; or, after
//! `functions graph`, a small call graph: callers above the function, callees below,
//! edges inside its cycle (or its own recursion) marked. Reads the table,
//! its order and the edges from the panel's memos: a frame costs the rows drawn.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::put;
use crate::app::panels::functions::{table_rows, Focus, SORTS};
use crate::app::App;
use crate::present::format;
use crate::present::glyphs::Glyphs;
use crate::transform::functions::cycles::Cycles;
use crate::transform::functions::edges::{Edge, ROOT};
use crate::transform::functions::Functions as FnTable;
use crate::ui::text::fit_name;
use crate::ui::theme::Theme;

/// The functions table, then the callers and callees of the selected function.
pub fn functions(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    let t = app.functions_table();
    let order = app.functions_order();
    let v = &app.functions;
    let header = theme.style("ui.column.header");
    let dim = theme.style("ui.dim");
    let m = t.metric;
    let fns = &t.fns;
    let Some(metric) = fns.metrics.get(m) else {
        put(
            buf,
            area.x,
            area.y,
            "no metric to list functions by",
            area.right(),
            dim,
        );
        return;
    };
    let shown = match &app.search {
        Some(s) => format!(
            "{} of {} functions matching {:?}",
            order.len(),
            fns.len(),
            s.text
        ),
        None => format!("{} functions", fns.len()),
    };
    let title = format!(
        "{shown} by {} · {} — s: sort  h/l: callers/callees  Enter: go  t: tree  g: graph  /: find",
        SORTS[v.sort], metric.name,
    );
    put(buf, area.x, area.y, &title, area.right(), header);
    let calls = fns.calls.is_some();
    let cols = if calls {
        format!(
            "{:>9} {:>6} {:>9} {:>6} {:>7}  function",
            "self",
            "self%",
            "inclusive",
            "inc%",
            fns.calls_name.as_deref().unwrap_or("calls")
        )
    } else {
        format!(
            "{:>9} {:>6} {:>9} {:>6}  function",
            "self", "self%", "inclusive", "inc%"
        )
    };
    put(buf, area.x, area.y + 1, &cols, area.right(), header);
    let rows = table_rows(area.height) as usize;
    let cursor = app.functions_cursor();
    let offset = if cursor >= v.offset + rows {
        cursor + 1 - rows
    } else {
        v.offset.min(cursor)
    };
    let total = fns.totals.get(m).copied().unwrap_or(0.0);
    let fmt = |x: f64| format::value(x, &metric.unit, g.micro);
    let text = theme.style("ui.text");
    let sel = text.patch(theme.style("ui.selection"));
    for (i, &f) in order.iter().enumerate().skip(offset).take(rows) {
        let y = area.y + 2 + (i - offset) as u16;
        let st = if i == cursor { sel } else { text };
        buf.set_style(Rect::new(area.x, y, area.width, 1), st);
        let (s, inc) = (fns.self_cost[m][f as usize], fns.inclusive[m][f as usize]);
        let mut line = format!(
            "{:>9} {:>6} {:>9} {:>6} ",
            fmt(s),
            format::percent(s, total),
            fmt(inc),
            format::percent(inc, total)
        );
        if let Some(c) = &fns.calls {
            line.push_str(&format!("{:>7} ", format::number(c[f as usize])));
        }
        let x = put(buf, area.x, y, &line, area.right(), st);
        let w = area.right().saturating_sub(x + 1) as usize;
        let name = fit_name(&fns.functions[f as usize].label(), w, g);
        put(buf, x + 1, y, &name, area.right(), st);
    }
    let top = area.y + 2 + rows as u16;
    let lower = area.bottom().saturating_sub(top);
    if lower < 2 {
        return;
    }
    let Some(edges) = app.functions_edges() else {
        return;
    };
    let cycles = app.functions_cycles();
    let selected = app.functions_selected();
    let ctx = Side {
        fns,
        m,
        total,
        theme,
        g,
        unit: &metric.unit,
        cycles: &cycles,
        selected,
    };
    if v.graph && lower >= 5 {
        // A small call graph: callers above the function, callees below it.
        let up = (lower - 1) / 2;
        let above = Rect::new(area.x, top, area.width, up);
        let mid = top + up;
        let below = Rect::new(area.x, mid + 1, area.width, lower - up - 1);
        ctx.list(
            v.focus == Focus::Callers,
            v.edge_cursor,
            "callers",
            &edges.callers,
            above,
            buf,
        );
        if let Some(f) = selected {
            ctx.centre(f, Rect::new(area.x, mid, area.width, 1), buf);
        }
        ctx.list(
            v.focus == Focus::Callees,
            v.edge_cursor,
            "callees",
            &edges.callees,
            below,
            buf,
        );
        return;
    }
    let half = area.width / 2;
    let left = Rect::new(area.x, top, half, lower);
    let right = Rect::new(area.x + half, top, area.width - half, lower);
    ctx.list(
        v.focus == Focus::Callers,
        v.edge_cursor,
        "callers",
        &edges.callers,
        left,
        buf,
    );
    ctx.list(
        v.focus == Focus::Callees,
        v.edge_cursor,
        "callees",
        &edges.callees,
        right,
        buf,
    );
}

/// What a list of edges is drawn with.
struct Side<'a> {
    fns: &'a FnTable,
    m: usize,
    total: f64,
    theme: &'a Theme,
    g: &'a Glyphs,
    unit: &'a str,
    cycles: &'a Cycles,
    /// The function whose callers and callees are listed.
    selected: Option<u32>,
}

impl Side<'_> {
    /// The mark of an edge that goes round: the other function is in the selected
    /// function's cycle, or is the function itself calling itself.
    fn round(&self) -> &'static str {
        if self.g.ascii {
            "@"
        } else {
            "\u{21bb}"
        }
    }

    /// The selected function between its callers and callees, with its cycle.
    fn centre(&self, f: u32, r: Rect, buf: &mut Buffer) {
        let arrow = if self.g.ascii { "v" } else { "\u{2193}" };
        let fun = &self.fns.functions[f as usize];
        let mut note = String::new();
        let c = self.cycles.cycle(f);
        if c != Cycles::NONE {
            let n = self.cycles.members[c as usize].len();
            note = format!(
                "  {} cycle {} of {n} functions ({} marks its edges)",
                self.round(),
                c + 1,
                self.round()
            );
        } else if self.cycles.recursive.contains(&f) {
            note = format!("  {} recursive", self.round());
        }
        let text = format!("{arrow} {}{note} {arrow}", fun.label());
        let st = self
            .theme
            .style("ui.column.header")
            .patch(self.theme.style("ui.selection"));
        buf.set_style(r, self.theme.style("ui.text"));
        put(
            buf,
            r.x,
            r.y,
            &fit_name(&text, r.width as usize, self.g),
            r.right(),
            st,
        );
    }

    /// A list of edges under its title; the cursor shows when it has the focus.
    fn list(
        &self,
        focused: bool,
        cursor: usize,
        what: &str,
        edges: &[Edge],
        r: Rect,
        buf: &mut Buffer,
    ) {
        let theme = self.theme;
        let title_style = if focused {
            theme
                .style("ui.column.header")
                .patch(theme.style("ui.selection"))
        } else {
            theme.style("ui.column.header")
        };
        let title = format!("{what} ({})", edges.len());
        put(buf, r.x, r.y, &title, r.right(), title_style);
        let rows = r.height.saturating_sub(1) as usize;
        let cursor = if focused { Some(cursor) } else { None };
        let offset = cursor.map_or(0, |c| (c + 1).saturating_sub(rows));
        let text = theme.style("ui.text");
        let calls = self.fns.calls.is_some() && r.width >= 60;
        for (i, e) in edges.iter().enumerate().skip(offset).take(rows) {
            let y = r.y + 1 + (i - offset) as u16;
            let st = if cursor == Some(i) {
                text.patch(theme.style("ui.selection"))
            } else {
                text
            };
            buf.set_style(Rect::new(r.x, y, r.width.saturating_sub(1), 1), st);
            let val = e.value.get(self.m).copied().unwrap_or(0.0);
            let mut line = format!(
                "{:>9} {:>6} ",
                format::value(val, self.unit, self.g.micro),
                format::percent(val, self.total)
            );
            if calls {
                line.push_str(&format!("{:>7} ", format::number(e.calls)));
            }
            let x = put(buf, r.x, y, &line, r.right(), st);
            let mut name = if e.function == ROOT {
                "(root)".to_string()
            } else {
                self.fns.functions[e.function as usize].label()
            };
            if let Some(f) = self.selected {
                if e.function != ROOT && self.cycles.loops(f, e.function) {
                    name = format!("{} {name}", self.round());
                }
            }
            let w = r.right().saturating_sub(x + 2) as usize;
            put(
                buf,
                x,
                y,
                &fit_name(&name, w, self.g),
                r.right().saturating_sub(1),
                st,
            );
        }
    }
}

impl super::View for crate::app::panels::functions::Functions {
    fn draw(&self, app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
        functions(app, theme, g, area, buf)
    }

    /// The table is wide: it takes the whole width.
    fn details(&self) -> super::Details {
        super::Details::Hidden
    }

    fn legend(&self) -> super::Legend {
        super::Legend::Heat
    }
}
