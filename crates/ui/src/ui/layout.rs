//! The screen: header, breadcrumb, the tree (with a details pane when wide enough),
//! the heat legend and the status line; overlays on top.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::Frame;

use super::help;
use super::panels::{self, Details, Legend};
use super::theme::Theme;
use crate::app::command::PromptKind;
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

/// The details pane's width on a screen `cols` wide, when the panel on screen has one.
fn details_width(app: &App, cols: u16) -> Option<u16> {
    let wide = cols >= DETAILS_MIN_WIDTH && !app.hide_details;
    let kind = panels::view(app.panel).details();
    let det = (cols * 35 / 100).clamp(30, 60);
    // Beside the tree the pane gives way when the names would be left fewer than
    // NAME_MIN_WIDTH characters (an ensemble's columns at 100 columns left 8).
    let names_fit = !app.panel.is(&crate::app::panels::tree::Tree)
        || (cols - det).saturating_sub(crate::ui::panels::tree::columns_width(
            app,
            false,
            cols - det,
        )) >= NAME_MIN_WIDTH;
    (wide && names_fit && !matches!(kind, Details::Hidden)).then_some(det)
}

/// The fewest characters the tree's names (with their fold glyph and a few levels of
/// indent) keep before the details pane gives way.
const NAME_MIN_WIDTH: u16 = 24;

/// The width the panel on screen gets on a screen `cols` wide (the headless flame
/// graph of a replayed session uses the recorded terminal's).
pub fn panel_width(app: &App, cols: u16) -> u16 {
    cols - details_width(app, cols).unwrap_or(0)
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
    let view = panels::view(app.panel);
    let (body, det) = match details_width(app, area.width) {
        Some(dw) => (
            Rect::new(main.x, main.y, main.width - dw, main.height),
            Some(Rect::new(main.x + main.width - dw, main.y, dw, main.height)),
        ),
        None => (main, None),
    };
    view.draw(app, theme, g, body, buf);
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
    if g.ascii {
        ascii_only(area, buf);
    }
}

/// Under `--ascii` or a non-UTF-8 locale every cell is ASCII, whatever a panel, a
/// message or the data itself holds (`—` in a legend, `×` in a count, a kernel name
/// in another script): each cell's character is folded to a look-alike or `?`. (A
/// wide character's second cell is already a blank: ratatui resets it.)
fn ascii_only(area: Rect, buf: &mut Buffer) {
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let cell = &mut buf[(x, y)];
            if cell.symbol().is_ascii() {
                continue;
            }
            let c = cell.symbol().chars().next().map(Glyphs::ascii_char);
            let mut b = [0u8; 4];
            cell.set_symbol(c.unwrap_or('?').encode_utf8(&mut b));
        }
    }
}

fn header(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) {
    let st = theme.style("ui.header");
    buf.set_style(r, st);
    let text = header_text(app, g, r.width as usize);
    if text.starts_with(" grove") {
        buf.set_stringn(
            r.x,
            r.y,
            " grove",
            r.width as usize,
            st.patch(theme.style("ui.title")),
        );
    }
    match text.strip_prefix(" grove") {
        Some(rest) => {
            buf.set_stringn(r.x + 6, r.y, rest, r.width.saturating_sub(6) as usize, st);
        }
        // Too narrow for the title: what is in effect only.
        None => {
            buf.set_stringn(r.x, r.y, &text, r.width as usize, st);
        }
    }
}

/// The header line for a width: what is in effect (metric, second metric, sort, the
/// statistics of an ensemble, filters, prune, focus, limit) always shows; what is open
/// (the file, the format or list of profiles, the node count) gives way first — the
/// list of profiles shortens to their count, then the node count and the format go,
/// then the file name is cut from the left. Only when what is in effect alone is too
/// wide are its names cut, keeping their ends.
pub fn header_text(app: &App, g: &Glyphs, width: usize) -> String {
    let p = &app.profile;
    let m2 = app.metric2.as_deref().unwrap_or("off");
    let mut effect = vec![
        format!("metric {}", app.metric),
        format!("2nd {m2}"),
        format!("sort {}", app.sort_label()),
    ];
    // A load warning that hides more than 10% of the file's data stays in view as
    // long as the file is open, not only on the first status line.
    if let Some(share) = p.hidden_share() {
        effect.insert(0, format!("{:.1}% of data hidden (!)", share * 100.0));
    }
    effect.extend(view_state(app));
    // A tree unfolded from a call graph holds estimates: the header always says so.
    if p.estimated_paths() {
        effect.push(crate::model::call_graph::ESTIMATED_NOTE.to_string());
    }
    // An ensemble's statistics say which convention they follow.
    if crate::app::compare::is_stat_column(&app.metric)
        || crate::app::compare::is_stat_column(&app.inclusive_column())
    {
        effect.push(format!("stats {}", app.stats.name()));
    }
    // A truncated input says so where the file is named.
    let file = if crate::readers::is_partial(p) {
        format!("{} (partial)", p.source.label)
    } else {
        p.source.label.clone()
    };
    let dialect = p.dialect.clone();
    // `ensemble of 11 (a, b, ...)` -> `ensemble of 11`.
    let short_dialect = dialect
        .split_once(" (")
        .filter(|_| dialect.starts_with("ensemble of"))
        .map(|x| x.0.to_string())
        .unwrap_or_else(|| dialect.clone());
    let nodes = format!("{} nodes", p.cct.len());
    let sep = g.sep;
    let line = |open: &[&str]| -> String {
        let mut parts: Vec<&str> = open.to_vec();
        parts.extend(effect.iter().map(String::as_str));
        format!(" grove  {}", parts.join(sep))
    };
    let fits = |s: &str| s.chars().count() <= width;
    for open in [
        vec![file.as_str(), dialect.as_str(), nodes.as_str()],
        vec![file.as_str(), short_dialect.as_str(), nodes.as_str()],
        vec![file.as_str(), short_dialect.as_str()],
        vec![file.as_str()],
    ] {
        let s = line(&open);
        if fits(&s) {
            return s;
        }
    }
    // The file name, cut from the left, in what room is left (at least a few letters).
    let without = line(&[]);
    let room = width.saturating_sub(without.chars().count() + sep.chars().count());
    if room >= 8 {
        let f = format::clip_title(&file, room, g.ellipsis);
        return line(&[f.as_str()]);
    }
    if fits(&without) {
        return without;
    }
    // What is in effect alone is too wide: the title goes, the metric stands alone,
    // the sort order becomes an arrow, and long names keep their ends.
    let arrow = |v: &str| {
        let (up, down) = if g.ascii { ("^", "v") } else { ("↑", "↓") };
        v.strip_suffix(" desc")
            .map(|c| format!("{c}{down}"))
            .or_else(|| v.strip_suffix(" asc").map(|c| format!("{c}{up}")))
            .unwrap_or_else(|| v.to_string())
    };
    let clip = |v: &str, w: usize| {
        if crate::app::compare::is_stat_column(v) {
            format::clip_metric(v, w, g.ellipsis)
        } else {
            format::clip_title(v, w, g.ellipsis)
        }
    };
    let inclusive = app.inclusive_column();
    let short: Vec<String> = effect
        .iter()
        .map(|e| match e.split_once(' ') {
            Some(("metric", v)) => clip(v, 18),
            Some(("2nd", v)) => format!("2nd {}", clip(v, 16)),
            // Sorting by the primary metric's inclusive column, as at start.
            Some(("sort", v)) if v.starts_with(&format!("{inclusive} ")) => {
                format!("sort {}", arrow(&v.replacen(&inclusive, "(inc)", 1)))
            }
            Some(("sort", v)) => format!("sort {}", arrow(&clip(v, 18))),
            _ => e.clone(),
        })
        .collect();
    format!(" {}", short.join(sep))
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
    // Beside the tabs at 80 columns a few cells are left: a tail like `…ad)` names
    // nothing, so the path is shown only where a readable part of it fits (the details
    // pane and `:info` still name the selection).
    const MIN_CRUMB: usize = 16;
    if w < MIN_CRUMB && text.chars().count() > w.saturating_sub(1) {
        return;
    }
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
    match panels::view(app.panel).details() {
        Details::Lines(panel_lines) => {
            panel_lines(app, theme, g, r, &mut lines);
            draw_wrapped(&lines, x, w, r, buf);
            return;
        }
        Details::Hidden => return,
        Details::Node => {}
    }
    let Some(n) = app.tree.selected() else { return };
    let f = app.profile.cct.frame(n);
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
    metric_lines(app, theme, g, n, w, &mut lines);
    if !f.attrs.is_empty() {
        lines.push((String::new(), text));
        for (k, v) in &f.attrs {
            // A long value (a kernel's full signature, a path) wraps under itself
            // rather than being cut at the pane's edge; J/K scroll the rest.
            let key = format!("{} ", clip(k, 15));
            let indent = key.chars().count().min(w / 3);
            let chars: Vec<char> = v.chars().collect();
            let first = w.saturating_sub(key.chars().count()).max(1);
            let rest_w = w.saturating_sub(indent).max(1);
            let (head, tail) = chars.split_at(first.min(chars.len()));
            lines.push((format!("{key}{}", head.iter().collect::<String>()), dim));
            for part in tail.chunks(rest_w) {
                let part: String = part.iter().collect();
                lines.push((format!("{}{part}", " ".repeat(indent)), dim));
            }
        }
    }
    draw_scrolled(app, g, n, &lines, (x, w, r), dim, buf);
}

/// A panel's own details lines, long ones wrapped (up to 6 rows each), down to the
/// pane's bottom.
fn draw_wrapped(lines: &[(String, Style)], x: u16, w: usize, r: Rect, buf: &mut Buffer) {
    let mut y = r.y;
    for (s, st) in lines {
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
}

/// The metric rows of node `n`: name, value and, for the additive inclusive column, its
/// share; an ensemble's member columns grouped under their metric.
fn metric_lines(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    n: u32,
    w: usize,
    lines: &mut Vec<(String, Style)>,
) {
    let dim = theme.style("ui.dim");
    let text = theme.style("ui.text");
    let m = &app.profile.metrics;
    let members = crate::app::compare::member_labels(app.original().1);
    // Names get what the longest needs, up to the room left by the value (10) and
    // percent (7) columns.
    let names = details_order(app, n);
    // An ensemble's columns are grouped under their metric (`Avg time/rank (inc)`,
    // then `@mean`, `@1/Base_CUDA-block_128`, ...): the label is what tells the rows
    // apart, and it no longer competes with the metric's name for the width.
    let split = |name: &str| -> Option<(String, String)> {
        let (metric, label) = crate::ensemble::split_column(name)?;
        (!members.is_empty()).then(|| (metric.to_string(), format!("  @{label}")))
    };
    let row_name = |name: &str| split(name).map_or_else(|| name.to_string(), |x| x.1);
    let longest = names
        .iter()
        .map(|s| row_name(s).chars().count())
        .max()
        .unwrap_or(0);
    let nw = longest.min(w.saturating_sub(19)).clamp(15, 40);
    let empty = m.names().len() - names.len();
    // Member rows read `@label`: cut where the labels differ, never two alike.
    let at_labels: Vec<String> = members.iter().map(|l| format!("@{l}")).collect();
    let at_refs: Vec<&str> = at_labels.iter().map(String::as_str).collect();
    let own = at_refs
        .iter()
        .map(|l| format::clip_label(l, nw - 2, g.ellipsis))
        .collect();
    let cut_of: std::collections::HashMap<&str, String> = at_refs
        .iter()
        .copied()
        .zip(crate::present::distinct::keep_apart(
            &at_refs,
            own,
            nw - 2,
            g.ellipsis,
        ))
        .collect();
    let mut group: Option<String> = None;
    for name in names {
        // Node by node: a residual column is not made whole for one row.
        let v = m
            .at(&name, &app.profile.cct)
            .map_or(f64::NAN, |a| a.get(n as usize));
        // Which profile holds the maximum: its label, not its index.
        let shown = if name.ends_with("@argmax") && v.is_finite() {
            members
                .get(v as usize)
                .map(|l| format::clip_label(l, 10, g.ellipsis))
                .unwrap_or_else(|| format::value(v, "", g.micro))
        } else {
            format::value(v, m.unit(&name), g.micro)
        };
        let label = match split(&name) {
            Some((metric, row)) => {
                if group.as_deref() != Some(metric.as_str()) {
                    lines.push((metric.clone(), dim));
                    group = Some(metric);
                }
                let cut = cut_of.get(&row[2..]).cloned();
                let cut = cut.unwrap_or_else(|| format::clip_label(&row[2..], nw - 2, g.ellipsis));
                format!("  {cut}")
            }
            None => {
                group = None;
                clip_keep_label(&name, nw, g)
            }
        };
        let mut s = format!("{label:<nw$} {shown:>10}");
        if name == app.inclusive_column() && app.is_additive(&name) {
            s.push_str(&format!(" {:>6}", format::percent(v, app.total)));
        }
        lines.push((s, text));
    }
    if empty > 0 {
        lines.push((format!("({empty} more without a value here)"), dim));
    }
}

/// Draws the node's details lines: the name and type stay; the rest scrolls (`scroll
/// details N`, J/K), with a line saying what is above and below.
fn draw_scrolled(
    app: &App,
    g: &Glyphs,
    n: u32,
    lines: &[(String, Style)],
    (x, w, r): (u16, usize, Rect),
    dim: Style,
    buf: &mut Buffer,
) {
    let head = lines
        .iter()
        .position(|(s, _)| s.is_empty())
        .map_or(0, |i| i + 1)
        .min(lines.len());
    let (at, off) = app.details_scroll;
    let off = if at == n { off } else { 0 }.min(lines.len().saturating_sub(head + 1));
    let height = r.height as usize;
    let body = lines.len() - head - off;
    let mut shown: Vec<(String, Style)> = lines[..head].to_vec();
    if off > 0 {
        shown.push((format!("{} {off} above (K)", g.ellipsis), dim));
    }
    let room = height.saturating_sub(shown.len());
    let rest = &lines[head + off..];
    if body > room && room > 0 {
        shown.extend(rest[..room - 1].iter().cloned());
        shown.push((
            format!("{} {} more (J)", g.ellipsis, body - (room - 1)),
            dim,
        ));
    } else {
        shown.extend(rest.iter().cloned());
    }
    for (i, (s, st)) in shown.iter().enumerate().take(height) {
        buf.set_stringn(x, r.y + i as u16, s, w, *st);
    }
}

/// The columns the details pane lists for a node: the primary metric and its
/// inclusive column, then the second metric's, then the others in table order; columns
/// without a value at the node (a GPU metric on a CPU function, a profile that lacks
/// the node) are left out, and counted by the caller. O(columns), not O(nodes).
fn details_order(app: &App, node: u32) -> Vec<String> {
    let m = &app.profile.metrics;
    let mut first: Vec<String> = vec![app.metric.clone(), app.inclusive_column()];
    if let Some(m2) = &app.metric2 {
        first.push(m2.clone());
        first.push(m.inclusive_of(m2));
    }
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for name in first.into_iter().chain(m.names()) {
        if m.has(&name) && seen.insert(name.clone()) {
            out.push(name);
        }
    }
    let cct = &app.profile.cct;
    out.retain(|c| m.at(c, cct).is_some_and(|a| !a.get(node as usize).is_nan()));
    out
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
    // The trace's model, or an ensemble's members' (their categories, once each).
    let models: Vec<&crate::gpu::GpuModel> = match &app.gpu {
        Some(gpu) => vec![&gpu.model],
        None => app.members().iter().map(|m| &m.model).collect(),
    };
    let Some(first) = models.first() else { return };
    let mut present: Vec<&String> = Vec::new();
    for m in &models {
        for name in &m.present {
            if !present.contains(&name) {
                present.push(name);
            }
        }
    }
    let mut x = r.x + 1;
    // Only the categories the trace has (worked out once, with the GPU model).
    let rules: Vec<_> = present
        .into_iter()
        .filter_map(|name| first.categories.rules.iter().find(|r| &r.name == name))
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        let text = format!("{} {}", g.block, rule.name);
        let dim = theme.style("ui.dim");
        if !legend_entry(
            x,
            r,
            buf,
            &text,
            theme.category(rule.color),
            rules.len() - i,
            dim,
        ) {
            break;
        }
        x += text.chars().count() as u16 + 2;
    }
}

/// Writes one legend entry at `x` if it fits whole with room left for a `+N` of the
/// `left` entries not yet shown after it; otherwise writes `+N` (when that fits) and
/// says false. An entry is never cut: `█ optimiz` reads as a category of its own.
fn legend_entry(
    x: u16,
    r: Rect,
    buf: &mut Buffer,
    text: &str,
    style: Style,
    left: usize,
    dim: Style,
) -> bool {
    let room = r.right().saturating_sub(x) as usize;
    let need = text.chars().count();
    let more = if left > 1 {
        format!("+{}", left - 1).len() + 2
    } else {
        0
    };
    if need + more <= room {
        buf.set_stringn(x, r.y, text, room, style);
        return true;
    }
    let rest = format!("+{left}");
    if rest.len() <= room {
        buf.set_stringn(x, r.y, rest, room, dim);
    }
    false
}

fn legend(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) {
    if panels::view(app.panel).draw_legend(app, theme, g, r, buf) {
        return;
    }
    if panels::view(app.panel).legend() == Legend::Categories {
        return category_legend(app, theme, g, r, buf);
    }
    let col = app.inclusive_column();
    heat_legend(app, theme, g, r, buf, &format!("{col}: "), &app.heat);
}

/// A heat scale's bins with their value ranges, after `label`, in the legend row.
pub fn heat_legend(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    r: Rect,
    buf: &mut Buffer,
    label: &str,
    scale: &crate::present::heat::HeatScale,
) {
    let col = app.inclusive_column();
    let unit = app.profile.metrics.unit(&col).to_string();
    let mut x = r.x + 1;
    buf.set_stringn(x, r.y, label, r.width as usize, theme.style("ui.dim"));
    x += label.chars().count() as u16;
    let ranges = scale.ranges();
    // A scale with negative values (a diff) writes its ranges so a minus sign cannot
    // be read as the dash between two values.
    let signed = ranges.iter().any(|(lo, hi)| *lo < 0.0 || *hi < 0.0);
    for (b, (lo, hi)) in ranges.iter().enumerate() {
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
            "{glyph} {}",
            format::range(*lo, *hi, &unit, g.micro, signed, g.ascii)
        );
        let dim = theme.style("ui.dim");
        if !legend_entry(x, r, buf, &text, theme.heat(b), ranges.len() - b, dim) {
            break;
        }
        x += text.chars().count() as u16 + 2;
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

/// The message as the status line shows it: whole when it fits, else cut with an
/// ellipsis and a pointer to the messages view (load warnings are listed there in
/// full), so a cut message never looks whole.
fn status_text(app: &App, text: &str, avail: usize, g: &Glyphs) -> String {
    let n = text.chars().count();
    if n < avail {
        return format!(" {text}");
    }
    let key = app
        .keymap
        .bindings
        .iter()
        .find(|b| b.mode == "normal" && b.run == "messages")
        .and_then(|b| b.keys.first())
        .map(|k| k.to_string());
    let hint = match key {
        Some(k) => format!(" ({k}: all messages)"),
        _ => String::new(),
    };
    let room = avail.saturating_sub(1 + hint.chars().count() + g.ellipsis.chars().count());
    let head: String = text.chars().take(room).collect();
    format!(" {head}{}{hint}", g.ellipsis)
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
    // The row counter of the panel on screen (the kernel table's rows, the lanes).
    let (at, of) = app.panel.get().position(app);
    let pos = format!(" {at}/{of} ");
    let pos_w = pos.chars().count() as u16;
    let avail = r.width.saturating_sub(pos_w) as usize;
    match &app.message {
        Some(m) => {
            let st = match m.level {
                Level::Error => theme.style("ui.status.error"),
                Level::Warning => theme.style("ui.status.warning"),
                Level::Info => base,
            };
            buf.set_stringn(r.x, r.y, status_text(app, &m.text, avail, g), avail, st);
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
