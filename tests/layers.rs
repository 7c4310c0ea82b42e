//! The layer rule of docs/architecture.md: a module never imports one of a layer above
//! it — the readers and analyses not the app, the app not its views (`ui`), nothing
//! below the shell its command line (`cli`). A scan of `src/` rather than a compiler
//! feature, so it runs with the tests. Test code (a file's `#[cfg(test)]` part, `tests.rs`
//! files) may reach up, to load a whole input.

use std::path::{Path, PathBuf};

/// Every top-level module of the library and its layer, lowest first
/// (docs/architecture.md, "Layers"): a module may import its own layer and those below.
const LAYERS: &[(&str, u8)] = &[
    ("config", 0),
    ("memory", 0),
    ("terminal_guard", 0),
    ("model", 1),
    ("readers", 1),
    ("json", 1),
    ("present", 2),
    ("gpu", 3),
    ("export", 3),
    ("transform", 3),
    ("query", 3),
    ("ensemble", 3),
    ("diff", 3),
    ("summary", 3),
    ("sql", 3),
    ("load", 4),
    ("app", 5),
    ("session", 5),
    ("ui", 6),
    ("tui", 6),
    ("cli", 7),
];

fn layer(m: &str) -> Option<u8> {
    LAYERS.iter().find(|l| l.0 == m).map(|l| l.1)
}

/// Upward imports that existed when this test was written, as (file, module) pairs. They
/// are being removed; the list may only shrink. An entry that no longer occurs fails the
/// test too, so the list cannot go stale.
const KNOWN: &[(&str, &str)] = &[
    // The Parquet reader silences polars' panics with the cache's `quietly`; it is to
    // move below the readers with the cache's next change (issue 25).
    ("src/readers/grove_export/parquet.rs", "summary"),
];

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

/// A file's code before its test module.
fn code_of(src: &str) -> &str {
    src.split("#[cfg(test)]").next().unwrap_or(src)
}

/// Upward imports as (file, module), and how many files were scanned.
fn violations() -> (Vec<(String, String)>, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for (m, _) in LAYERS {
        let file = root.join("src").join(format!("{m}.rs"));
        if file.exists() {
            files.push(file);
        }
        rust_files(&root.join("src").join(m), &mut files);
    }
    files.retain(|f| f.file_name().is_some_and(|n| n != "tests.rs"));
    let scanned = files.len();
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root).unwrap().to_path_buf();
        let here = module_path(&rel);
        let own = layer(&here[0]).unwrap();
        let src = std::fs::read_to_string(&f).unwrap();
        let mut ups: Vec<String> = top_modules(code_of(&src), &here)
            .into_iter()
            .filter(|m| layer(m).is_some_and(|l| l > own))
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
fn no_module_imports_a_layer_above_it() {
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

#[test]
fn every_module_of_the_library_has_a_layer() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let missing: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .filter(|m| layer(m).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "give these modules a layer in LAYERS (tests/layers.rs) and docs/architecture.md: {missing:?}"
    );
}

/// The leaks issue 25 named, as they were written: the scan must flag each.
#[test]
fn the_scan_flags_the_leaks_it_once_missed() {
    let cases = [
        (
            vec!["summary", "cache"],
            "grove: crate::cli::VERSION.to_string(),",
            "cli",
        ),
        (vec!["summary", "write"], "use crate::cli::VERSION;", "cli"),
        (vec!["app", "undo"], "use crate::ui::heat;", "ui"),
        (vec!["app", "undo"], "use super::super::ui::heat;", "ui"),
    ];
    for (here, src, up) in cases {
        let here: Vec<String> = here.into_iter().map(String::from).collect();
        let own = layer(&here[0]).unwrap();
        let found: Vec<String> = top_modules(src, &here)
            .into_iter()
            .filter(|m| layer(m).is_some_and(|l| l > own))
            .collect();
        assert_eq!(found, [up], "{src}");
    }
}
