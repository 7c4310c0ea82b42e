//! The timeline panel: one lane per GPU stream (and CPU thread on request), busy share
//! per cell in eighth blocks; the selected instance's details.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use super::{args_lines, put, ASCII_BLOCKS, BLOCKS};
use crate::app::App;
use crate::present::format;
use crate::present::glyphs::Glyphs;
use crate::ui::theme::Theme;

/// The time ruler: labels at round intervals from the trace start.
fn ruler(app: &App, theme: &Theme, x0: u16, y: u16, width: u16, buf: &mut Buffer) {
    let (a, b) = app.timeline.window;
    let span = (b - a).max(1) as f64;
    // A round step giving a label about every 14 columns.
    let raw = span * 14.0 / width.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    // Relative to the trace start: epoch nanoseconds do not fit f64 exactly.
    let origin = app.gpu.as_ref().map(|g| g.origin).unwrap_or(0);
    let (ra, rb) = ((a - origin) as f64, (b - origin) as f64);
    let mut t = (ra / step).ceil() * step;
    let st = theme.style("ui.dim");
    while t < rb {
        let col = ((t - ra) / span * width as f64) as u16;
        let label = format!("|{}", format::duration_ns(t, "us").replace(' ', ""));
        put(buf, x0 + col, y, &label, x0 + width, st);
        t += step;
    }
}

/// The per-stream timeline: one lane per (device, stream), busy share per cell in
/// eighth blocks, coloured by the dominant kernel's category.
pub fn timeline(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    if let Some(lod) = app.lod() {
        return super::lod::timeline(app, lod, theme, g, area, buf);
    }
    let Some(gpu) = &app.gpu else {
        put(
            buf,
            area.x,
            area.y,
            &if app.loading() {
                app.loading_note()
            } else {
                "no GPU activity in this profile".to_string()
            },
            area.right(),
            theme.style("ui.dim"),
        );
        return;
    };
    let Some(ev) = app.profile.events.as_ref() else {
        return;
    };
    let tl = &app.timeline;
    let label_w: u16 = 12;
    if area.width <= label_w + 4 || area.height < 3 {
        return;
    }
    let plot_x = area.x + label_w;
    let plot_w = area.width - label_w;
    let (a, b) = tl.window;
    let head = format!(
        "{:>w$}",
        format::duration_ns((b - a) as f64, g.micro),
        w = label_w as usize - 1
    );
    put(
        buf,
        area.x,
        area.y,
        &head,
        plot_x,
        theme.style("ui.column.header"),
    );
    ruler(app, theme, plot_x, area.y, plot_w, buf);
    let blocks = if g.ascii { ASCII_BLOCKS } else { BLOCKS };
    let cursor_col = (((tl.cursor_t - a) as f64 / (b - a).max(1) as f64) * plot_w as f64) as i64;
    let lanes_h = (area.height - 1) as usize;
    let offset = if tl.lane >= lanes_h {
        tl.lane + 1 - lanes_h
    } else {
        0
    };
    let marked = app.kernels.selected.as_deref();
    let lanes = app.lanes();
    // Lane names on screen cut where they differ (`r0 tMaster…`, `r1 tMaster…`).
    let names: Vec<&str> = (lanes.iter().skip(offset).take(lanes_h))
        .map(|l| l.label.as_str())
        .collect();
    let w = label_w as usize - 1;
    let own = names.iter().map(|l| l.chars().take(w).collect()).collect();
    let names = crate::present::distinct::keep_apart(&names, own, w, g.ellipsis);
    for ((li, lane_ref), name) in lanes
        .iter()
        .enumerate()
        .skip(offset)
        .take(lanes_h)
        .zip(&names)
    {
        let lane = lane_ref.index;
        let y = area.y + 1 + (li - offset) as u16;
        let sel_lane = li == tl.lane;
        let label_style = if sel_lane {
            theme.style("ui.selection")
        } else {
            theme.style("ui.text")
        };
        put(
            buf,
            area.x,
            y,
            &format!("{name:<w$}", w = label_w as usize - 1),
            plot_x,
            label_style,
        );
        let cells = lane.cells(a, b, plot_w as usize);
        for (c, cell) in cells.iter().enumerate() {
            let x = plot_x + c as u16;
            let level = if cell.busy <= 0.0 && cell.top.is_none() {
                0
            } else {
                ((cell.busy * 8.0).ceil() as usize).clamp(1, 8)
            };
            let mut st = match cell.top {
                Some(i) if lane_ref.gpu => theme.category(gpu.model.category_color(i)),
                Some(_) => theme.style("ui.text"),
                None => theme.style("ui.dim"),
            };
            if let Some(i) = cell.top {
                if marked.is_some_and(|m| ev.name_of(i as usize) == m) {
                    st = st.patch(theme.style("ui.match"));
                }
                if tl.selected == Some(i) {
                    st = st.add_modifier(Modifier::REVERSED);
                }
            }
            if c as i64 == cursor_col {
                st = st.patch(theme.style("ui.cursor"));
            }
            let glyph = if level == 0 {
                if g.ascii {
                    " "
                } else {
                    "·"
                }
            } else {
                blocks[level]
            };
            let glyph = if level == 0 && c % 4 != 0 { " " } else { glyph };
            buf.set_stringn(x, y, glyph, 1, st);
        }
    }
}

/// Details of the selected kernel instance: duration, launch delay, args, call path.
pub fn instance_details(app: &App, theme: &Theme, g: &Glyphs, lines: &mut Vec<(String, Style)>) {
    let (Some(ev), Some(gpu)) = (app.profile.events.as_ref(), app.gpu.as_ref()) else {
        return;
    };
    let tl = &app.timeline;
    let text = theme.style("ui.text");
    let dim = theme.style("ui.dim");
    let t = |x: i64| format::duration_ns((x - gpu.origin) as f64, g.micro);
    let (a, b) = tl.window;
    lines.push((format!("window    {} – {}", t(a), t(b)), dim));
    if let Some(lane) = app.lanes().get(tl.lane) {
        lines.push((
            format!("lane      {}  cursor {}", lane.label, t(tl.cursor_t)),
            dim,
        ));
    }
    let Some(i) = tl.selected else {
        lines.push(("n/N: next/previous kernel on the lane".into(), dim));
        lines.push(("]/[: next/previous idle gap, I: list".into(), dim));
        return;
    };
    let iu = i as usize;
    lines.push((ev.name_of(iu).to_string(), theme.style("ui.title")));
    lines.push((
        format!(
            "category  {} ({})",
            gpu.model.category_name(i),
            gpu.model.hta_of(i).label()
        ),
        text,
    ));
    lines.push((format!("start     {}", t(ev.ts[iu])), text));
    lines.push((
        format!(
            "duration  {}",
            format::duration_ns(ev.dur[iu] as f64, g.micro)
        ),
        text,
    ));
    let launch = ev.launch.get(iu).copied().unwrap_or(u32::MAX);
    if launch != u32::MAX {
        let l = launch as usize;
        let delay = ev.ts[iu] - (ev.ts[l] + ev.dur[l]);
        lines.push((
            format!(
                "launch    {} ({})",
                ev.name_of(l),
                format::duration_ns(ev.dur[l] as f64, g.micro)
            ),
            text,
        ));
        lines.push((
            format!(
                "delay     {}",
                format::duration_ns(delay.max(0) as f64, g.micro)
            ),
            text,
        ));
        let node = ev.node.get(l).copied().unwrap_or(u32::MAX);
        call_path(app, node, "called from", 1, lines, (text, dim));
    } else {
        // Without a launch event, the activity's own node may still carry its call path
        // (HPCToolkit places kernels under the context that launched them).
        let node = ev.node.get(iu).copied().unwrap_or(u32::MAX);
        if !call_path(app, node, "call path", 2, lines, (text, dim)) {
            lines.push(("launch    not in the trace".into(), dim));
        }
    }
    if let Some(a) = ev.args_of(iu) {
        lines.push((String::new(), text));
        for (k, v) in args_lines(a) {
            lines.push((format!("{k:<14} {v}"), dim));
        }
    }
}

/// The loaded tree's path to `node`, innermost first (at most 8 frames), under a title;
/// false (and nothing added) when the node is unknown or its path is shorter than `min`.
fn call_path(
    app: &App,
    node: u32,
    title: &str,
    min: usize,
    lines: &mut Vec<(String, Style)>,
    (text, dim): (Style, Style),
) -> bool {
    let cct = app.original().0;
    if node as usize >= cct.len() || cct.path(node).len() < min {
        return false;
    }
    lines.push((String::new(), text));
    lines.push((format!("{title} (Enter jumps there):"), dim));
    for n in cct.path(node).iter().rev().take(8) {
        lines.push((format!("  {}", cct.name(*n)), text));
    }
    true
}

impl super::View for crate::app::panels::timeline::Timeline {
    fn draw(&self, app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
        timeline(app, theme, g, area, buf)
    }

    /// The selected instance.
    fn details(&self) -> super::Details {
        super::Details::Lines(|app, theme, g, _, lines| instance_details(app, theme, g, lines))
    }

    fn legend(&self) -> super::Legend {
        super::Legend::Categories
    }
}
