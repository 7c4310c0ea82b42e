//! The loading screen, drawn while a reader runs on its thread: the file, a bar of the
//! bytes read, the events so far, the rate and an estimate of the time left. A pure
//! function of what the load reports (`readers::progress::Snapshot`) and the theme.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::theme::Theme;
use crate::readers::progress::Snapshot;

/// What the loading screen shows.
pub struct Loading<'a> {
    pub file: &'a str,
    pub snap: Snapshot,
    /// Seconds since the load started.
    pub elapsed: f64,
}

pub fn render(l: &Loading, theme: &Theme, area: Rect, buf: &mut Buffer) {
    buf.set_style(area, theme.style("ui.text"));
    if area.height == 0 || area.width == 0 {
        return;
    }
    let w = area.width as usize;
    let mut y = area.y + area.height.saturating_sub(5) / 2;
    let mut line = |text: &str, role: &str| {
        if y < area.bottom() {
            buf.set_stringn(area.x + 1, y, text, w.saturating_sub(2), theme.style(role));
        }
        y += 1;
    };
    line(&format!("grove: loading {}", l.file), "ui.title");
    line(
        &bar(l.snap.fraction(), l.snap.total > 0, w.saturating_sub(2)),
        "ui.text",
    );
    line(&l.snap.line(), "ui.text");
    line(&format!("{:.1} s", l.elapsed), "ui.dim");
    line("q cancels", "ui.dim");
}

/// `[#######-------------]`, as wide as `width`; all dashes when the size is unknown.
fn bar(fraction: f64, known: bool, width: usize) -> String {
    let inner = width.saturating_sub(2).min(60);
    let done = if known {
        (fraction * inner as f64).round() as usize
    } else {
        0
    };
    format!(
        "[{}{}]",
        "#".repeat(done),
        "-".repeat(inner - done.min(inner))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_screen_names_the_file_and_the_bytes() {
        let theme = Theme::builtin("mono", super::super::theme::ColorDepth::Never).unwrap();
        let snap = Snapshot {
            bytes: 50_000_000,
            total: 100_000_000,
            events: 20_000,
            rate: Some(25e6),
            eta: Some(2.0),
        };
        let l = Loading {
            file: "big.json",
            snap,
            elapsed: 2.0,
        };
        let area = Rect::new(0, 0, 40, 10);
        let mut buf = Buffer::empty(area);
        render(&l, &theme, area, &mut buf);
        let text: String = (0..10)
            .map(|y| {
                (0..40)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        assert!(text.contains("grove: loading big.json"), "{text}");
        assert!(
            text.contains("[##################------------------]"),
            "{text}"
        );
        assert!(text.contains("50.0 MB of 100.0 MB"), "{text}");
        assert!(text.contains("q cancels"), "{text}");
    }
}
