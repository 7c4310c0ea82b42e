//! `--max-memory` is a hard cap on the peak (issue 32): a run either stays within 5% of
//! it or stops with one out-of-memory line, never past it. One test in this file: the
//! peak is the children's `ru_maxrss`, which a second child would blur.

use std::io::Write;
use std::process::Command;

/// A Chrome trace of `steps` ProfilerSteps, each with `per` nested CPU slices and a
/// kernel each: a few tens of MB, enough to load past a small cap.
fn write_trace(path: &std::path::Path, steps: usize, per: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(f, "{{\"traceEvents\": [").unwrap();
    let mut first = true;
    let mut sep = |f: &mut std::io::BufWriter<std::fs::File>| {
        if !std::mem::take(&mut first) {
            write!(f, ",").unwrap();
        }
    };
    let mut ts = 0u64;
    let mut corr = 0u64;
    for s in 0..steps {
        let step_start = ts;
        let step_dur = per as u64 * 10 + 5;
        sep(&mut f);
        write!(f, "{{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#{s}\",\"pid\":1,\"tid\":1,\"ts\":{step_start},\"dur\":{step_dur}}}").unwrap();
        for i in 0..per {
            let t = step_start + 1 + i as u64 * 10;
            corr += 1;
            sep(&mut f);
            write!(f, "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op{}\",\"pid\":1,\"tid\":1,\"ts\":{t},\"dur\":8}}", i % 50).unwrap();
            sep(&mut f);
            write!(f, "{{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":{},\"dur\":2,\"args\":{{\"correlation\":{corr}}}}}", t + 1).unwrap();
            sep(&mut f);
            write!(f, "{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel_{}\",\"pid\":0,\"tid\":7,\"ts\":{},\"dur\":5,\"args\":{{\"correlation\":{corr},\"device\":0,\"stream\":7}}}}", i % 20, t + 3).unwrap();
        }
        ts += step_dur + 5;
    }
    write!(f, "]}}").unwrap();
}

fn children_peak_kib() -> i64 {
    // SAFETY: getrusage fills a zeroed struct.
    unsafe {
        let mut r: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut r);
        r.ru_maxrss
    }
}

#[test]
fn the_peak_stays_within_max_memory() {
    let dir = std::env::temp_dir().join(format!("grove-memcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.json");
    write_trace(&trace, 400, 400);
    let cap_mib = 32;
    let out = Command::new(env!("CARGO_BIN_EXE_grove"))
        .args(["tree", "--no-cache", "--depth", "0", "--max-memory"])
        .arg(format!("{cap_mib}M"))
        .arg(&trace)
        .output()
        .unwrap();
    let peak_mib = children_peak_kib() as f64 / 1024.0;
    let err = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        peak_mib <= cap_mib as f64 * 1.05,
        "peak {peak_mib:.1} MiB over the {cap_mib} MiB cap: {err}"
    );
    match out.status.code() {
        // A part that fits, said in a warning.
        Some(0) => assert!(err.contains("loaded steps"), "{err}"),
        // Or one line.
        Some(2) => assert!(
            err.lines().count() == 1 && err.contains("out of memory"),
            "{err}"
        ),
        c => panic!("exit {c:?}: {err}"),
    }
}
