//! PyTorch traces recorded with Python stacks (`with_stack=True`): the tree's CPU times
//! against PyTorch's own `key_averages()`, and the invariants that the improper-overlap
//! rule (docs/formats.md "Improper overlaps") keeps: nothing is counted twice.
//!
//! testdata/torch/train_stack.json.gz and its key_averages golden were recorded by
//! `python3 testdata/torch/record.py testdata/torch` (torch 2.15.0, CPU). The real
//! H100/MI300 traces of ../shared/corpus/tracelens are checked for the invariants.

mod common;

use std::collections::HashMap;
use std::path::Path;

use grove::load::load_path;
use grove::model::events::EventKind;
use grove::model::Profile;

/// Each node's lane root.
fn roots_of(p: &Profile) -> Vec<u32> {
    let cct = &p.cct;
    let mut root = vec![u32::MAX; cct.len()];
    for n in 0..cct.len() as u32 {
        // Parents come before their children in node order.
        root[n as usize] = match cct.parent(n) {
            None => n,
            Some(q) if (q as usize) < n as usize => root[q as usize],
            Some(_) => cct.path(n)[0],
        };
    }
    root
}

/// Per lane root: (busy span of its CPU events in ns, the root's `time (inc)`).
fn root_spans(p: &Profile) -> Vec<(String, f64, f64)> {
    let ev = p.events.as_ref().unwrap();
    let root = roots_of(p);
    let mut span: HashMap<u32, (i64, i64)> = HashMap::new();
    for i in 0..ev.len() {
        let cpu = matches!(ev.kind[i], EventKind::Cpu | EventKind::Runtime);
        let n = ev.node[i];
        if !cpu || n == u32::MAX {
            continue;
        }
        let e = span.entry(root[n as usize]).or_insert((i64::MAX, i64::MIN));
        e.0 = e.0.min(ev.ts[i]);
        e.1 = e.1.max(ev.ts[i] + ev.dur[i]);
    }
    let inc = p.metrics.values("time (inc)").unwrap();
    let mut out: Vec<_> = span
        .into_iter()
        .map(|(r, (a, b))| (p.cct.name(r).to_string(), (b - a) as f64, inc[r as usize]))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Nodes whose children's `time (inc)` add up to more than their own (0.1% slack).
fn overfull(p: &Profile) -> Vec<String> {
    let inc = p.metrics.values("time (inc)").unwrap();
    let mut bad = Vec::new();
    for n in 0..p.cct.len() as u32 {
        let kids: f64 = p.cct.children(n).map(|c| inc[c as usize]).sum();
        if kids > inc[n as usize] * 1.001 + 1.0 {
            bad.push(format!(
                "{}: children {kids} > {}",
                p.cct.name(n),
                inc[n as usize]
            ));
        }
    }
    bad
}

fn check_invariants(p: &Profile, what: &str) {
    let bad = overfull(p);
    assert!(
        bad.is_empty(),
        "{what}: {} node(s), e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(3)]
    );
    for (lane, span, inc) in root_spans(p) {
        assert!(
            inc <= span * 1.001 + 1.0,
            "{what}: lane {lane}: root {inc} ns > busy span {span} ns"
        );
    }
}

/// key_averages groups every `ProfilerStep#N` as `ProfilerStep*`.
fn op_key(name: &str) -> &str {
    if name.starts_with("ProfilerStep#") {
        "ProfilerStep*"
    } else {
        name
    }
}

#[test]
fn torch_cpu_times_match_key_averages() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/torch");
    let p = load_path(&dir.join("train_stack.json.gz")).unwrap();
    check_invariants(&p, "train_stack");
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("train_stack.key_averages.json")).unwrap(),
    )
    .unwrap();
    let exc = p.metrics.values("time").unwrap();
    let inc = p.metrics.values("time (inc)").unwrap();
    let count = p.metrics.values("count").unwrap();
    // Per op name: count, total, self; and whether every node of the name has only op
    // children (key_averages' self time leaves out child ops, not Python frames).
    let mut ours: HashMap<String, (f64, f64, f64, bool)> = HashMap::new();
    for n in 0..p.cct.len() as u32 {
        let f = p.cct.frame(n);
        if &*f.kind != "cpu_op" && &*f.kind != "user_annotation" {
            continue;
        }
        let e = ours
            .entry(op_key(&f.name).to_string())
            .or_insert((0.0, 0.0, 0.0, true));
        // PyTorch merges an op into a parent of the same name (`aten::div_` calling
        // `aten::div_` as its only child op: EventList._remove_dup_nodes), so key_averages counts the outer
        // one and gives it the inner one's self time; grove shows both.
        let nested = p.cct.parent(n).is_some_and(|q| {
            let ops = p.cct.children(q).filter(|&c| {
                let k = &*p.cct.frame(c).kind;
                k == "cpu_op" || k == "user_annotation"
            });
            p.cct.name(q) == &*f.name && ops.count() == 1
        });
        if !nested {
            e.0 += count[n as usize];
            e.1 += inc[n as usize];
        }
        e.2 += exc[n as usize];
        e.3 &= p
            .cct
            .children(n)
            .all(|c| &*p.cct.frame(c).kind != "python_function");
    }
    let ops = golden["ops"].as_object().unwrap();
    let mut compared = (0, 0);
    let mut worst = (0.0f64, 0.0f64);
    for (name, v) in ops {
        let (k_count, k_total, k_self) = (
            v["count"].as_f64().unwrap(),
            v["cpu_total_us"].as_f64().unwrap() * 1e3,
            v["self_cpu_us"].as_f64().unwrap() * 1e3,
        );
        let Some(&(count, total, own, ops_only)) = ours.get(name) else {
            panic!("{name}: in key_averages, not in grove's tree");
        };
        assert_eq!(count, k_count, "{name}: count");
        let off = (total - k_total).abs() / k_total.max(1.0);
        assert!(
            off <= 0.01,
            "{name}: total {total} ns vs key_averages {k_total} ns"
        );
        worst.0 = worst.0.max(off);
        compared.0 += 1;
        if ops_only {
            let off = (own - k_self).abs() / k_total.max(1.0);
            assert!(
                off <= 0.01,
                "{name}: self {own} ns vs key_averages {k_self} ns"
            );
            worst.1 = worst.1.max(off);
            compared.1 += 1;
        }
    }
    eprintln!(
        "train_stack: {} op names' totals (worst {:.4}%) and {} self times (worst {:.4}% of \
         the total) within 1% of key_averages",
        compared.0,
        worst.0 * 100.0,
        compared.1,
        worst.1 * 100.0
    );
    assert!(compared.0 > 50);
}

#[test]
fn steps_hold_their_ops() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/torch");
    let p = load_path(&dir.join("train_stack.json.gz")).unwrap();
    let inc = p.metrics.values("time (inc)").unwrap();
    let ev = p.events.as_ref().unwrap();
    for n in 0..p.cct.len() as u32 {
        if !p.cct.name(n).starts_with("ProfilerStep#") {
            continue;
        }
        // The step holds the Python frames of both training functions...
        let kids: Vec<&str> = p.cct.children(n).map(|c| p.cct.name(c)).collect();
        for f in ["train_cnn", "train_mlp"] {
            assert!(
                kids.iter().any(|k| k.ends_with(f)),
                "{}: no {f} child in {kids:?}",
                p.cct.name(n)
            );
        }
        // ...and shows its duration, less at most a few µs at its start.
        let i = (0..ev.len()).find(|&i| ev.node[i] == n).unwrap();
        assert!(inc[n as usize] <= ev.dur[i] as f64);
        assert!(inc[n as usize] >= ev.dur[i] as f64 * 0.99);
    }
    // The outermost Python frame shows its own duration, not more.
    let main = (0..p.cct.len() as u32)
        .find(|&n| p.cct.name(n).starts_with("record.py(") && p.cct.name(n).ends_with(": main"))
        .unwrap();
    let i = (0..ev.len()).find(|&i| ev.node[i] == main).unwrap();
    assert!(inc[main as usize] <= ev.dur[i] as f64 + 1.0);
}

#[test]
fn tracelens_traces_count_nothing_twice() {
    let files = [
        "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
        "tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
        "tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
        "tracelens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
        "tracelens/tests/traces/torch_compile_triton/trace.json.gz",
        "tracelens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz",
    ];
    let mut ran = 0;
    for f in files {
        let Some(path) = common::corpus(f) else {
            eprintln!("skipped: {f} (no ../shared/corpus)");
            continue;
        };
        let p = load_path(&path).unwrap();
        check_invariants(&p, f);
        ran += 1;
    }
    if ran == 0 {
        skip!()
    }
    eprintln!("tracelens: {ran} of {} traces checked", files.len());
}
