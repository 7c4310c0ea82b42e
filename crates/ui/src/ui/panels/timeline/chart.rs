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
use crate::app::panels::timeline::{LaneRef, ScreenRow};
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
    fn stack_row(&self, (li, lane): (usize, &LaneRef<'_>), row: usize, y: u16, buf: &mut Buffer) {
        let marks = self.app.lane_marks(li);
        let ix = lane.index;
        let blocks = if self.g.ascii { ASCII_BLOCKS } else { BLOCKS };
        let edge = if self.g.ascii { "|" } else { "▏" };
        let selected = self.app.timeline.selected;
        let right = self.x0 + self.width;
        let pieces = ix
            .stack
            .pieces(row, &ix.times, self.window, self.width as usize);
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
                    // A marked instance of the tree's selection: its edge says so.
                    let edge = if marks.is_some_and(|m| m.contains(row, pos)) {
                        st = st.add_modifier(Modifier::UNDERLINED);
                        self.mark_glyph()
                    } else {
                        edge
                    };
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
        if let Some(m) = marks {
            self.mark_cells(m, ix, &[row], &pieces, y, buf);
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
    fn collapsed_row(&self, (li, lane): (usize, &LaneRef<'_>), y: u16, buf: &mut Buffer) {
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
        if let Some(m) = self.app.lane_marks(li) {
            let rows: Vec<usize> = (0..m.rows.len()).collect();
            self.mark_cells(m, lane.index, &rows, &[], y, buf);
        }
    }

    fn mark_glyph(&self) -> &'static str {
        if self.g.ascii {
            "*"
        } else {
            "◆"
        }
    }

    /// The marked slices of stack rows `rows` that are not boxes (`pieces`): a mark
    /// glyph over each column they cover.
    fn mark_cells(
        &self,
        m: &crate::gpu::marks::LaneMarks,
        ix: &crate::gpu::timeline::LaneIndex,
        rows: &[usize],
        pieces: &[Piece],
        y: u16,
        buf: &mut Buffer,
    ) {
        let boxed: Vec<u32> = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Box { pos, .. } => Some(*pos),
                _ => None,
            })
            .collect();
        let st = self.theme.style("ui.match").add_modifier(Modifier::BOLD);
        for &r in rows {
            for (c, p) in m.columns(r, ix, self.window, self.width as usize) {
                if boxed.binary_search(&p).is_err() {
                    let cell = &mut buf[(self.x0 + c as u16, y)];
                    cell.set_symbol(self.mark_glyph());
                    cell.set_style(st);
                }
            }
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
    let tracks = app.counter_tracks();
    let lines = lines(app, &rows, &lanes, &tracks);
    let at = app.timeline_cursor_row(&rows);
    let at_line = lines.iter().position(|l| *l == Line::Row(at)).unwrap_or(0);
    let h = (area.height - 1) as usize;
    let offset = (at_line + 1).saturating_sub(h);
    let cursor_col = ctx.col(tl.cursor_t);
    let names = lane_names(app, &lanes, g);
    for (j, line) in lines.iter().enumerate().skip(offset).take(h) {
        let y = area.y + 1 + (j - offset) as u16;
        let k = match *line {
            Line::Row(k) => k,
            Line::Counter(t) => {
                ctx.counter_row(&tracks[t], y, buf);
                continue;
            }
        };
        let (li, row) = match rows[k] {
            ScreenRow::Lane(li, row) => (li, row),
            ScreenRow::Group(m) => {
                ctx.group_row(m, (area.x, y), k == at, &lanes, buf);
                continue;
            }
        };
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
            Some(r) => ctx.stack_row((li, lane), r, y, buf),
            None => ctx.collapsed_row((li, lane), y, buf),
        }
        if k == at && (0..ctx.width as i64).contains(&cursor_col) {
            let x = ctx.x0 + cursor_col as u16;
            let cell = &mut buf[(x, y)];
            cell.set_style(theme.style("ui.cursor"));
        }
    }
    lines.len().saturating_sub(offset).min(h)
}

/// The lanes' names in the label column: cut where they differ (`r0 tMaster`, `r1
/// tMaster`), not at the end; a name that fits stays whole. Under an ensemble member's
/// header, without the member's label they start with.
fn lane_names(app: &App, lanes: &[LaneRef<'_>], g: &Glyphs) -> Vec<String> {
    let groups = app.timeline_groups();
    let full: Vec<&str> = lanes
        .iter()
        .map(|l| {
            let group = groups.get(l.member as usize).map_or("", String::as_str);
            match l.label.strip_prefix(group) {
                Some(rest) if !group.is_empty() => rest.trim_start(),
                _ => l.label.as_str(),
            }
        })
        .collect();
    let w = LABEL_W as usize;
    let own = full.iter().map(|l| crate::ui::text::fit(l, w, g)).collect();
    crate::present::distinct::keep_apart(&full, own, w, g.ellipsis)
}

impl Ctx<'_> {
    /// An ensemble member's header: its label (with the fold's glyph) and, across
    /// the plot, its lanes' count on a rule.
    fn group_row(
        &self,
        m: u16,
        (x, y): (u16, u16),
        at: bool,
        lanes: &[LaneRef<'_>],
        buf: &mut Buffer,
    ) {
        let label = self
            .app
            .timeline_groups()
            .get(m as usize)
            .cloned()
            .unwrap_or_default();
        let folded = self.app.timeline.collapsed_groups.contains(&m);
        let glyph = match (folded, self.g.ascii) {
            (true, true) => "+",
            (false, true) => "-",
            (true, false) => "▸",
            (false, false) => "▾",
        };
        let text = crate::ui::text::fit(&label, LABEL_W as usize - 2, self.g);
        let st = if at {
            self.theme.style("ui.selection")
        } else {
            self.theme.style("ui.title")
        };
        put(buf, x, y, &format!("{glyph}{text}"), self.x0, st);
        let n = lanes.iter().filter(|l| l.member == m).count();
        let rule = if self.g.ascii { "-" } else { "─" };
        let note = format!(
            "{rule}{rule} {label} · {n} lane{} ",
            if n == 1 { "" } else { "s" }
        );
        let dim = self.theme.style("ui.dim");
        let end = put(buf, self.x0, y, &note, self.x0 + self.width, dim);
        let fill: String = rule.repeat((self.x0 + self.width).saturating_sub(end) as usize);
        put(buf, end, y, &fill, self.x0 + self.width, dim);
    }
}

/// A row under the ruler: one of `timeline_rows` (by its place there) or a counter
/// track.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Line {
    Row(usize),
    Counter(usize),
}

/// The rows under the ruler, top to bottom: each counter track after the last row of
/// the lane it belongs to (`counters::place`: its stream, else its process), the others
/// at the end. O(rows × tracks), no pass over events.
fn lines(
    app: &App,
    rows: &[ScreenRow],
    lanes: &[LaneRef<'_>],
    tracks: &[crate::gpu::counters::Track],
) -> Vec<Line> {
    let lane_of = |r: &ScreenRow| match *r {
        ScreenRow::Lane(li, _) => Some(li),
        ScreenRow::Group(_) => None,
    };
    let shown = |li: usize| rows.iter().any(|r| lane_of(r) == Some(li));
    let keys: Vec<(u32, Option<i64>)> = match (app.profile.events.as_ref(), app.gpu.as_ref()) {
        (Some(ev), Some(g)) => lanes
            .iter()
            .enumerate()
            .map(|(li, l)| match l.index.events.first() {
                Some(&i) if shown(li) => (
                    ev.pid[i as usize],
                    g.model.lanes.get(li).filter(|_| l.gpu).map(|m| m.stream),
                ),
                _ => (u32::MAX, None),
            })
            .collect(),
        _ => Vec::new(),
    };
    let at = crate::gpu::counters::place(tracks, &keys);
    let mut out = Vec::with_capacity(rows.len() + tracks.len());
    for (k, r) in rows.iter().enumerate() {
        out.push(Line::Row(k));
        let Some(li) = lane_of(r) else { continue };
        if rows.get(k + 1).and_then(lane_of) != Some(li) {
            let under = at.iter().enumerate().filter(|(_, a)| **a == Some(li));
            out.extend(under.map(|(t, _)| Line::Counter(t)));
        }
    }
    let rest = at.iter().enumerate().filter(|(_, a)| a.is_none());
    out.extend(rest.map(|(t, _)| Line::Counter(t)));
    out
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
            let k = row.partition_point(|&p| ix.times.end(p as usize) <= a);
            for &p in row[k..]
                .iter()
                .take_while(|&&p| ix.times.start(p as usize) < b)
            {
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
