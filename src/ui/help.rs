//! Overlays: the help list generated from the keymap, and the metric picker.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::symbols::border;
use ratatui::widgets::{Block, Borders, Clear, StatefulWidget, Widget};
use tui_tree_widget::{Tree, TreeItem, TreeState};

use super::theme::Theme;
use crate::app::commands;
use crate::app::App;
use crate::present::glyphs::Glyphs;

const ASCII_BORDER: border::Set = border::Set {
    top_left: "+",
    top_right: "+",
    bottom_left: "+",
    bottom_right: "+",
    vertical_left: "|",
    vertical_right: "|",
    horizontal_top: "-",
    horizontal_bottom: "-",
};

pub(super) fn frame<'a>(g: &Glyphs, title: &'a str, theme: &Theme) -> Block<'a> {
    let b = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(theme.style("ui.border"));
    if g.ascii {
        b.border_set(ASCII_BORDER)
    } else {
        b
    }
}

pub(super) fn popup(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// One line per binding: keys, the command they run, and what it does. What it does
/// is the command's help in the command table (`app::commands::SPECS`), so the
/// default keymap carries no descriptions of its own; a user binding's `desc`, when
/// it gives one, is shown instead (it may name what its arguments are for).
pub fn help_lines(app: &App) -> Vec<(String, String, String)> {
    app.keymap
        .bindings
        .iter()
        .map(|b| {
            let keys: Vec<String> = b.keys.iter().map(|k| k.to_string()).collect();
            let keys = if b.mode == "normal" {
                keys.join(" ")
            } else {
                format!("{}: {}", b.mode, keys.join(" "))
            };
            let help = if b.desc.is_empty() {
                command_help(&b.run).to_string()
            } else {
                b.desc.clone()
            };
            (keys, b.run.clone(), help)
        })
        .collect()
}

/// The table's help line for the command a binding runs (its first word, a name or
/// an alias); empty for a word the table does not know (the keymap loader refuses
/// those, so only a hand-built keymap gets here).
fn command_help(run: &str) -> &'static str {
    run.split_whitespace()
        .next()
        .and_then(commands::lookup)
        .map(|s| s.help)
        .unwrap_or("")
}

pub fn render_help(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    scroll: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let r = popup(area, 78, area.height.saturating_sub(2).max(6));
    Clear.render(r, buf);
    let title = if g.ascii {
        " keys -> commands (j/k scroll, any other key closes) "
    } else {
        " keys → commands (j/k scroll, any other key closes) "
    };
    let block = frame(g, title, theme).style(theme.style("ui.popup"));
    let inner = block.inner(r);
    block.render(r, buf);
    let lines = help_lines(app);
    let key_w = lines
        .iter()
        .map(|l| l.0.chars().count())
        .max()
        .unwrap_or(4)
        .min(22);
    let cmd_w = lines
        .iter()
        .map(|l| l.1.chars().count())
        .max()
        .unwrap_or(4)
        .min(22);
    let scroll = scroll.min(lines.len().saturating_sub(inner.height as usize));
    for (i, (k, c, d)) in lines
        .iter()
        .skip(scroll)
        .take(inner.height as usize)
        .enumerate()
    {
        let y = inner.y + i as u16;
        let w = inner.width as usize;
        buf.set_stringn(
            inner.x,
            y,
            format!("{k:<key_w$}"),
            w,
            theme.style("ui.help.key"),
        );
        let x = inner.x + key_w as u16 + 1;
        let left = inner.right().saturating_sub(x) as usize;
        buf.set_stringn(
            x,
            y,
            format!(":{c:<cmd_w$} {d}"),
            left,
            theme.style("ui.popup"),
        );
    }
}

/// Every load warning of the profile, one per line (the `messages` command).
pub fn render_messages(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    scroll: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let w = &app.profile.warnings;
    let h = (w.len() as u16 + 2)
        .min(area.height.saturating_sub(2))
        .max(3);
    let r = popup(area, area.width.saturating_sub(4).max(20), h);
    Clear.render(r, buf);
    let title = format!(
        " {} load warning(s) (j/k scroll, any other key closes) ",
        w.len()
    );
    let block = frame(g, &title, theme).style(theme.style("ui.popup"));
    let inner = block.inner(r);
    block.render(r, buf);
    let scroll = scroll.min(w.len().saturating_sub(inner.height as usize));
    for (i, line) in w
        .iter()
        .skip(scroll)
        .take(inner.height as usize)
        .enumerate()
    {
        buf.set_stringn(
            inner.x,
            inner.y + i as u16,
            line,
            inner.width as usize,
            theme.style("ui.popup"),
        );
    }
}

/// The metric picker: a small tree (metric -> its columns) drawn with tui-tree-widget.
pub fn render_picker(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    selected: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let names = app.profile.metrics.base_metrics();
    let m = &app.profile.metrics;
    let items: Vec<TreeItem<'_, usize>> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let unit = m.unit(n);
            let label = if unit.is_empty() {
                n.clone()
            } else {
                format!("{n} [{unit}]")
            };
            TreeItem::new_leaf(i, label)
        })
        .collect();
    let h = (items.len() as u16 + 2).clamp(3, area.height);
    let r = popup(area, 40, h);
    Clear.render(r, buf);
    let Ok(tree) = Tree::new(&items) else { return };
    let tree = tree
        .block(frame(g, " metric (Enter picks, Esc closes) ", theme))
        .style(theme.style("ui.popup"))
        .highlight_style(theme.style("ui.selection"))
        .highlight_symbol(if g.ascii { "> " } else { "▶ " });
    let mut state = TreeState::default();
    state.select(vec![selected]);
    StatefulWidget::render(tree, r, buf, &mut state);
}
