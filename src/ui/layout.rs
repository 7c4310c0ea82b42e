//! The screen: header, breadcrumb, the tree (with a details pane when wide enough),
//! the heat legend and the status line; overlays on top.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::Frame;

use super::help;
use super::panels::{self, heatmap, kernels, summary, timeline, tree};
use super::theme::Theme;
use crate::app::command::{PanelChoice, PromptKind};
use crate::app::{App, Level, Mode};
use crate::present::format;
use crate::present::glyphs::Glyphs;

/// Widths at which the details pane appears beside the tree.
const DETAILS_MIN_WIDTH: u16 = 100;

/// Rows the tree pane gets for a terminal of this size (the paging unit).
pub fn tree_rows(width: u16, height: u16) -> usize {
    let _ = width;
    // header, breadcrumb, column header, legend, status
    height.saturating_sub(5) as usize
}

pub fn draw(f: &mut Frame, app: &App, theme: &Theme, g: &Glyphs) {
    let area = f.area();
    render(app, theme, g, area, f.buffer_mut());
}

pub fn render(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    if area.height < 4 || area.width < 20 {
        buf.set_stringn(
            area.x,
            area.y,
            "grove: window too small",
            area.width as usize,
            Style::default(),
        );
        return;
    }
    buf.set_style(area, theme.style("ui.text"));
    let row = |y: u16| Rect::new(area.x, area.y + y, area.width, 1);
    header(app, theme, g, row(0), buf);
    let crumb = row(1);
    let x = if area.width >= 80 {
        panels::tabs(app, theme, crumb, buf)
    } else {
        crumb.x
    };
    breadcrumb(
        app,
        theme,
        g,
        Rect::new(x, crumb.y, crumb.right().saturating_sub(x), 1),
        buf,
    );
    let main = Rect::new(area.x, area.y + 2, area.width, area.height - 4);
    let wide = area.width >= DETAILS_MIN_WIDTH;
    let with_details = wide && !matches!(app.panel, PanelChoice::Summary | PanelChoice::Heatmap);
    let (body, det) = if with_details {
        let dw = (area.width * 35 / 100).clamp(30, 60);
        (
            Rect::new(main.x, main.y, main.width - dw, main.height),
            Some(Rect::new(main.x + main.width - dw, main.y, dw, main.height)),
        )
    } else {
        (main, None)
    };
    match app.panel {
        PanelChoice::Kernels => kernels::kernels(app, theme, g, body, buf),
        PanelChoice::Timeline => timeline::timeline(app, theme, g, body, buf),
        PanelChoice::Summary => summary::summary(app, theme, body, buf),
        PanelChoice::Heatmap => heatmap::render(app, theme, g, body, buf),
        _ => tree::render(app, theme, g, body, buf),
    }
    if let Some(det) = det {
        details(app, theme, g, det, buf);
    }
    match app
        .message
        .as_ref()
        .and_then(|m| m.caret.as_ref().map(|c| (m, c)))
    {
        Some((m, (text, pos, len))) => caret(
            theme,
            text,
            *pos,
            *len,
            &m.text,
            row(area.height - 2),
            row(area.height - 1),
            buf,
        ),
        None => {
            if matches!(app.mode, Mode::Prompt { .. }) && !app.completions.is_empty() {
                let r = row(area.height - 2);
                let text = format!(" Tab: {}", app.completions.join("  "));
                buf.set_stringn(r.x, r.y, text, r.width as usize, theme.style("ui.dim"));
            } else {
                legend(app, theme, g, row(area.height - 2), buf);
            }
            status(app, theme, g, row(area.height - 1), buf);
        }
    }
    match &app.mode {
        Mode::Help { scroll } => help::render_help(app, theme, g, *scroll, area, buf),
        Mode::Messages { scroll } => help::render_messages(app, theme, g, *scroll, area, buf),
        Mode::MetricPicker { selected } => help::render_picker(app, theme, g, *selected, area, buf),
        Mode::Gaps { rows, selected } => {
            super::gaps::render_gaps(app, theme, g, rows, *selected, area, buf)
        }
        _ => {}
    }
}

fn header(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) {
    let st = theme.style("ui.header");
    buf.set_style(r, st);
    let p = &app.profile;
    let m2 = app.metric2.as_deref().unwrap_or("off");
    let text = [
        // A truncated input says so where the file is named.
        if crate::readers::is_partial(p) {
            format!(" grove  {} (partial)", p.source.label)
        } else {
            format!(" grove  {}", p.source.label)
        },
        p.dialect.clone(),
        format!("{} nodes", p.cct.len()),
        format!("metric {}", app.metric),
        format!("2nd {m2}"),
        format!("sort {}", app.sort_label()),
    ]
    .into_iter()
    .chain(view_state(app))
    .collect::<Vec<_>>()
    .join(g.sep);
    buf.set_stringn(
        r.x,
        r.y,
        " grove",
        r.width as usize,
        st.patch(theme.style("ui.title")),
    );
    buf.set_stringn(
        r.x + 6,
        r.y,
        &text[6..],
        r.width.saturating_sub(6) as usize,
        st,
    );
}

/// What reshapes the view right now, so a filtered tree never passes for the whole.
fn view_state(app: &App) -> Vec<String> {
    let mut out = Vec::new();
    let reshaping = app.applied.iter().filter(|c| c.rebuilds()).count();
    if reshaping > 0 {
        out.push(format!("{reshaping} reshaped"));
    }
    if let Some(p) = &app.rules.prune {
        out.push(format!("prune {p}"));
    }
    if let Some(l) = app.rules.limit {
        out.push(format!("limit {l}%"));
    }
    if let Some(f) = &app.rules.focus {
        out.push(format!("focus {}", f.rsplit('/').next().unwrap_or(f)));
    }
    if !app.rules.hidden.is_empty() {
        out.push(format!("{} hidden", app.rules.hidden.len()));
    }
    out
}

fn breadcrumb(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) {
    let Some(n) = app.tree.selected() else { return };
    let cct = &app.profile.cct;
    let names: Vec<&str> = cct.path(n).iter().map(|&p| cct.name(p)).collect();
    let mut text = names.join(g.crumb_sep);
    let w = r.width as usize;
    let len = text.chars().count();
    if len > w.saturating_sub(1) {
        // Keep the end of the path: the selected node matters most.
        let skip = len - w.saturating_sub(2);
        text = format!(
            "{}{}",
            g.ellipsis,
            text.chars().skip(skip + 1).collect::<String>()
        );
    }
    buf.set_stringn(
        r.x + 1,
        r.y,
        text,
        w.saturating_sub(1),
        theme.style("ui.breadcrumb"),
    );
}

fn details(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) {
    let border = theme.style("ui.border");
    for y in r.y..r.bottom() {
        buf.set_stringn(r.x, y, if g.ascii { "|" } else { "│" }, 1, border);
    }
    let x = r.x + 2;
    let w = r.width.saturating_sub(3) as usize;
    let mut lines: Vec<(String, Style)> = Vec::new();
    match app.panel {
        PanelChoice::Kernels | PanelChoice::Timeline => {
            if app.panel == PanelChoice::Kernels {
                kernels::kernel_details(app, theme, g, r, &mut lines);
            } else {
                timeline::instance_details(app, theme, g, &mut lines);
            }
            let mut y = r.y;
            for (s, st) in &lines {
                // Wrap long names and values.
                let chars: Vec<char> = s.chars().collect();
                for chunk in chars.chunks(w.max(1)).take(6) {
                    if y >= r.bottom() {
                        return;
                    }
                    buf.set_stringn(x, y, chunk.iter().collect::<String>(), w, *st);
                    y += 1;
                }
                if chars.is_empty() {
                    y += 1;
                }
            }
            return;
        }
        _ => {}
    }
    let Some(n) = app.tree.selected() else { return };
    let cct = &app.profile.cct;
    let f = cct.frame(n);
    let title = theme.style("ui.title");
    let dim = theme.style("ui.dim");
    let text = theme.style("ui.text");
    // Wrap the name: kernel names are long and this is where the full name is shown.
    let chars: Vec<char> = f.name.chars().collect();
    for chunk in chars.chunks(w.max(1)).take(4) {
        lines.push((chunk.iter().collect(), title));
    }
    lines.push((format!("type  {}", f.kind), dim));
    lines.push((String::new(), text));
    let m = &app.profile.metrics;
    let members = crate::app::compare::member_labels(&app.original.1);
    // Names get what the longest needs, up to the room left by the value (10) and
    // percent (7) columns.
    let names = m.names();
    let longest = names.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let nw = longest.min(w.saturating_sub(19)).clamp(15, 40);
    for name in names {
        let v = m.get(&name, n);
        // Which profile holds the maximum: its label, not its index.
        let shown = if name.ends_with("@argmax") && v.is_finite() {
            members
                .get(v as usize)
                .cloned()
                .unwrap_or_else(|| format::value(v, "", g.micro))
        } else {
            format::value(v, m.unit(&name), g.micro)
        };
        let mut s = format!("{:<nw$} {:>10}", clip_keep_label(&name, nw, g), shown);
        if name == app.inclusive_column() {
            s.push_str(&format!(" {:>6}", format::percent(v, app.total)));
        }
        lines.push((s, text));
    }
    if !f.attrs.is_empty() {
        lines.push((String::new(), text));
        for (k, v) in &f.attrs {
            lines.push((format!("{} {}", clip(k, 15), v), dim));
        }
    }
    for (i, (s, st)) in lines.iter().enumerate().take(r.height as usize) {
        buf.set_stringn(x, r.y + i as u16, s, w, *st);
    }
}

fn clip(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        s.chars().take(w).collect()
    }
}

/// Clips a column name to `w` characters, keeping its `@label` (the part that tells
/// `time@rank0` from `time@rank1`): `GKER:BLK_THR_ACUMU@thread_0` -> `GKER:B…@thread_0`.
fn clip_keep_label(s: &str, w: usize, g: &Glyphs) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    let Some((_, label)) = s.rsplit_once('@') else {
        return clip(s, w);
    };
    let tail = label.chars().count() + 1;
    let ell = if g.ascii { "~" } else { "…" };
    if tail + 2 > w {
        return clip(s, w);
    }
    let head: String = s.chars().take(w - tail - 1).collect();
    format!("{head}{ell}@{label}")
}

/// Category colours, for the kernel and timeline panels.
fn category_legend(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) {
    let Some(gpu) = &app.gpu else { return };
    let mut x = r.x + 1;
    // Only the categories the trace has (worked out once, with the GPU model).
    for name in &gpu.model.present {
        let Some(rule) = gpu.model.categories.rules.iter().find(|r| &r.name == name) else {
            continue;
        };
        let text = format!("{} {}  ", g.block, rule.name);
        let left = r.right().saturating_sub(x) as usize;
        if left == 0 {
            break;
        }
        buf.set_stringn(x, r.y, &text, left, theme.category(rule.color));
        x += text.chars().count() as u16;
    }
}

fn legend(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) {
    if matches!(app.panel, PanelChoice::Kernels | PanelChoice::Timeline) {
        return category_legend(app, theme, g, r, buf);
    }
    let col = app.inclusive_column();
    let unit = app.profile.metrics.unit(&col).to_string();
    let mut x = r.x + 1;
    let label = format!("{col}: ");
    buf.set_stringn(x, r.y, &label, r.width as usize, theme.style("ui.dim"));
    x += label.chars().count() as u16;
    for (b, (lo, hi)) in app.heat.ranges().iter().enumerate() {
        if x >= r.right() {
            break;
        }
        let glyph = if theme.heat_glyphs {
            g.density[5 - b]
        } else {
            g.block
        };
        let glyph = if glyph == " " { "_" } else { glyph };
        let text = format!(
            "{glyph} {}-{}  ",
            format::value(*lo, &unit, g.micro),
            format::value(*hi, &unit, g.micro)
        );
        let left = r.right().saturating_sub(x) as usize;
        buf.set_stringn(x, r.y, &text, left, theme.heat(b));
        x += text.chars().count() as u16;
    }
}

/// A command error: the command echoed, then a caret under the offending token.
#[allow(clippy::too_many_arguments)]
fn caret(
    theme: &Theme,
    text: &str,
    pos: usize,
    len: usize,
    msg: &str,
    echo: Rect,
    under: Rect,
    buf: &mut Buffer,
) {
    let err = theme.style("ui.status.error");
    buf.set_stringn(
        echo.x,
        echo.y,
        format!(":{text}"),
        echo.width as usize,
        theme.style("ui.text"),
    );
    // Byte offsets to columns.
    let col = text
        .get(..pos.min(text.len()))
        .map(|s| s.chars().count())
        .unwrap_or(0);
    let width = text
        .get(pos.min(text.len())..(pos + len).min(text.len()))
        .map(|s| s.chars().count())
        .unwrap_or(1)
        .max(1);
    let line = format!("{}{} {msg}", " ".repeat(col + 1), "^".repeat(width));
    buf.set_style(under, theme.style("ui.status"));
    buf.set_stringn(under.x, under.y, line, under.width as usize, err);
}

fn status(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) {
    let base = theme.style("ui.status");
    buf.set_style(r, base);
    if let Mode::Prompt { kind, input, .. } = &app.mode {
        let lead = if *kind == PromptKind::Search {
            "/"
        } else {
            ":"
        };
        buf.set_stringn(
            r.x,
            r.y,
            format!("{lead}{input}{}", g.cursor),
            r.width as usize,
            base,
        );
        return;
    }
    let pos = format!(
        " {}/{} ",
        (app.tree.cursor + 1).min(app.tree.visible.len()),
        app.tree.visible.len()
    );
    let pos_w = pos.chars().count() as u16;
    let avail = r.width.saturating_sub(pos_w) as usize;
    match &app.message {
        Some(m) => {
            let st = match m.level {
                Level::Error => theme.style("ui.status.error"),
                Level::Warning => theme.style("ui.status.warning"),
                Level::Info => base,
            };
            buf.set_stringn(r.x, r.y, format!(" {}", m.text), avail, st);
        }
        None => {
            let mut hints =
                " ?:help  /:search  ::command  s:sort  m:metric  H:hot path  q:quit".to_string();
            if let Some(w) = &app.session {
                let name = w
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                hints.push_str(&format!("  session: {name}"));
            }
            buf.set_stringn(r.x, r.y, hints, avail, base);
        }
    }
    buf.set_stringn(
        r.right().saturating_sub(pos_w),
        r.y,
        pos,
        pos_w as usize,
        base,
    );
}
