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

/// Splits `s` into lines of at most `w` characters, breaking at spaces where it can
/// (a word longer than a line is cut): overlays show text in full, never clipped.
pub fn wrap(s: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in s.split(' ') {
        let wl = word.chars().count();
        if len > 0 && len + 1 + wl > w {
            out.push(std::mem::take(&mut line));
            len = 0;
        }
        if len > 0 {
            line.push(' ');
            len += 1;
        }
        let mut rest: Vec<char> = word.chars().collect();
        while len + rest.len() > w {
            let take = w - len;
            line.extend(rest.drain(..take));
            out.push(std::mem::take(&mut line));
            len = 0;
        }
        len += rest.len();
        line.extend(rest);
    }
    if len > 0 || out.is_empty() {
        out.push(line);
    }
    out
}

/// The help overlay: as wide as the terminal allows (descriptions wrap below
/// themselves rather than being cut), scrolled by j/k.
pub fn render_help(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    scroll: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let r = popup(
        area,
        area.width.saturating_sub(4).max(20),
        area.height.saturating_sub(2).max(6),
    );
    Clear.render(r, buf);
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
    let inner_w = r.width.saturating_sub(2) as usize;
    // Keys, then `:command`, then the description in what is left; on a narrow
    // screen keys and commands give up room (cut with an ellipsis) so descriptions
    // keep at least a third of it.
    let (key_w, cmd_w) = if key_w + cmd_w + 3 > inner_w * 2 / 3 {
        (key_w.min(inner_w / 4).max(4), cmd_w.min(inner_w / 3).max(4))
    } else {
        (key_w, cmd_w)
    };
    let desc_x = key_w + 1 + cmd_w + 2;
    let desc_w = inner_w.saturating_sub(desc_x).max(10);
    let mut rows: Vec<(String, String)> = Vec::new();
    for (k, c, d) in &lines {
        let k = super::text::fit(k, key_w, g);
        let c = super::text::fit(c, cmd_w, g);
        let head = format!("{k:<key_w$} :{c:<cmd_w$} ");
        for (i, part) in wrap(d, desc_w).into_iter().enumerate() {
            if i == 0 {
                rows.push((head.clone(), part));
            } else {
                rows.push((" ".repeat(desc_x), part));
            }
        }
    }
    let inner_h = r.height.saturating_sub(2) as usize;
    let (scroll, more) = scrolled(scroll, rows.len(), inner_h);
    app.overlay_max.set(rows.len().saturating_sub(inner_h));
    let title = if g.ascii {
        format!(" keys -> commands (j/k scroll, any other key closes){more} ")
    } else {
        format!(" keys → commands (j/k scroll, any other key closes){more} ")
    };
    let block = frame(g, &title, theme).style(theme.style("ui.popup"));
    let inner = block.inner(r);
    block.render(r, buf);
    for (i, (head, desc)) in rows.iter().skip(scroll).take(inner_h).enumerate() {
        let y = inner.y + i as u16;
        let w = inner.width as usize;
        let key_part: String = head.chars().take(key_w).collect();
        let cmd_part: String = head.chars().skip(key_w).collect();
        buf.set_stringn(inner.x, y, &key_part, w, theme.style("ui.help.key"));
        let x = inner.x + key_w as u16;
        let left = inner.right().saturating_sub(x) as usize;
        buf.set_stringn(
            x,
            y,
            format!("{cmd_part}{desc}"),
            left,
            theme.style("ui.popup"),
        );
    }
}

/// Every load warning of the profile, then the warnings and errors of this run, in
/// full (wrapped), scrolled by j/k (the `messages` command; the status line points
/// here when it cuts a message).
pub fn render_messages(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    scroll: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let w: Vec<&String> = app
        .profile
        .warnings
        .iter()
        .chain(&app.past_messages)
        .collect();
    let width = area.width.saturating_sub(4).max(20);
    let text_w = width.saturating_sub(4) as usize;
    // Each warning wrapped, its continuation lines indented under its text.
    let mut rows: Vec<String> = Vec::new();
    for line in &w {
        for (i, part) in wrap(line, text_w).into_iter().enumerate() {
            rows.push(if i == 0 {
                format!("- {part}")
            } else {
                format!("  {part}")
            });
        }
    }
    let h = (rows.len() as u16 + 2)
        .min(area.height.saturating_sub(2))
        .max(3);
    let r = popup(area, width, h);
    Clear.render(r, buf);
    let inner_h = h.saturating_sub(2) as usize;
    let (scroll, more) = scrolled(scroll, rows.len(), inner_h);
    app.overlay_max.set(rows.len().saturating_sub(inner_h));
    let title = format!(
        " {} load warning(s), {} message(s) since (j/k scroll, any other key closes){more} ",
        app.profile.warnings.len(),
        app.past_messages.len()
    );
    let block = frame(g, &title, theme).style(theme.style("ui.popup"));
    let inner = block.inner(r);
    block.render(r, buf);
    for (i, line) in rows.iter().skip(scroll).take(inner_h).enumerate() {
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
    let names = app.profile.metrics.picker_metrics();
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

/// An overlay's scroll kept within its rows, and the ` a-b/n` its title shows when the
/// rows do not fit (empty when they do).
fn scrolled(scroll: usize, rows: usize, inner_h: usize) -> (usize, String) {
    let scroll = scroll.min(rows.saturating_sub(inner_h));
    let more = if rows > inner_h {
        format!(" {}-{}/{}", scroll + 1, (scroll + inner_h).min(rows), rows)
    } else {
        String::new()
    };
    (scroll, more)
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_keeps_every_character() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 5), [""]);
        assert_eq!(wrap("a bcdefgh", 4), ["a", "bcde", "fgh"]);
    }
}
