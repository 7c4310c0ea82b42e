//! Deterministic mutation fuzzing on stable Rust, run by `cargo test`: a seeded
//! byte mutator over seed inputs for every reader, the command parser, the filter
//! and derive expressions, both Hatchet query dialects and the session file. Each
//! target gets a fixed number of executions (a few seconds in all); set
//! `GROVE_FUZZ_ITERS=N` for longer runs and `GROVE_FUZZ_SEED=S` for another stream.
//! A failure names the target, seed and iteration and writes the input to
//! `$TMPDIR/grove-fuzz-crash-<target>-<seed>-<iter>` (docs/testing.md: reproducing).
//!
//! What counts as a failure: a panic, or one execution slower than 10 s (a hang).
//! Errors are fine; they must merely be errors.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Rng;
use grove::model::Format;

fn iters(default: u64) -> u64 {
    std::env::var("GROVE_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `GROVE_FUZZ_SECS=S` stops each target after S seconds (long runs by time rather
/// than by count); the executions done are printed either way.
fn time_budget() -> Option<Duration> {
    std::env::var("GROVE_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_secs)
}

fn base_seed() -> u64 {
    std::env::var("GROVE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_0f67_0e00)
}

/// Byte strings that reach interesting branches: JSON structure, escapes,
/// multi-byte whitespace, huge and odd numbers, query syntax.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"\\u",
    b"\\ud800",
    b",",
    b":",
    b"null",
    b"-",
    b"1e999",
    b"-0",
    b"18446744073709551616",
    b"NaN",
    b"\xc2\x85",
    b"\xc2\xa0",
    b"\xff",
    b"\x00",
    b"\n",
    b";",
    b" ",
    b"(",
    b")",
    b"MATCH",
    b"WHERE",
    b"->",
    b"*",
    b"+",
    b"~",
    b"\"ph\": \"X\"",
    b"\"ph\": \"B\"",
    b"\"ph\": \"E\"",
    b"\"frame\"",
    b"\"children\"",
    b"not ",
    b" and ",
    b" or ",
    b"999999999",
];

/// One mutation of `data`, chosen by `rng`.
pub fn mutate(data: &mut Vec<u8>, rng: &mut Rng) {
    let n = 1 + (rng.next() % 4) as usize;
    for _ in 0..n {
        let len = data.len();
        let at = |r: &mut Rng, l: usize| if l == 0 { 0 } else { (r.next() as usize) % l };
        match rng.next() % 8 {
            0 if len > 0 => {
                let i = at(rng, len);
                data[i] ^= 1 << (rng.next() % 8);
            }
            1 if len > 0 => {
                let i = at(rng, len);
                data[i] = rng.next() as u8;
            }
            2 if len > 0 => {
                let i = at(rng, len);
                let k = (1 + rng.next() % 16) as usize;
                data.drain(i..(i + k).min(len));
            }
            3 => {
                let i = at(rng, len + 1);
                let t = TOKENS[(rng.next() as usize) % TOKENS.len()];
                data.splice(i..i, t.iter().copied());
            }
            4 if len > 0 => {
                // Duplicate a chunk (deep nesting, repeated events).
                let i = at(rng, len);
                let k = ((1 + rng.next() % 64) as usize).min(len - i);
                let chunk: Vec<u8> = data[i..i + k].to_vec();
                let j = at(rng, len + 1);
                data.splice(j..j, chunk);
            }
            5 if len > 0 => {
                data.truncate(at(rng, len));
            }
            6 => {
                let i = at(rng, len + 1);
                let t = TOKENS[(rng.next() as usize) % TOKENS.len()];
                let times = 1 + rng.next() % 200;
                let rep: Vec<u8> = (0..times).flat_map(|_| t.iter().copied()).collect();
                data.splice(i..i, rep);
            }
            _ if len > 1 => {
                let i = at(rng, len);
                let j = at(rng, len);
                data.swap(i, j);
            }
            _ => data.push(rng.next() as u8),
        }
    }
}

fn crash_file(target: &str, seed: u64, iter: u64) -> PathBuf {
    std::env::temp_dir().join(format!("grove-fuzz-crash-{target}-{seed}-{iter}"))
}

/// Runs `f` over `n` mutations of each seed; panics (with a saved reproducer) on the
/// first panic or hang.
fn fuzz(target: &str, seeds: &[Vec<u8>], n: u64, mut f: impl FnMut(&[u8])) -> u64 {
    // Seeds from the shared corpus are missing where it is not beside the checkout (a
    // worktree elsewhere): such a target has nothing to mutate.
    if seeds.is_empty() {
        eprintln!("fuzz {target}: no seeds (the corpus is not there): skipped");
        return 0;
    }
    let seed = base_seed()
        ^ target
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31) ^ b as u64);
    let mut rng = Rng(seed | 1);
    let mut execs = 0;
    quiet_panics();
    let (start, budget) = (Instant::now(), time_budget());
    let mut reported = start;
    for iter in 0..n {
        if iter % 256 == 0 {
            if budget.is_some_and(|b| start.elapsed() > b) {
                break;
            }
            // Long runs show their progress (with --nocapture), so a run cut short
            // still says how far it got.
            if reported.elapsed() > PROGRESS_EVERY {
                reported = Instant::now();
                eprintln!(
                    "fuzz {target}: {execs} executions in {:.0} s, seed {seed} (running)",
                    start.elapsed().as_secs_f64()
                );
            }
        }
        let base = &seeds[(iter as usize) % seeds.len()];
        let mut data = base.clone();
        // Stack mutations: later iterations drift further from the seed.
        for _ in 0..=(iter % 3) {
            mutate(&mut data, &mut rng);
        }
        let t = Instant::now();
        FUZZING.with(|c| c.set(true));
        let r = catch_unwind(AssertUnwindSafe(|| f(&data)));
        FUZZING.with(|c| c.set(false));
        execs += 1;
        let slow = t.elapsed() > Duration::from_secs(10);
        if r.is_err() || slow {
            let path = crash_file(target, seed, iter);
            std::fs::write(&path, &data).unwrap();
            let what = if slow {
                "hang (over 10 s)".to_string()
            } else {
                format!("panic{}", LAST_PANIC.with(|p| p.borrow().clone()))
            };
            panic!(
                "fuzz {target}: {what} at seed {seed} iteration {iter}; input saved to {}",
                path.display()
            );
        }
    }
    eprintln!(
        "fuzz {target}: {execs} executions in {:.1} s, seed {seed}",
        start.elapsed().as_secs_f64()
    );
    execs
}

const PROGRESS_EVERY: Duration = Duration::from_secs(60);

thread_local! {
    static FUZZING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Where and why the last silenced panic happened, for the report.
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Panics inside a fuzzed call are reported by `fuzz` with the reproducer; silence
/// the default message for those only (tests run in parallel threads).
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if FUZZING.with(|c| c.get()) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                let why = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = format!(" ({at}: {why})"));
            } else {
                prev(info);
            }
        }));
    });
}

fn read(path: impl AsRef<Path>) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

fn testdata(rel: &str) -> Vec<u8> {
    read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata")
            .join(rel),
    )
    .unwrap()
}

fn corpus(rel: &str) -> Option<Vec<u8>> {
    common::corpus(rel).and_then(read)
}

/// A scratch path for a target whose reader opens a file, in a folder of its own (per
/// process and target: targets run side by side, and each removes its folder when it
/// ends). On Linux it is in /dev/shm (memory): rewriting a file of the same name in
/// place on ext4 makes the kernel flush it on close (auto_da_alloc), which held these
/// targets to a few hundred executions a second on a disk-backed /tmp.
fn scratch(name: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() && std::env::var_os("TMPDIR").is_none() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let d = base.join(format!("grove-fuzz-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Removes a scratch file or folder and the target's folder around it.
fn unscratch(path: &Path) {
    let _ = std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path));
    if let Some(d) = path.parent() {
        let _ = std::fs::remove_dir(d);
    }
}

/// Loads bytes through the stream readers (format sniffed from content).
fn load_bytes(data: &[u8]) {
    let _ = load_stream(data);
}

fn load_stream(data: &[u8]) -> Result<grove::model::Profile, String> {
    grove::readers::load_reader(
        Box::new(std::io::Cursor::new(data.to_vec())),
        None,
        data.len() as u64,
        "fuzz",
    )
}

/// Every seed of a stream target must load unmutated, and by the reader it is there
/// for (`formats`, in seed order; checked when the corpus is there and every seed with
/// it): a seed that fails already, or that another reader takes, would leave the
/// fuzzer exercising only an error path or the wrong reader.
fn assert_seeds_load(target: &str, seeds: &[Vec<u8>], formats: &[Format]) {
    let mut got = Vec::new();
    for (i, s) in seeds.iter().enumerate() {
        match load_stream(s) {
            Ok(p) => got.push(p.source.format),
            Err(e) => panic!("fuzz {target}: seed {i} does not load: {e}"),
        }
    }
    if got.len() == formats.len() {
        assert_eq!(got, formats, "fuzz {target}: the seeds' formats");
    }
}

/// The same for targets that read a file: each seed, written to `path`, loads.
fn assert_file_seeds_load(target: &str, path: &Path, seeds: &[Vec<u8>]) {
    for (i, s) in seeds.iter().enumerate() {
        std::fs::write(path, s).unwrap();
        if let Err(e) = grove::readers::load_all(path) {
            panic!("fuzz {target}: seed {i} does not load: {e}");
        }
    }
}

/// The fuzz target of each reader of `readers::READERS`, by the reader's name: a new
/// reader fails `every_reader_has_a_fuzz_target` until it has a seed and a target here.
const FUZZED: &[(&str, &str)] = &[
    ("HPCToolkit databases", "fuzz_hpctoolkit"),
    ("rocprof SQLite (results.db)", "fuzz_rocprof_sqlite"),
    ("OTF2 archives (Score-P)", "fuzz_otf2"),
    ("Nsight Systems SQLite exports", "fuzz_nsys_sqlite"),
    ("TAU profiles", "fuzz_tau"),
    ("Caliper .cali/JSON", "fuzz_caliper"),
    ("grove Parquet export", "fuzz_grove_exports"),
    ("Score-P CUBE4 (.cubex)", "fuzz_cube"),
    ("CUBE 3 XML (.cube)", "fuzz_cube"),
    ("perf.data (through perf script)", "fuzz_perf_data"),
    ("callgrind/cachegrind", "fuzz_cpu_profilers"),
    ("grove tree JSON", "fuzz_grove_exports"),
    ("grove tree CSV", "fuzz_grove_exports"),
    ("TensorFlow/JAX XPlane (.xplane.pb)", "fuzz_xplane"),
    ("pprof protobuf", "fuzz_cpu_profilers"),
    ("Perfetto protobuf trace", "fuzz_perfetto"),
    ("speedscope JSON", "fuzz_cpu_profilers"),
    ("Firefox Profiler (Gecko) JSON", "fuzz_gecko"),
    ("Chrome .cpuprofile", "fuzz_cpu_profilers"),
    ("rocprof CSV", "fuzz_rocprof_and_plaidml"),
    ("rocprofv3 JSON", "fuzz_rocprof_and_plaidml"),
    ("PlaidML event log", "fuzz_rocprof_and_plaidml"),
    ("gprof report", "fuzz_gprof"),
    ("perf script text", "fuzz_cpu_profilers"),
    ("perf JSON export", "fuzz_cpu_profilers"),
    ("PyTorch execution trace JSON", "fuzz_execution_trace"),
    ("cProfile/pstats", "fuzz_python_and_hpc_profiles"),
    ("pyinstrument JSON", "fuzz_python_and_hpc_profiles"),
    ("gprof2dot DOT", "fuzz_python_and_hpc_profiles"),
    ("timemory JSON", "fuzz_python_and_hpc_profiles"),
    ("Thicket/Hatchet to_json", "fuzz_python_and_hpc_profiles"),
    ("Hatchet literal JSON", "fuzz_hatchet_literal"),
    ("Chrome/Kineto trace JSON", "fuzz_chrome_trace"),
    ("folded stacks", "fuzz_folded"),
];

#[test]
fn every_reader_has_a_fuzz_target() {
    let missing: Vec<&str> = grove::readers::READERS
        .iter()
        .map(|r| r.name())
        .filter(|n| !FUZZED.iter().any(|(r, _)| r == n))
        .collect();
    assert!(
        missing.is_empty(),
        "readers without a fuzz target in tests/fuzz.rs's FUZZED: {}",
        missing.join(", ")
    );
    let source = include_str!("fuzz.rs");
    for (reader, target) in FUZZED {
        assert!(
            grove::readers::READERS.iter().any(|r| r.name() == *reader),
            "FUZZED names {reader:?}, which is no reader of READERS"
        );
        assert!(
            source.contains(&format!("#[test]\nfn {target}() {{")),
            "{reader}: its fuzz target {target} is no test of tests/fuzz.rs"
        );
    }
}

#[test]
fn fuzz_chrome_trace() {
    let mut seeds = vec![testdata("small.trace.json")];
    seeds.extend(corpus(
        "perfetto/inline_json/parser/json/test_json_all_slice_types.json",
    ));
    seeds.extend(corpus(
        "perfetto/inline_json/parser/json/test_json_flow.json",
    ));
    assert_seeds_load("chrome", &seeds, &[Format::ChromeTrace; 3]);
    fuzz("chrome", &seeds, iters(400), load_bytes);
}

/// The Chrome reader's block-wise fast path against its streaming reader, on mutated
/// traces: parts of a random small size on 1 to 3 threads must give the same events,
/// warnings and errors (a difference panics, so it is reported as a failure).
#[test]
fn fuzz_chrome_parts() {
    let mut seeds = vec![testdata("small.trace.json")];
    seeds.extend(corpus("kineto/tb_plugin/test/gpu_metrics_input.json"));
    seeds.extend(corpus(
        "perfetto/inline_json/parser/json/test_json_flow.json",
    ));
    let mut round = 0u64;
    fuzz("chrome_parts", &seeds, iters(200), |data| {
        round += 1;
        let parse = |part: Option<usize>, threads: Option<usize>| {
            grove::readers::chrome::set_thread_override(part, threads);
            let r = grove::readers::chrome::parse(data);
            grove::readers::chrome::set_thread_override(None, None);
            match r {
                Ok(t) => {
                    let e = &t.events;
                    let rows: Vec<String> = (0..e.len())
                        .map(|i| {
                            format!(
                                "{} {} {} {} {} {} {} {}",
                                e.name_of(i),
                                e.ts[i],
                                e.dur[i],
                                e.strings.resolve(e.pid[i]),
                                e.strings.resolve(e.tid[i]),
                                e.seq.get(i),
                                e.correlation[i],
                                e.args_of(i)
                                    .map(|a| a.to_json().to_string())
                                    .unwrap_or_default()
                            )
                        })
                        .collect();
                    format!(
                        "{rows:?} {:?} {:?} {:?} {}",
                        t.warnings,
                        t.meta,
                        t.counters.value,
                        t.flows.maps().0.len() + t.flows.maps().1.len()
                    )
                }
                Err(e) => format!("error {e}"),
            }
        };
        let want = parse(Some(0), None);
        let size = 1 + (round * 7919) as usize % 300;
        let threads = 1 + (round % 3) as usize;
        let got = parse(Some(size), Some(threads));
        assert!(
            got == want,
            "parts of {size} bytes on {threads} threads differ"
        );
    });
}

#[test]
fn fuzz_hatchet_literal() {
    let mut seeds = vec![b"[{\"frame\": {\"name\": \"main\", \"type\": \"function\"}, \"metrics\": {\"time\": 1.0}, \"children\": [{\"frame\": {\"name\": \"f\"}, \"metrics\": {\"time\": 0.5}}]}]".to_vec()];
    seeds.extend(corpus("hatchet-exports/graph-literal.literal.json"));
    assert_seeds_load("hatchet", &seeds, &[Format::HatchetLiteral; 2]);
    fuzz("hatchet", &seeds, iters(400), load_bytes);
}

#[test]
fn fuzz_folded() {
    let mut seeds = vec![b"main;foo;bar 12\nmain;foo 3\n# c\nmain;baz 1.5\n".to_vec()];
    seeds.extend(corpus(
        "FlameGraph/test/results/perf-java-stacks-02-collapsed-all.txt",
    ));
    assert_seeds_load("folded", &seeds, &[Format::Folded; 2]);
    fuzz("folded", &seeds, iters(600), load_bytes);
}

#[test]
fn fuzz_gprof() {
    let seeds = vec![testdata("gprof/report.txt"), testdata("gprof/flat.txt")];
    assert_seeds_load("gprof", &seeds, &[Format::Gprof; 2]);
    fuzz("gprof", &seeds, iters(600), load_bytes);
}

const CPUPROFILE: &str = "speedscope/sample/profiles/Chrome/65/simple.cpuprofile";

/// A gzipped seed, decompressed: mutating compressed bytes mostly tests the gzip check.
fn gunzipped(bytes: Option<Vec<u8>>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(&bytes?[..]),
        &mut out,
    )
    .ok()?;
    Some(out)
}

/// The samples of a `perf script` text that end within its first `max` bytes: still
/// the tool's own output, cut between two samples (at a blank line).
fn samples_prefix(text: Vec<u8>, max: usize) -> Vec<u8> {
    let cut = text[..max.min(text.len())]
        .windows(2)
        .rposition(|w| w == b"\n\n")
        .map_or(text.len(), |i| i + 2);
    text[..cut].to_vec()
}

/// JSON re-indented: the same document with short lines. A seed on one 48 KB line
/// spends most of an execution in the sniffing of line-oriented formats (the perf
/// script header pattern on the whole line), not in the reader it is meant for.
/// (A line break after each comma outside strings: keys keep their order, which the
/// sniffing of some formats looks at.)
fn pretty_json(bytes: Vec<u8>) -> Vec<u8> {
    let (mut out, mut in_str, mut escaped) = (Vec::with_capacity(bytes.len() * 2), false, false);
    for b in bytes {
        out.push(b);
        match b {
            _ if escaped => escaped = false,
            b'\\' if in_str => escaped = true,
            b'"' => in_str = !in_str,
            b',' if !in_str => out.push(b'\n'),
            _ => {}
        }
    }
    out
}

#[test]
fn fuzz_cpu_profilers() {
    // callgrind, perf script and perf's JSON export, pprof, speedscope, .cpuprofile.
    // Small seeds keep an execution cheap (a long run wants a million): the short
    // callgrind thread file, and a dozen samples of each perf script layout.
    let mut seeds = vec![
        testdata("callgrind/thr.callgrind.out-02"),
        samples_prefix(testdata("perf/spin.perf.txt"), 4096),
        samples_prefix(testdata("perf/spin-fields.perf.txt"), 4096),
    ];
    seeds.extend(gunzipped(Some(testdata("perf/spin.perf.json.gz"))));
    seeds.extend(gunzipped(corpus("parca/pkg/normalizer/profile.pb.gz")));
    seeds.extend(corpus(
        "speedscope/sample/profiles/speedscope/0.6.0/two-sampled.speedscope.json",
    ));
    seeds.extend(corpus(CPUPROFILE));
    assert_seeds_load(
        "cpu",
        &seeds,
        &[
            Format::Callgrind,
            Format::PerfScript,
            Format::PerfScript,
            Format::PerfScript,
            Format::Pprof,
            Format::Speedscope,
            Format::CpuProfile,
        ],
    );
    fuzz("cpu", &seeds, iters(600), load_bytes);
}

/// Firefox Profiler files (issue 29): a raw Gecko and a processed profile, written by
/// hand, and samply's recording (gunzipped).
#[test]
fn fuzz_gecko() {
    let mut seeds = vec![
        testdata("gecko/hand-raw.json"),
        testdata("gecko/hand-processed.json"),
    ];
    seeds.extend(gunzipped(read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/gecko/spin.samply.json.gz"),
    )));
    assert_seeds_load("gecko", &seeds, &[Format::Gecko; 3]);
    fuzz("gecko", &seeds, iters(400), load_bytes);
}

/// CPU samples inside Chrome traces (issue 29): DevTools' Profile/ProfileChunk events
/// and the top-level samples + stackFrames.
#[test]
fn fuzz_chrome_samples() {
    let dir = "speedscope/sample/profiles";
    let mut seeds = Vec::new();
    seeds.extend(corpus(&format!("{dir}/Chrome/141/no-arg-data.json")));
    seeds.extend(corpus(&format!(
        "{dir}/trace-event/multi-thread-with-samples.json"
    )));
    assert_seeds_load("chrome-samples", &seeds, &[Format::ChromeTrace; 2]);
    fuzz("chrome-samples", &seeds, iters(400), load_bytes);
}

/// perf.data through `perf script` (issue 29), when perf is on PATH: perf's errors on
/// a mutated file become one-line errors. Each execution runs perf: few of them.
#[test]
fn fuzz_perf_data() {
    let on_path = std::process::Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !on_path {
        skip!("perf is not on PATH")
    }
    let dir = scratch("perf-data");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("spin.perf.data");
    let seeds = vec![testdata("perf/spin.perf.data")];
    assert_file_seeds_load("perf-data", &file, &seeds);
    fuzz("perf-data", &seeds, iters(40), |d| {
        std::fs::write(&file, d).unwrap();
        if let Err(e) = grove::readers::load_all(&file) {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    });
    unscratch(&dir);
}

#[test]
fn fuzz_python_and_hpc_profiles() {
    // pstats (marshal), pyinstrument, timemory, gprof2dot DOT, Thicket to_json.
    let dir = "hatchet/hatchet/tests/data";
    let mut seeds = vec![pretty_json(testdata("thicket/mpi_scaling.thicket.json"))];
    for f in [
        "cprofile-hatchet-pstats/cprofile-cycle.pstats",
        "cprofile-hatchet-pstats/cprofile-cycle-py2.pstats",
        "pyinstrument-hatchet-json/pyinstrument-hatchet-profile.json",
        "timemory/wall.tree.json",
        "gprof2dot-cpi/callgrind.dot.64042.0.1",
    ] {
        seeds.extend(corpus(&format!("{dir}/{f}")));
    }
    assert_seeds_load(
        "python",
        &seeds,
        &[
            Format::ThicketJson,
            Format::CProfile,
            Format::CProfile,
            Format::Pyinstrument,
            Format::Timemory,
            Format::Gprof2Dot,
        ],
    );
    fuzz("python", &seeds, iters(600), load_bytes);
}

#[test]
fn fuzz_execution_trace() {
    // PyTorch execution traces, both layouts: read alone, and attached to the trace
    // of the same run (the Chakra pair of testdata/et).
    let mut seeds = vec![testdata("et/chakra_small_et.json")];
    seeds.extend(gunzipped(corpus(
        "hta/tests/data/execution_trace/benchmark_simple_add_et.json.gz",
    )));
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/et/chakra_small_trace.json");
    let et = scratch("fuzz_et.json");
    fuzz("et", &seeds, iters(600), |d| {
        load_bytes(d);
        std::fs::write(&et, d).unwrap();
        let mut p = grove::readers::load_all(&trace).unwrap().remove(0);
        let _ = grove::load::attach_et(&mut p, &et);
    });
}

#[test]
fn fuzz_xplane() {
    // XSpace protobufs: a plane of the corpus's multi-GPU worker.
    let seeds = vec![testdata("xplane/gpu1.xplane.pb")];
    fuzz("xplane", &seeds, iters(600), load_bytes);
}

#[test]
fn fuzz_perfetto() {
    // Perfetto protobuf traces: Chromium's (interned state, incremental clocks), the
    // rocprofv3-style one (GPU tracks, counters, skipped packet kinds) and one in the
    // Perfetto SDK's packet shape (the reader's fast path, `perfetto/fast.rs`).
    let mut seeds = vec![
        testdata("perfetto/synthetic_rocprof.pftrace"),
        testdata("perfetto/chromium_loading.pftrace"),
        testdata("perfetto/sdk_head.pftrace"),
    ];
    // A short prefix of each, so mutations reach the packets' fields quickly.
    let short: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| s[..s.len().min(4096)].to_vec())
        .collect();
    seeds.extend(short);
    fuzz("perfetto", &seeds, iters(600), load_bytes);
}

#[test]
fn fuzz_caliper() {
    // The three dialects: .cali records, json-split and cali-json (a flat record list).
    let mut seeds = vec![br#"[{"sum#time.duration": 0.5}, {"path": "main", "sum#time.duration": 1.0, "count": 1}, {"path": "main/foo", "sum#time.duration": 2.0, "avg#inclusive#sum#time.duration": 4}, {"path": ["main", "a/b"], "sum#time.duration": 1}]"#.to_vec()];
    seeds.extend(corpus("caliper/python/caliper-reader/example-profile.cali"));
    seeds.extend(corpus(
        "hatchet/hatchet/tests/data/caliper-ordered-json/caliper-region-node-order.json",
    ));
    let path = scratch("fuzz.cali");
    assert_file_seeds_load("caliper", &path, &seeds);
    fuzz("caliper", &seeds, iters(300), |d| {
        std::fs::write(&path, d).unwrap();
        let _ = grove::readers::load_all(&path);
        load_bytes(d);
    });
    unscratch(&path);
}

#[test]
fn fuzz_nsys_sqlite() {
    let seeds = vec![testdata("nsys/schema_3_16.sqlite")];
    let path = scratch("fuzz.sqlite");
    assert_file_seeds_load("nsys", &path, &seeds);
    fuzz("nsys", &seeds, iters(150), |d| {
        std::fs::write(&path, d).unwrap();
        let _ = grove::readers::load_all(&path);
    });
    unscratch(&path);
}

/// A TAU profile written by TAU's own format rules (callpaths, a second metric folder's
/// header, user events): the corpus has flat profiles only.
const TAU_CALLPATH: &str = "3 templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls # <metadata><attribute><name>Metric Name</name><value>TIME</value></attribute><attribute><name>Node Name</name><value>n1</value></attribute></metadata>\n\".TAU application\" 1 1 10 30 0 GROUP=\"TAU_DEFAULT\" \n\"foo() [{a.c} {3,1}-{9,1}]\" 2 0 20 20 0 GROUP=\"X\" \n\".TAU application => foo() [{a.c} {3,1}-{9,1}]\" 2 0 20 20 0 GROUP=\"TAU_CALLPATH\" \n0 aggregates\n1 userevents\n# eventname numevents max min mean sumsqr\n\"Message size\" 1 4 4 4 16\n";

#[test]
fn fuzz_tau() {
    // TAU is read from its path (profile.N.C.T names a rank): one file per execution.
    let mut seeds = vec![TAU_CALLPATH.as_bytes().to_vec()];
    seeds.extend(corpus(
        "hatchet/hatchet/tests/data/tau-cpi-mpi/profile.0.0.0",
    ));
    let path = scratch("profile.0.0.0");
    assert_file_seeds_load("tau", &path, &seeds);
    fuzz("tau", &seeds, iters(300), |d| {
        std::fs::write(&path, d).unwrap();
        let _ = grove::readers::load_all(&path);
    });
    unscratch(&path);
}

/// A ustar archive of `files` (name, bytes), as a `.cubex` is.
fn tar_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in files {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000600");
        h[124..135].copy_from_slice(format!("{:011o}", data.len()).as_bytes());
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        let sum: u32 = h
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                if (148..156).contains(&i) {
                    32
                } else {
                    c as u32
                }
            })
            .sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

/// The members of a tar archive (name, bytes), for the CUBE4 target's seeds.
fn tar_members(t: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos + 512 <= t.len() && t[pos] != 0 {
        let h = &t[pos..pos + 512];
        let name_end = h[..100].iter().position(|&c| c == 0).unwrap_or(100);
        let name = String::from_utf8_lossy(&h[..name_end]).into_owned();
        let size_text = String::from_utf8_lossy(&h[124..136]);
        let size =
            usize::from_str_radix(size_text.trim_matches(|c| c == '\0' || c == ' '), 8).unwrap();
        out.push((name, t[pos + 512..pos + 512 + size].to_vec()));
        pos += 512 + size.div_ceil(512) * 512;
    }
    out
}

#[test]
fn fuzz_cube() {
    // Whole archives (the tar walk), then one member at a time mutated inside an
    // otherwise intact archive (anchor.xml, an index, a compressed or plain data file):
    // the first byte of such a seed picks the member, the rest is its content.
    let small = testdata("cube/small.cubex");
    let mut seeds = vec![small.clone()];
    seeds.extend(corpus(
        "pycubexr/data/test_only_files/cube-values_example.cubex",
    ));
    assert_seeds_load("cube", &seeds, &vec![Format::Cube; seeds.len()]);
    fuzz("cube", &seeds, iters(300), load_bytes);
    let members = tar_members(&small);
    let parts: Vec<Vec<u8>> = members
        .iter()
        .enumerate()
        .map(|(i, (_, d))| {
            let mut s = vec![i as u8];
            s.extend_from_slice(d);
            s
        })
        .collect();
    fuzz("cube_parts", &parts, iters(600), |d| {
        let Some((&k, content)) = d.split_first() else {
            return;
        };
        let mut files = members.clone();
        let k = k as usize % files.len();
        files[k].1 = content.to_vec();
        let _ = load_stream(&tar_of(&files));
    });
    // The CUBE 3 XML form (`.cube`).
    let xml = vec![testdata("cube/small.cube")];
    assert_seeds_load("cube3", &xml, &[Format::Cube]);
    fuzz("cube3", &xml, iters(600), load_bytes);
}

#[test]
fn fuzz_rocprof_and_plaidml() {
    // rocprof's CSVs (legacy, rocprofv3, stats) and trace JSON; PlaidML's event log
    // (its head, uncompressed: mutating gzip bytes mostly tests the gzip check).
    let mut seeds = vec![
        testdata("rocm/kernel_trace.csv"),
        testdata("rocm/results.json"),
        testdata("rocm/41230_results.json"),
    ];
    seeds.extend(corpus("gunrock/results.csv"));
    seeds.extend(corpus("gunrock/results.stats.csv"));
    seeds.extend(
        gunzipped(corpus(
            "plaidml/tools/analysis/testdata/small_mobilenet_coco_log.gz",
        ))
        .map(|mut v| {
            v.truncate(16 << 10);
            v
        }),
    );
    fuzz("rocm", &seeds, iters(400), load_bytes);
}

#[test]
fn fuzz_rocprof_sqlite() {
    let mut seeds = vec![testdata("rocm/rocpd.db")];
    seeds.extend(corpus("gunrock/results.db"));
    let path = scratch("fuzz.results.db");
    fuzz("rocprof-db", &seeds, iters(100), |d| {
        std::fs::write(&path, d).unwrap();
        let _ = grove::readers::load_all(&path);
    });
}

#[test]
fn fuzz_hpctoolkit() {
    let Some(src) = common::corpus("hpctoolkit/tests/data/dbase/loops-perf.nostruct.d") else {
        skip!()
    };
    let dir = scratch("db.d");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["meta.db", "profile.db", "cct.db"] {
        // Written, not copied: the corpus files are read-only.
        std::fs::write(dir.join(f), read(src.join(f)).unwrap()).unwrap();
    }
    // One file mutated at a time, the others intact.
    for f in ["meta.db", "profile.db"] {
        fuzz_file_of(&format!("hpctoolkit-{f}"), &dir, &dir.join(f), iters(150));
    }
    unscratch(&dir);
}

/// A copy of a corpus database in a scratch folder (written, not copied: the corpus
/// files are read-only); None without the corpus.
fn scratch_database(corpus_dir: &str, files: &[&str], name: &str) -> Option<PathBuf> {
    let src = common::corpus(corpus_dir)?;
    let dir = scratch(name);
    std::fs::create_dir_all(&dir).unwrap();
    for f in files {
        std::fs::write(dir.join(f), read(src.join(f)).unwrap()).unwrap();
    }
    Some(dir)
}

#[test]
fn fuzz_hpctoolkit_trace_db() {
    // trace.db is read when a timeline is built (load::load_inputs), not by load_all:
    // the profiles come from the intact database, the mutated trace.db on top.
    let Some(dir) = scratch_database(
        "hpctoolkit/tests/data/dbase/loops-cputime-t.d",
        &["meta.db", "profile.db", "cct.db", "trace.db"],
        "trace.d",
    ) else {
        return;
    };
    let profiles = grove::readers::load_all(&dir).unwrap();
    let timeline = |d: &Path| {
        grove::readers::hpctoolkit::timeline::trace_events(d, &profiles, &profiles[0].cct)
    };
    assert!(
        matches!(timeline(&dir), Ok(Some(_))),
        "the seed has a timeline"
    );
    let path = dir.join("trace.db");
    let orig = read(&path).unwrap();
    fuzz("hpctoolkit-trace.db", &[orig], iters(150), |d| {
        std::fs::write(&path, d).unwrap();
        let _ = timeline(&dir);
    });
    unscratch(&dir);
}

#[test]
fn fuzz_hpctoolkit_old_format() {
    // The ≤ 2022 form: experiment.xml and one big-endian metric-db per rank.
    let ranks = [
        "1.cpi-000000-000-a8c00270-160443-0.metric-db",
        "1.cpi-000001-000-a8c00270-160444-0.metric-db",
    ];
    let mut files = vec!["experiment.xml"];
    files.extend(ranks);
    let Some(dir) = scratch_database(
        "hatchet/hatchet/tests/data/hpctoolkit-cpi-database",
        &files,
        "old.d",
    ) else {
        return;
    };
    assert!(grove::readers::load_all(&dir).is_ok(), "the seed loads");
    for f in ["experiment.xml", ranks[1]] {
        let name = if f == "experiment.xml" {
            f
        } else {
            "metric-db"
        };
        fuzz_file_of(
            &format!("hpctoolkit-{name}"),
            &dir,
            &dir.join(f),
            iters(150),
        );
    }
    unscratch(&dir);
}

#[test]
fn fuzz_otf2() {
    let Some(src) = common::corpus("pipit/pipit/tests/data/ping-pong-otf2-papi") else {
        skip!()
    };
    let dir = scratch("otf2");
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    let files = [
        "traces.otf2",
        "traces.def",
        "traces/0.def",
        "traces/0.evt",
        "traces/1.def",
        "traces/1.evt",
    ];
    for f in files {
        std::fs::write(dir.join(f), read(src.join(f)).unwrap()).unwrap();
    }
    // One file mutated at a time (event decoder, global and local definitions, anchor),
    // the others intact.
    for (f, n) in [
        ("traces/0.evt", 400),
        ("traces.def", 150),
        ("traces/1.def", 200),
        ("traces.otf2", 200),
    ] {
        let target = format!("otf2-{}", f.replace('/', "-"));
        fuzz_file_of(&target, &dir, &dir.join(f), iters(n));
    }
    unscratch(&dir);
}

/// Mutates one file of a multi-file input (a database, an archive) in place, the others
/// intact, loading the whole input each time; the file is put back afterwards.
fn fuzz_file_of(target: &str, dir: &Path, file: &Path, n: u64) {
    let orig = read(file).unwrap();
    fuzz(target, std::slice::from_ref(&orig), n, |d| {
        std::fs::write(file, d).unwrap();
        let _ = grove::readers::load_all(dir);
    });
    std::fs::write(file, &orig).unwrap();
}

fn demo_app() -> grove::app::App {
    grove::app::App::new(
        grove::readers::load_demo(),
        grove::app::keymap::Keymap::default_map(),
    )
}

const COMMANDS: &[&str] = &[
    "filter name contains \"aten\" and time (inc) > 1%",
    "filter not (leaf or depth <= 3)",
    "derive x = time / (time (inc) + 1) * -2",
    "derive y = max(time, abs(log(time)))",
    "sort name asc",
    "expand all",
    "squash",
    "group-by module",
    "filter MATCH (\"*\") -> (p) WHERE p.\"name\" =~ \"aten.*\"",
    "filter [{\"name\": \"aten.*\"}, \"*\", [\"+\", {\"time (inc)\": \"> 1\"}]]",
    "focus root",
    "hot-path",
];

#[test]
fn fuzz_commands() {
    let seeds: Vec<Vec<u8>> = COMMANDS.iter().map(|c| c.as_bytes().to_vec()).collect();
    let mut app = demo_app();
    let mut runs = 0;
    fuzz("commands", &seeds, iters(1500), |d| {
        let cmd = String::from_utf8_lossy(d);
        // Side effects on files (export, save, source) stay out of the fuzzer.
        let first = cmd.split_whitespace().next().unwrap_or("");
        if [
            "export", "save", "source", "write", "w", "o", "open", "theme", "q", "quit",
        ]
        .iter()
        .any(|c| first.eq_ignore_ascii_case(c))
        {
            return;
        }
        let _ = app.run(&cmd);
        runs += 1;
        // A fresh app now and then, so that state does not drift for ever; not often:
        // building one (the demo trace's GPU lanes) costs more than 100 commands.
        if runs % 500 == 0 {
            app = demo_app();
        }
    });
}

#[test]
fn fuzz_expressions_and_queries() {
    let profile = grove::readers::load_demo();
    let tree = grove::query::Tree {
        cct: &profile.cct,
        metrics: &profile.metrics,
    };
    let seeds: Vec<Vec<u8>> = [
        "name ~ \"^aten\" and time (inc) > 5% or not (leaf or depth <= 3)",
        "x = time / (time (inc) + 1) * -2 + min(time, 3)",
        "MATCH (\"*\") -> (2, p) -> (\".\", q) WHERE p.\"name\" STARTS WITH \"a\" OR q.\"time (inc)\" > 3",
        "[{\"name\": \"aten.*\"}, \"*\", [\"+\", {\"time (inc)\": \"> 1\"}], [2, {}]]",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    fuzz("expressions", &seeds, iters(3000), |d| {
        let text = String::from_utf8_lossy(d);
        if let Ok(e) = grove::query::expr::parse(&text) {
            let _ = grove::query::expr::select(&e, &tree);
        }
        let _ = grove::transform::derive::parse_definition(&text);
        let _ = grove::query::cypher::select(&text, &tree);
    });
}

#[test]
fn fuzz_session_file() {
    let seeds = vec![
        b"{\"format\":\"grove-session\",\"version\":1,\"tool_version\":\"0\",\"created\":\"2026-01-01T00:00:00Z\",\"inputs\":[{\"path\":\"/x\",\"size\":1,\"hash\":\"fnv64w:00\",\"label\":null}],\"term\":{\"cols\":80,\"rows\":24}}\n{\"seq\":1,\"t_ms\":0,\"cmd\":\"sort name asc\"}\n".to_vec(),
        b"# commands\nsort name asc\nfilter name ~ \"a\"\n".to_vec(),
    ];
    fuzz("session", &seeds, iters(3000), |d| {
        let _ = grove::session::parse(&String::from_utf8_lossy(d));
    });
}

#[test]
fn mutator_is_deterministic() {
    let run = || {
        let mut rng = Rng(42);
        let mut d = b"hello world".to_vec();
        for _ in 0..50 {
            mutate(&mut d, &mut rng);
        }
        d
    };
    assert_eq!(run(), run());
}

#[test]
fn fuzz_grove_exports() {
    // grove's own JSON, CSV and Parquet exports, read back (readers::grove_export).
    use grove::export::formats::Format as Export;
    let app = demo_app();
    let export = |f: Export| {
        let mut b = Vec::new();
        app.export_to(f, &mut b).unwrap();
        b
    };
    let seeds = vec![export(Export::Json), export(Export::Csv)];
    assert_seeds_load("grove-export", &seeds, &[Format::GroveExport; 2]);
    fuzz("grove-export", &seeds, iters(100), load_bytes);
    let parquet = vec![export(Export::Parquet)];
    let path = scratch("fuzz.parquet");
    assert_file_seeds_load("grove-parquet", &path, &parquet);
    fuzz("grove-parquet", &parquet, iters(150), |d| {
        std::fs::write(&path, d).unwrap();
        let _ = grove::readers::load_all(&path);
    });
    unscratch(&path);
}

/// The cache entry (issue 32): a real entry of a small trace, one of its files mutated
/// per execution (the first byte of the input picks which: `stamp.json`, or a Parquet
/// file with its recorded CRC-32 left stale). A lookup must never panic, abort or hang,
/// and what it returns is the cold tree or nothing.
///
/// `GROVE_FUZZ_CACHE_CRAFTED=1` adds crafted entries: a damaged Parquet file whose stamp
/// is rewritten to vouch for it, so polars' decoder reads it. Known to fail: polars
/// panics on its worker threads (contained by `cache::quietly`, but printed) and a
/// length read from the damaged file made one allocation of 2^61 bytes, which ends the
/// process (docs/testing.md, recorded runs).
#[test]
fn fuzz_cache_entry() {
    let trace = scratch("trace.json");
    std::fs::write(&trace, testdata("small.trace.json")).unwrap();
    let dir = trace.parent().unwrap().join("entry");
    let cold = grove::load::load_path(&trace).unwrap();
    grove::summary::cache::store_in(&dir, &trace, &cold).unwrap();
    let digest = |p: &grove::model::Profile| {
        let cols: Vec<(String, Vec<u64>)> = p
            .metrics
            .names()
            .into_iter()
            .map(|n| {
                let v = p
                    .metrics
                    .values(&n)
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect();
                (n, v)
            })
            .collect();
        let names: Vec<String> = (0..p.cct.len() as u32)
            .map(|n| grove::model::paths::path_of(&p.cct, n))
            .collect();
        (names, cols)
    };
    let want = digest(&grove::summary::cache::lookup_in(&dir, &trace).expect("the entry is used"));
    assert_eq!(want, digest(&cold), "a warm tree differs from the cold one");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n != "stamp.json")
        .collect();
    files.sort();
    let stamp = std::fs::read(dir.join("stamp.json")).unwrap();
    let originals: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
    // Which file: 0 the stamp, 1..=n a Parquet file, n+1..=2n the same with a stamp
    // that vouches for it.
    let n = files.len();
    let crafted = std::env::var_os("GROVE_FUZZ_CACHE_CRAFTED").is_some();
    let modes = if crafted { 2 * n + 1 } else { n + 1 };
    let mut seeds = vec![[vec![0u8], stamp.clone()].concat()];
    for (i, o) in originals.iter().enumerate() {
        seeds.push([vec![1 + i as u8], o.clone()].concat());
        if crafted {
            seeds.push([vec![1 + (n + i) as u8], o.clone()].concat());
        }
    }
    let vouch = |name: &str, bytes: &[u8]| -> Vec<u8> {
        let mut s: serde_json::Value = serde_json::from_slice(&stamp).unwrap();
        for f in s["files"].as_array_mut().unwrap() {
            if f[0] == name {
                f[1] = bytes.len().into();
                f[2] = crc32fast::hash(bytes).into();
            }
        }
        serde_json::to_vec(&s).unwrap()
    };
    fuzz("cache-entry", &seeds, iters(300), |d| {
        let Some((&k, body)) = d.split_first() else {
            return;
        };
        let k = k as usize % modes;
        let kept = if k == 0 {
            std::fs::write(dir.join("stamp.json"), body).unwrap();
            true
        } else {
            let i = (k - 1) % n;
            std::fs::write(dir.join(&files[i]), body).unwrap();
            if k > n {
                std::fs::write(dir.join("stamp.json"), vouch(&files[i], body)).unwrap();
            }
            k <= n
        };
        let got = grove::summary::cache::lookup_in(&dir, &trace);
        // Put the entry back for the next execution.
        std::fs::write(dir.join("stamp.json"), &stamp).unwrap();
        for (f, o) in files.iter().zip(&originals) {
            std::fs::write(dir.join(f), o).unwrap();
        }
        if let Some(p) = got.filter(|_| kept) {
            assert!(digest(&p) == want, "a damaged entry gave another tree");
        }
    });
    unscratch(&dir);
    unscratch(&trace);
}
