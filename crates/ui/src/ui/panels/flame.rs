//! The flame graph: a header line, the zoom root's ancestors (when zoomed), then one
//! row per depth from the panel's layout (`App::flame_layout`, derived once per
//! change). A frame is its name on its heat colour (reversed, so the colour is the
//! background), its last cell left blank as the border to the next; runs of frames
//! narrower than a cell are one shaded cell. Only the rows on screen are drawn.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use crate::app::panels::flame::{category, Palette};
use crate::app::panels::flame::{Frame, Layout};
use crate::app::App;
use crate::diff::Side;
use crate::present::format;
use crate::present::glyphs::Glyphs;
use crate::present::heat::{signed_bin, HeatScale};
use crate::ui::theme::Theme;

/// The colour of a frame: the heat bin of its inclusive value, or after `diff` of its
/// signed difference (hot: more than in the base run).
fn bin_of(
    app: &App,
    node: u32,
    scale: &HeatScale,
    diff: Option<(&[f64], (f64, f64))>,
) -> Option<usize> {
    match diff {
        Some((d, (lo, hi))) => signed_bin(d.get(node as usize).copied()?, lo, hi),
        None => {
            let m = &app.profile.metrics;
            scale.bin(m.get(&app.inclusive_column(), node))
        }
    }
}

/// The heat scale of the frames: the tree's, or when zoomed, from its minimum up to
/// the zoom root's value, so a zoomed-in subtree is not all in the coolest bin (the
/// legend says so).
fn heat_scale(app: &App, zoom: Option<u32>) -> HeatScale {
    match zoom {
        Some(z) => {
            let v = app.profile.metrics.get(&app.inclusive_column(), z);
            if v.is_finite() && v > app.heat.min {
                HeatScale {
                    min: app.heat.min,
                    max: v,
                }
            } else {
                app.heat
            }
        }
        None => app.heat,
    }
}

/// The diff column and the largest decrease and increase over the tree (the heat
/// scale's bounds), after `diff`.
fn diff_scale(app: &App) -> Option<(&[f64], (f64, f64))> {
    if !app.flame_is_diff() {
        return None;
    }
    let col = app.inclusive_column();
    let v = app.profile.metrics.values(&col)?;
    Some((v, (app.heat.min.min(0.0), app.heat.max.max(0.0))))
}

/// The label of a frame: its name, after `diff` with the tree's marker for a node only
/// one run has.
fn label(app: &App, node: u32) -> String {
    let name = app.profile.cct.name(node);
    match app.diff.as_ref().map(|_| app.diff_side(node)) {
        Some(s @ (Side::OnlyNew | Side::OnlyBase)) => format!("{} {name}", s.marker().trim()),
        _ => name.to_string(),
    }
}

/// The name written in a frame of `inner` cells: cut with an ellipsis, or none in
/// fewer than 3 cells (a letter and an ellipsis tell nothing).
fn frame_name(app: &App, node: u32, inner: usize, g: &Glyphs) -> String {
    if inner < 3 {
        return String::new();
    }
    crate::ui::text::fit(&label(app, node), inner, g)
}

/// Why there is nothing to draw: the width column adds up to nothing over the first
/// row (a GPU-only trace on `time`, a metric that is all NaN).
fn empty_note(app: &App, l: &Layout) -> String {
    format!(
        "nothing to draw: {} adds up to {} over the first row (m picks another metric)",
        app.flame_width_column(),
        l.total
    )
}

/// The row (of the layout) the screen starts at, so the selection is on screen.
fn first_row(sel_row: Option<usize>, rows: usize) -> usize {
    match sel_row {
        Some(d) if d >= rows => d + 1 - rows,
        _ => 0,
    }
}

pub fn render(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    if area.height < 3 || area.width < 10 {
        return;
    }
    let layout = app.flame_layout(area.width);
    let po = &app.tree.po;
    let sel = app.tree.selected();
    let at = sel.and_then(|n| layout.locate(po, n));
    header(app, &layout, theme, g, area, buf);
    // The rows' band: under the header; the breadcrumb row takes its first line, or
    // on the flipped graph its last, next to the zoom root either way.
    let mut top = area.y + 1;
    let mut bottom = area.bottom();
    if !layout.crumbs.is_empty() {
        let sep = format!(" {} ", g.crumb_sep.trim());
        let names: Vec<&str> = layout
            .crumbs
            .iter()
            .map(|&n| app.profile.cct.name(n))
            .collect();
        let text = crate::ui::text::fit(&names.join(&sep), area.width as usize, g);
        let y = if app.flame.flipped {
            bottom -= 1;
            bottom
        } else {
            top += 1;
            top - 1
        };
        buf.set_stringn(
            area.x,
            y,
            text,
            area.width as usize,
            theme.style("ui.breadcrumb"),
        );
    }
    if layout.rows.is_empty() {
        buf.set_stringn(
            area.x,
            top,
            empty_note(app, &layout),
            area.width as usize,
            theme.style("ui.dim"),
        );
        return;
    }
    let rows = bottom.saturating_sub(top) as usize;
    let first = first_row(at.map(|a| a.0), rows);
    let diff = diff_scale(app);
    let scale = heat_scale(app, layout.zoom);
    let matches = app.search.as_ref().map(|s| &s.matches);
    let palette = app.flame_palette();
    for (k, row) in layout.rows.iter().enumerate().skip(first).take(rows) {
        let y = if app.flame.flipped {
            bottom - 1 - (k - first) as u16
        } else {
            top + (k - first) as u16
        };
        for (i, f) in row.iter().enumerate() {
            let selected = at == Some((k, i));
            let matched = !f.merged() && matches.is_some_and(|m| m.binary_search(&f.node).is_ok());
            let look = Look {
                selected,
                matched,
                bin: if f.merged() || palette.is_some() {
                    None
                } else {
                    bin_of(app, f.node, &scale, diff)
                },
                slot: match &palette {
                    Some(p) if !f.merged() => {
                        category(app.profile.cct.frame(f.node), app.flame.colour).map(|c| p.slot(c))
                    }
                    _ => None,
                },
            };
            frame(app, theme, g, area.x, y, f, look, buf);
        }
    }
}

#[derive(Clone, Copy)]
struct Look {
    selected: bool,
    matched: bool,
    bin: Option<usize>,
    /// The palette slot when the frames are coloured by a category.
    slot: Option<u8>,
}

/// Draws one frame at row `y`.
#[allow(clippy::too_many_arguments)]
fn frame(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    x0: u16,
    y: u16,
    f: &Frame,
    look: Look,
    buf: &mut Buffer,
) {
    let x = x0 + f.x;
    if f.merged() {
        let shade = if g.ascii { ":" } else { "░" };
        let mut st = theme.style("ui.dim");
        if look.selected {
            st = st.patch(theme.style("ui.selection"));
        }
        buf.set_stringn(x, y, shade.repeat(f.w as usize), f.w as usize, st);
        return;
    }
    let heat = match (look.slot, look.bin) {
        (Some(s), _) => theme.category(s),
        (None, Some(b)) => theme.heat(b),
        _ => theme.style("ui.dim"),
    };
    let st = if look.matched {
        theme.style("ui.match")
    } else if look.selected {
        selected_style(heat, theme)
    } else {
        heat.add_modifier(Modifier::REVERSED)
    };
    // The last cell is the border between two frames (a 1-cell frame has none).
    let inner = if f.w > 1 { f.w - 1 } else { 1 } as usize;
    let name = frame_name(app, f.node, inner, g);
    let pad = inner.saturating_sub(name.chars().count());
    let text = format!("{name}{}", " ".repeat(pad));
    buf.set_stringn(x, y, text, inner, st);
    if f.w > 1 {
        buf.set_stringn(x + f.w - 1, y, " ", 1, Style::default());
    }
}

/// The selected frame: the selection's colours instead of the frame's reversed heat
/// colour; where the selection itself is reverse video (the mono theme), plain video,
/// so it stands out from the reversed frames around it.
fn selected_style(heat: Style, theme: &Theme) -> Style {
    let sel = theme.style("ui.selection");
    let st = heat.patch(sel).add_modifier(Modifier::BOLD);
    if sel.add_modifier.contains(Modifier::REVERSED) {
        st.remove_modifier(Modifier::REVERSED)
            .add_modifier(Modifier::UNDERLINED)
    } else {
        st
    }
}

/// The header line: the width's column and total, the zoom, and the search's share.
fn header(app: &App, l: &Layout, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    let col = app.flame_width_column();
    let unit = app.profile.metrics.unit(&col);
    let mut text = format!(
        "{} {col} {}",
        if app.flame.flipped {
            "flame graph"
        } else {
            "icicle"
        },
        format::value(l.total, unit, g.micro)
    );
    if let Some(z) = l.zoom {
        let share = format::percent(l.total, app.total);
        text.push_str(&format!(
            " {} zoom {} ({share})",
            g.sep.trim(),
            app.profile.cct.name(z)
        ));
    }
    if let (Some(s), Some(share)) = (&app.search, app.flame_search_share()) {
        text.push_str(&format!(
            " {} /{}: {} frames, {:.1}% of the total",
            g.sep.trim(),
            s.text,
            s.matches.len(),
            share * 100.0
        ));
    }
    buf.set_stringn(
        area.x,
        area.y,
        text,
        area.width as usize,
        theme.style("ui.column.header"),
    );
}

/// The legend after `diff`: which colour is slower.
fn diff_legend(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) -> bool {
    let Some((_, (lo, hi))) = diff_scale(app) else {
        return false;
    };
    let Some((a, b)) = app.diff.as_ref() else {
        return false;
    };
    let unit = app.profile.metrics.unit(&app.inclusive_column());
    let mut x = r.x + 1;
    let parts: [(String, Option<usize>); 4] = [
        (format!("widths: {}  ", app.flame_width_column()), None),
        (
            format!(
                "{} slower in {a} than {b} (up to {})  ",
                g.block,
                signed_value(hi, unit, g)
            ),
            Some(0),
        ),
        (
            format!(
                "{} faster (down to {})  ",
                g.block,
                signed_value(lo, unit, g)
            ),
            Some(5),
        ),
        ("plain: no change".to_string(), None),
    ];
    for (t, bin) in parts {
        let st = bin.map(|b| theme.heat(b)).unwrap_or(theme.style("ui.dim"));
        let left = r.right().saturating_sub(x) as usize;
        buf.set_stringn(x, r.y, &t, left, st);
        x += t.chars().count() as u16;
    }
    true
}

/// A difference with its sign (`+33.0 µs`).
fn signed_value(v: f64, unit: &str, g: &Glyphs) -> String {
    let s = format::value(v, unit, g.micro);
    if v > 0.0 {
        format!("+{s}")
    } else {
        s
    }
}

impl super::View for crate::app::panels::flame::Flame {
    fn draw(&self, app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
        render(app, theme, g, area, buf)
    }

    fn details(&self) -> super::Details {
        super::Details::Node
    }

    fn legend(&self) -> super::Legend {
        super::Legend::Heat
    }

    fn draw_legend(&self, app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) -> bool {
        if let Some(p) = app.flame_palette() {
            category_legend(app, &p, theme, g, r, buf);
            return true;
        }
        if diff_legend(app, theme, g, r, buf) {
            return true;
        }
        let Some(z) = app.flame_zoom_node() else {
            return false;
        };
        let label = format!("{} in the zoom: ", app.inclusive_column());
        crate::ui::layout::heat_legend(app, theme, g, r, buf, &label, &heat_scale(app, Some(z)));
        true
    }
}

/// The categories' colours, heaviest first, as many as fit: `kind: █ cpu_op 61%  █ …`.
fn category_legend(app: &App, p: &Palette, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) {
    let total: f64 = p.legend.iter().map(|e| e.2).sum();
    let label = format!("{}: ", app.flame.colour.name());
    let mut x = r.x + 1;
    buf.set_stringn(x, r.y, &label, r.width as usize, theme.style("ui.dim"));
    x += label.chars().count() as u16;
    for (name, slot, v) in &p.legend {
        // A module is a path: its last part tells libraries apart (`libc.so.6`,
        // `ld-linux-x86-64.so.2`), where the shared directory cut to a width would not.
        let short = name.rsplit('/').find(|s| !s.is_empty()).unwrap_or(name);
        let text = format!(
            " {} {}  ",
            crate::ui::text::fit(short, 24, g),
            format::percent(*v, total)
        );
        let w = 1 + text.chars().count() as u16;
        if x + w > r.right() {
            break;
        }
        buf.set_stringn(x, r.y, g.block, 1, theme.category(*slot));
        buf.set_stringn(x + 1, r.y, &text, text.len(), theme.style("ui.text"));
        x += w;
        if *slot == 0 {
            // Every later category is "other" too.
            break;
        }
    }
}

/// The headless twin: the rows the panel draws at `width` cells, as text. A frame is
/// its name cut to its width less one, padded with `-`, then `|`; a run of frames
/// narrower than a cell is `:`s. The first row is the zoom root (or the roots).
pub fn text(app: &App, width: u16, g: &Glyphs) -> String {
    let l = app.flame_layout(width);
    let mut out = String::new();
    let names: Vec<&str> = l.crumbs.iter().map(|&n| app.profile.cct.name(n)).collect();
    let crumbs = (!names.is_empty()).then(|| names.join(" > "));
    if let Some(c) = crumbs.as_ref().filter(|_| !app.flame.flipped) {
        out.push_str(c);
        out.push('\n');
    }
    if l.rows.is_empty() {
        out.push_str(&format!("({})\n", empty_note(app, &l)));
        return out;
    }
    let mut lines: Vec<String> = l.rows.iter().map(|r| text_row(app, r, width, g)).collect();
    if app.flame.flipped {
        lines.reverse();
    }
    for line in lines {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    // On the flipped graph the zoom root's ancestors come under it, as on screen.
    if let Some(c) = crumbs.filter(|_| app.flame.flipped) {
        out.push_str(&c);
        out.push('\n');
    }
    out
}

fn text_row(app: &App, row: &[Frame], width: u16, g: &Glyphs) -> String {
    let mut cells = vec![' '; width as usize];
    for f in row {
        let (x, w) = (f.x as usize, f.w as usize);
        if f.merged() {
            cells[x..x + w].iter_mut().for_each(|c| *c = ':');
            continue;
        }
        let inner = if w > 1 { w - 1 } else { 1 };
        let name: Vec<char> = frame_name(app, f.node, inner, g).chars().collect();
        for (i, c) in cells[x..x + inner].iter_mut().enumerate() {
            *c = name.get(i).copied().unwrap_or('-');
        }
        if w > 1 {
            cells[x + w - 1] = '|';
        }
    }
    cells.into_iter().collect()
}
