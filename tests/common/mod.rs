//! Helpers shared by the integration tests: running the binary, finding corpus files,
//! and a small deterministic random generator (failures reproduce).
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

/// A file of ../shared/corpus, when the corpus is there.
pub fn corpus(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(rel);
    p.exists().then_some(p)
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
