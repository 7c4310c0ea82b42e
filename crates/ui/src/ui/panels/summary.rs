//! The summary panel's view.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::put;
use crate::app::panels::summary::LineStyle;
use crate::app::App;
use crate::gpu::charts::SummaryCharts;
use crate::present::format::duration_ns;
use crate::present::glyphs::Glyphs;
use crate::ui::charts::{self, Line, Look, Paint, Right};
use crate::ui::theme::Theme;

/// The summary panel: HTA's breakdowns for this trace as charts or tables, or the
/// metadata. The data is derived once (`App::summary_charts`, `App::summary_lines`); a
/// frame lays out the charts' few rows and draws those on screen.
pub fn summary(app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
    if let Some(c) = app.summary_charts() {
        let look = Look {
            theme,
            g,
            width: area.width as usize,
        };
        let lines = chart_lines(&look, &c);
        // Scrolled past the end, the last screenful stays.
        let skip = app
            .summary
            .scroll
            .min(lines.len().saturating_sub(area.height as usize));
        for (i, line) in lines
            .iter()
            .skip(skip)
            .take(area.height as usize)
            .enumerate()
        {
            let mut x = area.x;
            for (text, st) in line {
                x = put(buf, x, area.y + i as u16, text, area.right(), *st);
            }
        }
        return;
    }
    let lines = app.summary_lines();
    for (i, (l, kind)) in lines
        .iter()
        .skip(app.summary.scroll)
        .take(area.height as usize)
        .enumerate()
    {
        let st = match kind {
            LineStyle::Title => theme.style("ui.title"),
            LineStyle::Header => theme.style("ui.column.header"),
            LineStyle::Text => theme.style("ui.text"),
            LineStyle::Dim => theme.style("ui.dim"),
        };
        // Scrolled sideways: the columns to the right of the first come into view
        // (titles stay).
        let skip = if *kind == LineStyle::Title {
            0
        } else {
            app.summary.hscroll
        };
        let l: String = l.chars().skip(skip).collect();
        put(buf, area.x, area.y + i as u16, &l, area.right(), st);
    }
}

impl super::View for crate::app::panels::summary::Summary {
    fn draw(&self, app: &App, theme: &Theme, g: &Glyphs, area: Rect, buf: &mut Buffer) {
        summary(app, theme, g, area, buf)
    }

    /// The tables need the width.
    fn details(&self) -> super::Details {
        super::Details::Hidden
    }

    fn legend(&self) -> super::Legend {
        super::Legend::Heat
    }

    /// On a trace's breakdowns the tree's heat scale says nothing: the row says how to
    /// switch between charts and tables instead (each chart has its own legend).
    fn draw_legend(&self, app: &App, theme: &Theme, _: &Glyphs, r: Rect, buf: &mut Buffer) -> bool {
        if app.gpu_activity().is_none() || app.profile.events.is_none() {
            return false;
        }
        let text = if app.summary.show_tables {
            " t: the charts   j/k: scroll   { }: scroll sideways"
        } else {
            " t: HTA's tables   j/k, PgDn/PgUp: scroll"
        };
        put(buf, r.x, r.y, text, r.right(), theme.style("ui.dim"));
        true
    }
}

/// Every chart of the panel, in order, as lines for a screen `look.width` wide.
fn chart_lines(look: &Look, c: &SummaryCharts) -> Vec<Line> {
    let mut out: Vec<Line> = vec![
        vec![(
            "HTA's breakdowns as charts (t: the tables, as `grove summary` prints them)".into(),
            look.theme.style("ui.column.header"),
        )],
        Vec::new(),
    ];
    let mut section = |title: &str, body: Vec<Line>| {
        out.push(look.title(title));
        out.extend(body);
        out.push(Vec::new());
    };
    section(
        "temporal: GPU time per stream, from its first kernel to its last",
        charts::stacked(
            look,
            &c.temporal,
            &Paint {
                roles: &["heat.5", "heat.3", "ui.dim"],
                fills: &[0, 2, 3],
            },
            Right::Shares,
        ),
    );
    section(
        "idle: idle time per stream, by cause",
        charts::stacked(
            look,
            &c.idle,
            &Paint {
                roles: &["cat.3", "cat.6", "ui.dim"],
                fills: &[0, 2, 3],
            },
            Right::Shares,
        ),
    );
    section(
        "kernel categories: device time per category (all GPU activity)",
        charts::bars(look, &c.categories, &c.category_colors),
    );
    let ops_title = format!(
        "operators: device time of the top {} operators, by kernel category",
        c.ops.bars.len()
    );
    let ops = Paint {
        roles: &["ui.dim"; 8],
        fills: &[],
    };
    section(
        &ops_title,
        charts::stacked(look, &c.ops, &ops, Right::Largest),
    );
    let overlap = match c.overlap {
        Some((both, only)) => {
            let chart = crate::gpu::charts::Stacked {
                series: ["overlapped by computation", "not overlapped"]
                    .iter()
                    .map(|n| crate::gpu::charts::Series {
                        name: n.to_string(),
                        color: None,
                    })
                    .collect(),
                bars: vec![crate::gpu::charts::Stack {
                    label: "communication".into(),
                    parts: vec![both, only],
                }],
            };
            let paint = Paint {
                roles: &["cat.2", "cat.4"],
                fills: &[0, 3],
            };
            charts::stacked(look, &chart, &paint, Right::Shares)
        }
        None => vec![look.note("  no communication kernels: nothing to overlap")],
    };
    section(
        "overlap: communication time overlapped by computation",
        overlap,
    );
    for (name, h, role) in [
        (
            "launch delay, kernel start after its launch call ends",
            &c.launch_delay,
            "heat.4",
        ),
        ("kernel duration", &c.kernel_duration, "cat.1"),
    ] {
        // The figures first: a narrow screen cuts the end of the title.
        let (what, why) = name.split_once(", ").unwrap_or((name, ""));
        let title = format!(
            "{what} (n = {}, median {}, max {}){}{why}",
            crate::present::readable::thousands(h.n as i128),
            duration_ns(h.median_ns as f64, look.g.micro),
            duration_ns(h.max_ns as f64, look.g.micro),
            if why.is_empty() { "" } else { ": " },
        );
        let body = if h.n == 0 {
            vec![look.note("  none in this trace")]
        } else {
            charts::histogram(look, h, role)
        };
        section(&title, body);
    }
    out
}
