//! The stack chart: the ruler, then one screen row per stack row of each shown lane
//! (one for a collapsed lane). A slice `MIN_BOX` cells wide or more is a box with its
//! name; narrower ones are shaded in eighth blocks. Only the rows on screen are drawn,
//! each from `StackRows::pieces` (O(cells × log slices)); the panel and `grove
//! timeline` draw through here.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use super::super::{put, ASCII_BLOCKS, BLOCKS};
use super::ruler;
use crate::app::panels::timeline::LaneRef;
use crate::app::App;
use crate::gpu::stack_chart::Piece;
use crate::model::{EventKind, EventTable};
use crate::present::format;
use crate::present::glyphs::Glyphs;
use crate::ui::theme::Theme;

/// Width of the lane labels.
pub const LABEL_W: u16 = 12;

/// The CPU slice kinds the legend names, with their colour slot.
pub const CPU_KINDS: [(&str, u8); 4] = [
    ("cpu_op", 4),
    ("python", 2),
    ("annotation", 5),
    ("runtime", 9),
];

/// The colour slot of a CPU slice, from its kind and category.
fn cpu_slot(ev: &EventTable, i: usize) -> u8 {
    if ev.kind[i] == EventKind::Runtime {
        return CPU_KINDS[3].1;
    }
    match ev.strings.resolve(ev.cat[i]) {
        "python_function" => CPU_KINDS[1].1,
        "user_annotation" | "gpu_user_annotation" => CPU_KINDS[2].1,
        _ => CPU_KINDS[0].1,
    }
}

/// A slice's name as a box shows it: a kernel's without return type, namespaces,
/// template and parameter lists (`at::native::vectorized_elementwise_kernel<4, …>(…)`
/// reads `vectorized_elementwise_kernel`), a wrapper's by its first template argument
/// (`cutlass::Kernel2<cutlass_80_tensorop_…_gemm…>` reads `cutlass_80_tensorop_…`); a
/// CPU slice's as it is.
pub fn box_label(ev: &EventTable, i: usize) -> String {
    let name = ev.name_of(i);
    if !ev.kind[i].is_gpu_activity() {
        return name.to_string();
    }
    // `(anonymous namespace)` is part of a path, not a parameter list.
    let bare = name
        .trim()
        .trim_start_matches("void ")
        .replace("(anonymous namespace)::", "");
    let last = |s: &str| {
        s.trim()
            .rsplit("::")
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let tail = last(bare.split(['<', '(']).next().unwrap_or(&bare));
    let wrapper = tail.starts_with("Kernel") || tail == "device_kernel";
    if wrapper {
        if let Some(arg) = bare
            .split_once('<')
            .map(|(_, rest)| rest.split([',', '<', '>', '(']).next().unwrap_or(rest))
            .map(last)
            .filter(|a| !a.is_empty())
        {
            return arg;
        }
    }
    if tail.is_empty() {
        bare
    } else {
        tail
    }
}

/// `text` in `w` cells: cut with the ellipsis when longer, padded when shorter.
fn fit(text: &str, w: usize, ellipsis: &str) -> String {
    let n = text.chars().count();
    if n <= w {
        return format!("{text:<w$}");
    }
    let mut s: String = text.chars().take(w.saturating_sub(1)).collect();
    if w > 0 {
        s.push_str(ellipsis);
    }
    s
}

/// Everything a row needs beyond its lane.
struct Ctx<'a> {
    app: &'a App,
    ev: &'a EventTable,
    theme: &'a Theme,
    g: &'a Glyphs,
    window: (i64, i64),
    x0: u16,
    width: u16,
}

impl Ctx<'_> {
    fn slice_style(&self, lane: &LaneRef<'_>, i: u32) -> Style {
        let gpu = self.app.gpu.as_ref();
        let mut st = match gpu {
            Some(g) if lane.gpu => self.theme.category(g.model.category_color(i)),
            _ => self.theme.category(cpu_slot(self.ev, i as usize)),
        };
        let tl = &self.app.timeline;
        if tl.linked.contains(&i) {
            st = self.theme.style("ui.match").add_modifier(Modifier::BOLD);
        }
        if let Some(m) = self.app.kernels.selected.as_deref() {
            if lane.gpu && self.ev.name_of(i as usize) == m {
                st = st.patch(self.theme.style("ui.match"));
            }
        }
        st
    }

    /// Columns of time `t` (may fall outside the plot).
    fn col(&self, t: i64) -> i64 {
        let (a, b) = self.window;
        ((t - a) as f64 / (b - a).max(1) as f64 * self.width as f64).floor() as i64
    }

    /// One expanded stack row of a lane.
    fn stack_row(&self, lane: &LaneRef<'_>, row: usize, y: u16, buf: &mut Buffer) {
        let ix = lane.index;
        let blocks = if self.g.ascii { ASCII_BLOCKS } else { BLOCKS };
        let edge = if self.g.ascii { "|" } else { "▏" };
        let selected = self.app.timeline.selected;
        let right = self.x0 + self.width;
        let pieces = ix.stack.pieces(
            row,
            (&ix.starts, &ix.ends),
            self.window,
            self.width as usize,
        );
        for piece in &pieces {
            match *piece {
                Piece::Box { pos, c0, c1 } => {
                    let i = ix.events[pos as usize];
                    let mut st = self.slice_style(lane, i);
                    if selected == Some(i) {
                        st = self.theme.style("ui.selection");
                    } else {
                        st = st.add_modifier(Modifier::REVERSED);
                    }
                    let w = c1 - c0;
                    let name = box_label(self.ev, i as usize);
                    let text = format!("{edge}{}", fit(&name, w - 1, self.g.ellipsis));
                    put(buf, self.x0 + c0 as u16, y, &text, right, st);
                }
                Piece::Shade { pos, col, busy } => {
                    let i = ix.events[pos as usize];
                    let level = ((busy * 8.0).ceil() as usize).clamp(1, 8);
                    let mut st = self.slice_style(lane, i);
                    if selected == Some(i) {
                        st = st.add_modifier(Modifier::REVERSED);
                    }
                    // One cell: set directly, without a string's grapheme walk.
                    let cell = &mut buf[(self.x0 + col as u16, y)];
                    cell.set_symbol(blocks[level]);
                    cell.set_style(st);
                }
            }
        }
        // A selected or linked slice narrower than a cell gets a marker over its cell.
        let marker = if self.g.ascii { "v" } else { "▼" };
        let tl = &self.app.timeline;
        for &i in selected.iter().chain(tl.linked.iter().take(16)) {
            let ts = self.ev.ts[i as usize];
            let Some(p) = ix.pos_of(i, ts) else { continue };
            if ix.stack.row_of(p) != Some(row) {
                continue;
            }
            let drawn = pieces
                .iter()
                .any(|x| matches!(x, Piece::Box { pos, .. } if *pos == p));
            let c = self.col(ts);
            if !drawn && (0..self.width as i64).contains(&c) {
                let st = if Some(i) == selected {
                    self.theme.style("ui.selection")
                } else {
                    self.theme.style("ui.match")
                };
                put(buf, self.x0 + c as u16, y, marker, right, st);
            }
        }
    }

    /// A collapsed lane: busy share per cell, as the timeline was before stacks.
    fn collapsed_row(&self, lane: &LaneRef<'_>, y: u16, buf: &mut Buffer) {
        let blocks = if self.g.ascii { ASCII_BLOCKS } else { BLOCKS };
        let (a, b) = self.window;
        let cells = lane.index.cells(a, b, self.width as usize);
        for (c, cell) in cells.iter().enumerate() {
            let level = if cell.busy <= 0.0 && cell.top.is_none() {
                0
            } else {
                ((cell.busy * 8.0).ceil() as usize).clamp(1, 8)
            };
            let mut st = match cell.top {
                Some(i) => self.slice_style(lane, i),
                None => self.theme.style("ui.dim"),
            };
            if cell.top.is_some() && cell.top == self.app.timeline.selected {
                st = st.add_modifier(Modifier::REVERSED);
            }
            let glyph = match level {
                0 if c % 4 == 0 && !self.g.ascii => "·",
                0 => " ",
                l => blocks[l],
            };
            buf.set_stringn(self.x0 + c as u16, y, glyph, 1, st);
        }
    }
}

impl Ctx<'_> {
    /// A counter track as a sparkline: each column's value from the track's floor
    /// (0, or its minimum when negative) to its maximum, in eighths of a cell.
    fn counter_row(&self, track: &crate::gpu::counters::Track, y: u16, buf: &mut Buffer) {
        let blocks = if self.g.ascii { ASCII_BLOCKS } else { BLOCKS };
        let label: String = track.label.chars().take(LABEL_W as usize - 1).collect();
        put(
            buf,
            self.x0 - LABEL_W,
            y,
            &label,
            self.x0,
            self.theme.style("ui.dim"),
        );
        let floor = track.min.min(0.0);
        let range = (track.max - floor).max(f64::MIN_POSITIVE);
        let st = self.theme.style("ui.text");
        let (a, b) = self.window;
        for (c, v) in track.columns(a, b, self.width as usize).iter().enumerate() {
            let Some(v) = v.filter(|v| v.is_finite()) else {
                continue;
            };
            let level = (((v - floor) / range * 8.0).ceil() as usize).clamp(1, 8);
            let cell = &mut buf[(self.x0 + c as u16, y)];
            cell.set_symbol(blocks[level]);
            cell.set_style(st);
        }
    }
}

/// The ruler row: the window's span in the label column, its start written once at
/// the left edge, then `+N unit` ticks; the cursor's column marked.
fn ruler_row(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    let (a, b) = app.timeline.window;
    let plot_x = area.x + LABEL_W;
    let plot_w = area.width - LABEL_W;
    let head = format!(
        "{:>w$}",
        format::duration_ns((b - a) as f64, g.micro),
        w = LABEL_W as usize - 1
    );
    put(
        buf,
        area.x,
        area.y,
        &head,
        plot_x,
        theme.style("ui.column.header"),
    );
    let origin = app.gpu.as_ref().map(|g| g.origin).unwrap_or(0);
    let dim = theme.style("ui.dim");
    let start = format!("|{}", ruler::absolute(a - origin, b - a, plot_w, g.micro));
    let mut free = put(buf, plot_x, area.y, &start, area.right(), dim) + 1;
    for (col, text) in ruler::labels(b - a, plot_w, g.micro).into_iter().skip(1) {
        let x = plot_x + col;
        if x < free {
            continue;
        }
        free = put(buf, x, area.y, &format!("|{text}"), area.right(), dim) + 1;
    }
}

/// The stack chart in `area`: the ruler on its first row, the lanes below, scrolled
/// so the cursor's row shows. Returns the screen rows it drew.
pub fn chart(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) -> usize {
    let Some(ev) = app.profile.events.as_ref() else {
        return 0;
    };
    if area.width <= LABEL_W + 4 || area.height < 2 {
        return 0;
    }
    ruler_row(app, theme, g, area, buf);
    let tl = &app.timeline;
    let (a, b) = tl.window;
    let ctx = Ctx {
        app,
        ev,
        theme,
        g,
        window: (a, b),
        x0: area.x + LABEL_W,
        width: area.width - LABEL_W,
    };
    let rows = app.timeline_rows();
    let lanes = app.lanes();
    let at = app.timeline_cursor_row(&rows);
    let h = (area.height - 1) as usize;
    let offset = (at + 1).saturating_sub(h);
    let cursor_col = ctx.col(tl.cursor_t);
    // Lane names cut where they differ (`r0 tMaster`, `r1 tMaster`), not at the end;
    // a name that fits the label column stays whole.
    let w = LABEL_W as usize;
    let full: Vec<&str> = lanes.iter().map(|l| l.label.as_str()).collect();
    let own = full.iter().map(|l| crate::ui::text::fit(l, w, g)).collect();
    let names = crate::present::distinct::keep_apart(&full, own, w, g.ellipsis);
    for (k, &(li, row)) in rows.iter().enumerate().skip(offset).take(h) {
        let y = area.y + 1 + (k - offset) as u16;
        let lane = &lanes[li];
        let first = row.unwrap_or(0) == 0;
        let label = match row {
            None => format!("{}{}", names[li], if g.ascii { "+" } else { "▸" }),
            Some(0) => names[li].clone(),
            Some(r) => format!("{:>w$}", r, w = LABEL_W as usize - 2),
        };
        let label_style = if k == at {
            theme.style("ui.selection")
        } else if first {
            theme.style("ui.text")
        } else {
            theme.style("ui.dim")
        };
        put(
            buf,
            area.x,
            y,
            &format!("{:<w$}", label, w = LABEL_W as usize - 1),
            ctx.x0,
            label_style,
        );
        match row {
            Some(r) => ctx.stack_row(lane, r, y, buf),
            None => ctx.collapsed_row(lane, y, buf),
        }
        if k == at && (0..ctx.width as i64).contains(&cursor_col) {
            let x = ctx.x0 + cursor_col as u16;
            let cell = &mut buf[(x, y)];
            cell.set_style(theme.style("ui.cursor"));
        }
    }
    let drawn = rows.len().saturating_sub(offset).min(h);
    let tracks = app.counter_tracks();
    for (j, track) in tracks.iter().take(h - drawn).enumerate() {
        let y = area.y + 1 + (drawn + j) as u16;
        ctx.counter_row(track, y, buf);
    }
    drawn + tracks.len().min(h - drawn)
}

/// The chart as text, `width` columns wide, every row (no scrolling): what `grove
/// timeline` prints and what tests read.
pub fn text(app: &App, width: u16, g: &Glyphs) -> String {
    let rows = (app.timeline_rows().len() + app.counter_tracks().len()) as u16;
    let area = Rect::new(0, 0, width.max(LABEL_W + 5), rows + 1);
    let mut buf = Buffer::empty(area);
    let theme = Theme::builtin("mono", crate::ui::theme::ColorDepth::Never)
        .expect("the mono theme is built in");
    chart(app, &theme, g, area, &mut buf);
    let mut out = String::new();
    for y in 0..area.height {
        let line: String = (0..area.width).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The slices of the shown rows that overlap the window, as CSV: lane, row, start
/// and duration in µs from the trace's start, kind, category, name.
pub fn csv(app: &App) -> String {
    let mut out = String::from("lane,row,start_us,dur_us,kind,category,name\n");
    let (Some(ev), Some(gpu)) = (app.profile.events.as_ref(), app.gpu.as_ref()) else {
        return out;
    };
    let (a, b) = app.timeline.window;
    let lanes = app.lanes();
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let us = |t: i64| format!("{:.3}", t as f64 / 1e3);
    for (li, lane) in lanes.iter().enumerate() {
        if app.timeline.hidden.contains(&li) {
            continue;
        }
        let ix = lane.index;
        for (r, row) in ix.stack.rows.iter().enumerate() {
            let k = row.partition_point(|&p| ix.ends[p as usize] <= a);
            for &p in row[k..].iter().take_while(|&&p| ix.starts[p as usize] < b) {
                let i = ix.events[p as usize];
                let iu = i as usize;
                let cat = if lane.gpu {
                    gpu.model.category_name(i).to_string()
                } else {
                    ev.strings.resolve(ev.cat[iu]).to_string()
                };
                out.push_str(&format!(
                    "{},{r},{},{},{},{},{}\n",
                    q(&lane.label),
                    us(ev.ts[iu] - gpu.origin),
                    us(ev.dur[iu]),
                    ev.kind[iu].label(),
                    q(&cat),
                    q(ev.name_of(iu))
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_their_box() {
        assert_eq!(fit("gemm", 6, "…"), "gemm  ");
        assert_eq!(
            fit("vectorized_elementwise", 8, "…"),
            "vectoriz…".chars().take(7).collect::<String>() + "…"
        );
        assert_eq!(fit("ab", 0, "…"), "");
    }

    fn label(name: &str, kind: EventKind) -> String {
        let mut ev = EventTable::default();
        let n = ev.strings.intern(name);
        ev.push(n, n, kind, 0, 1, 0, 0);
        box_label(&ev, 0)
    }

    #[test]
    fn kernel_labels_keep_the_part_that_names_them() {
        let k = EventKind::Kernel;
        assert_eq!(
            label("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int)", k),
            "vectorized_elementwise_kernel"
        );
        assert_eq!(
            label("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2>(cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2::Params)", k),
            "cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2"
        );
        assert_eq!(
            label("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float)", k),
            "vectorized_layer_norm_kernel"
        );
        assert_eq!(
            label("Memcpy DtoH (Device -> Pinned)", EventKind::Memcpy),
            "Memcpy DtoH"
        );
        assert_eq!(
            label("sm90_xmma_gemm_bf16bf16", k),
            "sm90_xmma_gemm_bf16bf16"
        );
        assert_eq!(label("aten::mm", EventKind::Cpu), "aten::mm");
    }
}
