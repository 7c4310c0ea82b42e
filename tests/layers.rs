//! The layers: lower modules never import upper ones. `model`, `readers`, `gpu`,
//! `export`, `transform`, `query`, `json`, `present` and `config` sit below the app
//! state (`app`) and the views (`ui`); this test scans their sources and fails on an
//! import that runs upward.

use std::path::{Path, PathBuf};

const LOWER: [&str; 9] = [
    "model",
    "readers",
    "gpu",
    "export",
    "transform",
    "query",
    "json",
    "present",
    "config",
];
const UPPER: [&str; 4] = ["app", "ui", "tui", "session"];

fn sources(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for e in entries {
            sources(&e, out);
        }
    } else if p.is_file() && p.extension().is_some_and(|e| e == "rs") {
        out.push(p.to_path_buf());
    }
}

/// Upward references in one file's text: `crate::app`, `crate::ui::…`, and the
/// `grove::` spelling too.
fn upward(text: &str) -> Vec<String> {
    let mut hits = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for up in UPPER {
            for root in ["crate::", "grove::"] {
                let pat = format!("{root}{up}");
                let mut rest = code;
                while let Some(at) = rest.find(&pat) {
                    let after = &rest[at + pat.len()..];
                    // A whole module name: `crate::ui::x` or `crate::ui;`, not `crate::uix`.
                    if !after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                        hits.push(format!("line {}: {}", i + 1, line.trim()));
                    }
                    rest = after;
                }
            }
        }
    }
    hits
}

#[test]
fn no_import_runs_upward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    for low in LOWER {
        let mut files = Vec::new();
        sources(&src.join(low), &mut files);
        sources(&src.join(format!("{low}.rs")), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for h in upward(&text) {
                bad.push(format!("{}: {h}", f.strip_prefix(&src).unwrap().display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports that run upward:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scan_sees_an_upward_import() {
    assert_eq!(upward("use crate::ui::heat::HeatScale;").len(), 1);
    assert_eq!(upward("    crate::app::keymap::config_dir()").len(), 1);
    assert!(upward("use crate::model::Cct; // not crate::app").is_empty());
    assert!(upward("use crate::uikit;").is_empty());
}
