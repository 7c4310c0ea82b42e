//! The layer rule of docs/architecture.md: the lower layers (the model, the readers,
//! and the analyses and writers over them) never import the layers above them (`app`,
//! `ui`). A scan of `src/` rather than a compiler feature, so it runs with the tests.

use std::path::{Path, PathBuf};

/// Modules that must not import upward.
const LOWER: &[&str] = &[
    "model",
    "readers",
    "gpu",
    "export",
    "transform",
    "query",
    "json",
    "present",
    "config",
    "summary",
    "load",
    "ensemble",
    "diff",
];

/// The layers above them.
const UPPER: &[&str] = &["app", "ui"];

/// Upward imports that existed when this test was written, as (file, module) pairs. They
/// are being removed; the list may only shrink. An entry that no longer occurs fails the
/// test too, so the list cannot go stale.
const KNOWN: &[(&str, &str)] = &[];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src/`: `src/export/text.rs` -> [export, text];
/// `src/gpu/mod.rs` -> [gpu].
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .skip(1)
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// Drops `//` comments (doc comments included) so prose cannot trip the scan.
fn strip_comments(src: &str) -> String {
    src.lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string literal is rare in import lines; good enough.
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first segments of every path in a `{...}` group starting at `s[0] == '{'`.
fn group_heads(s: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect = true;
    for (i, c) in s.char_indices() {
        match c {
            '{' => {
                depth += 1;
                expect = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => expect = true,
            c if expect && depth == 1 && (c.is_alphanumeric() || c == '_') => {
                heads.push(ident_at(&s[i..]).to_string());
                expect = false;
            }
            _ => {}
        }
    }
    heads
}

/// The crate's top-level modules this source refers to, through `crate::` or `super::`.
fn top_modules(src: &str, here: &[String]) -> Vec<String> {
    let src = strip_comments(src);
    let mut found = Vec::new();
    for (i, _) in src.match_indices("crate::") {
        let prev = src[..i].chars().next_back();
        if prev.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `$crate::` or an identifier ending in "crate"
        }
        let rest = &src[i + "crate::".len()..];
        if rest.starts_with('{') {
            found.extend(group_heads(rest));
        } else {
            found.push(ident_at(rest).to_string());
        }
    }
    // `super::super::ui::x` from src/export/text.rs climbs to the crate root.
    for (i, _) in src.match_indices("super::") {
        let prev = src[..i].chars().next_back();
        if prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // counted with the first `super::` of its chain
        }
        let mut rest = &src[i..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r;
        }
        if ups == here.len() {
            if rest.starts_with('{') {
                found.extend(group_heads(rest));
            } else {
                found.push(ident_at(rest).to_string());
            }
        }
    }
    found
}

/// Upward imports as (file, module), and how many files were scanned.
fn violations() -> (Vec<(String, String)>, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for m in LOWER {
        let file = root.join("src").join(format!("{m}.rs"));
        if file.exists() {
            files.push(file);
        }
        rust_files(&root.join("src").join(m), &mut files);
    }
    let scanned = files.len();
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root).unwrap().to_path_buf();
        let src = std::fs::read_to_string(&f).unwrap();
        let mut ups: Vec<String> = top_modules(&src, &module_path(&rel))
            .into_iter()
            .filter(|m| UPPER.contains(&m.as_str()))
            .collect();
        ups.sort();
        ups.dedup();
        for m in ups {
            out.push((rel.to_string_lossy().replace('\\', "/"), m));
        }
    }
    out.sort();
    (out, scanned)
}

#[test]
fn lower_layers_do_not_import_app_or_ui() {
    let (found, scanned) = violations();
    assert!(scanned > 20, "only {scanned} files under src/ scanned");
    let new: Vec<_> = found
        .iter()
        .filter(|(f, m)| !KNOWN.contains(&(f.as_str(), m.as_str())))
        .collect();
    assert!(
        new.is_empty(),
        "imports running up the layers (see docs/architecture.md): {new:?}"
    );
    let stale: Vec<_> = KNOWN
        .iter()
        .filter(|(f, m)| !found.iter().any(|(g, n)| g == f && n == m))
        .collect();
    assert!(
        stale.is_empty(),
        "these upward imports are gone: remove them from KNOWN in tests/layers.rs: {stale:?}"
    );
}

#[test]
fn the_scan_sees_every_form_of_import() {
    let here = vec!["export".to_string(), "text".to_string()];
    let src = "use crate::ui::glyphs::Glyphs;\n\
               use crate::{model::{Cct, Frame}, app::paths};\n\
               fn f() { super::super::ui::heat::x(); super::csv::y(); }\n\
               // crate::ui in a comment does not count\n";
    let mut got = top_modules(src, &here);
    got.sort();
    assert_eq!(got, ["app", "model", "ui", "ui"]);
}
