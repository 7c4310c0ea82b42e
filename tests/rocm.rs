//! AMD rocprof outputs and PlaidML event logs (issue 11): totals against the tools' own
//! figures (rocprof's `results.stats.csv`; PlaidML's kernel_times report, recomputed by
//! `scripts/plaidml_kernel_times.py` into `testdata/rocm/plaidml_kernel_times.json`),
//! lanes, names, and bad input.

use std::collections::BTreeMap;
use std::path::Path;

use grove::gpu::classify::Categories;
use grove::gpu::kernels::{table, KernelSort, TableOptions};
use grove::gpu::GpuModel;
use grove::load::load_path;
use grove::model::EventKind;

mod common;
use common::{corpus, grove};

fn testdata(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

/// (count, total ns) per kernel name, from grove's kernel table.
fn kernel_totals(path: &Path) -> BTreeMap<String, (u64, i64)> {
    let p = load_path(path).unwrap();
    let ev = p.events.as_ref().unwrap();
    let gpu = GpuModel::new(ev, Categories::builtin());
    let rows = table(
        ev,
        &gpu,
        &TableOptions {
            all: true,
            by_category: false,
            sort: KernelSort::Total,
        },
    );
    let mut out = BTreeMap::new();
    for r in rows {
        let e = out.entry(r.name.clone()).or_insert((0, 0));
        e.0 += r.count;
        e.1 += r.total_ns;
    }
    out
}

/// rocprof's stats CSV, read here with its own few lines: name -> (calls, total ns).
fn rocprof_stats(path: &Path) -> BTreeMap<String, (u64, i64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines().skip(1) {
        // "name",calls,total,average,percentage — the name is the only quoted field.
        let end = line.rfind('"').unwrap();
        let name = line[1..end].to_string();
        let rest: Vec<&str> = line[end + 2..].split(',').collect();
        out.insert(name, (rest[0].parse().unwrap(), rest[1].parse().unwrap()));
    }
    out
}

#[test]
fn rocprof_csv_and_db_match_rocprofs_own_stats() {
    let Some(dir) = corpus("gunrock") else {
        skip!()
    };
    let want = rocprof_stats(&dir.join("results.stats.csv"));
    assert_eq!(want.len(), 8);
    for file in ["results.csv", "results.db"] {
        let got = kernel_totals(&dir.join(file));
        assert_eq!(got, want, "{file}");
        let dispatches: u64 = got.values().map(|v| v.0).sum();
        assert_eq!(dispatches, 56, "{file}");
    }
}

#[test]
fn rocprof_stats_csv_opens_as_a_flat_kernel_list() {
    let Some(dir) = corpus("gunrock") else {
        skip!()
    };
    let p = load_path(&dir.join("results.stats.csv")).unwrap();
    assert_eq!(p.cct.len(), 8);
    let total: f64 = p.metrics.values("time").unwrap().iter().sum();
    let want: i64 = rocprof_stats(&dir.join("results.stats.csv"))
        .values()
        .map(|v| v.1)
        .sum();
    assert_eq!(total as i64, want);
    assert!(p.warnings.iter().any(|w| w.contains("no dispatch times")));
}

#[test]
fn rocprofv3_kernel_stats_csv_has_min_and_max() {
    let p = scratch(
        "kernel_stats.csv",
        b"\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\"\n\"zero_kernel(double*, int)\",24,12288,512.0,0.10,480,544,12.1\n",
    );
    let p = load_path(&p).unwrap();
    assert!(p.dialect.contains("rocprofv3"), "{}", p.dialect);
    assert_eq!(p.metrics.values("min").unwrap(), &[480.0]);
    assert_eq!(p.metrics.values("max").unwrap(), &[544.0]);
    assert_eq!(p.metrics.values("count").unwrap(), &[24.0]);
}

#[test]
fn rocprof_csv_tree_is_gpu_queue_kernel() {
    let Some(f) = corpus("gunrock/results.csv") else {
        skip!()
    };
    let (code, out, _) = grove(&["tree", f.to_str().unwrap(), "--depth", "2"]);
    assert_eq!(code, 0);
    assert!(out.contains("GPU 2"), "{out}");
    assert!(out.contains("queue 0"), "{out}");
}

#[test]
fn rocprofv3_kernel_trace_csv() {
    let f = testdata("rocm/kernel_trace.csv");
    let p = load_path(&f).unwrap();
    assert!(p.dialect.contains("rocprofv3"), "{}", p.dialect);
    let ev = p.events.as_ref().unwrap();
    assert_eq!(ev.len(), 4);
    // Mangled names are demangled, the raw symbol kept.
    assert!((0..ev.len()).any(|i| ev.name_of(i) == "matrixTranspose(float*, float*, int)"));
    let lanes: std::collections::BTreeSet<(i64, i64)> = (0..ev.len())
        .map(|i| (ev.device[i], ev.stream[i]))
        .collect();
    assert_eq!(lanes, [(1, 1), (2, 3)].into_iter().collect());
    let got = kernel_totals(&f);
    assert_eq!(got["matrixTranspose(float*, float*, int)"], (2, 8000));
    assert_eq!(
        got["void vector_add<float>(float const*, float const*, float*, int)"],
        (2, 2500)
    );
}

/// rocprofv3's JSON output (scripts/make_rocprofv3_json.py): the same four dispatches as
/// `kernel_trace.csv`, named by kernel id and agent handle, give the CSV's lanes and
/// totals; its memory copies land on each GPU's `copies` lane.
#[test]
fn rocprofv3_json_matches_its_csv() {
    let f = testdata("rocm/41230_results.json");
    let csv = testdata("rocm/kernel_trace.csv");
    let p = load_path(&f).unwrap();
    assert!(p.dialect.contains("rocprofv3 JSON"), "{}", p.dialect);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let ev = p.events.as_ref().unwrap();
    let kernels: Vec<usize> = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Kernel)
        .collect();
    assert_eq!(kernels.len(), 4);
    let lanes: std::collections::BTreeSet<(i64, i64)> = kernels
        .iter()
        .map(|&i| (ev.device[i], ev.stream[i]))
        .collect();
    assert_eq!(lanes, [(1, 1), (2, 3)].into_iter().collect());
    let mut got = kernel_totals(&f);
    let copies: Vec<usize> = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Memcpy)
        .collect();
    assert_eq!(copies.len(), 2);
    assert_eq!(got.remove("CopyHostToDevice"), Some((1, 50000)));
    assert_eq!(got.remove("CopyDeviceToHost"), Some((1, 30000)));
    assert_eq!(got, kernel_totals(&csv));
    let (code, out, _) = grove(&["tree", f.to_str().unwrap(), "--depth", "3"]);
    assert_eq!(code, 0);
    for want in [
        "GPU 1",
        "queue 1",
        "GPU 2",
        "queue 3",
        "copies",
        "matrixTranspose",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
}

#[test]
fn bad_rocprofv3_json_is_a_one_line_error() {
    let bytes = std::fs::read(testdata("rocm/41230_results.json")).unwrap();
    // Cut inside buffer_records, after the claim.
    refused(&scratch("cut_results.json", &bytes[..bytes.len() * 3 / 4]));
    // A dispatch whose start is a string.
    let text = String::from_utf8(bytes.clone()).unwrap();
    let bad = text.replacen(
        "\"start_timestamp\": 1000000",
        "\"start_timestamp\": \"x\"",
        1,
    );
    assert_ne!(bad, text);
    refused(&scratch("corrupt_results.json", bad.as_bytes()));
    // Just the key and nothing after it.
    refused(&scratch(
        "empty_results.json",
        b"{\"rocprofiler-sdk-tool\": ",
    ));
    // Binary garbage after the key.
    let mut junk = b"{\"rocprofiler-sdk-tool\": [".to_vec();
    junk.extend((0..=255u8).cycle().take(4096));
    refused(&scratch("junk_results.json", &junk));
    // A process with nothing traced is refused, saying what to trace.
    let p = scratch("none_results.json", b"{\"rocprofiler-sdk-tool\": [{}]}");
    refused(&p);
    let (_, _, err) = grove(&["info", p.to_str().unwrap()]);
    assert!(err.contains("--kernel-trace"), "{err}");
}

#[test]
fn rocprofv3_rocpd_database() {
    let f = testdata("rocm/rocpd.db");
    let p = load_path(&f).unwrap();
    assert!(p.dialect.contains("rocpd"), "{}", p.dialect);
    let ev = p.events.as_ref().unwrap();
    assert_eq!(ev.len(), 5);
    // GPUs by their index among GPUs (the CPU agent is not one), queues by id.
    let lanes: std::collections::BTreeSet<(i64, i64)> = (0..ev.len())
        .map(|i| (ev.device[i], ev.stream[i]))
        .collect();
    assert_eq!(lanes, [(0, 1), (1, 2)].into_iter().collect());
    let got = kernel_totals(&f);
    assert_eq!(got["matrixTranspose(float*, float*, int)"], (2, 8000));
    assert_eq!(
        got["void vector_add<float>(float const*, float const*, float*, int)"],
        (3, 3700)
    );
    // Without its kernels view a rocpd database is refused in one line.
    let bytes = std::fs::read(&f).unwrap();
    let copy = scratch("noview.rocpd.db", &bytes);
    rusqlite::Connection::open(&copy)
        .unwrap()
        .execute_batch("DROP VIEW kernels;")
        .unwrap();
    refused(&copy);
}

#[test]
fn rocprof_chrome_json_kernels_land_on_gpu_lanes() {
    let f = testdata("rocm/results.json");
    let p = load_path(&f).unwrap();
    assert!(p.dialect.contains("rocprof"), "{}", p.dialect);
    let ev = p.events.as_ref().unwrap();
    let kernels: Vec<usize> = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Kernel)
        .collect();
    assert_eq!(kernels.len(), 12);
    for &i in &kernels {
        assert_eq!(ev.device[i], 0);
        assert!(ev.stream[i] == 0 || ev.stream[i] == 1);
    }
    let copies = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Memcpy)
        .count();
    assert_eq!(copies, 2);
    let runtime = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Runtime)
        .count();
    assert_eq!(runtime, 12);
    // Timed in ns from the BeginNs/EndNs args, not the whole-µs ts/dur.
    let got = kernel_totals(&f);
    assert_eq!(got["matrixTranspose(float*, float*, int)"], (4, 36_600));
    assert_eq!(got["reduce_sum(float const*, float*, int)"], (4, 10_200));
    let (code, out, _) = grove(&["kernels", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("matrixTranspose"), "{out}");
    assert!(out.contains("reduce_sum"), "{out}");
}

#[test]
fn kineto_rocm_trace_still_reads_its_kernels() {
    let Some(f) = corpus("hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    else {
        skip!()
    };
    let p = load_path(&f).unwrap();
    assert!(!p.dialect.contains("rocprof"));
    let got = kernel_totals(&f);
    assert!(!got.is_empty());
}

#[test]
fn plaidml_kernel_totals_match_plaidmls_report() {
    let Some(f) = corpus("plaidml/tools/analysis/testdata/small_mobilenet_coco_log.gz") else {
        skip!()
    };
    let oracle: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(testdata("rocm/plaidml_kernel_times.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(oracle["executions"], 341);
    assert_eq!(oracle["total_ns"], 7_420_526);
    let got = kernel_totals(&f);
    let want: BTreeMap<String, (u64, i64)> = oracle["kernels"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                (
                    v["count"].as_u64().unwrap(),
                    v["total_ns"].as_i64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(got.values().map(|v| v.0).sum::<u64>(), 341);
    assert_eq!(got.values().map(|v| v.1).sum::<i64>(), 7_420_526);
}

#[test]
fn plaidml_tree_and_kernel_details() {
    let Some(f) = corpus("plaidml/tools/analysis/testdata/small_mobilenet_coco_log.gz") else {
        skip!()
    };
    let p = load_path(&f).unwrap();
    let names: Vec<&str> = (0..p.cct.len() as u32).map(|n| p.cct.name(n)).collect();
    for verb in [
        "tile::local_machine::Program::Run",
        "tile::local_machine::Compile",
        "tile::hal::opencl::BuildKernel",
        "tile::hal::opencl::Kernel::Run",
    ] {
        assert!(names.contains(&verb), "{verb}");
    }
    let count = p.metrics.values("count").unwrap();
    let runs: f64 = (0..p.cct.len())
        .filter(|&n| names[n] == "tile::local_machine::Program::Run")
        .map(|n| count[n])
        .sum();
    assert_eq!(runs, 139.0);
    // A kernel run's node names its kernel and carries its flops, bytes and type.
    let k = (0..p.cct.len() as u32)
        .find(|&n| p.cct.name(n) == "kernel_c25_sdk_38")
        .unwrap();
    let fr = p.cct.frame(k);
    assert!(fr.attr("flops").is_some() && fr.attr("bytes").is_some());
    assert!(fr.attr("type").is_some());
    // Kernel runs are device events on the device clock's lane, after their launch.
    let ev = p.events.as_ref().unwrap();
    let kernels: Vec<usize> = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Kernel)
        .collect();
    assert_eq!(kernels.len(), 341);
    assert!(kernels.iter().all(|&i| ev.stream[i] == 1));
    // Aligned clocks: the device runs fall inside the host's span (the device clock's
    // own epoch is ~1.25e15 ns, the host's Unix time ~1.52e18 ns).
    let runs: Vec<usize> = (0..ev.len())
        .filter(|&i| ev.name_of(i) == "tile::local_machine::Program::Run")
        .collect();
    let first_run = runs.iter().map(|&i| ev.ts[i]).min().unwrap();
    let last_run_end = runs.iter().map(|&i| ev.ts[i] + ev.dur[i]).max().unwrap();
    for &k in &kernels {
        assert!(ev.ts[k] >= first_run && ev.ts[k] <= last_run_end, "{k}");
    }
}

#[test]
fn plaidml_log_without_kernels_opens_with_a_note() {
    let Some(f) = corpus("plaidml/tools/analysis/testdata/eventlog.gz") else {
        skip!()
    };
    let (code, out, err) = grove(&["info", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no kernel activities"), "{out}");
}

fn scratch(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("grove-rocm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Exit 2 and one line naming the file, never a panic.
fn refused(path: &Path) {
    let (code, _, err) = grove(&["info", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{}: {err}", path.display());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(&*path.file_name().unwrap().to_string_lossy()),
        "{err}"
    );
    assert!(!err.contains("panick"), "{err}");
}

#[test]
fn bad_plaidml_logs_are_one_line_errors() {
    let Some(f) = corpus("plaidml/tools/analysis/testdata/small_mobilenet_coco_log.gz") else {
        skip!()
    };
    let raw = {
        use std::io::Read;
        let mut d = flate2::read::GzDecoder::new(std::fs::File::open(&f).unwrap());
        let mut v = Vec::new();
        d.read_to_end(&mut v).unwrap();
        v
    };
    // Cut inside the first record: refused. Cut later: read up to the cut, warned.
    refused(&scratch("cut1.eventlog.gz", &gzip(&raw[..6])));
    let p = scratch("cut2.eventlog.gz", &gzip(&raw[..raw.len() / 2]));
    let (code, out, _) = grove(&["info", p.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("ends inside record"), "{out}");
    // A corrupted record body.
    let mut bad = raw[..4000].to_vec();
    for b in &mut bad[12..200] {
        *b = 0xFF;
    }
    refused(&scratch("corrupt.eventlog.gz", &gzip(&bad)));
    let (code, _, err) = grove(&["info", "--strict", p.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn bad_rocprof_files_are_one_line_errors() {
    let header = "\"Index\",\"KernelName\",\"gpu-id\",\"queue-id\",\"BeginNs\",\"EndNs\"\n";
    refused(&scratch("empty.csv", header.as_bytes()));
    refused(&scratch(
        "notimes.csv",
        format!("{header}0,\"k\",0,0,abc,def\n").as_bytes(),
    ));
    refused(&scratch(
        "open_quote.csv",
        format!("{header}0,\"k,0,0,1,2\n").as_bytes(),
    ));
    // A results.db cut short.
    if let Some(db) = corpus("gunrock/results.db") {
        let bytes = std::fs::read(db).unwrap();
        refused(&scratch("cut.results.db", &bytes[..8192]));
    }
}

#[test]
fn unplaced_dispatches_are_never_silent() {
    let p = scratch(
        "nolane.csv",
        b"\"Index\",\"KernelName\",\"BeginNs\",\"EndNs\"\n0,\"k\",10,20\n",
    );
    let (code, _, err) = grove(&["info", p.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(err.contains("name no GPU or queue"), "{err}");
    let (code, _, _) = grove(&["info", "--strict", p.to_str().unwrap()]);
    assert_eq!(code, 2);
}

/// The corpus stats file (rocprof quotes its names there): every row is read, nothing
/// is left out, and calls and totals equal the file's own sums (56 dispatches,
/// 9,025,354 ns; python's csv module gives the same).
#[test]
fn rocprof_stats_csv_reads_every_row() {
    let Some(f) = corpus("gunrock/results.stats.csv") else {
        skip!()
    };
    let p = load_path(&f).unwrap();
    assert!(
        !p.warnings.iter().any(|w| w.contains("left out")),
        "{:?}",
        p.warnings
    );
    let sum = |m: &str| p.metrics.values(m).unwrap().iter().sum::<f64>();
    assert_eq!(p.cct.len(), 8);
    assert_eq!(sum("count"), 56.0);
    assert_eq!(sum("time"), 9_025_354.0);
}

/// Per kernel (calls, total ns) of the OPS table of `testdata/rocm/v1_hip_trace.db`, by
/// sqlite3: `SELECT Name, count(*), sum(DurationNs) FROM OPS GROUP BY Name`.
fn v1_ops_sums() -> BTreeMap<String, (u64, i64)> {
    [
        (
            "void vector_add<float, 256>(float const*, float const*, float*, int)",
            (4, 44800),
        ),
        (
            "void reduce<double, 4>(double const*, double*, unsigned long)",
            (2, 36400),
        ),
        ("fill_kernel", (1, 1250)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Older rocprof's stats CSV, names unquoted (`scripts/make_rocprof_v1_db.py`): the
/// commas inside a kernel name stay in the name, and calls and totals equal the OPS
/// table's own sums (sqlite3: `SELECT Name, count(*), sum(DurationNs) FROM OPS GROUP BY
/// Name` gives 4/44800, 2/36400, 1/1250; 7 ops, 82,450 ns).
#[test]
fn rocprof_stats_csv_with_unquoted_commas() {
    let p = load_path(&testdata("rocm/v1_hip_trace.stats.csv")).unwrap();
    let mut got = BTreeMap::new();
    let (t, c) = (
        p.metrics.values("time").unwrap(),
        p.metrics.values("count").unwrap(),
    );
    for n in 0..p.cct.len() {
        got.insert(p.cct.name(n as u32).to_string(), (c[n] as u64, t[n] as i64));
    }
    assert_eq!(got, v1_ops_sums());
    assert!(p.warnings.iter().any(|w| w.contains("unquoted commas")));
    assert!(!p.warnings.iter().any(|w| w.contains("left out")));
}

/// rocprof's `--hip-trace` SQLite (OPS/COPY/HIP; the current layout with an empty KERN
/// and the older one without KERN): kernels from OPS, copies from COPY, HIP calls as
/// runtime events, each op linked to the HIP call of its correlation id.
#[test]
fn rocprof_v1_hip_trace_db() {
    let want = v1_ops_sums();
    for f in ["rocm/v1_hip_trace.db", "rocm/v1_hip_trace_old.db"] {
        let path = testdata(f);
        let p = load_path(&path).unwrap();
        assert!(p.dialect.contains("OPS/COPY/HIP"), "{}", p.dialect);
        assert!(p.warnings.is_empty(), "{f}: {:?}", p.warnings);
        let ev = p.events.as_ref().unwrap();
        let of = |k: EventKind| (0..ev.len()).filter(|&i| ev.kind[i] == k).count();
        assert_eq!(
            (
                of(EventKind::Kernel),
                of(EventKind::Memcpy),
                of(EventKind::Runtime)
            ),
            (7, 2, 11),
            "{f}"
        );
        let got: BTreeMap<String, (u64, i64)> = kernel_totals(&path)
            .into_iter()
            .filter(|(k, _)| !k.starts_with("Copy"))
            .collect();
        assert_eq!(got.len(), 3, "{f}");
        for (k, v) in &got {
            assert_eq!(want.get(k), Some(v), "{f}: {k}");
        }
        // Every device op is linked to the HIP call of its correlation id.
        for i in (0..ev.len()).filter(|&i| ev.kind[i].is_gpu_activity()) {
            let l = ev.launch[i] as usize;
            assert_eq!(ev.correlation[l], ev.correlation[i], "{f}");
            let call = ev.name_of(l);
            let ok = if ev.kind[i] == EventKind::Kernel {
                call == "hipLaunchKernel"
            } else {
                call == "hipMemcpy"
            };
            assert!(ok, "{f}: {} launched by {call}", ev.name_of(i));
        }
        // The host side: one process, one thread, the calls' own time.
        let names: Vec<&str> = (0..p.cct.len() as u32).map(|n| p.cct.name(n)).collect();
        assert!(names.contains(&"process 4242") && names.contains(&"thread 4243"));
        let time = p.metrics.values("time").unwrap();
        let host: f64 = (0..p.cct.len())
            .filter(|&n| p.cct.frame(n as u32).kind.as_ref() == "runtime")
            .map(|n| time[n])
            .sum();
        assert_eq!(host, 130_000.0, "{f}");
    }
}

/// A legacy rocprof database with nothing to read says what it is, in one line.
#[test]
fn rocprof_v1_db_without_dispatches_says_what_it_is() {
    let dir = std::env::temp_dir().join(format!("grove-rocm-v1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("results.db");
    let _ = std::fs::remove_file(&path);
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(
        "CREATE TABLE HSA (\"BeginNs\" INTEGER, \"EndNs\" INTEGER, \"pid\" INTEGER, \"tid\" INTEGER, \"Name\" TEXT, \"args\" TEXT, \"Index\" INTEGER);
         CREATE TABLE KERN (\"Index\" INTEGER, \"KernelName\" TEXT);",
    )
    .unwrap();
    drop(db);
    let (code, _, err) = grove(&["info", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("legacy rocprof SQLite database"), "{err}");
    assert!(
        err.contains("its KERN table holds no dispatch with times"),
        "{err}"
    );
    assert!(err.contains("HSA, KERN"), "{err}");
    assert!(!err.contains("Nsight"), "{err}");
}

/// The corpus MobileNet log opens 283 `vertexai::AllocBuffer` activities and ends 141
/// of them: the 142 open ones get no duration (they were stretched to the clock's last
/// time, 855 s), are counted in `open` and warned. The 141 closed ones keep their own
/// spans, 9,041,699,848 ns in all (Python over the decoded log: the buffers' lifetimes
/// overlap, so they add up to more than the 7.52 s the host clock spans).
#[test]
fn plaidml_open_activities_have_no_duration() {
    let Some(f) = corpus("plaidml/tools/analysis/testdata/small_mobilenet_coco_log.gz") else {
        skip!()
    };
    let p = load_path(&f).unwrap();
    let open = p.metrics.values("open").unwrap();
    assert_eq!(open.iter().sum::<f64>(), 142.0);
    let alloc: Vec<usize> = (0..p.cct.len())
        .filter(|&n| p.cct.name(n as u32) == "vertexai::AllocBuffer")
        .collect();
    assert_eq!(alloc.iter().map(|&n| open[n]).sum::<f64>(), 142.0);
    let inc = p.metrics.values("time (inc)").unwrap();
    assert_eq!(alloc.iter().map(|&n| inc[n]).sum::<f64>(), 9_041_699_848.0);
    let ev = p.events.as_ref().unwrap();
    assert_eq!(ev.len(), 3524 - 142);
    let allocs = (0..ev.len())
        .filter(|&i| ev.name_of(i) == "vertexai::AllocBuffer")
        .count();
    assert_eq!(allocs, 141);
    assert!(p.warnings.iter().any(|w| w.starts_with(
        "142 activities have no end event in the log (vertexai::AllocBuffer): no duration"
    )));
}
