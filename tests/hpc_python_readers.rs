//! cProfile/pstats, pyinstrument, TAU, gprof2dot DOT, timemory and Thicket/Hatchet
//! `to_json`: every corpus file of those formats loads with
//! Hatchet's node count and per-metric totals (testdata/hpc_python/goldens.json, written
//! by scripts/hpc_python_goldens.py; testdata/thicket/goldens.json by
//! scripts/thicket_goldens.py), and bad input gives one line, never a panic.

mod common;

use std::path::{Path, PathBuf};

use grove::load::load_path;
use grove::model::Format;
use grove::readers::load_all;

fn goldens() -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hpc_python/goldens.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn corpus_files_match_hatchet() {
    let Some(root) = common::corpus_dir() else {
        skip!()
    };
    let g = goldens();
    let files = g.as_object().unwrap();
    assert_eq!(files.len(), 6);
    for (rel, want) in files {
        let path = root.join(rel);
        let profiles = load_all(&path).unwrap_or_else(|e| panic!("{e}"));
        let format = match want["format"].as_str().unwrap() {
            "cprofile" => Format::CProfile,
            "pyinstrument" => Format::Pyinstrument,
            "gprof2dot" => Format::Gprof2Dot,
            "timemory" => Format::Timemory,
            _ => Format::Tau,
        };
        assert_eq!(
            profiles.len() as u64,
            want["profiles"].as_u64().unwrap(),
            "{rel}"
        );
        for p in &profiles {
            assert_eq!(p.source.format, format, "{rel}");
            assert!(p.cct.check(), "{rel}");
        }
        // Hatchet keeps a call graph as its graph: one node per function, which is
        // grove's call graph (the tree is unfolded from it by call path).
        let merged = load_path(&path).unwrap();
        let graph = merged.call_graph.as_ref();
        assert_eq!(
            graph.map_or(merged.cct.len(), |g| g.len()) as u64,
            want["nodes"].as_u64().unwrap(),
            "{rel}: node count"
        );
        for (m, total) in want["totals"].as_object().unwrap() {
            let got: f64 = profiles
                .iter()
                .map(|p| match &p.call_graph {
                    // A function's inclusive figure, not the tree's estimate.
                    Some(g) if m == "time (inc)" => {
                        (0..g.len()).map(|f| g.function(f).inclusive[0]).sum()
                    }
                    _ => {
                        let v = p
                            .metrics
                            .values(m)
                            .unwrap_or_else(|| panic!("{rel}: no {m}"));
                        v.iter().filter(|x| x.is_finite()).sum::<f64>()
                    }
                })
                .sum();
            let total = total.as_f64().unwrap();
            assert!(
                close(got, total),
                "{rel}: {m}: grove {got}, Hatchet {total}"
            );
        }
    }
}

#[test]
fn cprofile_cycles_are_cut_where_they_close() {
    let Some(root) = common::corpus_dir() else {
        skip!()
    };
    let p = &load_all(
        &root.join("hatchet/hatchet/tests/data/cprofile-hatchet-pstats/cprofile-cycle.pstats"),
    )
    .unwrap()[0];
    // e -> f -> g -> recursive and e -> f -> recursive: `recursive` calls itself and is
    // called by f and g; the graph keeps all three callers, the tree never puts
    // `recursive` under itself.
    let g = p.call_graph.as_ref().unwrap();
    let rec = g.find("recursive").unwrap();
    let mut callers: Vec<&str> = g
        .callers(rec)
        .map(|(c, _)| &*g.function(c).frame.name)
        .collect();
    callers.sort();
    assert_eq!(callers, ["f", "g", "recursive"]);
    let mut paths = Vec::new();
    for n in 0..p.cct.len() as u32 {
        if p.cct.name(n) == "recursive" {
            assert!(p.cct.children(n).all(|c| p.cct.name(c) != "recursive"));
            assert_eq!(p.cct.frame(n).attr("line"), Some("27"));
            let path: Vec<&str> = p.cct.path(n).iter().map(|&x| p.cct.name(x)).collect();
            paths.push(path.join("/"));
        }
    }
    paths.sort();
    assert_eq!(paths, ["e/f/g/recursive", "e/f/recursive"]);
}

fn tmp(name: &str) -> PathBuf {
    common::scratch("hpcpy").join(name)
}

/// Loads bytes written under `name`: an error must be one line; success is allowed
/// (a cut that leaves a valid prefix), a panic is not.
fn one_line_or_ok(name: &str, bytes: &[u8]) -> Option<String> {
    let p = tmp(name);
    std::fs::write(&p, bytes).unwrap();
    let r = load_all(&p);
    std::fs::remove_file(&p).ok();
    match r {
        Ok(_) => None,
        Err(e) => {
            let e = e.to_string();
            assert!(!e.contains('\n'), "{name}: {e}");
            Some(e)
        }
    }
}

#[test]
fn truncated_corrupted_and_empty_inputs_give_one_line() {
    let Some(root) = common::corpus_dir() else {
        skip!()
    };
    let data = root.join("hatchet/hatchet/tests/data");
    let cases = [
        ("a.pstats", "cprofile-hatchet-pstats/cprofile-cycle.pstats"),
        (
            "b.pstats",
            "cprofile-hatchet-pstats/cprofile-cycle-py2.pstats",
        ),
        (
            "c.json",
            "pyinstrument-hatchet-json/pyinstrument-hatchet-profile.json",
        ),
        ("profile.0.0.0", "tau-cpi-mpi/profile.0.0.0"),
        ("d.dot", "gprof2dot-cpi/callgrind.dot.64042.0.1"),
        ("w.tree.json", "timemory/wall.tree.json"),
        ("g.json", "json/hatchet-graph-literal.json"),
    ];
    for (name, rel) in cases {
        let bytes = std::fs::read(data.join(rel)).unwrap();
        // Every cut of the small files, every 97th of the bigger one.
        let step = if bytes.len() > 5000 { 97 } else { 1 };
        for cut in (1..bytes.len()).step_by(step) {
            one_line_or_ok(name, &bytes[..cut]);
        }
        let e = one_line_or_ok(name, &bytes[..bytes.len() / 2]);
        assert!(e.is_some(), "{name}: half a file loaded");
        // Corrupted: bytes overwritten at several places.
        for at in [2usize, 7, 40, bytes.len() / 3, bytes.len() / 2] {
            let mut b = bytes.clone();
            for x in b.iter_mut().skip(at).take(5) {
                *x = 0xC3;
            }
            one_line_or_ok(name, &b);
        }
        assert_eq!(
            one_line_or_ok(name, b"").unwrap().rsplit(": ").next(),
            Some("the file is empty")
        );
    }
    // A TAU directory with one bad rank names the file.
    let dir = tmp("tau-bad");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("profile.0.0.0"), "2 templated_functions\n# Name\n").unwrap();
    let e = load_all(&dir).unwrap_err().to_string();
    assert!(
        e.contains("profile.0.0.0: the file ends after 0 of its 2 functions"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn other_formats_are_not_claimed() {
    // JSON that is not pyinstrument, a marshal int, a file named like TAU that is not.
    let e = one_line_or_ok("x.json", b"{\"root_frame\": 3}");
    assert!(e.is_some());
    let e = one_line_or_ok("i.pstats", b"i\x01\x00\x00\x00").unwrap();
    assert!(e.contains("unrecognised format"), "{e}");
    let e = one_line_or_ok("profile.1.0.0", b"hello world\n").unwrap();
    assert!(e.contains("unrecognised format"), "{e}");
}

#[test]
fn thicket_and_graphframe_json_match_thicket_and_hatchet() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let g: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(here.join("testdata/thicket/goldens.json")).unwrap(),
    )
    .unwrap();
    for (key, want) in g.as_object().unwrap() {
        let path = match key.strip_prefix("corpus:") {
            Some(rel) => match common::corpus_dir() {
                Some(c) => c.join(rel),
                None => continue,
            },
            None => here.join(key),
        };
        let profiles = load_all(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            profiles.len() as u64,
            want["profiles"].as_u64().unwrap(),
            "{key}"
        );
        assert!(profiles
            .iter()
            .all(|p| p.source.format == Format::ThicketJson));
        let merged = load_path(&path).unwrap();
        assert_eq!(
            merged.cct.len() as u64,
            want["nodes"].as_u64().unwrap(),
            "{key}"
        );
        for (m, total) in want["totals"].as_object().unwrap() {
            let got: f64 = profiles
                .iter()
                .map(|p| {
                    let v = p
                        .metrics
                        .values(m)
                        .unwrap_or_else(|| panic!("{key}: no {m}"));
                    v.iter().filter(|x| x.is_finite()).sum::<f64>()
                })
                .sum();
            let total = total.as_f64().unwrap();
            assert!(
                close(got, total),
                "{key}: {m}: grove {got}, Thicket {total}"
            );
        }
        if let Some(sizes) = want.get("mpi.world.size") {
            for (label, size) in sizes.as_object().unwrap() {
                let p = profiles
                    .iter()
                    .find(|p| &p.source.label == label)
                    .unwrap_or_else(|| panic!("{key}: no profile labelled {label}"));
                assert_eq!(p.meta_value("mpi.world.size"), Some(&*size.to_string()));
            }
            // The ensemble's columns carry the labels.
            assert!(merged.metrics.has("Avg time/rank@27_cores"), "{key}");
        }
    }
}
