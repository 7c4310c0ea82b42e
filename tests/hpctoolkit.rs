//! HPCToolkit databases loaded the way grove opens them (`load::load_path`: a database
//! directory, its trace.db beside profile.db, several databases as an ensemble), checked
//! against the records the databases themselves keep. The reader's own unit tests sit
//! beside it in crates/core/src/readers/hpctoolkit/.

use std::collections::HashMap;

use grove::load::load_path;
use grove::model::events::EventKind;

mod common;
use common::corpus;

/// trace.db against profile.db, two independent records of one run: the kernel
/// time on the GPU stream lines adds up to the database's total GKER time, and
/// there is one event per kernel launch (GKER:COUNT).
#[test]
fn gpu_lines_add_up_to_the_profiles_kernel_time() {
    let Some(base) = corpus("hpctoolkit/tests/data/dbase") else {
        skip!()
    };
    let mut checked = 0;
    for db in [
        "loops-cuda-nvidia-t.d",
        "loops-cuda-nvidiapc-t.nostruct.d",
        "loops-hip-amd-t.d",
        "recursion-cuda-nvidiapc-t.d",
    ] {
        let dir = base.join(db);
        let p = load_path(&dir).unwrap();
        let ev = p.events.as_ref().expect(db);
        let kernels: Vec<usize> = (0..ev.len())
            .filter(|&i| ev.kind[i] == EventKind::Kernel)
            .collect();
        let total: i64 = kernels.iter().map(|&i| ev.dur[i]).sum();
        let want: f64 = p
            .meta_value("summary.total GKER (sec) (inc)")
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            (total as f64 - want * 1e9).abs() <= kernels.len() as f64,
            "{db}: {total} ns vs {want} s"
        );
        if let Some(count) = p.meta_value("summary.total GKER:COUNT (inc)") {
            assert_eq!(kernels.len() as f64, count.parse::<f64>().unwrap(), "{db}");
        }
        for &i in &kernels {
            assert!(ev.stream[i] >= 0 && ev.device[i] >= 0, "{db}: stream");
            let path: Vec<&str> = p
                .cct
                .path(ev.node[i])
                .iter()
                .map(|&n| p.cct.name(n))
                .collect();
            assert!(path.contains(&"<gpu kernel>"), "{db}: {path:?}");
            if db.contains("cuda") && !db.contains("nostruct") {
                assert!(
                    path.iter().any(|n| n.starts_with("cudaLaunchKernel")),
                    "{db}: {path:?}"
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 4);
    // CPU threads: one lane per traced thread, events in time order without overlap.
    let p = load_path(&base.join("loops-cputime-t.d")).unwrap();
    let ev = p.events.as_ref().unwrap();
    assert!(ev.len() > 100);
    let mut by_thread: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in 0..ev.len() {
        assert_eq!(ev.kind[i], EventKind::Cpu);
        by_thread.entry(ev.tid[i]).or_default().push(i);
    }
    for evs in by_thread.values() {
        assert!(evs
            .windows(2)
            .all(|w| ev.ts[w[0]] + ev.dur[w[0]] <= ev.ts[w[1]]));
    }
}

#[test]
fn databases_merge_into_an_ensemble() {
    let Some(dir) = corpus("hpctoolkit/tests/data/dbase/loops-cputime-t.d") else {
        skip!()
    };
    let p = load_path(&dir).unwrap();
    let m = &p.metrics;
    for l in ["summary", "thread_0", "thread_3"] {
        assert!(m.has(&format!("CPUTIME (sec)@{l}")), "{l}: {:?}", m.names());
        assert!(m.has(&format!("CPUTIME (sec) (inc)@{l}")));
    }
    // The union merges sibling contexts of the same name and kind (a function called
    // from two call sites on one line, ...), so it can be smaller.
    let single = grove::readers::hpctoolkit::read(&dir).unwrap();
    assert!(p.cct.len() <= single[0].cct.len());
    assert!(
        p.default_metric.starts_with("CPUTIME (sec)@"),
        "{}",
        p.default_metric
    );
}
