//! The CPU-profiler readers: callgrind/cachegrind, perf script, speedscope,
//! Chrome .cpuprofile, pprof. Totals are checked against the reference tools' own figures
//! (callgrind_annotate goldens, stackcollapse-perf outputs, independent computations), and
//! truncated or corrupted inputs give an error or a warned load, never a panic.

use std::io::Read;
use std::path::{Path, PathBuf};

use grove::load::load_path;
use grove::model::{Format, Profile, Source};

mod common;
use common::Rng;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Sum of an exclusive column over every node.
fn total(p: &Profile, col: &str) -> f64 {
    p.metrics
        .values(col)
        .unwrap_or_else(|| panic!("no column {col}: {:?}", p.metrics.names()))
        .iter()
        .filter(|v| v.is_finite())
        .sum()
}

/// Sum of an inclusive column over the roots (must equal the exclusive total).
fn root_total(p: &Profile, col: &str) -> f64 {
    let v = p.metrics.values(col).unwrap();
    p.cct.root_ids().iter().map(|&r| v[r as usize]).sum()
}

fn source(format: Format) -> Source {
    Source {
        path: None,
        format,
        size: 0,
        gzip: false,
        label: "t".into(),
    }
}

/// The file's bytes, gunzipped when it is gzip.
fn bytes(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

type ReadFn = fn(&mut dyn std::io::BufRead, Source) -> Result<Profile, String>;

/// Truncations at many points and random byte flips: an error (one line) or a load.
fn never_panics(input: &[u8], read: ReadFn, format: Format) {
    let step = (input.len() / 200).max(1);
    for cut in (0..input.len()).step_by(step) {
        if let Err(e) = read(&mut &input[..cut], source(format)) {
            assert!(!e.is_empty() && !e.contains('\n'), "{e:?}");
        }
    }
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let specials = b"{}[],:\"=()+-*0123456789 \n\x00\xff";
    for _ in 0..200 {
        let mut b = input.to_vec();
        for _ in 0..1 + rng.next() % 4 {
            let i = (rng.next() as usize) % b.len();
            b[i] = specials[(rng.next() as usize) % specials.len()];
        }
        if let Err(e) = read(&mut &b[..], source(format)) {
            assert!(!e.is_empty() && !e.contains('\n'), "{e:?}");
        }
    }
}

// ---------------------------------------------------------------- callgrind

/// testdata/callgrind/totals.txt: `file event=value ...` from callgrind_annotate /
/// cg_annotate (scripts/callgrind_goldens.sh). callgrind_annotate prints the `summary:`
/// line, which callgrind sometimes makes a few events larger than its `totals:` line and
/// the sum of the cost lines (2 Ir of 331,855 with --dump-instr: instructions with no
/// cost line); grove's totals are the cost lines, so the check takes that difference
/// (summary - totals, read from the file) off callgrind_annotate's figure.
#[test]
fn callgrind_totals_equal_callgrind_annotate() {
    let golden = std::fs::read_to_string(repo("testdata/callgrind/totals.txt")).unwrap();
    let mut checked = 0;
    for line in golden.lines() {
        let mut it = line.split_whitespace();
        let file = it.next().unwrap();
        let text = String::from_utf8(bytes(&repo("testdata/callgrind").join(file))).unwrap();
        let header = |key: &str| -> Option<Vec<f64>> {
            let l = text.lines().find(|l| l.starts_with(key))?;
            Some(
                l[key.len()..]
                    .split_whitespace()
                    .map(|v| v.parse().unwrap())
                    .collect(),
            )
        };
        let events: Vec<&str> = text.lines().find(|l| l.starts_with("events:")).unwrap()
            ["events:".len()..]
            .split_whitespace()
            .collect();
        let gap = |ev: &str| -> f64 {
            let i = events.iter().position(|e| *e == ev).unwrap();
            match (header("summary:"), header("totals:")) {
                (Some(s), Some(t)) => s[i] - t[i],
                _ => 0.0,
            }
        };
        let p = load_path(&repo("testdata/callgrind").join(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.source.format, Format::Callgrind, "{file}");
        assert!(p.warnings.is_empty(), "{file}: {:?}", p.warnings);
        for kv in it {
            let (ev, want) = kv.split_once('=').unwrap();
            let want: f64 = want.parse().unwrap();
            let got = total(&p, ev);
            let want = want - gap(ev);
            assert!(
                (got - want).abs() <= 1e-9 * want,
                "{file}: {ev} {got} vs {want}"
            );
            let inc = root_total(&p, &format!("{ev} (inc)"));
            assert!(
                (inc - got).abs() <= 1e-9 * got.max(1.0),
                "{file}: {ev} (inc)"
            );
        }
        checked += 1;
    }
    assert!(checked >= 5, "{checked} golden files");
}

#[test]
fn callgrind_tree_is_by_call_path() {
    let p = load_path(&repo("testdata/callgrind/rec.callgrind.out")).unwrap();
    assert_eq!(p.dialect, "callgrind");
    let ir = p.metrics.values("Ir (inc)").unwrap();
    // main -> mid -> leaf and main -> mid -> work; fib's recursion is one node.
    let path_of = |n: u32| -> Vec<&str> { p.cct.path(n).iter().map(|&x| p.cct.name(x)).collect() };
    let mut found = 0;
    for n in 0..p.cct.len() as u32 {
        let path = path_of(n);
        let tail: Vec<&str> = path.iter().rev().take(3).rev().copied().collect();
        if tail == ["main", "mid", "leaf"] || tail == ["main", "mid", "work"] {
            assert!(ir[n as usize] > 0.0);
            found += 1;
        }
        if path.last() == Some(&"fib") {
            assert!(p.cct.children(n).all(|c| p.cct.name(c) != "fib"));
        }
    }
    assert_eq!(found, 2);
    let main = (0..p.cct.len() as u32)
        .find(|&n| p.cct.name(n) == "main")
        .unwrap();
    assert!(p.cct.frame(main).attr("file").unwrap().ends_with("rec.c"));
    let c = load_path(&repo("testdata/callgrind/rec.cachegrind.out.gz")).unwrap();
    assert_eq!(c.dialect, "cachegrind");
}

/// The callgrind files of the corpus (speedscope's samples, pprof's -callgrind output):
/// totals as callgrind_annotate computes them (PROGRAM TOTALS (calculated)), except for
/// pprof's files: pprof writes `calls=0` (count unknown), which callgrind_annotate takes
/// for "no call" and so adds every call's inclusive cost to the caller's self cost
/// (6,370 ms and 354 MB). KCachegrind and grove read them as calls; the figures below
/// are the sums of the non-call cost lines (pprof's own totals: 1,120 ms, 97 MB).
#[test]
fn callgrind_corpus_files() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let cases: &[(&str, &[(&str, f64)])] = &[
        (
            "speedscope/sample/profiles/callgrind/callgrind.cfn-reset.log",
            &[("Instructions", 40.0)],
        ),
        (
            "speedscope/sample/profiles/callgrind/callgrind.example.log",
            &[("Instructions", 820.0)],
        ),
        (
            "speedscope/sample/profiles/callgrind/callgrind.multiple-event-types.log",
            &[("Time_(10ns)", 820.0), ("Memory_(bytes)", 38000.0)],
        ),
        (
            "speedscope/sample/profiles/callgrind/callgrind.name-compression.log",
            &[("Instructions", 820.0)],
        ),
        (
            "speedscope/sample/profiles/callgrind/callgrind.subposition-compression.log",
            &[("Instructions", 120.0)],
        ),
        (
            "pprof/internal/driver/testdata/pprof.cpu.call_tree.callgrind",
            &[("cpu(ms)", 1120.0)],
        ),
        (
            "pprof/internal/driver/testdata/pprof.cpu.callgrind",
            &[("cpu(ms)", 1120.0)],
        ),
        (
            "pprof/internal/driver/testdata/pprof.heap.callgrind",
            &[("inuse_space(MB)", 97.0)],
        ),
    ];
    for (rel, want) in cases {
        let p = load_path(&dir.join(rel)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.source.format, Format::Callgrind, "{rel}");
        for (ev, v) in *want {
            assert!(
                (total(&p, ev) - v).abs() < 0.5,
                "{rel} {ev}: {}",
                total(&p, ev)
            );
            let inc = format!("{ev} (inc)");
            assert!((root_total(&p, &inc) - v).abs() < 0.5, "{rel} {inc}");
        }
    }
}

#[test]
fn callgrind_bad_input_never_panics() {
    let b = bytes(&repo("testdata/callgrind/thr.callgrind.out-02"));
    never_panics(&b, grove::readers::callgrind::read, Format::Callgrind);
}

// ---------------------------------------------------------------- perf script

/// Sum of the counts of a folded-stacks file.
fn folded_total(path: &Path) -> f64 {
    String::from_utf8(bytes(path))
        .unwrap()
        .lines()
        .filter_map(|l| l.trim_end().rsplit_once(' '))
        .map(|(_, c)| c.parse::<f64>().unwrap())
        .sum()
}

/// Every perf script file of the corpus against the stackcollapse-perf output next to it
/// (FlameGraph's results/*-collapsed-all.txt, inferno's results/*-collapsed*.txt): the
/// collapsers keep the first event only and weigh by period when there is one.
#[test]
fn perf_totals_equal_stackcollapse() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let mut cases: Vec<(String, String)> = Vec::new();
    for e in std::fs::read_dir(dir.join("FlameGraph/test")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name
            .strip_prefix("perf-")
            .and_then(|s| s.strip_suffix(".txt"))
        {
            cases.push((
                format!("FlameGraph/test/{name}"),
                format!("FlameGraph/test/results/perf-{stem}-collapsed-all.txt"),
            ));
        }
    }
    let inf = "inferno/tests/data/collapse-perf";
    for (input, result) in [
        (
            "cpp-stacks-std-function",
            "cpp-stacks-std-function-collapsed",
        ),
        ("go-stacks", "go-stacks-collapsed"),
        ("java-inline", "java-inline-collapsed"),
        ("single-event", "single-event-collapsed"),
        ("single-line-stacks", "single-line-stacks-collapsed"),
        ("sourcepawn-jitdump", "sourcepawn-jitdump-collapsed-jit"),
        ("versioned-vmlinux", "versioned-vmlinux-collapsed-kernel"),
    ] {
        cases.push((
            format!("{inf}/{input}.txt"),
            format!("{inf}/results/{result}.txt"),
        ));
    }
    cases.push((
        "FlameGraph/example-perf-stacks.txt.gz".into(),
        format!("{inf}/results/example-perf-stacks-collapsed.txt"),
    ));
    assert!(cases.len() >= 21, "{}", cases.len());
    for (input, result) in &cases {
        let p = load_path(&dir.join(input)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.source.format, Format::PerfScript, "{input}");
        let mut want = folded_total(&dir.join(result));
        // stackcollapse-perf.pl only closes a sample at a blank line, so it drops a last
        // sample the file does not end with one after; grove keeps it (with a warning).
        let text = String::from_utf8_lossy(&bytes(&dir.join(input))).into_owned();
        if !text.trim_end_matches(' ').ends_with("\n\n") && input.starts_with("FlameGraph/test") {
            let last = text
                .lines()
                .rev()
                .find(|l| !l.starts_with(char::is_whitespace))
                .unwrap();
            // `... time: PERIOD event:`: a number between the time and the event.
            let t: Vec<&str> = last.split_whitespace().rev().take(3).collect();
            let period = match t[..] {
                [_, p, time, ..] if time.ends_with(':') => p.parse().unwrap_or(1.0),
                _ => 1.0,
            };
            want += period;
            assert!(
                p.warnings.iter().any(|w| w.contains("blank line")),
                "{input}"
            );
        }
        let got = total(&p, &p.default_metric);
        assert_eq!(got, want, "{input}: {}", p.default_metric);
        let inc = root_total(&p, &format!("{} (inc)", p.default_metric));
        assert_eq!(inc, want, "{input}");
    }
    // The two without a collapsed result: a blank line inside a sample, a weird frame.
    for f in ["empty-line.txt", "weird-stack-line.txt"] {
        let p = load_path(&dir.join(inf).join(f)).unwrap();
        assert_eq!(total(&p, "cpu-clock"), 500000.0, "{f}");
    }
}

/// perf's own output (testdata/perf, scripts/perf_goldens.sh): sample count and period.
#[test]
fn perf_generated_files() {
    let golden = std::fs::read_to_string(repo("testdata/perf/totals.txt")).unwrap();
    for line in golden.lines() {
        let mut it = line.split_whitespace();
        let file = it.next().unwrap();
        let p = load_path(&repo("testdata/perf").join(file)).unwrap_or_else(|e| panic!("{e}"));
        assert!(p.warnings.is_empty(), "{file}: {:?}", p.warnings);
        let samples: f64 = it.next().unwrap()["samples=".len()..].parse().unwrap();
        let period: f64 = it.next().unwrap()["period=".len()..].parse().unwrap();
        assert_eq!(total(&p, "cpu-clock"), period, "{file}");
        assert_eq!(total(&p, "cpu-clock samples"), samples, "{file}");
        assert_eq!(p.metrics.unit("cpu-clock"), "ns");
        let names: Vec<&str> = (0..p.cct.len() as u32).map(|n| p.cct.name(n)).collect();
        for f in ["spin", "main", "outer", "inner", "other"] {
            assert!(names.contains(&f), "{file}: {f}");
        }
    }
    let h = load_path(&repo("testdata/perf/spin-header.perf.txt.gz")).unwrap();
    assert!(h.meta_value("perf version").is_some(), "{:?}", h.meta);
}

#[test]
fn perf_bad_input_never_panics() {
    let b = bytes(&repo("testdata/perf/spin-fields.perf.txt"));
    never_panics(&b[..6000], grove::readers::perf::read, Format::PerfScript);
}

/// speedscope's own sample files of perf script text load as perf, every sample counted.
#[test]
fn perf_speedscope_samples() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    for e in std::fs::read_dir(dir.join("speedscope/sample/profiles/linux-perf")).unwrap() {
        let path = e.unwrap().path();
        let p = load_path(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.source.format, Format::PerfScript, "{}", path.display());
        let text = String::from_utf8_lossy(&bytes(&path)).into_owned();
        let headers = text
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('\t'))
            .count() as f64;
        let m = &p.default_metric;
        let col = if p.metrics.has(&format!("{m} samples")) {
            format!("{m} samples")
        } else {
            m.clone()
        };
        let all: f64 = p
            .metrics
            .names()
            .iter()
            .filter(|n| !n.contains("(inc)") && (n.ends_with(" samples") || **n == col))
            .map(|n| total(&p, n))
            .sum();
        assert!(all >= total(&p, &col));
        assert_eq!(
            p.meta_value("samples").unwrap().parse::<f64>().unwrap(),
            headers,
            "{}",
            path.display()
        );
    }
}

// ---------------------------------------------------------------- speedscope, .cpuprofile

#[test]
fn speedscope_files() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let base = dir.join("speedscope/sample/profiles/speedscope");
    for (rel, roots, want, unit) in [
        ("0.0.1/simple.speedscope.json", 1, 14.0, ""),
        ("0.0.1/simple-no-pretty-print.speedscope.json", 1, 14.0, ""),
        ("0.1.2/simple-sampled.speedscope.json", 1, 14.0, "s"),
        ("0.6.0/two-sampled.speedscope.json", 2, 28.0, "s"),
    ] {
        let p = load_path(&base.join(rel)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.source.format, Format::Speedscope, "{rel}");
        assert_eq!(p.cct.root_ids().len(), roots, "{rel}");
        let m = p.default_metric.clone();
        assert_eq!(total(&p, &m), want, "{rel}");
        assert_eq!(root_total(&p, &format!("{m} (inc)")), want, "{rel}");
        assert_eq!(p.metrics.unit(&m), unit, "{rel}");
        assert!(p.warnings.is_empty(), "{rel}: {:?}", p.warnings);
    }
    // The evented example: c runs 0-2 and 6-9, d 2-6, b alone 9-14.
    let p = load_path(&base.join("0.0.1/simple.speedscope.json")).unwrap();
    let by_name = |name: &str| -> f64 {
        (0..p.cct.len() as u32)
            .filter(|&n| p.cct.name(n) == name)
            .map(|n| p.metrics.get("weight", n))
            .sum()
    };
    assert_eq!((by_name("c"), by_name("d"), by_name("b")), (5.0, 4.0, 5.0));
    // The invalid ones (unbalanced O/C events) are refused, as speedscope refuses them.
    for rel in [
        "invalid/incomplete-trace.json",
        "invalid/out-of-order-events.json",
    ] {
        let e = load_path(&base.join(rel)).expect_err(rel).to_string();
        assert!(
            e.contains("invalid evented speedscope") && !e.contains('\n'),
            "{e}"
        );
    }
}

#[test]
fn cpuprofile_file() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let path = dir.join("speedscope/sample/profiles/Chrome/65/simple.cpuprofile");
    let p = load_path(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.source.format, Format::CpuProfile);
    let v: serde_json::Value = serde_json::from_slice(&bytes(&path)).unwrap();
    let n = v["samples"].as_array().unwrap().len() as f64;
    let deltas: f64 = v["timeDeltas"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|d| d.as_f64().unwrap())
        .sum();
    let span = deltas
        + (v["endTime"].as_f64().unwrap()
            - v["startTime"].as_f64().unwrap()
            - v["timeDeltas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_f64().unwrap())
                .sum::<f64>());
    assert_eq!(total(&p, "samples"), n);
    assert!(
        (total(&p, "time") - span).abs() < 1e-6,
        "{} vs {span}",
        total(&p, "time")
    );
    assert_eq!(p.cct.name(p.cct.root_ids()[0]), "(root)");
}

#[test]
fn json_readers_never_panic() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let b = bytes(&dir.join("speedscope/sample/profiles/speedscope/0.0.1/simple.speedscope.json"));
    never_panics(&b, grove::readers::speedscope::read, Format::Speedscope);
    let b = bytes(&dir.join("speedscope/sample/profiles/Chrome/65/simple.cpuprofile"));
    never_panics(&b, grove::readers::cpuprofile::read, Format::CpuProfile);
}

// ---------------------------------------------------------------- pprof

/// Every pprof protobuf of the corpus against scripts/pprof_totals.py's independent
/// decoding (testdata/pprof_totals.json): one metric per sample type with its unit,
/// totals per type, the default type.
#[test]
fn pprof_totals_match_an_independent_decoder() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo("testdata/pprof_totals.json")).unwrap())
            .unwrap();
    let files = want.as_object().unwrap();
    assert_eq!(files.len(), 13);
    for (rel, w) in files {
        let p = load_path(&dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(p.source.format, Format::Pprof, "{rel}");
        let types = w["types"].as_array().unwrap();
        for (t, ty) in types.iter().enumerate() {
            let (name, unit) = ty.as_str().unwrap().split_once('/').unwrap();
            let name = if name.is_empty() {
                format!("value{t}")
            } else {
                name.to_string()
            };
            let got = total(&p, &name);
            let exp = w["totals"][t].as_f64().unwrap();
            assert_eq!(got, exp, "{rel}: {name}");
            assert_eq!(
                root_total(&p, &format!("{name} (inc)")),
                exp,
                "{rel}: {name} (inc)"
            );
            assert_eq!(p.metrics.unit(&name), unit, "{rel}: {name}");
        }
        let def = w["default"].as_str().unwrap();
        if !def.is_empty() {
            assert_eq!(p.default_metric, def, "{rel}");
        }
        assert_eq!(
            p.meta_value("samples").unwrap(),
            w["samples"].to_string(),
            "{rel}"
        );
    }
    // Labels become attributes.
    let p = load_path(&dir.join("parca/pkg/query/testdata/profile-with-labels.pb.gz")).unwrap();
    assert!((0..p.cct.len() as u32).any(|n| p
        .cct
        .frame(n)
        .attrs
        .iter()
        .any(|(k, _)| k.starts_with("label."))));
}

#[test]
fn pprof_bad_input_never_panics() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let b = bytes(&dir.join("parca/pkg/query/testdata/fib.pb.gz"));
    never_panics(&b, grove::readers::pprof::read, Format::Pprof);
}

// ------------------------------------------------- callgrind --separate-threads

/// The per-thread files of one `--separate-threads` run (testdata/callgrind/thr.c, two
/// threads) open as one ensemble with a member per thread, given together or as their
/// directory; each member keeps its file's summary.
#[test]
fn callgrind_separate_threads_open_as_an_ensemble() {
    use std::collections::HashMap;
    let files = [
        repo("testdata/callgrind/thr.callgrind.out-01"),
        repo("testdata/callgrind/thr.callgrind.out-02"),
    ];
    // callgrind_annotate's PROGRAM TOTALS of each file (testdata/callgrind/totals.txt).
    let want = [("thread1", 248018.0), ("thread2", 1380611.0)];
    let dir = std::env::temp_dir().join(format!("grove-sep-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in &files {
        std::fs::copy(f, dir.join(f.file_name().unwrap())).unwrap();
    }
    let runs = [files.to_vec(), vec![dir.clone()]];
    for inputs in runs {
        let p = grove::load::load_inputs(&inputs, &HashMap::new()).unwrap();
        // The members' trees are unfolded from their call graphs: so is the union.
        assert!(p.estimated_paths());
        for (label, v) in want {
            let col = format!("Ir@{label}");
            assert!(
                (total(&p, &col) - v).abs() < 0.5,
                "{inputs:?} {col}: {} in {:?}",
                total(&p, &col),
                p.metrics.names()
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

// ------------------------------------------------------------ perf JSON export

/// Exclusive values by call path (names joined with ';'), zeros left out.
fn by_path(p: &Profile, col: &str) -> std::collections::BTreeMap<String, f64> {
    let v = p.metrics.values(col).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for n in 0..p.cct.len() as u32 {
        if v[n as usize] == 0.0 {
            continue;
        }
        let mut names = vec![p.cct.frame(n).name.to_string()];
        let mut at = n;
        while let Some(up) = p.cct.parent(at) {
            names.push(p.cct.frame(up).name.to_string());
            at = up;
        }
        names.reverse();
        *out.entry(names.join(";")).or_insert(0.0) += v[n as usize];
    }
    out
}

/// `perf data convert --to-json` of a real recording (scripts/perf_json_golden.sh): the
/// sample count Python's json module finds, and the same tree as `perf script` of the
/// same perf.data.
#[test]
fn perf_json_export_matches_perf_script() {
    let golden = std::fs::read_to_string(repo("testdata/perf/totals-json.txt")).unwrap();
    let samples: f64 = golden
        .split_whitespace()
        .find_map(|w| w.strip_prefix("samples="))
        .unwrap()
        .parse()
        .unwrap();
    let json = load_path(&repo("testdata/perf/spin.perf.json.gz")).unwrap();
    assert_eq!(json.source.format, Format::PerfScript);
    assert_eq!(json.dialect, "perf JSON export");
    assert_eq!(total(&json, "cpu-clock"), samples);
    assert_eq!(root_total(&json, "cpu-clock (inc)"), samples);
    let text = load_path(&repo("testdata/perf/spin-json.perf.txt.gz")).unwrap();
    assert_eq!(
        by_path(&json, "cpu-clock"),
        by_path(&text, "cpu-clock samples")
    );
}

#[test]
fn perf_json_bad_input_never_panics() {
    let b = bytes(&repo("testdata/perf/spin.perf.json.gz"));
    never_panics(&b, grove::readers::perf_json::read, Format::PerfScript);
}

/// A frame name as FlameGraph's `stackcollapse-perf.pl --all` writes it (its tidy_generic
/// and tidy_java rules, and the `_[k]`/`_[j]` annotations), from grove's raw name and
/// module: grove keeps names whole, so the comparison tidies them the script's way.
fn stackcollapse_name(raw: &str, module: &str, comm: &str) -> String {
    let mut f = raw.replace(';', ":");
    // Everything after the first `(` is noise, except in a Go method name
    // (`net/http.(*Client).Do`) and an `(anonymous namespace)`.
    let go_method = f.find(".(").is_some_and(|i| f[i + 2..].contains(")."));
    if !go_method {
        let mut cut = None;
        let mut from = 0;
        while let Some(i) = f[from..].find('(') {
            let at = from + i;
            if f[at..].starts_with("(anonymous namespace)") {
                from = at + 1;
                continue;
            }
            cut = Some(at);
            break;
        }
        if let Some(at) = cut {
            f.truncate(at);
        }
    }
    f.retain(|c| c != '"' && c != '\'');
    if comm == "java" && f.contains('/') {
        if let Some(rest) = f.strip_prefix('L') {
            f = rest.to_string();
        }
    }
    // Its kernel rule: a module in brackets (`[kernel.kallsyms]`, `[vdso]`) or vmlinux,
    // not `[unknown]`.
    let kernel =
        (module.starts_with('[') || module.ends_with("vmlinux")) && !module.contains("unknown");
    let jit = module.starts_with("/tmp/perf-") && module.ends_with(".map");
    if kernel {
        f.push_str("_[k]");
    } else if jit {
        f.push_str("_[j]");
    }
    f
}

/// grove's tree as folded stacks in stackcollapse-perf's spelling: path -> the default
/// metric's exclusive value.
fn folded_like_stackcollapse(p: &Profile) -> std::collections::BTreeMap<String, f64> {
    let v = p.metrics.values(&p.default_metric).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for n in 0..p.cct.len() as u32 {
        if v[n as usize] == 0.0 {
            continue;
        }
        let mut chain = vec![n];
        while let Some(up) = p.cct.parent(*chain.last().unwrap()) {
            chain.push(up);
        }
        chain.reverse();
        let comm = p.cct.name(chain[0]).to_string();
        let mut parts = vec![comm.clone()];
        for &c in &chain[1..] {
            let fr = p.cct.frame(c);
            let raw = fr
                .attr(grove::model::demangle::RAW_NAME)
                .unwrap_or(p.cct.name(c));
            parts.push(stackcollapse_name(
                raw,
                fr.attr("module").unwrap_or(""),
                &comm,
            ));
        }
        *out.entry(parts.join(";")).or_insert(0.0) += v[n as usize];
    }
    out
}

fn folded_file(path: &Path) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    for l in String::from_utf8(bytes(path)).unwrap().lines() {
        if let Some((k, c)) = l.trim_end().rsplit_once(' ') {
            *out.entry(k.to_string()).or_insert(0.0) += c.parse::<f64>().unwrap();
        }
    }
    out
}

/// Path by path, not only in total: FlameGraph's perf test files against its own
/// `results/*-collapsed-all.txt`. `perf-java-stacks-02.txt` writes its frames without
/// indentation (issue 24: it used to fold into one `java` node). The files left out
/// differ for reasons of the collapser's, not of reading (see docs/formats.md).
#[test]
fn perf_paths_equal_stackcollapse() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let t = dir.join("FlameGraph/test");
    let mut failed = Vec::new();
    for stem in PERF_PATHS_EQUAL {
        // stackcollapse-perf drops a last sample that no blank line closes (a known
        // difference, warned by grove): fed to grove only up to the last blank line.
        let text = bytes(&t.join(format!("perf-{stem}.txt")));
        let cut = text
            .windows(2)
            .rposition(|w| w == b"\n\n")
            .map_or(text.len(), |i| i + 2);
        let p = grove::readers::perf::read(&mut &text[..cut], source(Format::PerfScript))
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        let got = folded_like_stackcollapse(&p);
        let want = folded_file(&t.join(format!("results/perf-{stem}-collapsed-all.txt")));
        let diff: Vec<_> = got
            .iter()
            .filter(|(k, v)| want.get(*k) != Some(v))
            .map(|(k, v)| format!("grove {v} {k}"))
            .chain(
                want.iter()
                    .filter(|(k, _)| !got.contains_key(*k))
                    .map(|(k, v)| format!("stackcollapse {v} {k}")),
            )
            .take(5)
            .collect();
        if !diff.is_empty() {
            failed.push(format!(
                "{stem}: {} paths vs {}: {diff:#?}",
                got.len(),
                want.len()
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    let p = load_path(&t.join("perf-java-stacks-02.txt")).unwrap();
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    // Two samples of the same 24 frames: `java` and one chain of 24 nodes.
    assert_eq!(p.cct.len(), 25);
}

/// The FlameGraph perf test files whose every folded path grove gives as stackcollapse
/// does.
const PERF_PATHS_EQUAL: &[&str] = &[
    "cycles-instructions-01",
    "dd-stacks-01",
    "funcab-cmd-01",
    "funcab-pid-01",
    "iperf-stacks-pidtid-01",
    "java-faults-01",
    "java-stacks-01",
    "java-stacks-02",
    "js-stacks-01",
    "mirageos-stacks-01",
    "numa-stacks-01",
    "rust-Yamakaky-dcpu",
    // Not vertx-stacks-01: three samples pass through a frame with an empty symbol
    // (`7f1e2215d058  (/lib/.../libc-2.15.so)`), which stackcollapse's regex names ` `
    // and grove, as it names `[unknown]`, after its module (`[libc-2.15.so]`).
];
/// Samples that name no node are skipped with a warning that says what share of the
/// samples it hides (issue 24: over 10%, it is shown in the header and fails --strict).
#[test]
fn cpuprofile_skipped_samples_state_their_share() {
    let dir = std::env::temp_dir().join(format!("grove-cpuprofile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("t.cpuprofile");
    std::fs::write(
        &f,
        r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},{"id":2,"callFrame":{"functionName":"work","url":"a.js","lineNumber":1,"columnNumber":1}}],"startTime":0,"endTime":40,"samples":[2,2,2,9],"timeDeltas":[0,10,10,10]}"#,
    )
    .unwrap();
    let p = load_path(&f).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        p.serious_warnings(),
        vec!["1 sample(s) name no node and were skipped [hides 25.0% of the data]"],
        "{:?}",
        p.warnings
    );
}
