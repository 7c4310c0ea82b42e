//! The panels' views, one file per panel under the same name as its state in
//! `app::panels`. Each draws only what is on screen, from state (and derived data)
//! computed by commands; this file holds the `View` trait, the views' table (built
//! from `app::panels::registry!`, the one list of panels), the panel tabs and helpers
//! they share.

pub mod flame;
pub mod functions;
pub mod heatmap;
pub mod kernels;
pub mod lod;
pub mod sql;
pub mod summary;
pub mod timeline;
pub mod tree;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::theme::Theme;
use crate::app::panels::{registry, Panel, PanelId};
use crate::app::App;
use crate::present::glyphs::Glyphs;

/// How a panel looks: implemented in `ui/panels/NAME.rs` for the type that implements
/// `app::panels::Panel` in `app/panels/NAME.rs`. A view is a pure function of `&App`
/// and the theme, and costs what is on screen: derived data comes from the panel's
/// `Memo`, never from a pass over all nodes or events per frame.
pub trait View: Panel {
    /// Draws the panel in `area` (the screen between the tabs and the legend, less
    /// the details pane).
    fn draw(&self, app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer);

    /// What the details pane beside it shows on a wide screen.
    fn details(&self) -> Details;

    /// What the legend row under it shows.
    fn legend(&self) -> Legend;

    /// Draws a legend of its own in the legend row instead, and returns true (the
    /// flame graph after `diff`: which colour is slower); false draws `legend()`'s.
    fn draw_legend(&self, _: &App, _: &Theme, _: &Glyphs, _: Rect, _: &mut Buffer) -> bool {
        false
    }
}

/// The lines a panel puts in the details pane (the pane wraps them).
pub type DetailLines = fn(&App, &Theme, &Glyphs, Rect, &mut Vec<(String, Style)>);

/// The details pane beside a panel.
#[derive(Clone, Copy)]
pub enum Details {
    /// None: the panel takes the whole width.
    Hidden,
    /// The node under the tree's cursor: name, metrics, attributes.
    Node,
    /// The panel's own lines.
    Lines(DetailLines),
}

/// The legend row under a panel.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Legend {
    /// The heat scale of the primary metric.
    Heat,
    /// The kernel categories' colours.
    Categories,
}

macro_rules! view_list {
    ($($m:ident: $p:ident, $state:ident;)*) => {
        &[$(&crate::app::panels::$m::$p as &dyn View),*]
    };
}

/// Every panel's view, in the order of `PANELS` (the same list builds both).
static VIEWS: &[&dyn View] = registry!(view_list);

/// The view of a panel.
pub fn view(p: PanelId) -> &'static dyn View {
    VIEWS[p.index()]
}

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
    for (i, p) in PanelId::all().enumerate() {
        let st = if p == app.panel {
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
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::panels::PANELS;

    /// The views' table is the panels' list: same length, same order.
    #[test]
    fn every_panel_has_its_view() {
        assert_eq!(VIEWS.len(), PANELS.len());
        for (v, p) in VIEWS.iter().zip(PANELS) {
            assert_eq!(v.name(), p.name());
        }
    }
}
