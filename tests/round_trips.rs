//! Every format grove writes reopens in grove with the same tree, metrics and labels:
//! each input is written with `grove tree --format X` (and Parquet also with
//! `:export parquet FILE`), reopened, and the `grove tree --format csv` of both
//! compared row by row and column by column (values to 1e-9 relative: an ensemble's
//! statistics are recomputed on reopening). Column and sibling order may differ
//! (Thicket's rows and Hatchet's `from_literal` order their own way); what a format
//! cannot hold is listed per format below.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;
use common::{corpus, grove};

fn tmp(name: &str) -> PathBuf {
    common::scratch("roundtrip").join(name)
}

/// A CSV's fields (quoted fields with commas, doubled quotes and newlines).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    rows
}

/// path -> column -> value, from `grove tree FILE --format csv`.
type Table = BTreeMap<String, BTreeMap<String, String>>;

fn table(file: &Path) -> Table {
    let (code, out, err) = grove(&["tree", file.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(code, 0, "{}: {err}", file.display());
    let rows = parse_csv(&out);
    let head = &rows[0];
    let mut t = Table::new();
    for r in &rows[1..] {
        let cols = head[1..]
            .iter()
            .cloned()
            .zip(r[1..].iter().cloned())
            .collect();
        assert!(
            t.insert(r[0].clone(), cols).is_none(),
            "path {} twice",
            r[0]
        );
    }
    t
}

fn same_value(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        _ => a == b,
    }
}

/// Compares the two tables; `extra` says which columns only the reopened one may have.
fn assert_same(what: &str, a: &Table, b: &Table, extra: &dyn Fn(&str) -> bool) {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "{what}: the trees differ"
    );
    for (path, ra) in a {
        let rb = &b[path];
        for (col, va) in ra {
            // A tree unfolded from a call graph marks its rows `estimated`; reopened,
            // the tree is the file's (the reader keeps the note as a warning).
            if col == "estimated" {
                continue;
            }
            let vb = rb
                .get(col)
                .unwrap_or_else(|| panic!("{what}: column {col:?} is gone"));
            assert!(
                same_value(va, vb),
                "{what}: {path} {col}: {va:?} became {vb:?}"
            );
        }
        for col in rb.keys().filter(|c| !ra.contains_key(*c)) {
            assert!(extra(col), "{what}: column {col:?} appeared");
        }
    }
}

/// Writes `input` in `format`, reopens it, and compares.
fn round_trip(input: &Path, format: &str, extra: &dyn Fn(&str) -> bool) {
    let name = input.file_name().unwrap().to_string_lossy();
    let out = tmp(&format!("{name}.{format}"));
    // The bytes as written (Parquet is binary).
    let written = std::process::Command::new(env!("CARGO_BIN_EXE_grove"))
        .args(["tree", input.to_str().unwrap(), "--format", format])
        .output()
        .unwrap();
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    std::fs::write(&out, written.stdout).unwrap();
    assert_same(
        &format!("{name} as {format}"),
        &table(input),
        &table(&out),
        extra,
    );
}

fn none(_: &str) -> bool {
    false
}

/// Hatchet's `from_literal` computes an inclusive column for every exclusive metric
/// without one; grove reads a literal the same way.
fn hatchet_inclusive(a: &Table) -> impl Fn(&str) -> bool + '_ {
    move |col: &str| {
        let first = a.values().next().unwrap();
        let base = match col.rsplit_once('@') {
            Some((m, l)) => m.strip_suffix(" (inc)").map(|m| format!("{m}@{l}")),
            None => col.strip_suffix(" (inc)").map(String::from),
        };
        base.is_some_and(|b| first.contains_key(&b))
    }
}

fn inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = vec![
        root.join("testdata/demo.trace.json.gz"),
        root.join("testdata/callgrind/rec.callgrind.out"),
        root.join("testdata/thicket/mpi_scaling.thicket.json"),
    ];
    // An ensemble whose labels differ in their middle (`1/Base_CUDA-block_128`).
    v.extend(corpus("thicket/thicket/tests/data/rajaperf/lassen"));
    v
}

#[test]
fn grove_json_reopens() {
    for i in inputs() {
        round_trip(&i, "json", &none);
    }
}

#[test]
fn grove_csv_reopens() {
    for i in inputs() {
        round_trip(&i, "csv", &none);
    }
}

#[test]
fn grove_parquet_reopens() {
    for i in inputs() {
        round_trip(&i, "parquet", &none);
    }
}

#[test]
fn export_parquet_reopens() {
    // The issue's case: `:export parquet` in the TUI, here through --cmd.
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo.trace.json.gz");
    let out = tmp("exported.parquet");
    let cmd = format!("export parquet {}", out.display());
    let (code, _, err) = grove(&["tree", input.to_str().unwrap(), "--cmd", &cmd]);
    assert_eq!(code, 0, "{err}");
    assert_same("export parquet", &table(&input), &table(&out), &none);
    let (code, out, _) = grove(&["info", out.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("grove tree export"), "{out}");
}

#[test]
fn hatchet_literal_reopens() {
    for i in inputs() {
        let a = table(&i);
        round_trip(&i, "hatchet", &hatchet_inclusive(&a));
    }
}

#[test]
fn thicket_reopens_with_its_labels() {
    for i in inputs() {
        round_trip(&i, "thicket", &none);
    }
}

#[test]
fn folded_reopens_with_its_one_metric() {
    // Folded stacks hold one exclusive metric, as sample counts: the paths with a
    // positive value and the values come back (the metric is called `samples`).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let input = root.join("testdata/callgrind/rec.callgrind.out");
    let a = table(&input);
    let out = tmp("rec.folded");
    let (code, text, err) = grove(&["tree", input.to_str().unwrap(), "--format", "folded"]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(&out, text).unwrap();
    let b = table(&out);
    // callgrind's default metric, the one folded stacks carry.
    let metric = "Ir".to_string();
    for (path, row) in &a {
        let v: f64 = row[&metric].parse().unwrap_or(0.0);
        match b.get(path) {
            Some(rb) => assert!(same_value(&row[&metric], &rb["samples"]) || v == 0.0),
            None => assert!(v == 0.0, "{path} ({v}) is gone"),
        }
    }
    assert!(b.keys().all(|p| a.contains_key(p)));
}

#[test]
fn parquet_to_a_terminal_is_one_line() {
    // `script` gives grove a terminal for stdout.
    let Ok(out) = std::process::Command::new("script")
        .args(["-qec"])
        .arg(format!(
            "{} tree {} --format parquet",
            env!("CARGO_BIN_EXE_grove"),
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/demo.trace.json.gz")
                .display()
        ))
        .arg("/dev/null")
        .output()
    else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("PAR1"), "{text}");
    assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    assert!(text.contains("parquet is binary"), "{text}");
}

/// Hatchet's literal format as grove writes it (`export::hatchet`) reads back through
/// the Hatchet reader with the same tree and inclusive values.
#[test]
fn hatchet_literal_written_reads_back() {
    const SAMPLE: &str = r#"[
      {"frame": {"name": "main", "type": "function"}, "metrics": {"time": 1.0, "time (inc)": 6.0},
       "children": [
         {"frame": {"name": "a", "type": "function", "file": "a.c"}, "metrics": {"time (inc)": 5.0, "time": 5.0}}
       ]},
      {"name": "second", "frame": {"type": "loop"}, "metrics": {"time": 2, "time (inc)": 2}}
    ]"#;
    let read = grove::readers::hatchet::read::<&[u8]>;
    let l = read(SAMPLE.as_bytes()).unwrap();
    let mut buf = Vec::new();
    let kids = |n: u32| l.cct.children(n).collect();
    grove::export::hatchet::write(&mut buf, &l.cct, &l.metrics, &l.cct.root_ids(), &kids).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(v[0]["children"][0]["frame"]["file"], "a.c");
    let back = read(&buf[..]).unwrap();
    assert_eq!(back.cct.len(), 3);
    assert_eq!(back.metrics.values("time (inc)").unwrap(), &[6.0, 5.0, 2.0]);
}
