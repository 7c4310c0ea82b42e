//! The timeline in low-memory mode: each GPU lane's busy share per column from the
//! level-of-detail summary (`model::lod`), coloured by the bucket's dominant kernel's
//! category, over the whole span (no zoom: the buckets are the finest detail kept).
//! A frame reads every bucket once: `BUCKETS` per lane, whatever the trace's size.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{put, ASCII_BLOCKS, BLOCKS};
use crate::app::App;
use crate::model::lod::Lod;
use crate::model::EventKind;
use crate::present::format;
use crate::present::glyphs::Glyphs;
use crate::ui::theme::Theme;

pub fn timeline(app: &App, lod: &Lod, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    let label_w: u16 = 12;
    if area.width <= label_w + 4 || area.height < 3 {
        return;
    }
    let (a, b) = lod.span();
    let head = format!(
        "low-memory: level of detail — {} GPU lane(s), {} buckets of {}; single events are not loaded",
        lod.lanes.len(),
        lod.buckets(),
        format::duration_ns(lod.bucket_ns as f64, g.micro)
    );
    put(
        buf,
        area.x,
        area.y,
        &head,
        area.right(),
        theme.style("ui.column.header"),
    );
    let plot_x = area.x + label_w;
    let plot_w = (area.width - label_w) as usize;
    let dim = theme.style("ui.dim");
    let from = format!("|{}", format::duration_ns((a - lod.origin) as f64, g.micro));
    let to = format!("{}|", format::duration_ns((b - lod.origin) as f64, g.micro));
    put(buf, plot_x, area.y + 1, &from, area.right(), dim);
    let to_x = area.right().saturating_sub(to.chars().count() as u16);
    put(buf, to_x.max(plot_x), area.y + 1, &to, area.right(), dim);
    let blocks = if g.ascii { ASCII_BLOCKS } else { BLOCKS };
    let ev = app.profile.events.as_ref();
    let cats = app.kernels.categories.as_ref();
    let n = lod.buckets();
    let rows = (area.height - 2) as usize;
    for (li, lane) in lod.lanes.iter().enumerate().take(rows) {
        let y = area.y + 2 + li as u16;
        put(
            buf,
            area.x,
            y,
            &format!("{:<w$}", lane.label, w = label_w as usize - 1),
            plot_x,
            theme.style("ui.text"),
        );
        for c in 0..plot_w {
            let (lo, hi) = (
                c * n / plot_w,
                ((c + 1) * n / plot_w).max(c * n / plot_w + 1),
            );
            let hi = hi.min(n);
            let busy: i64 = lane.busy[lo..hi].iter().sum();
            let share = busy as f64 / (lod.bucket_ns as f64 * (hi - lo) as f64);
            let top = (lo..hi)
                .filter(|&k| lane.dominant[k] != u32::MAX)
                .max_by_key(|&k| lane.busy[k])
                .map(|k| lane.dominant[k]);
            let level = match top {
                None => 0,
                Some(_) => ((share * 8.0).ceil() as usize).clamp(1, 8),
            };
            let st = match (top, ev, cats) {
                (Some(name), Some(ev), Some(cats)) => {
                    let rule = cats.classify(ev.strings.resolve(name), EventKind::Kernel);
                    theme.category(cats.rules.get(rule).map(|r| r.color).unwrap_or(0))
                }
                _ => dim,
            };
            put(buf, plot_x + c as u16, y, blocks[level], area.right(), st);
        }
    }
}
