//! Benchmarks that need real sizes (run in release):
//!   grove-bench load FILE...      load time, throughput, peak RSS, tree size
//!   grove-bench frame FILE        TUI frame time at 200x50, collapsed and expanded
//! Numbers go to stdout as `name value unit` lines; docs/performance.md records them.

use std::time::Instant;

use grove::app::command::Command;
use grove::app::keymap::Keymap;
use grove::app::App;
use grove::readers::load_path;
use grove::ui::glyphs::Glyphs;
use grove::ui::layout::tree_rows;
use grove::ui::theme::{ColorDepth, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn uncompressed_size(path: &std::path::Path) -> u64 {
    use std::io::Read;
    let f = std::fs::File::open(path).unwrap();
    let mut head = [0u8; 2];
    let mut f2 = std::fs::File::open(path).unwrap();
    let _ = f2.read_exact(&mut head);
    if head == [0x1f, 0x8b] {
        let mut d = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(f));
        std::io::copy(&mut d, &mut std::io::sink()).unwrap_or(0)
    } else {
        f.metadata().map(|m| m.len()).unwrap_or(0)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(|s| s.as_str()) {
        Some("load") => {
            for f in &args[1..] {
                let path = std::path::Path::new(f);
                let bytes = uncompressed_size(path);
                let t = Instant::now();
                let p = load_path(path).unwrap_or_else(|e| panic!("{e}"));
                let secs = t.elapsed().as_secs_f64();
                let events = p.events.as_ref().map(|e| e.len()).unwrap_or(0);
                println!("file {f}");
                println!("input_bytes {bytes} B");
                println!("events {events}");
                println!("nodes {}", p.cct.len());
                println!("load_time {secs:.3} s");
                println!("throughput {:.1} MB/s", bytes as f64 / 1e6 / secs);
                println!("peak_rss {:.1} MiB", peak_rss_mib());
            }
        }
        Some("frame") => {
            let path = std::path::Path::new(&args[1]);
            let p = load_path(path).unwrap_or_else(|e| panic!("{e}"));
            let mut app = App::new(p, Keymap::default_map());
            let (w, h) = (200u16, 50u16);
            app.page = tree_rows(w, h);
            let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
            let glyphs = Glyphs::pick(false);
            let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
            let mut time_frames = |app: &App, label: &str| {
                let n = 200;
                let t = Instant::now();
                for _ in 0..n {
                    term.draw(|f| grove::ui::draw(f, app, &theme, &glyphs))
                        .unwrap();
                }
                println!(
                    "frame_{label} {:.3} ms",
                    t.elapsed().as_secs_f64() * 1e3 / n as f64
                );
            };
            time_frames(&app, "collapsed");
            for r in app.profile.cct.root_ids() {
                let path = app.path_of(r);
                let t = Instant::now();
                app.update(Command::ExpandAll(Some(path))).unwrap();
                println!("expand_all_root {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
            }
            println!("visible_rows {}", app.tree.visible.len());
            app.update(Command::Bottom).unwrap();
            time_frames(&app, "expanded_bottom");
            let t = Instant::now();
            app.update(Command::parse("sort next").unwrap()).unwrap();
            println!("resort {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        }
        _ => {
            eprintln!("usage: grove-bench load FILE... | grove-bench frame FILE");
            std::process::exit(2);
        }
    }
}
