//! Helpers shared by the integration tests: running the binary, finding corpus files
//! and reporting a check skipped without them (`skip!`), drawing a screen to text, and a
//! small deterministic random generator (failures reproduce).
#![allow(dead_code)] // each test crate uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs grove with `args` and extra environment; (exit code, stdout, stderr).
pub fn grove_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_grove"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs grove with `args` in the test's own environment.
pub fn grove(args: &[&str]) -> (i32, String, String) {
    grove_env(args, &[])
}

/// This test process's scratch directory `$TMPDIR/grove-NAME-PID`, created. The test
/// harness has no hook to remove it at exit, so the first call in a process removes
/// what earlier runs left instead: every `grove-*` entry of the temporary directory
/// that names a process id no longer running (`/proc/PID` gone) and was last changed
/// over ten minutes ago. Runs no longer pile up there (they had reached gigabytes).
pub fn scratch(name: &str) -> PathBuf {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(sweep_stale_scratch);
    let d = std::env::temp_dir().join(format!("grove-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sweep_stale_scratch() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    let proc_fs = Path::new("/proc/self").exists();
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix("grove-") else {
            continue;
        };
        let pids: Vec<&str> = rest
            .split('-')
            .filter(|s| s.len() >= 2 && s.bytes().all(|b| b.is_ascii_digit()))
            .collect();
        let dead = proc_fs
            && !pids.is_empty()
            && pids
                .iter()
                .all(|pid| !Path::new("/proc").join(pid).exists());
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age.as_secs() > 600);
        if dead && old {
            let p = e.path();
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}

/// A file of ../shared/corpus, when the corpus is there.
pub fn corpus(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(rel);
    p.exists().then_some(p)
}

/// ../shared/corpus (with its MANIFEST.md), when it is there.
pub fn corpus_dir() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    p.join("MANIFEST.md").is_file().then_some(p)
}

static SKIPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Says on stderr, past the test harness's capture (so a green run shows it), that
/// `test` did not run: `SKIPPED: corpus::chrome_totals: ../shared/corpus missing (1 in
/// this test binary)`. Use it through `skip!()`.
pub fn skipped(test: &str) {
    let why = if corpus_dir().is_none() {
        "../shared/corpus missing"
    } else {
        "a file of ../shared/corpus missing"
    };
    skipped_because(test, why);
}

/// Says on stderr, past the test harness's capture, that `test` (or the part of it
/// `why` names) did not run, and why: a tool that is not installed, a sandbox that
/// cannot mount. Use it through `skip!("why")`.
pub fn skipped_because(test: &str, why: &str) {
    use std::io::Write;
    let n = SKIPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {test}: {why} ({n} in this test binary)"
    );
}

/// Ends a test that needs ../shared/corpus when it is not there, saying so on stderr
/// (`common::skipped`): `let Some(dir) = common::corpus_dir() else { skip!() };`.
/// `skip!("perf is not on PATH")` ends one that needs something else, saying why.
#[macro_export]
macro_rules! skip {
    () => {{
        fn here() {}
        let name = std::any::type_name_of_val(&here);
        $crate::common::skipped(name.strip_suffix("::here").unwrap_or(name));
        return;
    }};
    ($why:expr) => {{
        fn here() {}
        let name = std::any::type_name_of_val(&here);
        $crate::common::skipped_because(name.strip_suffix("::here").unwrap_or(name), $why);
        return;
    }};
}

/// Draws `app` as the TUI does on a fresh terminal of `size` (columns, rows); the frame.
pub fn draw(
    app: &grove::app::App,
    size: (u16, u16),
    theme: &grove::ui::theme::Theme,
    glyphs: &grove::ui::glyphs::Glyphs,
) -> ratatui::buffer::Buffer {
    let backend = ratatui::backend::TestBackend::new(size.0, size.1);
    draw_on(
        &mut ratatui::Terminal::new(backend).unwrap(),
        app,
        theme,
        glyphs,
    )
}

/// Draws `app` on a kept terminal (a warm screen: drawn over the previous frame).
pub fn draw_on(
    term: &mut ratatui::Terminal<ratatui::backend::TestBackend>,
    app: &grove::app::App,
    theme: &grove::ui::theme::Theme,
    glyphs: &grove::ui::glyphs::Glyphs,
) -> ratatui::buffer::Buffer {
    term.draw(|f| grove::ui::draw(f, app, theme, glyphs))
        .unwrap();
    term.backend().buffer().clone()
}

/// A frame's text: one line per row, trimmed at the right, each ended by a newline.
pub fn screen_text(buf: &ratatui::buffer::Buffer) -> String {
    let mut text = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// xorshift64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// (path, format wording) of every row of the Files table of ../shared/corpus/MANIFEST.md:
/// a file, or a directory that is one input.
pub fn manifest_rows(dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.md")).unwrap();
    let files = text
        .split_once("## Files")
        .expect("MANIFEST has a Files section")
        .1;
    files
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            (cols[1].trim_matches('`').to_string(), cols[2].to_string())
        })
        .collect()
}

/// An explorer on testdata files: one file, or several (comma-separated) opened as an
/// ensemble; a page of 20 rows.
pub fn open_app(files: &str) -> grove::app::App {
    let paths: Vec<PathBuf> = files
        .split(',')
        .map(|f| Path::new(env!("CARGO_MANIFEST_DIR")).join(f))
        .collect();
    let p = if paths.len() > 1 {
        grove::load::load_ensemble(&paths, &Default::default()).unwrap()
    } else {
        grove::load::load_path(&paths[0]).unwrap()
    };
    let mut app = grove::app::App::new(p, grove::app::keymap::Keymap::default_map());
    app.page = 20;
    app
}

/// A file of this repository (testdata, scripts' outputs).
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A gzipped file of this repository, decompressed as text.
pub fn gunzip(rel: &str) -> String {
    use std::io::Read;
    let raw = std::fs::read(repo(rel)).unwrap();
    let mut s = String::new();
    flate2::read::GzDecoder::new(&raw[..])
        .read_to_string(&mut s)
        .unwrap();
    s
}
pub mod screen;
