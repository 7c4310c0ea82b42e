//! Spill mode (`memory::spill`, issue 30): a load whose big blocks live in mapped files
//! on disk gives the same bytes as a load in memory. `GROVE_SPILL=SIZE` (a test switch,
//! docs/testing.md) turns spill mode on for every load, every block of SIZE bytes or
//! more (at least a page) in a file of its own.

mod common;

use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

/// `info`, `tree --format csv` and `kernels` of each trace: spilled at every page, the
/// same bytes as in memory.
#[test]
fn spilled_loads_print_the_same_bytes() {
    for name in [
        "steps4.trace.json.gz",
        "small.trace.json",
        "demo.trace.json.gz",
    ] {
        let f = data(name);
        let f = f.to_str().unwrap();
        for cmd in [
            &["info", "--no-cache"][..],
            &["tree", "--no-cache", "--format", "csv"],
            &["kernels", "--no-cache"],
        ] {
            let mut args = cmd.to_vec();
            args.push(f);
            let plain = common::grove(&args);
            let spilled = common::grove_env(&args, &[("GROVE_SPILL", "1")]);
            assert_eq!(plain.0, spilled.0, "{args:?}: {}", spilled.2);
            assert_eq!(plain.1, spilled.1, "{args:?}");
            assert_eq!(plain.2, spilled.2, "{args:?}");
        }
    }
}

/// With no usable directory (none there, and a cache directory that cannot be made)
/// the blocks stay on the heap: the same bytes, nothing said.
#[test]
fn no_usable_directory_loads_in_memory() {
    let dir = common::scratch("spill-nodir");
    let file = dir.join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let f = data("steps4.trace.json.gz");
    let args = ["tree", "--no-cache", "--format", "csv", f.to_str().unwrap()];
    let plain = common::grove(&args);
    let env = [
        ("GROVE_SPILL", "1"),
        ("TMPDIR", "/nonexistent/grove-spill"),
        ("XDG_CACHE_HOME", file.to_str().unwrap()),
    ];
    let spilled = common::grove_env(&args, &env);
    assert_eq!(plain, spilled);
}

/// In this process (whose allocator is grove's): a load with spill mode on really
/// spills, and gives the profile a load in memory gave. Spill mode stays on for the
/// rest of the process, so this is the file's only in-process load.
#[test]
fn a_load_spills_its_blocks_and_keeps_its_numbers() {
    use grove::memory::spill;
    let f = data("steps4.trace.json.gz");
    let plain = grove::readers::load_all(&f).unwrap();
    let dir = common::scratch("spill-blocks");
    spill::enable(&dir, 4096).unwrap();
    assert!(spill::is_on());
    assert_eq!(spill::dir().as_deref(), Some(dir.as_path()));
    let spilled = grove::readers::load_all(&f).unwrap();
    let (_, peak) = spill::bytes();
    assert!(peak > 0, "nothing was spilled");
    assert_eq!(plain.len(), spilled.len());
    for (a, b) in plain.iter().zip(&spilled) {
        assert_eq!(a.warnings, b.warnings);
        assert_eq!(a.cct.len(), b.cct.len());
        let ea = a
            .events
            .as_ref()
            .map(|e| (e.len(), e.ts.clone(), e.dur.clone()));
        let eb = b
            .events
            .as_ref()
            .map(|e| (e.len(), e.ts.clone(), e.dur.clone()));
        assert!(ea == eb, "the event tables differ");
    }
    drop(spilled);
    // The files are unlinked at creation: nothing is left in the directory.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

/// A Chrome trace of `steps` ProfilerSteps of `per` CPU ops, each launching a kernel
/// (`steps * (1 + 3 * per)` events).
fn write_trace(path: &Path, steps: usize, per: usize) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(f, "{{\"traceEvents\": [").unwrap();
    let (mut ts, mut corr) = (0u64, 0u64);
    for s in 0..steps {
        let dur = per as u64 * 10 + 5;
        let sep = if s == 0 { "" } else { "," };
        write!(f, "{sep}{{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#{s}\",\"pid\":1,\"tid\":1,\"ts\":{ts},\"dur\":{dur}}}").unwrap();
        for i in 0..per {
            let t = ts + 1 + i as u64 * 10;
            corr += 1;
            write!(f, ",{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op{}\",\"pid\":1,\"tid\":1,\"ts\":{t},\"dur\":8}}", i % 50).unwrap();
            write!(f, ",{{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":{},\"dur\":2,\"args\":{{\"correlation\":{corr}}}}}", t + 1).unwrap();
            write!(f, ",{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel_{}\",\"pid\":0,\"tid\":7,\"ts\":{},\"dur\":5,\"args\":{{\"correlation\":{corr},\"device\":0,\"stream\":7}}}}", i % 20, t + 3).unwrap();
        }
        ts += dur + 5;
    }
    write!(f, "]}}").unwrap();
}

/// A trace that does not fit `--max-memory` but whose heap part does loads whole, its
/// arrays spilled, and says so in one warning (`readers::fit::spill`): every event is
/// there. Skipped where no directory can take the files (a tmpfs /tmp).
#[test]
fn a_trace_past_max_memory_loads_whole_spilled() {
    let dir = common::scratch("spill-whole");
    let trace = dir.join("t.json");
    // 163 MB: its whole load needs ~80 MiB by fit.rs's rule, past 90% of 80 MiB, and
    // the heap's part (at least 64 MiB) within it.
    write_trace(&trace, 1200, 400);
    if let Err(why) = grove::memory::spill::choose_dir(80 << 20) {
        common::skipped_because("a_trace_past_max_memory_loads_whole_spilled", &why);
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let f = trace.to_str().unwrap();
    let (code, out, err) = common::grove(&["info", "--no-cache", "--max-memory", "80M", f]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("loaded whole with") && err.contains("of its arrays in mapped files under"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.contains("events:   1441200\n"), "{out}");
    assert!(out.contains("kernel 480000"), "{out}");
}
