//! No misreads: every row of ../shared/corpus/MANIFEST.md (a file, or a directory that
//! is one input) either loads as the format its `format` column names, or is refused
//! with exactly one line. A format grove does not read must never load as another.

mod common;

use std::collections::HashMap;

/// MANIFEST wording (by prefix, first match wins) -> the `Format::label()` grove loads
/// it as; `None`: grove does not read it, so it must be refused.
const FORMATS: &[(&str, Option<&str>)] = &[
    ("Kineto/Chrome trace JSON", Some("Chrome Trace Event JSON")),
    ("Chrome trace JSON", Some("Chrome Trace Event JSON")),
    ("Chrome .cpuprofile", Some("Chrome .cpuprofile")),
    ("folded stacks", Some("folded stacks")),
    ("Caliper .cali", Some("Caliper")),
    ("Caliper json-split", Some("Caliper")),
    ("HPCToolkit v4 database YAML", None),
    ("HPCToolkit v4 database", Some("HPCToolkit database")),
    ("HPCToolkit experiment.xml", Some("HPCToolkit database")),
    (
        "Nsight Systems SQLite export",
        Some("Nsight Systems SQLite export"),
    ),
    ("callgrind", Some("callgrind/cachegrind")),
    ("perf script text", Some("perf script text")),
    ("pprof protobuf", Some("pprof protobuf")),
    // Unclosed or out-of-order events: refused, as speedscope's own importer does.
    ("speedscope JSON (invalid by design)", None),
    ("speedscope JSON", Some("speedscope JSON")),
    ("cProfile pstats", Some("cProfile/pstats")),
    ("pyinstrument JSON", Some("pyinstrument JSON")),
    ("TAU profile", Some("TAU profile")),
    ("gprof2dot DOT", Some("gprof2dot DOT")),
    ("timemory JSON", Some("timemory JSON")),
    ("Hatchet GraphFrame JSON", Some("Thicket/Hatchet to_json")),
    (
        "PyTorch Execution Trace JSON",
        Some("PyTorch execution trace"),
    ),
    ("TF XSpace protobuf", Some("TensorFlow/JAX XSpace protobuf")),
    // rocprof's sysinfo is a rocminfo dump, not a profile.
    ("rocprof sysinfo", None),
    ("rocprof", Some("AMD rocprof")),
    ("PlaidML event log", Some("PlaidML event log")),
    ("OTF2", Some("OTF2 trace")),
    ("Score-P CUBE4", Some("Score-P/Scalasca CUBE")),
    ("Firefox Profiler", Some("Firefox Profiler (Gecko) JSON")),
    ("Gecko profile", Some("Firefox Profiler (Gecko) JSON")),
];

/// Formats whose readers are written but not yet in `readers::READERS`: refused for
/// now. The lead removes a line when its reader lands (and the files must then load
/// as that format).
const REFUSED_FOR_NOW: &[&str] = &[];

/// Readers whose format no MANIFEST row names (`FORMATS` has no row for it), and why.
const NOT_IN_THE_CORPUS: &[(&str, &str)] = &[
    (
        "grove Parquet export",
        "grove's own export: tests/round_trips.rs reads it back",
    ),
    (
        "grove tree JSON",
        "grove's own export: tests/round_trips.rs reads it back",
    ),
    (
        "grove tree CSV",
        "grove's own export: tests/round_trips.rs reads it back",
    ),
    (
        "Perfetto protobuf trace",
        "the corpus's perfetto/ holds JSON and goldens, no protobuf trace: testdata/perfetto, tests/perfetto.rs",
    ),
    (
        "gprof report",
        "no gprof report in the corpus: testdata/gprof, tests/gprof.rs",
    ),
    (
        "Hatchet literal JSON",
        "hatchet-exports/ is listed outside MANIFEST's Files table: tests/corpus.rs checks it against Hatchet",
    ),
];

/// Every reader of `readers::READERS` reads a format `FORMATS` maps MANIFEST rows to, or
/// says in `NOT_IN_THE_CORPUS` why the corpus has none: a new reader fails here, by
/// name, until its files are in the corpus walk. Needs no corpus.
#[test]
fn every_reader_is_in_the_corpus_walk() {
    let walked = |label: &str| FORMATS.iter().any(|(_, f)| *f == Some(label));
    let missing: Vec<String> = grove::readers::READERS
        .iter()
        .filter(|r| !walked(r.format().label()))
        .filter(|r| !NOT_IN_THE_CORPUS.iter().any(|(n, _)| *n == r.name()))
        .map(|r| format!("{} ({})", r.name(), r.format().label()))
        .collect();
    assert!(
        missing.is_empty(),
        "readers whose format no row of FORMATS names, and not in NOT_IN_THE_CORPUS: {}",
        missing.join(", ")
    );
    for (name, _) in NOT_IN_THE_CORPUS {
        let r = grove::readers::READERS.iter().find(|r| r.name() == *name);
        let r = r.unwrap_or_else(|| panic!("NOT_IN_THE_CORPUS names {name:?}, no reader"));
        assert!(
            !walked(r.format().label()),
            "{name}: FORMATS has its format now; take it out of NOT_IN_THE_CORPUS"
        );
    }
}

fn expected(wording: &str) -> Option<&'static str> {
    let grove = FORMATS
        .iter()
        .find(|(w, _)| wording.starts_with(w))
        .and_then(|(_, f)| *f)?;
    (!REFUSED_FOR_NOW.contains(&grove)).then_some(grove)
}

#[test]
fn no_corpus_file_loads_as_a_format_its_manifest_row_does_not_name() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let rows = common::manifest_rows(&dir);
    assert!(rows.len() > 300, "{} rows", rows.len());
    let mut misreads = Vec::new();
    let mut tally: HashMap<&str, (usize, usize)> = HashMap::new();
    for (path, wording) in &rows {
        let want = expected(wording);
        let r = grove::load::load_inputs(&[dir.join(path)], &HashMap::new());
        let t = tally.entry(want.unwrap_or("refused")).or_default();
        match r {
            Ok(p) => {
                t.0 += 1;
                let got = p.source.format.label();
                if want != Some(got) {
                    misreads.push(format!("{path} ({wording}) loads as {got}"));
                }
            }
            Err(e) => {
                t.1 += 1;
                let line = e.to_string();
                assert!(!line.contains('\n'), "{path}: more than one line: {line}");
                if want.is_none() {
                    // What grove reads is named, or why it is not that format.
                    assert!(
                        line.contains("grove") || line.contains("not an"),
                        "{path}: {line}"
                    );
                }
            }
        }
    }
    eprintln!("loaded/refused by expected format: {tally:?}");
    assert!(misreads.is_empty(), "misreads:\n{}", misreads.join("\n"));
}

#[test]
fn refusals_say_what_the_file_looks_like() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let cases = [
        (
            "speedscope/sample/profiles/callgrind/callgrind.example.log",
            "callgrind/cachegrind",
        ),
        ("FlameGraph/test/perf-dd-stacks-01.txt", "perf script text"),
        (
            "pipit/pipit/tests/data/foo-bar.csv",
            "a CSV file with columns",
        ),
        ("gunrock/results.sysinfo.txt", "rocminfo"),
        ("pprof/profile/testdata/cppbench.contention", "legacy pprof"),
        (
            "pipit/pipit/tests/data/ping-pong-projections",
            "Projections",
        ),
        // rocprof's SQLite output loads since issue 11.
        ("gunrock/results.db", "AMD rocprof"),
    ];
    for (path, what) in cases {
        let e = grove::load::load_inputs(&[dir.join(path)], &HashMap::new());
        match e {
            Err(e) => assert!(e.to_string().contains(what), "{path}: {e}"),
            // Once its reader lands, a pending format loads instead.
            Ok(p) => assert_eq!(
                p.source.format.label(),
                what.trim_start_matches("a ").trim_end_matches(" file"),
                "{path}"
            ),
        }
    }
}
