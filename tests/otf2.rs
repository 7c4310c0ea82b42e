//! The OTF2 reader (issue 12) on the corpus's Score-P archives: totals agree with
//! otf2-print (scripts/otf2_check.py, when otf2-print is installed), detection, and
//! damaged archives (empty, truncated at every byte, corrupted, missing parts, unknown
//! records) end in a warning or one line naming the file, never a panic.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/pipit/pipit/tests/data")
        .join(name);
    p.join("traces.otf2").is_file().then_some(p)
}

/// A writable copy of an archive.
fn copy(src: &Path, tag: &str) -> PathBuf {
    let dst = std::env::temp_dir().join(format!("grove-otf2-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(dst.join("traces")).unwrap();
    for f in ["traces.otf2", "traces.def"] {
        std::fs::copy(src.join(f), dst.join(f)).unwrap();
    }
    for e in std::fs::read_dir(src.join("traces")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join("traces").join(e.file_name())).unwrap();
    }
    dst
}

#[test]
fn corpus_archives_load_as_one_tree_with_a_root_per_location() {
    for name in ["ping-pong-otf2", "ping-pong-otf2-papi"] {
        let Some(dir) = corpus(name) else { skip!() };
        for input in [dir.clone(), dir.join("traces.otf2")] {
            let p = grove::load::load_path(&input).unwrap();
            assert_eq!(p.source.format, grove::model::Format::Otf2);
            assert_eq!(p.cct.roots.len(), 2, "{name}");
            assert_eq!(p.cct.len(), 16, "{name}");
            assert!(p.warnings.is_empty(), "{name}: {:?}", p.warnings);
            let ev = p.events.as_ref().unwrap();
            assert_eq!(ev.len(), 42, "region instances");
            assert_eq!(p.meta_value("otf2.events.ENTER"), Some("42"));
            assert_eq!(p.meta_value("otf2.creator"), Some("Score-P 7.1"));
        }
    }
    let Some(dir) = corpus("ping-pong-otf2-papi") else {
        skip!()
    };
    let p = grove::load::load_path(&dir).unwrap();
    for m in [
        "PAPI_TOT_CYC",
        "PAPI_TOT_CYC (inc)",
        "PAPI_L2_TCM",
        "PAPI_BR_MSP",
    ] {
        assert!(p.metrics.has(m), "{m}");
    }
    // MPI_Init on rank 0: PAPI_TOT_CYC 122765 at its Enter, 87997941 at its Leave
    // (otf2-print).
    let init = (0..p.cct.len() as u32)
        .find(|&n| p.cct.name(n) == "MPI_Init")
        .unwrap();
    assert_eq!(p.metrics.get("PAPI_TOT_CYC (inc)", init), 87_875_176.0);
}

/// testdata/otf2-async: asynchronous metrics written with the OTF2 library's Python
/// bindings (scripts/otf2_async_gen.py).
fn async_archive() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/otf2-async")
}

#[test]
fn asynchronous_metrics_are_placed_on_the_call_path_open_at_them() {
    let p = grove::load::load_path(&async_archive()).unwrap();
    let node = |path: &[&str]| {
        let mut n = *p
            .cct
            .roots
            .iter()
            .find(|&&r| p.cct.name(r) == path[0])
            .unwrap();
        for name in &path[1..] {
            n = p.cct.children(n).find(|&c| p.cct.name(c) == *name).unwrap();
        }
        n
    };
    let get = |m: &str, path: &[&str]| p.metrics.get(m, node(path));
    // otf2-print: the last PAPI_TOT_INS value (ACCUMULATED_START: the count since the
    // measurement began) is 1486983 on rank 0 and 1529166 on rank 1; the io_bytes
    // values (ACCUMULATED_LAST: each the amount since the previous) sum to 229376 and
    // 188416. A location's root holds its total.
    assert_eq!(get("PAPI_TOT_INS (inc)", &["MPI Rank 0"]), 1_486_983.0);
    assert_eq!(get("PAPI_TOT_INS (inc)", &["MPI Rank 1"]), 1_529_166.0);
    assert_eq!(get("io_bytes (inc)", &["MPI Rank 0"]), 229_376.0);
    assert_eq!(get("io_bytes (inc)", &["MPI Rank 1"]), 188_416.0);
    // The first value (59512 at t=0, before `main` is entered) is the root's own.
    assert_eq!(get("PAPI_TOT_INS", &["MPI Rank 0"]), 59_512.0);
    // Per call path, as scripts/otf2_check.py places otf2-print's records.
    let kernel = ["MPI Rank 0", "main", "compute", "kernel"];
    assert_eq!(get("PAPI_TOT_INS", &kernel), 476_851.0);
    assert_eq!(get("PAPI_TOT_INS (inc)", &kernel[..3]), 976_424.0);
    assert_eq!(get("io_bytes", &["MPI Rank 0", "main", "io"]), 229_376.0);
    // mem_usage (ABSOLUTE_POINT): the largest value, never a sum.
    assert_eq!(get("mem_usage:max", &kernel), 4_446_784.0);
    assert_eq!(get("mem_usage:max (inc)", &["MPI Rank 1"]), 5_490_048.0);
    assert!(
        get("mem_usage:max", &["MPI Rank 1"]).is_nan(),
        "no record on the root"
    );
    assert_eq!(p.metrics.unit("mem_usage:max"), "B");
    // node_power is measured for the system tree node: on the recorder's root, said.
    assert_eq!(get("node_power:max", &["MPI Rank 0"]), 104.56);
    assert_eq!(
        p.warnings,
        vec!["11 METRIC record(s) of metric instances measured for a system tree node (not the recording location) are shown on the recording location's root, not on a call path"]
    );
}

#[test]
fn totals_agree_with_otf2_print() {
    let (Some(a), Some(b)) = (corpus("ping-pong-otf2"), corpus("ping-pong-otf2-papi")) else {
        skip!()
    };
    if Command::new("otf2-print")
        .arg("--version")
        .output()
        .is_err()
    {
        skip!("otf2-print is not installed")
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/otf2_check.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_grove"))
        .arg(&a)
        .arg(b.join("traces.otf2"))
        .arg(async_archive())
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches(": agree").count(), 3, "{text}");
    // The totals it prints from otf2-print's records are the roots' above.
    assert!(
        text.contains("MPI Rank 0: PAPI_TOT_INS total 1486983"),
        "{text}"
    );
    assert!(text.contains("MPI Rank 1: io_bytes total 188416"), "{text}");
}

/// Loads a damaged archive: a profile, or one line naming the archive.
fn load_or_one_line(dir: &Path) -> Result<grove::model::Profile, String> {
    let r = std::panic::catch_unwind(|| grove::load::load_path(dir));
    match r {
        Err(_) => panic!("{}: panicked", dir.display()),
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "{line}");
            assert!(line.contains(&dir.display().to_string()), "{line}");
            Err(line)
        }
    }
}

#[test]
fn truncated_event_and_definition_files_never_panic() {
    truncated_never_panic(&async_archive(), "trunc-async");
    let Some(src) = corpus("ping-pong-otf2-papi") else {
        skip!()
    };
    truncated_never_panic(&src, "trunc");
}

fn truncated_never_panic(src: &Path, tag: &str) {
    let dir = copy(src, tag);
    for file in ["traces/0.evt", "traces.def", "traces/1.def", "traces.otf2"] {
        let orig = std::fs::read(src.join(file)).unwrap();
        // Every cut of the small files; every 7th byte of the definitions.
        let step = if orig.len() > 2000 { 7 } else { 1 };
        for cut in (0..orig.len()).step_by(step) {
            std::fs::write(dir.join(file), &orig[..cut]).unwrap();
            if let Err(e) = load_or_one_line(&dir) {
                let named = e.contains(file.rsplit('/').next().unwrap())
                    || e.contains("traces.def")
                    || e.contains("empty")
                    || e.contains("clock properties")
                    || e.contains("anchor");
                assert!(named, "{file} cut at {cut}: {e}");
            }
        }
        std::fs::write(dir.join(file), &orig).unwrap();
    }
    // An empty anchor: the loader's one line.
    std::fs::write(dir.join("traces.otf2"), b"").unwrap();
    let e = load_or_one_line(&dir.join("traces.otf2")).unwrap_err();
    assert!(e.contains("empty"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupted_bytes_never_panic() {
    corrupted_never_panic(&async_archive(), "corrupt-async");
    let Some(src) = corpus("ping-pong-otf2-papi") else {
        skip!()
    };
    corrupted_never_panic(&src, "corrupt");
}

fn corrupted_never_panic(src: &Path, tag: &str) {
    let dir = copy(src, tag);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for file in ["traces/0.evt", "traces/1.def", "traces.def"] {
        let orig = std::fs::read(src.join(file)).unwrap();
        for _ in 0..300 {
            let mut bytes = orig.clone();
            for _ in 0..1 + next() % 4 {
                let at = (next() as usize) % bytes.len();
                bytes[at] = next() as u8;
            }
            std::fs::write(dir.join(file), &bytes).unwrap();
            let _ = load_or_one_line(&dir);
        }
        std::fs::write(dir.join(file), &orig).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_parts_and_unknown_records_are_said() {
    let Some(src) = corpus("ping-pong-otf2") else {
        skip!()
    };
    let dir = copy(&src, "parts");
    // An unknown event record (type 200, 2 bytes) after the first timestamp: skipped by
    // its length and counted.
    let evt = dir.join("traces/0.evt");
    let orig = std::fs::read(&evt).unwrap();
    let at = 18 + 9;
    let mut bytes = orig[..at].to_vec();
    bytes.extend_from_slice(&[200, 2, 0xaa, 0xbb]);
    bytes.extend_from_slice(&orig[at..]);
    std::fs::write(&evt, &bytes).unwrap();
    let p = load_or_one_line(&dir).unwrap();
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("1 event record(s) of types") && w.contains("200 (1)")),
        "{:?}",
        p.warnings
    );
    assert_eq!(p.meta_value("otf2.events.ENTER"), Some("42"));
    // A location's event file gone: a warning, the other location still loads.
    std::fs::remove_file(&evt).unwrap();
    let p = load_or_one_line(&dir).unwrap();
    assert_eq!(p.cct.roots.len(), 1);
    assert!(p.warnings.iter().any(|w| w.contains("no event file")));
    // The global definitions gone: one line.
    std::fs::remove_file(dir.join("traces.def")).unwrap();
    let e = load_or_one_line(&dir).unwrap_err();
    assert!(e.contains("traces.def is missing"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_binary_exits_2_with_one_line_on_a_bad_archive() {
    let Some(src) = corpus("ping-pong-otf2") else {
        skip!()
    };
    let dir = copy(&src, "bin");
    std::fs::write(dir.join("traces.def"), [3u8, 0x42, 1, 2]).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_grove"))
        .args(["info"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("traces.def"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn detection_claims_anchors_and_archive_directories_only() {
    use grove::readers::{detect, Probe};
    let Some(dir) = corpus("ping-pong-otf2") else {
        skip!()
    };
    assert!(grove::readers::claims_dir(&dir));
    let head = std::fs::read(dir.join("traces.otf2")).unwrap();
    let anchor = dir.join("traces.otf2");
    let probe = Probe {
        path: Some(&anchor),
        name: "traces.otf2".into(),
        ..Probe::bytes(&head)
    };
    assert_eq!(
        detect(&probe).map(|r| r.format()),
        Some(grove::model::Format::Otf2)
    );
    // The definitions file is not an anchor, nor is a text file named .otf2.
    let defs = std::fs::read(dir.join("traces.def")).unwrap();
    let p = Probe {
        path: Some(&anchor),
        ..Probe::bytes(&defs)
    };
    assert!(detect(&p).map(|r| r.format()) != Some(grove::model::Format::Otf2));
    let p = Probe {
        path: Some(&anchor),
        ..Probe::bytes(b"OTF2 is a trace format\n")
    };
    assert!(detect(&p).map(|r| r.format()) != Some(grove::model::Format::Otf2));
    assert!(!grove::readers::claims_dir(dir.join("traces").as_path()));
}

#[test]
fn absurd_timestamps_do_not_overflow() {
    // The stable fuzzer's first find (seed 7): a mutated timestamp far in the future
    // overflowed the children's summed time. Every timestamp record of the first
    // location set to the largest value, then to 0 for the second.
    let Some(src) = corpus("ping-pong-otf2") else {
        skip!()
    };
    let dir = copy(&src, "time");
    for (file, value) in [("traces/0.evt", u64::MAX), ("traces/1.evt", 0)] {
        let mut bytes = std::fs::read(src.join(file)).unwrap();
        let mut at = 18;
        // Walk the records only as far as the timestamp records go at the start.
        while at + 9 <= bytes.len() && bytes[at] == 5 {
            bytes[at + 1..at + 9].copy_from_slice(&value.to_le_bytes());
            at += 9;
            // Skip the record after it (attribute list or an event with a length).
            match bytes.get(at) {
                Some(6) | Some(83) => at += 2 + bytes[at + 1] as usize,
                Some(12) | Some(13) => at += 2 + bytes[at + 1] as usize,
                _ => break,
            }
        }
        std::fs::write(dir.join(file), &bytes).unwrap();
    }
    let p = load_or_one_line(&dir).unwrap();
    assert_eq!(p.cct.roots.len(), 2);
    // And the fuzzer's own input shape: one huge timestamp in the middle of a file.
    let mut bytes = std::fs::read(src.join("traces/0.evt")).unwrap();
    let mid = (18..bytes.len() - 9)
        .filter(|&i| bytes[i] == 5 && bytes[i + 9] == 13)
        .nth(3)
        .unwrap();
    bytes[mid + 1..mid + 9].copy_from_slice(&(u64::MAX / 3).to_le_bytes());
    std::fs::write(dir.join("traces/0.evt"), &bytes).unwrap();
    load_or_one_line(&dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// An MPI trace without GPU activity still has a timeline: its locations (ranks) are
/// the lanes, the view spans their events, idle gaps and stepping work on them; the
/// kernels table says there is no GPU activity.
#[test]
fn locations_are_the_timeline_lanes() {
    use grove::app::keymap::Keymap;
    use grove::app::App;
    let Some(dir) = corpus("ping-pong-otf2") else {
        skip!()
    };
    let p = grove::load::load_path(&dir).unwrap();
    let mut app = App::new(p, Keymap::default_map());
    app.run("panel timeline").unwrap();
    let lanes: Vec<String> = app.lanes().iter().map(|l| l.label.clone()).collect();
    assert_eq!(lanes.len(), 2, "{lanes:?}");
    assert!(app.lanes().iter().all(|l| !l.gpu));
    let (a, b) = app.timeline.window;
    assert!(b > a);
    app.run("next-kernel").unwrap();
    assert!(app.timeline.selected.is_some());
    let err = app.run("panel kernels").unwrap_err().to_string();
    assert!(err.contains("no GPU activity"), "{err}");
    // Idle gaps are looked for on the rank lanes; a rank's outermost region (`main`)
    // spans its whole run, so there are none.
    let err = app.run("gaps 3").unwrap_err().to_string();
    assert_eq!(err, "no idle gaps on the CPU threads");
}

#[test]
fn damaged_clock_offsets_do_not_overflow() {
    // The stable fuzzer's find of 2026-11-25 (target otf2-traces-1.def, seed
    // 13666865790629421574, iteration 457875): a local definitions file whose clock
    // offsets made the corrected time overflow (offset + slope * t). Its bytes as found.
    let Some(src) = corpus("ping-pong-otf2-papi") else {
        skip!()
    };
    let dir = copy(&src, "clock");
    let hex = "034201000000000000000000000000000000053400010801020101020901020901021101020a01020b01020b01020c01020c01020d01020d01020e01020e01020f01020f010210010506020101000101050906010300010101020006121e8c8c1570471a000867000000000000040006134c6c5e1670471a00021e0100000000000000000201";
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    std::fs::write(dir.join("traces/1.def"), bytes).unwrap();
    let _ = load_or_one_line(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}
