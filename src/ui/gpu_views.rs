//! The GPU panels: kernel bar chart, per-stream timeline, summary; each draws only what
//! is on screen from state computed by commands.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use super::format;
use super::glyphs::Glyphs;
use super::theme::Theme;
use crate::app::command::PanelChoice;
use crate::app::App;
use crate::gpu::breakdown::Options;
use crate::gpu::report::{self, Table};
use crate::gpu::short_name;

const BLOCKS: [&str; 9] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
const ASCII_BLOCKS: [&str; 9] = [" ", ".", ":", "-", "=", "+", "*", "#", "#"];

fn put(buf: &mut Buffer, x: u16, y: u16, s: &str, max_x: u16, st: Style) -> u16 {
    if x >= max_x {
        return x;
    }
    let w = (max_x - x) as usize;
    let (nx, _) = buf.set_stringn(x, y, s, w, st);
    nx
}

/// The kernel bar chart: one bar per kernel (or category), coloured by category.
pub fn kernels(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    let k = &app.kernels;
    let header = theme.style("ui.column.header");
    let by = k.sort.name();
    let title = format!(
        "{} by {by}{}{} — s: order  c/n: category/name  M/m: memory on/off  Enter: select",
        if k.by_category {
            "categories"
        } else {
            "kernels"
        },
        if k.memory {
            " (with memcpy/memset)"
        } else {
            ""
        },
        k.top.map(|t| format!(", top {t}")).unwrap_or_default(),
    );
    put(buf, area.x, area.y, &title, area.right(), header);
    if k.rows.is_empty() {
        put(
            buf,
            area.x,
            area.y + 1,
            "no GPU kernels",
            area.right(),
            theme.style("ui.dim"),
        );
        return;
    }
    let rows = (area.height as usize).saturating_sub(1);
    let offset = if k.cursor >= k.offset + rows {
        k.cursor + 1 - rows
    } else {
        k.offset.min(k.cursor)
    };
    let value = |r: &crate::gpu::kernels::KernelRow| match k.sort {
        crate::gpu::kernels::KernelSort::Total => r.total_ns as f64,
        crate::gpu::kernels::KernelSort::Mean => r.mean_ns,
        crate::gpu::kernels::KernelSort::Count => r.count as f64,
    };
    let max = k.rows.iter().map(value).fold(0.0, f64::max).max(1.0);
    let name_w = (area.width as usize / 3).clamp(12, 50);
    let bar_w = (area.width as usize).saturating_sub(name_w + 34).max(4);
    let blocks = if g.ascii { ASCII_BLOCKS } else { BLOCKS };
    for (i, r) in k.rows.iter().enumerate().skip(offset).take(rows) {
        let y = area.y + 1 + (i - offset) as u16;
        let sel = i == k.cursor;
        let base = if sel {
            theme.style("ui.text").patch(theme.style("ui.selection"))
        } else {
            theme.style("ui.text")
        };
        buf.set_style(Rect::new(area.x, y, area.width, 1), base);
        let marked = k.selected.as_deref() == Some(r.name.as_str());
        let name = if k.by_category {
            r.name.clone()
        } else {
            short_name(&r.name, g.ellipsis)
        };
        let name: String = name.chars().take(name_w).collect();
        let mut x = put(
            buf,
            area.x,
            y,
            &format!("{name:<name_w$} "),
            area.right(),
            if marked {
                base.patch(theme.style("ui.match"))
            } else {
                base
            },
        );
        // Bars in eighths of a cell.
        let frac = value(r) / max * bar_w as f64;
        let full = frac.floor() as usize;
        let rem = ((frac - full as f64) * 8.0).round() as usize;
        let mut bar = blocks[8].repeat(full.min(bar_w));
        if full < bar_w && rem > 0 {
            bar.push_str(blocks[rem]);
        }
        let cat = base.patch(theme.category(r.color));
        let bar_end = x + bar_w as u16;
        put(buf, x, y, &bar, bar_end, cat);
        x = bar_end + 1;
        let shown = match k.sort {
            crate::gpu::kernels::KernelSort::Count => r.count.to_string(),
            crate::gpu::kernels::KernelSort::Mean => format::duration_ns(r.mean_ns, g.micro),
            crate::gpu::kernels::KernelSort::Total => {
                format::duration_ns(r.total_ns as f64, g.micro)
            }
        };
        let text = format!(
            "{shown:>9} {:>5.1}% {:>6}× {:<11}",
            r.pct, r.count, r.category
        );
        put(
            buf,
            x,
            y,
            &text,
            area.right(),
            base.patch(theme.style("ui.dim")),
        );
    }
}

/// Details of the selected kernel row (right pane).
pub fn kernel_details(
    app: &App,
    theme: &Theme,
    g: &Glyphs,
    r: Rect,
    lines: &mut Vec<(String, Style)>,
) {
    let _ = r;
    let k = &app.kernels;
    let Some(row) = k.rows.get(k.cursor) else {
        return;
    };
    let title = theme.style("ui.title");
    let text = theme.style("ui.text");
    lines.push((row.name.clone(), title));
    lines.push((format!("category  {}", row.category), text));
    let d = |x: f64| format::duration_ns(x, g.micro);
    for (label, v) in [
        ("total", d(row.total_ns as f64)),
        ("count", row.count.to_string()),
        ("mean", d(row.mean_ns)),
        ("median", d(row.median_ns)),
        ("min", d(row.min_ns as f64)),
        ("max", d(row.max_ns as f64)),
        ("std", d(row.std_ns)),
        ("% of table", format!("{:.2}%", row.pct)),
    ] {
        lines.push((format!("{label:<9} {v:>12}"), text));
    }
    if let (Some(ev), Some(&first)) = (app.profile.events.as_ref(), row.instances.first()) {
        if let Some(gpu) = &app.gpu {
            lines.push((
                format!("HTA type  {}", gpu.model.hta_of(first).label()),
                text,
            ));
        }
        if let Some(a) = ev.args_of(first as usize) {
            lines.push((String::new(), text));
            for (k, v) in args_lines(a) {
                lines.push((format!("{k:<14} {v}"), theme.style("ui.dim")));
            }
        }
    }
}

fn args_lines(args: &str) -> Vec<(String, String)> {
    match serde_json::from_str::<serde_json::Value>(args) {
        Ok(serde_json::Value::Object(m)) => m
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => s,
                    o => o.to_string(),
                };
                (k.chars().take(14).collect(), v)
            })
            .collect(),
        _ => Vec::new(),
    }
}

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
    let Some(gpu) = &app.gpu else {
        put(
            buf,
            area.x,
            area.y,
            "no GPU activity in this profile",
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
    for (li, lane_ref) in lanes.iter().enumerate().skip(offset).take(lanes_h) {
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
            &format!("{:<w$}", lane_ref.label, w = label_w as usize - 1),
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

/// The summary panel: HTA's breakdowns for this trace.
pub fn summary(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let (Some(gpu), true) = (app.gpu.as_ref(), app.profile.events.is_some()) else {
        return metadata(app, theme, area, buf);
    };
    let rank = report::rank_of(&app.profile, 0);
    let opt = Options::default();
    let mut lines: Vec<String> = Vec::new();
    for t in [
        Table::Temporal,
        Table::Overlap,
        Table::Idle,
        Table::Launch,
        Table::Queue,
        Table::Memory,
        Table::Overhead,
    ] {
        let rows = report::table_rows(&app.profile, &gpu.model, rank, t, &opt);
        lines.extend(
            report::render(t.header(), &rows, report::Format::Text, t.name())
                .lines()
                .map(String::from),
        );
        lines.push(String::new());
    }
    for (i, l) in lines
        .iter()
        .skip(app.summary_scroll)
        .take(area.height as usize)
        .enumerate()
    {
        let st =
            if !l.starts_with(' ') && !l.is_empty() && l.chars().all(|c| c.is_ascii_lowercase()) {
                theme.style("ui.title")
            } else {
                theme.style("ui.text")
            };
        put(buf, area.x, area.y + i as u16, l, area.right(), st);
    }
}

/// The metadata of the profile, or of every ensemble member as a table (members hidden
/// by `meta` are dimmed).
fn metadata(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let members = crate::app::compare::member_labels(&app.original.1);
    let shown = app.visible_members();
    let mut lines: Vec<(String, Style)> = Vec::new();
    if members.is_empty() {
        lines.push(("metadata".into(), theme.style("ui.title")));
        for (k, v) in &app.profile.meta {
            lines.push((format!("{k:<28} {v}"), theme.style("ui.text")));
        }
    } else {
        let mut keys: Vec<String> = Vec::new();
        for (k, _) in &app.profile.meta {
            if let Some((_, key)) = k.split_once('.') {
                if !keys.iter().any(|x| x == key) {
                    keys.push(key.to_string());
                }
            }
        }
        let filter = app
            .meta_filter
            .as_deref()
            .map(|f| format!(" (meta {f})"))
            .unwrap_or_default();
        lines.push((
            format!("{} profiles{filter}", members.len()),
            theme.style("ui.title"),
        ));
        let w = 14;
        let mut head = format!("{:<w$}", "profile");
        for k in &keys {
            head.push_str(&format!(" {:<w$}", k.chars().take(w).collect::<String>()));
        }
        lines.push((head, theme.style("ui.column.header")));
        for l in &members {
            let mut row = format!("{:<w$}", l.chars().take(w).collect::<String>());
            for k in &keys {
                let v = app.profile.meta_value(&format!("{l}.{k}")).unwrap_or("");
                // Paths differ between machines: the file name says enough here.
                let v = if k == "file" {
                    std::path::Path::new(v)
                        .file_name()
                        .and_then(|f| f.to_str())
                        .unwrap_or(v)
                } else {
                    v
                };
                row.push_str(&format!(" {:<w$}", v.chars().take(w).collect::<String>()));
            }
            let st = if shown.contains(l) {
                theme.style("ui.text")
            } else {
                theme.style("ui.dim")
            };
            lines.push((row, st));
        }
    }
    for (i, (l, st)) in lines
        .iter()
        .skip(app.summary_scroll)
        .take(area.height as usize)
        .enumerate()
    {
        put(buf, area.x, area.y + i as u16, l, area.right(), *st);
    }
}

/// The panel tabs, for the breadcrumb row.
pub fn tabs(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) -> u16 {
    let mut x = area.x;
    for (i, p) in crate::app::panels::PANELS.iter().enumerate() {
        let st = if *p == app.panel {
            theme.style("ui.tab.active")
        } else {
            theme.style("ui.tab")
        };
        x = put(
            buf,
            x,
            area.y,
            &format!("{}:{}", i + 1, p.name()),
            area.right(),
            st,
        );
        x = put(buf, x, area.y, " ", area.right(), theme.style("ui.text"));
    }
    let _ = PanelChoice::Tree;
    x
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
    let cct = &app.original.0;
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
