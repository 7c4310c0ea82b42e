//! The panels' views, one file per panel under the same name as its state in
//! `app::panels`. Each draws only what is on screen, from state (and derived data)
//! computed by commands; this file holds the panel tabs and helpers they share.

pub mod heatmap;
pub mod kernels;
pub mod lod;
pub mod summary;
pub mod timeline;
pub mod tree;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::theme::Theme;
use crate::app::command::PanelChoice;
use crate::app::App;

pub(crate) const BLOCKS: [&str; 9] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
pub(crate) const ASCII_BLOCKS: [&str; 9] = [" ", ".", ":", "-", "=", "+", "*", "#", "#"];

pub(crate) fn put(buf: &mut Buffer, x: u16, y: u16, s: &str, max_x: u16, st: Style) -> u16 {
    if x >= max_x {
        return x;
    }
    let w = (max_x - x) as usize;
    let (nx, _) = buf.set_stringn(x, y, s, w, st);
    nx
}

pub(crate) fn args_lines(args: crate::model::args::Args<'_>) -> Vec<(String, String)> {
    args.iter()
        .map(|(k, v)| (k.chars().take(14).collect(), args.text(v).into_owned()))
        .collect()
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
