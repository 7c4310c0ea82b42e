//! The readers sit below loading and ensembles: no reader's code may name a module
//! above it (test code may, to load a whole input).

use std::path::Path;

const ABOVE: [&str; 7] = [
    "crate::load",
    "crate::ensemble",
    "crate::app",
    "crate::ui",
    "crate::tui",
    "crate::session",
    "crate::export",
];

fn scan(dir: &Path, bad: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            scan(&p, bad);
            continue;
        }
        if p.extension().is_none_or(|x| x != "rs") || p.file_name().unwrap() == "tests.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        // Code before the file's test module.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (i, line) in code.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            if let Some(m) = ABOVE.iter().find(|m| line.contains(*m)) {
                bad.push(format!("{}:{}: {m}", p.display(), i + 1));
            }
        }
    }
}

#[test]
fn readers_import_nothing_above_them() {
    let mut bad = Vec::new();
    scan(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/readers"),
        &mut bad,
    );
    assert!(bad.is_empty(), "readers reach up:\n{}", bad.join("\n"));
}

#[test]
fn ensembles_do_not_load() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ensemble.rs"))
            .unwrap();
    assert!(
        !text.contains("crate::readers"),
        "src/ensemble.rs uses the readers"
    );
}
