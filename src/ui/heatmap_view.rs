//! The metric heatmap of one profile: its rows are the tree's rows on screen (it
//! scrolls with the tree), its columns the metrics, each cell coloured in the six
//! bins of its column's range (glyph density in the mono theme).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::format;
use super::glyphs::Glyphs;
use super::heat::HeatScale;
use super::theme::Theme;
use crate::app::App;

pub fn render(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    if area.height < 2 {
        return;
    }
    let m = &app.profile.metrics;
    let names = m.names();
    let tree = &app.tree;
    let name_w = (area.width as usize / 3).clamp(10, 40) as u16;
    let cell_w: u16 = 14;
    let cols = ((area.width.saturating_sub(name_w)) / cell_w) as usize;
    let header = theme.style("ui.column.header");
    buf.set_stringn(area.x, area.y, "name", name_w as usize, header);
    let scales: Vec<HeatScale> = names
        .iter()
        .take(cols)
        .map(|n| HeatScale::from_values(m.values(n).unwrap_or(&[]).iter().copied()))
        .collect();
    for (c, n) in names.iter().take(cols).enumerate() {
        let x = area.x + name_w + c as u16 * cell_w;
        let limit = cell_w as usize - 1;
        let t: String = if n.chars().count() > limit {
            n.chars()
                .take(limit - 1)
                .chain(g.ellipsis.chars())
                .collect()
        } else {
            n.clone()
        };
        buf.set_stringn(
            x,
            area.y,
            format!("{t:>w$}", w = cell_w as usize - 1),
            cell_w as usize,
            header,
        );
    }
    let start = tree.offset.min(tree.visible.len());
    let rows = (area.height - 1) as usize;
    for (i, row) in tree.visible.iter().skip(start).take(rows).enumerate() {
        let y = area.y + 1 + i as u16;
        let node = tree.po.node[row.pos as usize];
        let sel = start + i == tree.cursor;
        let base = if sel {
            theme.style("ui.text").patch(theme.style("ui.selection"))
        } else {
            theme.style("ui.text")
        };
        buf.set_style(Rect::new(area.x, y, area.width, 1), base);
        let depth = tree.po.depth[row.pos as usize] as usize;
        let indent = (depth * 2).min(name_w as usize / 2);
        let label = if row.is_node() {
            app.profile.cct.name(node).to_string()
        } else {
            format!("{} {} more", g.ellipsis, row.more)
        };
        buf.set_stringn(
            area.x + indent as u16,
            y,
            &label,
            (name_w as usize).saturating_sub(indent + 1),
            base,
        );
        if !row.is_node() {
            continue;
        }
        for (c, n) in names.iter().take(cols).enumerate() {
            let v = m.get(n, node);
            let x = area.x + name_w + c as u16 * cell_w;
            let bin = scales[c].bin(v);
            let text = format::value(v, m.unit(n), g.micro);
            let st = match bin {
                Some(b) => base.patch(theme.heat(b)),
                None => base.patch(theme.style("ui.dim")),
            };
            let glyph = if theme.heat_glyphs {
                bin.map(|b| g.density[5 - b]).unwrap_or(" ")
            } else {
                ""
            };
            buf.set_stringn(
                x,
                y,
                format!(
                    "{glyph}{text:>w$}",
                    w = cell_w as usize - 1 - glyph.chars().count()
                ),
                cell_w as usize,
                st,
            );
        }
    }
}
