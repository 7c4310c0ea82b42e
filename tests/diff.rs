//! `grove diff BASE NEW` through the binary: the ranking, the totals and the exit code
//! on real pairs (two runs written by grove-gen with different parameters, a Caliper
//! scaling pair from the corpus, the same runs as Parquet summaries), and agreement
//! with the ensemble's `diff` columns in `grove tree BASE NEW`.

mod common;

use std::collections::HashMap;

use common::{corpus, grove};
use serde_json::Value;

const BASE: &str = "testdata/rank0.trace.json.gz";
// grove-gen with 2 layers and world 8 instead of 1 and 2 (testdata/README.md): more
// GEMM and all-reduce time, a layer `rank0` lacks.
const NEW: &str = "testdata/demo.trace.json.gz";
/// The tests of the ranking compare step by step (both runs number their steps 2..5),
/// as the ensemble's diff columns do; steps merged by default are tested below.
const KEEP: &str = "--keep-steps";

fn json(args: &[&str]) -> (i32, Value) {
    let mut a = vec!["diff"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--format", "json"]);
    let (code, out, err) = grove(&a);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, v)
}

fn paths(v: &Value, list: &str) -> Vec<String> {
    v[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn ranks_regressions_and_exits_1_past_the_threshold() {
    let (code, v) = json(&[BASE, NEW, KEEP]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["regressed"], true);
    assert_eq!(v["base"]["label"], "base");
    assert_eq!(v["new"]["label"], "new");
    assert_eq!(v["base"]["total"], 37_483_269.0);
    assert_eq!(v["new"]["total"], 55_230_595.0);
    let regs = paths(&v, "regressions");
    assert_eq!(
        regs[..2],
        [
            "python (main thread)/ProfilerStep#3/aten::item/aten::_local_scalar_dense/cudaStreamSynchronize",
            "python (main thread)/ProfilerStep#2/aten::item/aten::_local_scalar_dense/cudaStreamSynchronize",
        ]
    );
    let first = &v["regressions"][0];
    assert_eq!(first["diff"], 7_675_525.0);
    // Ranked: every difference no larger than the one before.
    let d: Vec<f64> = v["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["diff"].as_f64().unwrap())
        .collect();
    assert!(d.windows(2).all(|w| w[0] >= w[1]), "{d:?}");
    // By kernel: the all-reduce grew most (world 8 instead of 2).
    assert_eq!(v["kernel_metric"], "gpu_time");
    let k = &v["kernel_regressions"][0];
    assert!(
        k["kernel"]
            .as_str()
            .unwrap()
            .starts_with("ncclDevKernel_AllReduce"),
        "{k}"
    );
    // A kernel only NEW launches is ranked by its whole time, marked new.
    let only_new = v["kernel_regressions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["only"] == "new")
        .expect("a kernel new in NEW");
    assert_eq!(only_new["base"], Value::Null);
    assert_eq!(only_new["diff"], only_new["new"]);

    // A threshold above every change: exit 0, nothing listed.
    let (code, v) = json(&[BASE, NEW, KEEP, "--threshold", "8ms"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["regressed"], false);
    assert_eq!(v["counts"]["regressions"], 0);
    // 7.68 ms passes 7.5 ms: exit 1 again, one call path (the two steps' syncs grew by
    // 7.68 and 7.30 ms).
    let (code, v) = json(&[BASE, NEW, KEEP, "--threshold", "7.5ms"]);
    assert_eq!(code, 1);
    assert_eq!(v["counts"]["regressions"], 1);
    // The same pair the other way round: improvements, and no regression past 7.5 ms.
    let (code, v) = json(&[NEW, BASE, KEEP, "--threshold", "7.5ms"]);
    assert_eq!(code, 0);
    assert_eq!(v["counts"]["improvements"], 1);
    assert_eq!(v["improvements"][0]["diff"], -7_675_525.0);
}

/// Every call path's difference equals the `diff` and `diff (inc)` columns that
/// `diff new base` makes in `grove tree BASE NEW`.
#[test]
fn numbers_agree_with_the_ensemble_diff_columns() {
    let (_, v) = json(&[BASE, NEW, KEEP, "--threshold", "0", "--top", "100000"]);
    let (code, out, err) = grove(&[
        "tree",
        BASE,
        NEW,
        "--label",
        "0=base,1=new",
        "--cmd",
        "diff new base",
        "--metric",
        "diff,diff (inc)",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (di, dinc) = (col("diff"), col("diff (inc)"));
    let mut tree: HashMap<String, (f64, f64)> = HashMap::new();
    let mut rdr = csv_rows(&out);
    rdr.remove(0);
    for r in rdr {
        let num = |s: &str| s.parse::<f64>().unwrap_or(f64::NAN);
        tree.insert(r[0].clone(), (num(&r[di]), num(&r[dinc])));
    }
    let mut checked = 0;
    for list in ["regressions", "improvements"] {
        for r in v[list].as_array().unwrap() {
            let p = r["path"].as_str().unwrap();
            let (d, di) = tree[p];
            assert_eq!(r["diff"].as_f64().unwrap(), d, "{p}");
            assert_eq!(r["diff_inc"].as_f64().unwrap(), di, "{p}");
            checked += 1;
        }
    }
    // Nodes with no difference are not listed; every listed one is in the tree.
    assert!(checked > 100, "{checked}");
    let listed = v["counts"]["regressions"].as_u64().unwrap()
        + v["counts"]["improvements"].as_u64().unwrap();
    let nonzero = tree
        .values()
        .filter(|(d, _)| !d.is_nan() && *d != 0.0)
        .count() as u64;
    assert_eq!(listed, nonzero);
}

/// A tiny CSV reader: quoted fields with doubled quotes, as grove writes them.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let mut row = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    cur.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => row.push(std::mem::take(&mut cur)),
                (c, _) => cur.push(c),
            }
        }
        row.push(cur);
        rows.push(row);
    }
    rows
}

#[test]
fn text_and_csv_say_the_same() {
    let (code, out, err) = grove(&["diff", BASE, NEW, KEEP, "--top", "3"]);
    assert_eq!(code, 1);
    assert!(err.contains("regressed past the threshold (1%)"), "{err}");
    assert!(out.starts_with("time: new (NEW) - base (BASE)"), "{out}");
    assert!(
        out.contains("total: base 37.5 ms  new 55.2 ms  diff +17.7 ms (+47.3%)"),
        "{out}"
    );
    assert!(out.contains("REGRESSION: 4 call path(s)"), "{out}");
    let (code, out, _) = grove(&["diff", BASE, NEW, KEEP, "--format", "csv", "--top", "1"]);
    assert_eq!(code, 1);
    let rows = csv_rows(&out);
    assert_eq!(
        rows[0],
        ["section", "rank", "name", "base", "new", "diff", "diff_inc", "only"]
    );
    assert_eq!(
        rows[1][..6],
        ["total", "0", "", "37483269", "55230595", "17747326"]
    );
    assert_eq!(rows[2][0], "regression");
    assert_eq!(rows[2][5], "7675525");
    assert!(rows.iter().any(|r| r[0] == "kernel_regression"));
}

/// Each side a directory with one `grove summarize` summary: the same report as the
/// traces (the loading layer reads both).
#[test]
fn summaries_give_the_same_verdict() {
    let dir = std::env::temp_dir().join(format!("grove-diff-sum-{}", std::process::id()));
    let (a, b) = (dir.join("base"), dir.join("new"));
    for (input, out) in [(BASE, &a), (NEW, &b)] {
        let (code, _, err) = grove(&["summarize", input, "-o", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
    }
    let (code, from_sums) = json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    let (code2, from_traces) = json(&[BASE, NEW]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!((code, code2), (1, 1));
    assert_eq!(from_sums, from_traces);
}

/// Caliper's LULESH scaling runs (27 and 64 ranks, thicket's test data): the metric
/// has only inclusive columns, so the ranking is on them.
#[test]
fn caliper_scaling_pair() {
    let dir = "thicket/thicket/tests/data/mpi_scaling_cali";
    let (Some(a), Some(b)) = (
        corpus(&format!("{dir}/27_cores.cali")),
        corpus(&format!("{dir}/64_cores.cali")),
    ) else {
        skip!()
    };
    let (code, v) = json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["inclusive_only"], true);
    // The default metric is the profile's time metric (Caliper's average over ranks).
    assert_eq!(v["metric"], "Avg time/rank (inc)");
    assert_eq!(paths(&v, "regressions")[..2], ["main", "main/lulesh.cycle"]);
    assert_eq!(
        paths(&v, "improvements")[0],
        "main/lulesh.cycle/LagrangeLeapFrog/LagrangeNodal/CalcForceForNodes/MPI_Wait"
    );
    assert_eq!(v["kernel_regressions"].as_array().unwrap().len(), 0);
}

#[test]
fn usage_and_input_errors_exit_2() {
    for (args, msg) in [
        (
            vec!["diff", BASE, NEW, "--threshold", "fast"],
            "--threshold \"fast\"",
        ),
        (
            vec!["diff", BASE, NEW, "--metric", "nope"],
            "no column \"nope@base\"",
        ),
        (vec!["diff", BASE, "testdata/missing.json"], "missing.json"),
    ] {
        let (code, out, err) = grove(&args);
        assert_eq!(code, 2, "{args:?}: {out} {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
        let lines = err.lines().filter(|l| !l.contains("warning")).count();
        assert_eq!(lines, 1, "{err}");
    }
    // clap's own usage error.
    let (code, _, err) = grove(&["diff", BASE]);
    assert_eq!(code, 2);
    assert!(err.contains("required"), "{err}");
}

/// HTA's trace_compare pair (two Kineto traces of one job): the new
/// `All2All_Pooled_Req` in the test run is the largest regression, ranked by its whole
/// time although the base run lacks it; under the default 1% nothing passes.
#[test]
fn kineto_pair_from_hta() {
    let dir = "hta/tests/data/trace_compare";
    let (Some(a), Some(b)) = (
        corpus(&format!("{dir}/base/base.json.gz")),
        corpus(&format!("{dir}/test/test.json.gz")),
    ) else {
        skip!()
    };
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let (code, v) = json(&[a, b]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["regressed"], false);
    // Steps kept apart: the new work is under the step that has it.
    let (_, v) = json(&[a, b, "--threshold", "100us", KEEP]);
    assert_eq!(
        v["regressions"][0]["path"],
        "thread (main thread)/ProfilerStep#1010/All2All_Pooled_Req"
    );
    assert_eq!(v["steps_merged"], 0);
    let (code, v) = json(&[a, b, "--threshold", "100us"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["steps_merged"], 2);
    let top = &v["regressions"][0];
    assert_eq!(
        top["path"],
        "thread (main thread)/ProfilerStep#*/All2All_Pooled_Req"
    );
    assert_eq!(top["only"], "new");
    assert_eq!(top["base"], Value::Null);
    assert_eq!(top["diff"], top["new"]);
    // Its parent's own time shrank by as much; its inclusive difference did not.
    let parent = &v["improvements"][0];
    assert_eq!(parent["path"], "thread (main thread)/ProfilerStep#*");
    assert_eq!(parent["diff"].as_f64(), top["diff"].as_f64().map(|x| -x));
    assert_eq!(parent["diff_inc"], 0.0);
}

/// The trace at `rel` (gzipped JSON) with every `ProfilerStep#N` renumbered `N + 10`,
/// as a second run whose profiler schedule started later names the same steps.
fn renumbered(rel: &str, name: &str) -> std::path::PathBuf {
    let text = common::gunzip(rel);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find("ProfilerStep#") {
        let (head, tail) = rest.split_at(i + "ProfilerStep#".len());
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if let Ok(n) = tail[..digits].parse::<u64>() {
            out.push_str(&(n + 10).to_string());
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    let dir = std::env::temp_dir().join(format!("grove-diff-steps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, out).unwrap();
    path
}

/// Two runs of one program whose steps are numbered differently: merged by default,
/// step k meets step k and nothing changed; `--keep-steps` shows every step of each
/// run as new or gone (what the diff said before steps were aligned).
#[test]
fn steps_numbered_differently_are_aligned() {
    let mut pairs = vec![("testdata/steps4.trace.json.gz", "steps4.json", "aten::mm")];
    // The case: ResNet-50's DataLoader frame was listed once per step.
    let resnet =
        "../shared/corpus/kineto/plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz";
    if common::repo(resnet).exists() {
        pairs.push((resnet, "resnet.json", "enumerate(DataLoader)"));
    }
    for (rel, name, frame) in pairs {
        let other = renumbered(rel, name);
        let (a, b) = (common::repo(rel), other);
        let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
        let (code, v) = json(&[a, b, "--threshold", "0"]);
        assert_eq!(code, 0, "{v}");
        assert!(v["steps_merged"].as_u64().unwrap() >= 8, "{v}");
        assert_eq!(v["diff"], 0.0, "{v}");
        assert_eq!(v["counts"]["regressions"], 0, "{v}");
        assert_eq!(v["counts"]["improvements"], 0, "{v}");
        let (code, v) = json(&[a, b, "--threshold", "0", "--top", "100000", KEEP]);
        assert_eq!(code, 1, "{v}");
        let gone: Vec<String> = paths(&v, "improvements")
            .into_iter()
            .filter(|p| p.rsplit('/').next().unwrap().starts_with(frame))
            .collect();
        assert!(gone.len() >= 4, "{frame}: {gone:?}");
        assert!(
            gone.iter().all(|p| p.contains("/ProfilerStep#")),
            "{gone:?}"
        );
    }
}

/// `--cmd` reshapes both sides before the comparison, as `grove tree --cmd` does.
#[test]
fn cmd_reshapes_both_sides() {
    let dir = "hta/tests/data/trace_compare";
    let (Some(a), Some(b)) = (
        corpus(&format!("{dir}/base/base.json.gz")),
        corpus(&format!("{dir}/test/test.json.gz")),
    ) else {
        skip!()
    };
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let (code, v) = json(&[
        a,
        b,
        "--threshold",
        "0",
        "--cmd",
        "filter --squash name =~ 'nccl|All2All'",
    ]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(paths(&v, "regressions"), ["All2All_Pooled_Req"]);
    assert_eq!(paths(&v, "improvements"), ["nccl:all_reduce"]);
    assert_eq!(v["base"]["total"], 133_000.0);
    // A focus leaves one subtree in view: the totals are its own.
    let (_, v) = json(&[
        a,
        b,
        "--threshold",
        "0",
        "--cmd",
        "focus \"thread (main thread)/ProfilerStep#*\"",
    ]);
    assert!(paths(&v, "regressions")
        .iter()
        .chain(&paths(&v, "improvements"))
        .all(|p| p.starts_with("thread (main thread)/ProfilerStep#*")));
    assert_eq!(v["diff"], 0.0, "{v}");
    // A bad command is the usual one-line error.
    let (code, _, err) = grove(&["diff", a, b, "--cmd", "frobnicate"]);
    assert_eq!(code, 2, "{err}");
}

/// Kernel rows print short names (a signature runs to 1,500 characters);
/// `--expand-names` and the CSV and JSON keep them whole.
#[test]
fn kernel_names_are_cut_in_text() {
    // The longest stretch of a line between `/`s: the row's figures and one name.
    let longest = |text: &str| {
        text.lines()
            .flat_map(|l| l.split('/'))
            .map(|s| s.chars().count())
            .max()
            .unwrap()
    };
    let (code, out, _) = grove(&["diff", BASE, NEW, "--threshold", "0", "--top", "1000"]);
    assert_eq!(code, 1);
    assert!(
        longest(&out) < 130,
        "a name of {} characters",
        longest(&out)
    );
    // Shortened as the kernel panel shortens them (`kernel_rows_of_a_diff_read_apart`).
    assert!(
        out.contains("  ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)\n"),
        "{out}"
    );
    let (_, whole, _) = grove(&[
        "diff",
        BASE,
        NEW,
        "--threshold",
        "0",
        "--top",
        "1000",
        "--expand-names",
    ]);
    assert!(longest(&whole) > 500, "{}", longest(&whole));
    let (_, csv, _) = grove(&["diff", BASE, NEW, "--threshold", "0", "--format", "csv"]);
    assert!(longest(&csv) > 500);
}

/// The TUI's comparison (`grove A B`, its diff markers on from the start) aligns the
/// steps as `grove diff` does, through the same `steps::align_pair`: after it, the
/// TUI's `diff` finds no change between two runs whose steps are numbered
/// differently, where before every step of each run was new or gone. An ensemble of
/// more members (ranks of one run) keeps its steps.
#[test]
fn the_tui_aligns_steps_as_grove_diff_does() {
    use grove::app::keymap::Keymap;
    use grove::app::App;
    let rel = "testdata/steps4.trace.json.gz";
    let other = renumbered(rel, "steps4-tui.json");
    let files = vec![common::repo(rel), other];
    let p = grove::load::load_inputs(&files, &Default::default()).unwrap();
    let labels = grove::app::compare::member_labels(&p.metrics);
    let (p, merged) = grove::diff::steps::align_pair(p);
    assert!(merged >= 8, "{merged}");
    let mut app = App::new(p, Keymap::default_map());
    app.run(&format!("diff {} {}", labels[1], labels[0]))
        .unwrap();
    let err = app.run("diff-next").unwrap_err();
    assert!(err.starts_with("no node differs"), "{err}");
    // Three members: left as they are.
    let three = vec![
        common::repo(rel),
        common::repo(rel),
        common::repo("testdata/rank0.trace.json.gz"),
    ];
    let p = grove::load::load_inputs(&three, &Default::default()).unwrap();
    assert_eq!(grove::diff::steps::align_pair(p).1, 0);
    // `--keep-steps` is the TUI's (and replay's); elsewhere it is refused, not ignored.
    let (code, _, err) = grove(&["--keep-steps", "tree", BASE]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--keep-steps"), "{err}");
}

/// Kernel rows are shortened as the kernel panel shortens them: kernels that differ
/// read differently (three cuBLAS GEMMs all read `sm90_xmma_gemm_f16..._kernel__5x_cublas`
/// before), and no row is long.
#[test]
fn kernel_rows_of_a_diff_read_apart() {
    let (code, out, _) = grove(&["diff", BASE, NEW, "--threshold", "0", "--top", "1000"]);
    assert_eq!(code, 1);
    let mut names = Vec::new();
    let mut in_kernels = false;
    for l in out.lines() {
        if l.contains(" by kernel ") {
            in_kernels = true;
        } else if l.is_empty() || l.contains(" by call path ") {
            in_kernels = false;
        } else if in_kernels && !l.trim_start().starts_with("diff") && l.trim() != "none" {
            assert!(l.chars().count() < 130, "{l}");
            names.push(l.get(48..).unwrap_or("").trim().to_string());
        }
    }
    assert!(names.len() > 10, "{out}");
    let distinct: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), names.len(), "{names:#?}");
}
