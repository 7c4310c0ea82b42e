//! Issue 29's readers against independent decodes: Firefox Profiler files (samply's
//! recordings and hand-written raw/processed files) against testdata/gecko/golden.py's
//! per-function sample counts; CPU samples in Chrome traces (corpus files) against
//! testdata/chrome-samples/golden.py; perf.data through `perf script` against perf's
//! own text read by the perf script reader.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use grove::load::load_path;
use grove::model::{Format, Profile};

mod common;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Per root: (exclusive sum of `col` by node name, inclusive by name with each name
/// counted once per path).
type ByName = BTreeMap<String, f64>;

fn per_root(p: &Profile, col: &str) -> Vec<(String, ByName, ByName)> {
    let excl = p.metrics.values(col).unwrap();
    let incl = p.metrics.values(&format!("{col} (inc)")).unwrap();
    let mut out = Vec::new();
    for root in p.cct.root_ids() {
        let (mut s, mut i) = (ByName::new(), ByName::new());
        let mut stack: Vec<(u32, Vec<String>)> =
            p.cct.children(root).map(|c| (c, Vec::new())).collect();
        while let Some((n, above)) = stack.pop() {
            let name = p.cct.name(n).to_string();
            if excl[n as usize] != 0.0 {
                *s.entry(name.clone()).or_default() += excl[n as usize];
            }
            if !above.contains(&name) {
                *i.entry(name.clone()).or_default() += incl[n as usize];
            }
            let mut next = above.clone();
            next.push(name);
            for c in p.cct.children(n) {
                stack.push((c, next.clone()));
            }
        }
        s.retain(|_, v| *v != 0.0);
        i.retain(|_, v| *v != 0.0);
        out.push((p.cct.name(root).to_string(), s, i));
    }
    out
}

fn counts(v: &serde_json::Value) -> ByName {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, n)| (k.clone(), n.as_f64().unwrap()))
        .collect()
}

/// Every testdata/gecko file with a `.golden.json` beside it: the samples per
/// function of each thread (self and inclusive) equal the Python decode's.
#[test]
fn gecko_files_equal_the_python_decode() {
    let dir = repo("testdata/gecko");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".golden.json") else {
            continue;
        };
        let input = ["", ".json", ".json.gz"]
            .iter()
            .map(|ext| dir.join(format!("{stem}{ext}")))
            .find(|p| p.is_file() && !p.to_string_lossy().ends_with(".golden.json"))
            .unwrap_or_else(|| panic!("no input for {name}"));
        let p = load_path(&input).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.source.format, Format::Gecko, "{name}");
        let golden = json(&path);
        let threads = golden["threads"].as_object().unwrap();
        let roots = per_root(&p, "samples");
        assert_eq!(roots.len(), threads.len(), "{name}: one root per thread");
        for (k, t) in threads {
            let (label, s, i) = &roots[k.parse::<usize>().unwrap()];
            assert_eq!(s, &counts(&t["self"]), "{name} {label}: self samples");
            assert_eq!(i, &counts(&t["inclusive"]), "{name} {label}: inclusive");
        }
        checked += 1;
    }
    assert!(checked >= 2, "{checked} gecko goldens");
}

/// Chrome traces with CPU samples (speedscope's sample files): samples and sample time
/// per function of each sampled thread equal the Python decode's.
#[test]
fn chrome_samples_equal_the_python_decode() {
    let Some(corpus) = common::corpus("speedscope/sample/profiles") else {
        skip!()
    };
    for rel in [
        "trace-event/simple-with-samples.json",
        "trace-event/multi-thread-with-samples.json",
        "Chrome/141/no-arg-data.json",
        "Chrome/116/Trace-20230603T221323.json",
        "Chrome/69/simple.json",
    ] {
        let p = load_path(&corpus.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(p.source.format, Format::ChromeTrace);
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        let golden = json(&repo(&format!(
            "testdata/chrome-samples/{stem}.golden.json"
        )));
        let golden = golden.as_object().unwrap();
        let ours: Vec<_> = per_root(&p, "samples")
            .into_iter()
            .zip(per_root(&p, "sample_time"))
            .filter(|((l, ..), _)| l.starts_with("CPU samples"))
            .collect();
        assert_eq!(ours.len(), golden.len(), "{rel}: sampled threads");
        for (k, t) in golden {
            let (pid, tid) = k.split_once('/').unwrap();
            let ((label, s, _), (_, time, _)) = ours
                .iter()
                .find(|((l, ..), _)| {
                    l.contains(&format!("pid {pid})")) && l.contains(&format!("tid {tid}"))
                })
                .unwrap_or_else(|| panic!("{rel}: no root for {k}"));
            let mut want = counts(&t["samples"]);
            want.retain(|_, v| *v != 0.0);
            assert_eq!(s, &want, "{rel} {label}: samples");
            let mut want: ByName = counts(&t["time_us"])
                .into_iter()
                .map(|(k, v)| (k, v * 1e3))
                .collect();
            want.retain(|_, v| *v != 0.0);
            assert_eq!(time, &want, "{rel} {label}: sample time (ns)");
        }
    }
}

fn perf_on_path() -> bool {
    std::process::Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A perf.data loads through `perf script` with exactly the figures of perf's own text
/// (same machine, same symbol resolution) read by the perf script reader.
#[test]
fn perf_data_equals_its_perf_script_text() {
    if !perf_on_path() {
        skip!("perf is not on PATH")
    }
    let data = repo("testdata/perf/spin.perf.data");
    let text = std::process::Command::new("perf")
        .args(["script", "-F", grove::readers::perf_data::FIELDS, "-i"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(text.status.success());
    let dir = std::env::temp_dir().join(format!("grove-perfdata-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let txt = dir.join("spin.perf.txt");
    std::fs::write(&txt, &text.stdout).unwrap();
    let a = load_path(&data).unwrap();
    let b = load_path(&txt).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(a.source.format, Format::PerfScript);
    assert_eq!(a.meta_value("samples"), Some("477"));
    for col in ["cpu-clock", "cpu-clock samples"] {
        assert_eq!(per_root(&a, col), per_root(&b, col), "{col}");
    }
    // perf report --no-children --sort sym -F sample,sym: inner 472 of 477.
    let (_, s, _) = &per_root(&a, "cpu-clock samples")[0];
    assert_eq!(s.values().sum::<f64>(), 477.0);
}

/// A perf.data that perf cannot read: perf's own message, in one line.
#[test]
fn a_broken_perf_data_gives_perfs_error_in_one_line() {
    if !perf_on_path() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("grove-perfbad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("cut.data");
    let mut bytes = std::fs::read(repo("testdata/perf/spin.perf.data")).unwrap();
    bytes.truncate(3000);
    std::fs::write(&bad, bytes).unwrap();
    let e = load_path(&bad).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(e.contains("perf script failed: "), "{e}");
    assert!(!e.contains('\n'), "{e}");
}
