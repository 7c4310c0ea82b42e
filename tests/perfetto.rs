//! Perfetto protobuf traces (issue 29): Chromium's own recordings and a rocprofv3-style
//! trace written with the perfetto package (testdata/perfetto/, scripts beside them)
//! against an independent decode with the perfetto package's protos
//! (testdata/perfetto/golden.py -> *.golden.json): slice count and summed duration per
//! thread track and per named track, and the totals. Damaged files are one line.

mod common;

use std::collections::BTreeMap;

use common::{grove, repo};
use grove::load::load_path;
use grove::model::{EventKind, Format, Profile};

#[derive(Default, Debug, PartialEq)]
struct Figures {
    rows: u64,
    dur: i64,
}

/// Grove's slices per track, keyed as golden.py keys them: "PID/TID" for a thread
/// track, "track:NAME" for any other.
fn figures(p: &Profile) -> BTreeMap<String, Figures> {
    let ev = p.events.as_ref().unwrap();
    let names = lane_names(p);
    let mut out: BTreeMap<String, Figures> = BTreeMap::new();
    for i in 0..ev.len() {
        let (pid, tid) = (ev.strings.resolve(ev.pid[i]), ev.strings.resolve(ev.tid[i]));
        let key = if tid.parse::<i64>().is_ok() {
            format!("{pid}/{tid}")
        } else {
            // A lane whose rows are all outside the tree (instants only) has no root
            // to name it: "?", in the totals only.
            match names.get(&(pid.to_string(), tid.to_string())) {
                Some(n) => format!("track:{n}"),
                None => "?".into(),
            }
        };
        let f = out.entry(key).or_default();
        f.rows += 1;
        f.dur += ev.dur[i];
    }
    out
}

/// Each lane's label as the tree shows it (its root's name).
fn lane_names(p: &Profile) -> BTreeMap<(String, String), String> {
    let ev = p.events.as_ref().unwrap();
    let mut out = BTreeMap::new();
    for i in 0..ev.len() {
        let key = (
            ev.strings.resolve(ev.pid[i]).to_string(),
            ev.strings.resolve(ev.tid[i]).to_string(),
        );
        if out.contains_key(&key) {
            continue;
        }
        // The lane's root: walk up from the event's node.
        let mut n = ev.node[i];
        if n == u32::MAX {
            continue;
        }
        while let Some(up) = p.cct.parent(n) {
            n = up;
        }
        out.insert(key, p.cct.frame(n).name.to_string());
    }
    out
}

fn unclosed(p: &Profile) -> u64 {
    p.warnings
        .iter()
        .find(|w| w.contains("never ended"))
        .and_then(|w| w.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn check(file: &str, golden: &str) -> Profile {
    check_paths(
        &repo(&format!("testdata/perfetto/{file}")),
        &repo(&format!("testdata/perfetto/{golden}")),
    )
}

fn check_paths(path: &std::path::Path, golden: &std::path::Path) -> Profile {
    let file = path.display().to_string();
    let p = load_path(path).unwrap();
    assert_eq!(p.source.format, Format::Perfetto);
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(golden).unwrap()).unwrap();
    let mine = figures(&p);
    for (key, w) in want["tracks"].as_object().unwrap() {
        let (slices, dur, open) = (
            w["slices"].as_u64().unwrap(),
            w["dur_ns"].as_i64().unwrap(),
            w["unclosed"].as_u64().unwrap(),
        );
        if !key.contains('/') && (!mine.contains_key(key) || mine.contains_key("?")) {
            // A track without a descriptor (Chrome's global instants on uuid 0), or a
            // named track when some lanes have no name: in the totals below.
            continue;
        }
        let m = mine
            .get(key)
            .unwrap_or_else(|| panic!("{file}: no lane {key}: {mine:?}"));
        // Slices still open at the end are rows too, running to the trace's end.
        assert_eq!(m.rows, slices + open, "{file} {key}");
        if open == 0 {
            assert_eq!(m.dur, dur, "{file} {key}");
        }
    }
    let t = &want["total"];
    let rows: u64 = mine.values().map(|f| f.rows).sum();
    assert_eq!(
        rows,
        t["slices"].as_u64().unwrap() + t["unclosed"].as_u64().unwrap(),
        "{file}"
    );
    assert_eq!(unclosed(&p), t["unclosed"].as_u64().unwrap(), "{file}");
    if t["unclosed"].as_u64() == Some(0) {
        let dur: i64 = mine.values().map(|f| f.dur).sum();
        assert_eq!(dur, t["dur_ns"].as_i64().unwrap(), "{file}");
    }
    p
}

#[test]
fn chromium_traces_match_an_independent_decode() {
    let p = check("chromium_loading.pftrace", "chromium_loading.golden.json");
    assert!(p.cct.len() > 10);
    let p = check(
        "chromium_toplevel.pftrace.gz",
        "chromium_toplevel.golden.json",
    );
    assert!(p.source.gzip);
    // Chrome's bookkeeping packets are listed, not warned about.
    assert!(p.meta.iter().any(|(_, v)| v.contains("trace_config")));
    assert!(
        !p.warnings.iter().any(|w| w.contains("trace_config")),
        "{:?}",
        p.warnings
    );
}

/// A larger trace and its golden.py output, not kept in the repository:
/// `GROVE_PERFETTO_EXTRA=TRACE:GOLDEN cargo test --test perfetto extra`.
#[test]
fn extra_trace_from_the_environment() {
    let Ok(v) = std::env::var("GROVE_PERFETTO_EXTRA") else {
        return;
    };
    let (trace, golden) = v.split_once(':').expect("TRACE:GOLDEN");
    check_paths(std::path::Path::new(trace), std::path::Path::new(golden));
}

#[test]
fn rocprof_layout_gives_gpu_lanes_under_their_launches() {
    let p = check("synthetic_rocprof.pftrace", "synthetic_rocprof.golden.json");
    let ev = p.events.as_ref().unwrap();
    let kernels: Vec<usize> = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Kernel)
        .collect();
    let copies = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Memcpy)
        .count();
    assert_eq!((kernels.len(), copies), (60, 60));
    let devices: std::collections::BTreeSet<i64> = kernels.iter().map(|&i| ev.device[i]).collect();
    assert_eq!(devices.into_iter().collect::<Vec<_>>(), vec![1, 2]);
    // Every kernel hangs under the hipLaunchKernel that has its corr_id.
    for &k in &kernels {
        let parent = p.cct.parent(ev.node[k]).unwrap();
        assert_eq!(&*p.cct.frame(parent).name, "hipLaunchKernel");
    }
    // The skipped packets are named and counted.
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("ftrace_events (field 1) ×6")
                && w.contains("process_tree (field 2) ×1")),
        "{:?}",
        p.warnings
    );
    let counters = p.counters.as_ref().unwrap();
    assert_eq!(counters.value.len(), 60);
}

#[test]
fn damaged_traces_are_one_line() {
    let bytes = std::fs::read(repo("testdata/perfetto/synthetic_rocprof.pftrace")).unwrap();
    let dir = std::env::temp_dir().join(format!("grove-perfetto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Cut in the middle: what came before loads, marked partial.
    let cut = dir.join("cut.pftrace");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let p = load_path(&cut).unwrap();
    assert!(grove::readers::is_partial(&p), "{:?}", p.warnings);
    // Named like a trace but not one: refused with one line.
    let bad = dir.join("bad.pftrace");
    std::fs::write(&bad, b"\x0a\x03\x08\x01\x10").unwrap();
    let (code, _, err) = grove(&["info", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
