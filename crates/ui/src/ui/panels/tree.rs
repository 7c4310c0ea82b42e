//! The CCT table: right-aligned metric columns, then the indented name. Only the rows
//! on screen are visited, so a frame costs O(rows on screen) whatever the tree's size.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::app::panels::tree::Row;
use crate::app::App;
use crate::diff::Side;
use crate::present::format;
use crate::present::glyphs::Glyphs;
use crate::ui::theme::Theme;

/// The markers column: `gone` and a space.
const MARKS_W: u16 = 5;

pub struct Column {
    pub title: String,
    pub width: u16,
    pub values: Vec<f64>,
    pub kind: ColumnKind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// The primary inclusive metric: heat-coloured.
    Heat,
    Value,
    Percent,
}

/// The width the tree's value columns and markers take on a panel `width` wide (the
/// names get the rest): the layout gives up the details pane rather than leave the
/// names a dozen characters.
pub fn columns_width(app: &App, theme_glyphs: bool, width: u16) -> u16 {
    let heat_glyph_w: u16 = if theme_glyphs { 2 } else { 0 };
    let cols: u16 = columns(app, &[], width < 60)
        .iter()
        .map(|c| {
            c.width
                + if c.kind == ColumnKind::Heat {
                    heat_glyph_w
                } else {
                    0
                }
        })
        .sum();
    cols + 1 + if app.diff.is_some() { MARKS_W } else { 0 }
}

/// The columns shown, left to right, for the rows in view.
fn columns(app: &App, rows: &[u32], narrow: bool) -> Vec<Column> {
    let m = &app.profile.metrics;
    let inc = app.inclusive_column();
    let mut cols = Vec::new();
    // Node by node: an exclusive column kept as a residual is not made whole for the
    // rows on screen.
    let cct = &app.profile.cct;
    let pick = |name: &str| -> Vec<f64> {
        let v = m.at(name, cct);
        rows.iter()
            .map(|&n| v.as_ref().map_or(f64::NAN, |v| v.get(n as usize)))
            .collect()
    };
    cols.push(Column {
        width: value_width(&inc),
        title: inc.clone(),
        values: pick(&inc),
        kind: ColumnKind::Heat,
    });
    if narrow {
        return cols;
    }
    if inc != app.metric {
        cols.push(Column {
            title: app.metric.clone(),
            width: value_width(&app.metric),
            values: pick(&app.metric),
            kind: ColumnKind::Value,
        });
    }
    cols.push(Column {
        title: "%".into(),
        // A difference's share can be negative: `-14.9%` needs the seventh column.
        width: if app.diff.is_some() { 7 } else { 6 },
        values: pick(&inc),
        kind: ColumnKind::Percent,
    });
    if m.has("count") && app.metric != "count" && !app.hide_count {
        cols.push(Column {
            title: "count".into(),
            width: 7,
            values: pick("count"),
            kind: ColumnKind::Value,
        });
    }
    if let Some(m2) = &app.metric2 {
        let c = m.inclusive_of(m2);
        cols.push(Column {
            width: value_width(&c),
            title: c.clone(),
            values: pick(&c),
            kind: ColumnKind::Value,
        });
    }
    cols
}

/// The columns' titles cut to their widths, never two alike while the titles differ
/// (`GPUOP (sec) (inc)@mean` and `(exc)@mean` both read `GPUOP (se…@mean` before).
fn column_titles(cols: &[Column], width_of: impl Fn(&Column) -> u16, g: &Glyphs) -> Vec<String> {
    let own: Vec<String> = cols
        .iter()
        .map(|c| {
            let w = width_of(c) as usize - 1;
            // A statistic's label is the same on every metric: its metric tells it apart.
            if crate::app::compare::is_stat_column(&c.title) {
                crate::present::format::clip_metric(&c.title, w, g.ellipsis)
            } else {
                crate::present::format::clip_title(&c.title, w, g.ellipsis)
            }
        })
        .collect();
    let titles: Vec<&str> = cols.iter().map(|c| c.title.as_str()).collect();
    if crate::present::distinct::apart(&titles, &own) {
        return own;
    }
    // Columns may differ in width: the clashing ones are cut again at the narrowest.
    let w = cols
        .iter()
        .map(|c| width_of(c) as usize - 1)
        .min()
        .unwrap_or(0);
    crate::present::distinct::keep_apart(&titles, own, w, g.ellipsis)
}

/// Wide enough for the title (within reason) and for values like `123.45 ms`.
fn value_width(title: &str) -> u16 {
    (title.chars().count() as u16).clamp(9, 15) + 1
}

fn unit_of<'a>(app: &'a App, title: &str) -> &'a str {
    app.profile.metrics.unit(title)
}

pub fn render(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    if area.height < 2 || area.width < 10 {
        return;
    }
    let tree = &app.tree;
    let body = Rect {
        y: area.y + 1,
        height: area.height - 1,
        ..area
    };
    let start = tree.offset.min(tree.visible.len());
    let end = (start + body.height as usize).min(tree.visible.len());
    let vis = &tree.visible[start..end];
    let rows: Vec<u32> = vis.iter().map(|r| tree.po.node[r.pos as usize]).collect();
    let narrow = area.width < 60;
    let cols = columns(app, &rows, narrow);
    let heat_glyph_w: u16 = if theme.heat_glyphs { 2 } else { 0 };
    let x = area.x + cols.iter().map(|c| width_of(c, heat_glyph_w)).sum::<u16>();
    // With a diff, a fixed column before the names marks the nodes one side lacks:
    // never cut by a long name, never mistaken for a fold glyph.
    let marks_x = x + 1;
    let marks_w: u16 = if app.diff.is_some() { MARKS_W } else { 0 };
    let d = Draw {
        app,
        theme,
        g,
        area,
        additive: app.is_additive(&app.inclusive_column()),
        cols,
        heat_glyph_w,
        marks_x,
        marks_w,
        name_x: marks_x + marks_w,
        text: theme.style("ui.text"),
        guide: theme.style("ui.tree.guide"),
    };
    d.header(buf);
    let selected = tree.cursor.checked_sub(start);
    for (i, &node) in rows.iter().enumerate() {
        let y = body.y + i as u16;
        let row_style = if selected == Some(i) {
            d.text.patch(theme.style("ui.selection"))
        } else {
            d.text
        };
        buf.set_style(Rect::new(area.x, y, area.width, 1), row_style);
        let row = vis[i];
        if !row.is_node() {
            d.aggregate(row, y, row_style, buf);
            continue;
        }
        d.values(i, y, row_style, buf);
        if d.marks_w > 0 {
            d.marks(node, y, row_style, buf);
        }
        d.name(node, y, row_style, buf);
    }
}

/// A value column's width, with its heat glyph.
fn width_of(c: &Column, heat_glyph_w: u16) -> u16 {
    c.width
        + if c.kind == ColumnKind::Heat {
            heat_glyph_w
        } else {
            0
        }
}

/// One frame of the table: what it draws and where its parts go.
struct Draw<'a> {
    app: &'a App,
    theme: &'a Theme,
    g: &'a Glyphs,
    area: Rect,
    /// The inclusive column's values add up: a share of the total means something.
    additive: bool,
    cols: Vec<Column>,
    heat_glyph_w: u16,
    marks_x: u16,
    marks_w: u16,
    name_x: u16,
    text: Style,
    guide: Style,
}

impl Draw<'_> {
    /// The header row: the value columns' titles and `name`.
    fn header(&self, buf: &mut Buffer) {
        let (area, name_x) = (self.area, self.name_x);
        let header = self.theme.style("ui.column.header");
        let mut x = area.x;
        let titles = column_titles(&self.cols, |c| width_of(c, self.heat_glyph_w), self.g);
        for (c, title) in self.cols.iter().zip(titles) {
            let w = width_of(c, self.heat_glyph_w);
            buf.set_stringn(
                x,
                area.y,
                format!("{title:>w$}", w = w as usize - 1),
                w as usize,
                header,
            );
            x += w;
        }
        if name_x < area.right() {
            buf.set_stringn(
                name_x,
                area.y,
                "name",
                (area.right() - name_x) as usize,
                header,
            );
        }
    }

    /// An aggregate of pruned siblings, at their indentation.
    fn aggregate(&self, row: Row, y: u16, row_style: Style, buf: &mut Buffer) {
        let (app, g, area, name_x) = (self.app, self.g, self.area, self.name_x);
        let depth = app.tree.po.depth[row.pos as usize] as usize;
        let indent = (depth * 2).min(area.right().saturating_sub(name_x) as usize / 2);
        let inc = app.inclusive_column();
        let total = format::value(row.total, unit_of(app, &inc), g.micro);
        let label = format!("{} {} more ({total})", g.ellipsis, row.more);
        let w = self.cols.first().map(|c| c.width as usize - 1).unwrap_or(0);
        let dim = row_style.patch(self.theme.style("ui.dim"));
        buf.set_stringn(area.x, y, format!("{total:>w$}"), w, dim);
        if indent > 0 {
            let guides: String = (0..indent / 2)
                .map(|_| if g.ascii { "| " } else { "│ " })
                .collect();
            buf.set_stringn(name_x, y, &guides, indent, row_style.patch(self.guide));
        }
        let nx = name_x + indent as u16;
        let left = area.right().saturating_sub(nx) as usize;
        buf.set_stringn(nx, y, label, left, dim);
    }

    /// The value cells of row `i` (on screen).
    fn values(&self, i: usize, y: u16, row_style: Style, buf: &mut Buffer) {
        let (app, theme, g) = (self.app, self.theme, self.g);
        let mut x = self.area.x;
        for c in &self.cols {
            let v = c.values[i];
            let (s, style) = match c.kind {
                // A share of the total only where values add up (not a ratio's).
                ColumnKind::Percent if !self.additive => (String::new(), Style::default()),
                ColumnKind::Percent => (format::percent(v, app.total), Style::default()),
                ColumnKind::Heat => {
                    let bin = app.heat.bin(v);
                    let st = bin.map(|b| theme.heat(b)).unwrap_or_default();
                    (format::value(v, unit_of(app, &c.title), g.micro), st)
                }
                ColumnKind::Value => (
                    format::value(v, unit_of(app, &c.title), g.micro),
                    theme.style("ui.dim"),
                ),
            };
            if c.kind == ColumnKind::Heat && theme.heat_glyphs {
                let glyph = app.heat.bin(v).map(|b| g.density[5 - b]).unwrap_or(" ");
                buf.set_stringn(x, y, glyph, 1, row_style.patch(style));
                x += self.heat_glyph_w;
            }
            let w = c.width as usize - 1;
            buf.set_stringn(x, y, format!("{s:>w$}"), w, row_style.patch(style));
            x += c.width;
        }
    }

    /// The diff marker of a node one side lacks.
    fn marks(&self, node: u32, y: u16, row_style: Style, buf: &mut Buffer) {
        let side = self.app.diff_side(node);
        let role = match side {
            Side::OnlyNew => "heat.0",
            _ => "heat.4",
        };
        let left = self.area.right().saturating_sub(self.marks_x) as usize;
        buf.set_stringn(
            self.marks_x,
            y,
            side.marker(),
            left.min(self.marks_w as usize - 1),
            row_style.patch(self.theme.style(role)),
        );
    }

    /// The name cell: guides, fold glyph, name.
    fn name(&self, node: u32, y: u16, row_style: Style, buf: &mut Buffer) {
        let (app, theme, g, area) = (self.app, self.theme, self.g, self.area);
        let tree = &app.tree;
        let pos = tree.po.pos[node as usize] as usize;
        let depth = tree.po.depth[pos] as usize;
        let avail = area.right().saturating_sub(self.name_x) as usize;
        if avail == 0 {
            return;
        }
        let max_indent = avail / 2;
        let indent = (depth * 2).min(max_indent);
        let mut nx = self.name_x;
        if indent > 0 {
            let guides: String = (0..indent / 2)
                .map(|_| if g.ascii { "| " } else { "│ " })
                .collect();
            buf.set_stringn(nx, y, &guides, indent, row_style.patch(self.guide));
            nx += indent as u16;
        }
        let has_kids = tree.po.has_children(pos as u32);
        let fold = if !has_kids {
            g.leaf
        } else if tree.is_open(node) {
            g.open
        } else {
            g.closed
        };
        let left = area.right().saturating_sub(nx) as usize;
        buf.set_stringn(nx, y, fold, left, row_style.patch(self.guide));
        nx += 2;
        let left = area.right().saturating_sub(nx) as usize;
        let name = app.profile.cct.name(node);
        let mut name_style = row_style;
        // Ancestors kept only as context for a filter's matches are dimmed.
        if app.matched.as_ref().is_some_and(|m| !m[node as usize]) {
            name_style = name_style.patch(theme.style("ui.dim"));
        }
        // Call paths of the kernel selected in the kernel panel.
        if app
            .kernel_marks
            .as_ref()
            .is_some_and(|m| m.get(node as usize).copied().unwrap_or(false))
        {
            name_style = name_style.patch(theme.style("ui.match"));
        }
        if name.starts_with("<unattributed>") {
            name_style = name_style.patch(theme.style("ui.unattributed"));
        }
        let matches: Option<&Vec<u32>> = app.search.as_ref().map(|s| &*s.matches);
        if matches.is_some_and(|m| m.binary_search(&node).is_ok()) {
            name_style = name_style.patch(theme.style("ui.match"));
        }
        // Cut in the middle like `grove tree`: the start and the end of a name (its
        // namespace and its last words) tell rows apart, not the end alone.
        let shown = crate::present::distinct::cut_middle(name, left, g.ellipsis);
        buf.set_stringn(nx, y, shown, left, name_style);
    }
}

impl super::View for crate::app::panels::tree::Tree {
    fn draw(&self, app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
        render(app, theme, g, area, buf)
    }

    fn details(&self) -> super::Details {
        super::Details::Node
    }

    fn legend(&self) -> super::Legend {
        super::Legend::Heat
    }
}
