//! The GPU views' numbers: kernel totals equal the GPU time in the file (checked against
//! the independent oracle), the CSV columns are the documented ones, and the breakdowns
//! add up.

use std::path::Path;

use grove::gpu::breakdown::{self, Options};
use grove::gpu::classify::Categories;
use grove::gpu::kernels::{table, KernelSort, TableOptions};
use grove::gpu::GpuModel;
use grove::load::load_path;

mod common;
use common::{corpus, grove};

#[test]
fn kernel_totals_equal_gpu_time_in_every_trace() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(dir) = corpus("") else { skip!() };
    let oracle: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("testdata/corpus_totals.json")).unwrap(),
    )
    .unwrap();
    let mut checked = 0;
    for (path, want) in oracle["chrome"].as_object().unwrap() {
        if want["gpu"]["count"].as_i64().unwrap_or(0) == 0 {
            continue;
        }
        let p = load_path(&dir.join(path)).unwrap();
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
        let total: i64 = rows.iter().map(|r| r.total_ns).sum();
        let count: u64 = rows.iter().map(|r| r.count).sum();
        assert_eq!(total, want["gpu"]["ns"].as_i64().unwrap(), "{path}");
        assert_eq!(
            count as i64,
            want["gpu"]["count"].as_i64().unwrap(),
            "{path}"
        );
        let pct: f64 = rows.iter().map(|r| r.pct).sum();
        assert!((pct - 100.0).abs() < 1e-6 || total == 0, "{path}: {pct}");
        // Kernels only: the kernel category of the oracle.
        let k = table(
            ev,
            &gpu,
            &TableOptions {
                all: false,
                by_category: false,
                sort: KernelSort::Total,
            },
        );
        let kt: i64 = k.iter().map(|r| r.total_ns).sum();
        let want_k = want["gpu"]["by_cat"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(c, _)| c.eq_ignore_ascii_case("kernel"))
            .map(|(_, v)| v["ns"].as_i64().unwrap())
            .sum::<i64>();
        assert_eq!(kt, want_k, "{path}: kernels only");
        checked += 1;
    }
    assert!(checked >= 20, "{checked}");
}

#[test]
fn temporal_breakdown_adds_up() {
    let Some(f) = corpus("hta/tests/data/trace_filter/sampled_rank-0.json.gz") else {
        skip!()
    };
    let p = load_path(&f).unwrap();
    let ev = p.events.as_ref().unwrap();
    let gpu = GpuModel::new(ev, Categories::builtin());
    for opt in [
        Options::default(),
        Options {
            hta_rounding: true,
            ..Default::default()
        },
    ] {
        for t in breakdown::temporal(ev, &gpu, 0, &opt) {
            assert_eq!(
                t.compute_time_ns + t.non_compute_time_ns + t.idle_time_ns,
                t.kernel_time_ns
            );
            assert!(t.non_compute_time_ns >= 0 && t.idle_time_ns >= 0, "{t:?}");
        }
    }
    let o = breakdown::overlap(ev, &gpu, &Options::default());
    assert!((0.0..=100.0).contains(&o));
}

#[test]
fn kernels_csv_columns_are_fixed() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo.trace.json.gz");
    let (code, out, err) = grove(&[
        "kernels",
        f.to_str().unwrap(),
        "--format",
        "csv",
        "--top",
        "5",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        "name,category,count,total_ns,mean_ns,median_ns,min_ns,max_ns,std_ns,pct"
    );
    assert_eq!(lines.count(), 5);
    let (code, out, _) = grove(&["summary", f.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(code, 0);
    assert!(out.starts_with(
        "rank,stream,kernel_time_ns,compute_time_ns,non_compute_time_ns,idle_time_ns,compute_pct,non_compute_pct,idle_pct\n0,all,"
    ), "{out}");
    let (code, out, _) = grove(&[
        "summary",
        f.to_str().unwrap(),
        "--table",
        "all",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["overlap"][0]["comp_comm_overlap_pct"].is_number(),
        "{out}"
    );
    assert!(v["temporal"].as_array().unwrap().len() >= 2);
    let (code, _, err) = grove(&["summary", f.to_str().unwrap(), "--kernel-wait", "30"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = grove(&["summary", f.to_str().unwrap(), "--kernel-wait", "lots"]);
    assert_eq!(code, 2);
    assert!(err.contains("--kernel-wait"));
}

#[test]
fn kernels_of_two_ranks_merge() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let (r0, r1) = (d.join("rank0.trace.json.gz"), d.join("rank1.trace.json.gz"));
    let count = |args: &[&str]| -> i64 {
        let (_, out, _) = grove(args);
        // Names may hold quoted commas: count is the eighth field from the end.
        out.lines()
            .skip(1)
            .map(|l| l.rsplit(',').nth(7).unwrap().parse::<i64>().unwrap())
            .sum()
    };
    let a = count(&["kernels", r0.to_str().unwrap(), "--format", "csv"]);
    let b = count(&["kernels", r1.to_str().unwrap(), "--format", "csv"]);
    let both = count(&[
        "kernels",
        r0.to_str().unwrap(),
        r1.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert_eq!(a + b, both);
    let (_, out, _) = grove(&[
        "summary",
        r0.to_str().unwrap(),
        r1.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert!(
        out.contains("\n0,all,") && out.contains("\n1,all,"),
        "{out}"
    );
}

/// Two traces opened together (`grove A B`, then `3`): the kernel panel shows both
/// members' kernels, a row per profile and kernel, and the summary panel each
/// member's breakdowns, once the members' traces arrive behind the tree (issue 28:
/// "this profile has no GPU activity" of two traces full of kernels).
#[test]
fn two_traces_together_show_both_kernel_tables() {
    use grove::app::background::Pending;
    use grove::app::keymap::Keymap;
    use grove::app::panels::summary::LineStyle;
    use grove::app::App;
    let files = vec![
        common::repo("testdata/rank0.trace.json.gz"),
        common::repo("testdata/rank1.trace.json.gz"),
    ];
    let mut p = grove::load::load_inputs(&files, &Default::default()).unwrap();
    // As the TUI opens them: the merged events (the timeline's) indexed and the
    // members' own traces read behind the tree.
    let plan = grove::app::members::Plan::of(files.clone(), &p);
    assert!(plan.is_some());
    let behind = Pending::index_and_members(&mut p, Categories::builtin(), || None, plan);
    let mut app = App::new(p, Keymap::default_map());
    app.background = behind;
    while app.loading() {
        if !app.poll_background() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    app.run("panel kernels").unwrap();
    assert_eq!(app.panel.name(), "kernels");
    let rows = &app.kernels.rows;
    let of = |l: &str| {
        rows.iter()
            .filter(|r| r.profile.as_deref() == Some(l))
            .count()
    };
    assert!(of("rank0") > 0 && of("rank1") > 0, "{:?}", rows.len());
    assert_eq!(of("rank0") + of("rank1"), rows.len());
    // The runs of a kernel stand together, rank0 first.
    assert_eq!(rows[0].name, rows[1].name);
    assert_eq!(rows[0].profile.as_deref(), Some("rank0"));
    // Each row's share is of its own profile's table.
    let share: f64 = rows
        .iter()
        .filter(|r| r.profile.as_deref() == Some("rank1"))
        .map(|r| r.pct)
        .sum();
    assert!((share - 100.0).abs() < 1e-6, "{share}");
    app.run("kernels by count").unwrap();
    app.run("kernels top 2").unwrap();
    assert_eq!(app.kernels.rows.len(), 4);
    app.run("panel summary").unwrap();
    let lines = app.summary_lines();
    let titles: Vec<&str> = lines
        .iter()
        .filter(|(l, st)| *st == LineStyle::Title && l.starts_with("profile "))
        .map(|(l, _)| l.as_str())
        .collect();
    assert_eq!(titles, ["profile rank0", "profile rank1"]);
    assert!(lines.iter().any(|(l, _)| l == "temporal"));
}

/// `grove kernels A B`: one table with a `profile` column, the members labelled as
/// the ensemble labels them (`base`, `test`: what differs in their paths); `--merge`
/// gives one row per kernel over both. `grove summary A B` of two runs of one rank
/// adds the same column.
#[test]
fn kernels_and_summary_of_two_runs_have_a_profile_column() {
    let Some(base) = corpus("hta/tests/data/trace_compare/base/base.json.gz") else {
        skip!()
    };
    let test = corpus("hta/tests/data/trace_compare/test/test.json.gz").unwrap();
    let (b, t) = (base.to_str().unwrap(), test.to_str().unwrap());
    let (code, out, err) = grove(&["kernels", b, t, "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert!(lines.next().unwrap().starts_with("profile,name,category,"));
    let labels: std::collections::BTreeSet<&str> =
        lines.map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(labels.into_iter().collect::<Vec<_>>(), ["base", "test"]);
    let (_, text, _) = grove(&["kernels", b, t]);
    assert!(text.starts_with("profile "), "{text}");
    assert!(text
        .lines()
        .skip(1)
        .all(|l| l.starts_with("base ") || l.starts_with("test ")));
    let (_, merged, _) = grove(&["kernels", "--merge", b, t, "--format", "csv"]);
    assert!(merged.starts_with("name,category,"), "{merged}");
    let (code, out, err) = grove(&["summary", b, t, "--table", "temporal", "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("profile,rank,"), "{out}");
    assert!(
        out.contains("\nbase,1,all,") && out.contains("\ntest,1,all,"),
        "{out}"
    );
}
