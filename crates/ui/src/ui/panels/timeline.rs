//! The timeline panel: a stack chart of the GPU streams (and CPU threads on request),
//! one row per depth, slices wide enough named in boxes; the selected slice's details.

mod chart;
pub mod ruler;
pub use chart::{box_label, csv, text, LABEL_W};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::{args_lines, put};
use crate::app::App;
use crate::present::format;
use crate::present::glyphs::Glyphs;
use crate::ui::theme::Theme;

/// The per-stream timeline: the stack chart (`chart`), or the level-of-detail lanes
/// in low-memory mode.
pub fn timeline(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    if let Some(lod) = app.lod() {
        return super::lod::timeline(app, lod, theme, g, area, buf);
    }
    if app.gpu.is_none() {
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
    }
    chart::chart(app, theme, g, area, buf);
}

/// The legend row: the kernel categories of the trace, then the CPU slice kinds when
/// CPU lanes are shown.
fn legend(app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) -> bool {
    let Some(gpu) = &app.gpu else { return false };
    let mut x = r.x + 1;
    let mut items: Vec<(String, Style)> = Vec::new();
    for name in &gpu.model.present {
        if let Some(rule) = gpu.model.categories.rules.iter().find(|r| &r.name == name) {
            items.push((rule.name.clone(), theme.category(rule.color)));
        }
    }
    if app.timeline.show_cpu || gpu.lanes.is_empty() {
        for (name, slot) in chart::CPU_KINDS {
            items.push((name.to_string(), theme.category(slot)));
        }
    }
    for (name, st) in items {
        let text = format!("{} {name}  ", g.block);
        let left = r.right().saturating_sub(x) as usize;
        if left == 0 {
            break;
        }
        buf.set_stringn(x, r.y, &text, left, st);
        x += text.chars().count() as u16;
    }
    true
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
    // The precision of a ruler about 70 columns wide.
    let w = 70;
    lines.push((
        format!(
            "window    {} + {}",
            ruler::absolute(a - gpu.origin, b - a, w, g.micro),
            format::duration_ns((b - a) as f64, g.micro)
        ),
        dim,
    ));
    if let Some(lane) = app.lanes().get(tl.lane) {
        lines.push((
            format!("lane      {}  cursor {}", lane.label, t(tl.cursor_t)),
            dim,
        ));
    }
    if let Some(m) = &tl.marks {
        lines.push((
            format!("marked    {} × {} (m clears)", m.count, m.path),
            theme.style("ui.match"),
        ));
    }
    let Some(i) = tl.selected else {
        lines.push(("←/→: slice on the row, j/k: row".into(), dim));
        lines.push(("m: mark the tree's selected node".into(), dim));
        lines.push(("n/N: next/previous kernel on the lane".into(), dim));
        lines.push(("]/[: next/previous idle gap, I: list".into(), dim));
        return;
    };
    let iu = i as usize;
    lines.push((ev.name_of(iu).to_string(), theme.style("ui.title")));
    if ev.kind[iu].is_gpu_activity() {
        lines.push((
            format!(
                "category  {} ({})",
                gpu.model.category_name(i),
                gpu.model.hta_of(i).label()
            ),
            text,
        ));
    } else {
        lines.push((
            format!(
                "kind      {} ({})",
                ev.kind[iu].label(),
                ev.strings.resolve(ev.cat[iu])
            ),
            text,
        ));
    }
    for &l in tl.linked.iter().take(3) {
        lines.push((
            format!("linked    {} (L)", ev.name_of(l as usize)),
            theme.style("ui.match"),
        ));
    }
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

    fn draw_legend(&self, app: &App, theme: &Theme, g: &Glyphs, r: Rect, buf: &mut Buffer) -> bool {
        legend(app, theme, g, r, buf)
    }
}
