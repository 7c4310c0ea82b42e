use super::*;
use serde_json::Value;

const V4: &[&str] = &[
    "hpctoolkit/tests/data/dbase/small.d",
    "hpctoolkit/tests/data/dbase/small.nostruct.d",
    "hpctoolkit/tests/data/dbase/loops-cputime-t.d",
    "hpctoolkit/tests/data/dbase/loops-cputime-t.nostruct.d",
    "hpctoolkit/tests/data/dbase/loops-perf.d",
    "hpctoolkit/tests/data/dbase/loops-perf.nostruct.d",
    "hpctoolkit/tests/data/dbase/loops-cuda-nvidia-t.d",
    "hpctoolkit/tests/data/dbase/loops-cuda-nvidia-t.nostruct.d",
    "hpctoolkit/tests/data/dbase/loops-cuda-nvidiapc-t.d",
    "hpctoolkit/tests/data/dbase/loops-cuda-nvidiapc-t.nostruct.d",
    "hpctoolkit/tests/data/dbase/loops-hip-amd-t.d",
    "hpctoolkit/tests/data/dbase/loops-hip-amd-t.nostruct.d",
    "hpctoolkit/tests/data/dbase/recursion-cuda-nvidiapc-t.d",
    "hpctoolkit/tests/data/dbase/recursion-cuda-nvidiapc-t.nostruct.d",
    "pipit/pipit/tests/data/ping-pong-hpctoolkit",
];
const OLD: &[&str] = &[
    "hatchet/hatchet/tests/data/hpctoolkit-cpi-database",
    "hatchet/hatchet/tests/data/hpctoolkit-allgather-database",
];

fn corpus() -> Option<PathBuf> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("../shared/corpus");
    p.is_dir().then_some(p)
}

fn golden(name: &str) -> Value {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("testdata/hpctoolkit")
        .join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

fn load(dir: &Path) -> Vec<Profile> {
    read(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("grove-hpctoolkit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn every_database_loads() {
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    for rel in V4.iter().chain(OLD) {
        let dir = c.join(rel);
        assert!(sniff(&dir, &[]), "{rel}: not sniffed");
        let ps = load(&dir);
        let p0 = &ps[0];
        assert_eq!(p0.source.label, "summary", "{rel}");
        assert!(p0.source.size > 0);
        let mut labels: Vec<&str> = ps.iter().map(|p| p.source.label.as_str()).collect();
        for p in &ps {
            assert!(p.cct.check(), "{rel}");
            assert_eq!(p.cct.len(), p0.cct.len());
            assert_eq!(p.metrics.rows(), p.cct.len(), "{rel}");
            assert_eq!(p.source.format, Format::HpcToolkit);
            assert!(!p.default_metric.is_empty(), "{rel} {}", p.source.label);
            assert!(
                p.metrics.has(&p.default_metric),
                "{rel}: {}",
                p.default_metric
            );
            assert!(!p.source.label.contains('@'));
        }
        // Every node knows its context id.
        assert_eq!(ctx_nodes(&p0.cct).len(), p0.cct.len(), "{rel}");
        labels.sort();
        labels.dedup();
        assert_eq!(labels.len(), ps.len(), "{rel}: labels are not unique");
        eprintln!(
            "{rel}: {} profiles ({}), {} nodes, default {:?}, {} columns in the summary",
            ps.len(),
            ps.iter()
                .map(|p| p.source.label.as_str())
                .take(6)
                .collect::<Vec<_>>()
                .join(", "),
            p0.cct.len(),
            p0.default_metric,
            p0.metrics.names().len()
        );
    }
    let not_db = temp("not-a-db");
    assert!(!sniff(&not_db, &[]));
    assert!(read(&not_db).is_err());
    assert!(!sniff(&c.join(V4[0]).join("meta.db"), &[]));
    // The member files name their database too.
    assert_eq!(load(&c.join(V4[0]).join("meta.db")).len(), 2);
}

/// Column names for the metric ids of a YAML golden: (prop ids, stat ids).
fn yaml_columns(g: &Value) -> (HashMap<u64, String>, HashMap<u64, String>) {
    let mut prop = HashMap::new();
    let mut stat = HashMap::new();
    for m in g["metrics"].as_array().unwrap() {
        let name = m["name"].as_str().unwrap();
        let col = |scope: &str| match scope {
            "execution" => Some(format!("{name} (inc)")),
            "function" => Some(name.to_string()),
            _ => None,
        };
        for s in m["scopes"].as_array().unwrap() {
            if let Some(c) = col(s[0].as_str().unwrap()) {
                prop.insert(s[1].as_u64().unwrap(), c);
            }
        }
        for s in m["summaries"].as_array().unwrap() {
            assert_eq!(s[1], "$$");
            assert_eq!(s[2], "sum");
            if let Some(c) = col(s[0].as_str().unwrap()) {
                stat.insert(s[3].as_u64().unwrap(), c);
            }
        }
    }
    (prop, stat)
}

fn check_yaml(rel: &str, golden_name: &str) {
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    let dir = c.join(rel);
    let g = golden(golden_name);
    let ps = load(&dir);
    let p0 = &ps[0];
    let contexts = g["contexts"].as_array().unwrap();
    assert_eq!(p0.cct.len(), contexts.len(), "context count");
    let nodes = ctx_nodes(&p0.cct);
    for ctx in contexts {
        let id = ctx["ctx_id"].as_u64().unwrap() as u32;
        let n = nodes[&id];
        let parent = ctx["parent"].as_u64().map(|p| nodes[&(p as u32)]);
        assert_eq!(p0.cct.parent(n), parent, "parent of ctx {id}");
        let f = p0.cct.frame(n);
        let file = ctx["file"].as_str();
        let line = ctx["line"].as_u64();
        let module = ctx["module"].as_str();
        let kind = ctx["lexical_type"].as_str().unwrap();
        let name = match kind {
            "entry" => ctx["pretty_name"].as_str().unwrap().to_string(),
            "function" => ctx["function"].as_str().unwrap().to_string(),
            "loop" => format!("loop at {}:{}", basename(file.unwrap()), line.unwrap()),
            "line" => format!("{}:{}", basename(file.unwrap()), line.unwrap()),
            "instruction" => format!(
                "{}+0x{:x}",
                basename(module.unwrap()),
                ctx["offset"].as_u64().unwrap()
            ),
            k => panic!("unexpected lexical type {k}"),
        };
        assert_eq!(&*f.name, name, "ctx {id}");
        assert_eq!(&*f.kind, kind, "ctx {id}");
        if matches!(kind, "loop" | "line") {
            assert_eq!(f.attr("file"), file);
            assert_eq!(f.attr("line"), Some(line.unwrap().to_string().as_str()));
        }
        if let Some(m) = module {
            assert_eq!(f.attr("module"), Some(m), "ctx {id}");
            let off = format!("0x{:x}", ctx["offset"].as_u64().unwrap());
            assert_eq!(f.attr("offset"), Some(off.as_str()));
        }
        assert_eq!(
            f.attr("inlined").is_some(),
            ctx["relation"] == "inlined_call"
        );
    }

    // Values of every profile, both ways: present where the dump has them, NaN elsewhere.
    let (prop, stat) = yaml_columns(&g);
    let profiles = g["profiles"].as_array().unwrap();
    assert_eq!(ps.len(), profiles.len());
    let mut checked = 0;
    for (pi, gp) in profiles.iter().enumerate() {
        let p = &ps[pi];
        let summary = gp["is_summary"].as_bool().unwrap();
        assert_eq!(p.source.label, if pi == 0 { "summary" } else { "thread 0" });
        let ids = if summary { &stat } else { &prop };
        let mut expected: HashMap<(u32, &str), f64> = HashMap::new();
        for (ctx, mv) in gp["values"].as_object().unwrap() {
            let ctx: u32 = ctx.parse().unwrap();
            let Some(&n) = nodes.get(&ctx) else { continue };
            for (m, v) in mv.as_object().unwrap() {
                if let Some(col) = ids.get(&m.parse::<u64>().unwrap()) {
                    expected.insert((n, col.as_str()), num(v));
                }
            }
        }
        for col in ids.values() {
            for n in 0..p.cct.len() as u32 {
                let want = expected
                    .get(&(n, col.as_str()))
                    .copied()
                    .unwrap_or(f64::NAN);
                let got = p.metrics.get(col, n);
                assert!(
                    same(got, want),
                    "profile {pi} node {n} {col}: {got} vs {want}"
                );
                checked += 1;
            }
        }
        let total = gp["values"]["0"]
            .as_object()
            .and_then(|m| {
                m.iter().find(|(k, _)| {
                    ids.get(&k.parse::<u64>().unwrap())
                        .is_some_and(|c| c.ends_with("(inc)"))
                })
            })
            .map(|(_, v)| num(v));
        if let Some(t) = total {
            let key = format!("total {}", g["metrics"][0]["name"].as_str().unwrap());
            let got: f64 = p
                .meta_value(&format!("{key} (inc)"))
                .unwrap()
                .parse()
                .unwrap();
            assert!(same(got, t));
        }
    }
    assert!(checked > 20);

    // trace.db
    let traces = read_traces(&dir).unwrap();
    let gt = g["traces"].as_array().unwrap();
    assert_eq!(traces.len(), gt.len());
    for ((prof, line), t) in traces.iter().zip(gt) {
        assert_eq!(*prof as u64, t["prof_index"].as_u64().unwrap());
        let want: Vec<(u64, u32)> = t["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s[0].as_u64().unwrap(), s[1].as_u64().unwrap() as u32))
            .collect();
        assert_eq!(line, &want);
    }
    let tr = parse_traces(&std::fs::read(dir.join("trace.db")).unwrap()).unwrap();
    let r = &g["timestamp_range"];
    assert_eq!(tr.range, (r[0].as_u64().unwrap(), r[1].as_u64().unwrap()));
}

#[test]
fn small_matches_the_yaml_dump() {
    check_yaml("hpctoolkit/tests/data/dbase/small.d", "small.yaml.json");
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    // A few values by hand (small.yaml): caller's inclusive time, spinsleep's exclusive.
    let ps = load(&c.join("hpctoolkit/tests/data/dbase/small.d"));
    let p = &ps[1];
    let nodes = ctx_nodes(&p.cct);
    assert_eq!(p.default_metric, "CPUTIME (sec)");
    assert_eq!(p.metrics.unit("CPUTIME (sec)"), "s");
    assert_eq!(p.metrics.get("CPUTIME (sec) (inc)", nodes[&22]), 0.605316);
    assert_eq!(p.cct.name(nodes[&22]), "caller");
    assert_eq!(p.metrics.get("CPUTIME (sec)", nodes[&10]), 0.604943);
    assert!(p.metrics.get("CPUTIME (sec)", nodes[&4]).is_nan());
    assert_eq!(p.cct.name(nodes[&16]), "loop at small.c:3");
    assert_eq!(p.cct.name(nodes[&15]), "small.c:11");
    assert_eq!(p.cct.name(nodes[&1]), "main thread");
    assert_eq!(
        p.meta_value("id tuple"),
        Some("NODE 0 [0x11ac0300] / CORE 0 / THREAD 0")
    );
}

#[test]
fn small_nostruct_matches_the_yaml_dump() {
    check_yaml(
        "hpctoolkit/tests/data/dbase/small.nostruct.d",
        "small.nostruct.yaml.json",
    );
}

/// Hatchet trims function names (`GOMP_parallel [libgomp.so]` -> `GOMP_parallel`).
fn hatchet_function_name(name: &str) -> String {
    let mut name = name.to_string();
    let b = name.as_bytes();
    let mpi = name
        .strip_prefix("PMPI_")
        .or_else(|| name.strip_prefix("MPI_"));
    if let Some(rest) = mpi {
        if !rest.is_empty() {
            let keep = b.len() - rest.len()
                + rest
                    .bytes()
                    .take_while(|c| c.is_ascii_alphabetic() || *c == b'_')
                    .count();
            name.truncate(keep);
        }
    }
    for item in [" [", ".", "@", "(", "<"] {
        if let Some(i) = name.find(item) {
            if i > 0 {
                name.truncate(i);
            }
        }
    }
    name
}

fn hatchet_path(p: &str) -> &str {
    p.strip_prefix("src").unwrap_or(p)
}

#[test]
fn v4_matches_hatchet() {
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    let mut compared = 0;
    for rel in V4 {
        let stem = basename(rel).trim_end_matches(".d");
        let g = golden(&format!("hatchet-{stem}.json"));
        if let Some(e) = g["error"].as_str() {
            // Hatchet 2026.2 reads only databases with a CPUTIME/REALTIME/cycles metric.
            eprintln!("{rel}: Hatchet could not read it ({e})");
            continue;
        }
        let ps = load(&c.join(rel));
        let p = &ps[0];
        let nodes = ctx_nodes(&p.cct);
        let time = p
            .metrics
            .names()
            .into_iter()
            .find(|n| {
                let b = n.split('(').next().unwrap().trim().to_ascii_lowercase();
                matches!(b.as_str(), "cputime" | "realtime" | "cycles")
            })
            .unwrap();
        let inc = inclusive_name(&time);
        // Hatchet keeps the first main-thread entry point only.
        let entry = p
            .cct
            .root_ids()
            .into_iter()
            .find(|&r| &*p.cct.frame(r).name == "main thread")
            .unwrap();
        let mut count = 0;
        let mut stack = vec![entry];
        while let Some(n) = stack.pop() {
            count += 1;
            stack.extend(p.cct.children(n));
        }
        assert_eq!(
            count as u64,
            g["node_count"].as_u64().unwrap(),
            "{rel}: node count"
        );
        for hn in g["nodes"].as_array().unwrap() {
            let nid = hn["nid"].as_u64().unwrap() as u32;
            let n = nodes[&nid];
            let f = p.cct.frame(n);
            let kind = hn["type"].as_str().unwrap();
            assert_eq!(&*f.kind, kind, "{rel} ctx {nid}");
            assert_eq!(p.cct.depth(n) as u64, hn["depth"].as_u64().unwrap());
            let hname = hn["name"].as_str().unwrap();
            let file = f.attr("file").map(hatchet_path).unwrap_or("");
            let line = f.attr("line").unwrap_or("");
            let want = match kind {
                "entry" => "entry".to_string(),
                "function" => format!("function: {}", hatchet_function_name(&f.name)),
                "loop" | "line" => format!("{kind} {file}:{line}"),
                "instruction" => {
                    let off =
                        u64::from_str_radix(f.attr("offset").unwrap().trim_start_matches("0x"), 16)
                            .unwrap();
                    format!("{}:{off}", f.attr("module").unwrap())
                }
                k => panic!("{k}"),
            };
            assert_eq!(hname, want, "{rel} ctx {nid}");
            let (t, ti) = (p.metrics.get(&time, n), p.metrics.get(&inc, n));
            assert!(
                same(t, num(&hn["time"])),
                "{rel} ctx {nid} time {t} vs {}",
                hn["time"]
            );
            assert!(
                same(ti, num(&hn["time (inc)"])),
                "{rel} ctx {nid} time (inc) {ti} vs {}",
                hn["time (inc)"]
            );
            compared += 1;
        }
    }
    assert!(compared > 250, "{compared}");
}

/// Splits one CSV line (double quotes, no embedded newlines).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// Compares a node name with Hatchet's. Hatchet names a statement after the file of
/// the procedure frame or loop it saw last in the XML, not the one enclosing it; such
/// names differ in the file only, and their nids go to `quirks`.
fn check_old_name(ours: &str, hatchet: &str, kind: &str, nid: u32, quirks: &mut Vec<u32>) {
    let hatchet = strip_call_line(hatchet);
    let hatchet = match hatchet.strip_prefix("Loop@") {
        Some(rest) => format!("loop at {rest}"),
        None => hatchet.to_string(),
    };
    if ours == hatchet {
        return;
    }
    assert_eq!(kind, "line", "nid {nid}: {ours:?} vs {hatchet:?}");
    assert_eq!(
        ours.rsplit(':').next(),
        hatchet.rsplit(':').next(),
        "nid {nid}"
    );
    quirks.push(nid);
}

/// Hatchet names a procedure called from line L `L:name`.
fn strip_call_line(name: &str) -> &str {
    match name.split_once(':') {
        Some((l, rest)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => name,
    }
}

#[test]
fn old_cpi_matches_hatchet_csv() {
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    let ps = load(&c.join(OLD[0]));
    let labels: Vec<&str> = ps.iter().map(|p| p.source.label.as_str()).collect();
    assert_eq!(labels, ["summary", "rank 0", "rank 1", "rank 2", "rank 3"]);
    let text =
        std::fs::read_to_string(c.join("hatchet/hatchet/tests/data/hpctoolkit-cpi-graphframe.csv"))
            .unwrap();
    let mut lines = text.lines();
    let head = csv_fields(lines.next().unwrap());
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (rank, inc, exc, nid, name, ty) = (
        col("rank"),
        col("time (inc)"),
        col("time"),
        col("nid"),
        col("name"),
        col("type"),
    );
    let mut nids = std::collections::BTreeSet::new();
    let mut quirks = Vec::new();
    let mut rows = 0;
    for l in lines {
        let f = csv_fields(l);
        let r: usize = f[rank].parse().unwrap();
        let p = &ps[1 + r];
        let nodes = ctx_nodes(&p.cct);
        let id: u32 = f[nid].parse().unwrap();
        nids.insert(id);
        let n = nodes[&id];
        let kind = match f[ty].as_str() {
            "PF" => "function",
            "S" => "line",
            "L" => "loop",
            t => panic!("{t}"),
        };
        assert_eq!(&*p.cct.frame(n).kind, kind);
        check_old_name(p.cct.name(n), &f[name], kind, id, &mut quirks);
        let (want_inc, want_exc): (f64, f64) = (f[inc].parse().unwrap(), f[exc].parse().unwrap());
        assert_eq!(
            p.metrics.get("CPUTIME (usec) (inc)", n),
            want_inc,
            "rank {r} nid {id}"
        );
        assert_eq!(
            p.metrics.get("CPUTIME (usec)", n),
            want_exc,
            "rank {r} nid {id}"
        );
        rows += 1;
    }
    assert_eq!(rows, 136);
    // Statement 60 sits in an <unknown procedure> of <unknown file>; Hatchet calls it
    // interp.c:0 after the frame it read just before.
    assert_eq!(quirks, [60, 60, 60, 60]);
    assert_eq!(nids.len(), 34);
    assert_eq!(ps[1].cct.len(), 34);
    assert_eq!(ps[1].default_metric, "CPUTIME (usec)");
    assert_eq!(ps[1].metrics.unit("CPUTIME (usec)"), "us");
    assert_eq!(ps[1].metrics.unit("CPUTIME (usec) (inc)"), "us");
    assert_eq!(ps[0].metrics.unit("CPUTIME (usec) (inc)"), "us");
    // The summary (experiment.xml's values) is the sum over the four ranks.
    let s = &ps[0];
    for n in 0..s.cct.len() as u32 {
        let sum: f64 = ps[1..]
            .iter()
            .map(|p| p.metrics.get("CPUTIME (usec) (inc)", n))
            .sum();
        let got = s.metrics.get("CPUTIME (usec) (inc)", n);
        if sum == 0.0 {
            assert!(got.is_nan() || got == 0.0);
        } else {
            assert!((got - sum).abs() <= 1e-5 * sum, "node {n}: {got} vs {sum}");
        }
    }
}

#[test]
fn old_databases_match_hatchet() {
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    for rel in OLD {
        let g = golden(&format!("hatchet-{}.json", basename(rel)));
        let ps = load(&c.join(rel));
        let want_label = g["profile"].as_str().unwrap();
        let p = ps.iter().find(|p| p.source.label == want_label).unwrap();
        assert_eq!(
            p.cct.len() as u64,
            g["node_count"].as_u64().unwrap(),
            "{rel}"
        );
        let nodes = ctx_nodes(&p.cct);
        let mut quirks = Vec::new();
        for hn in g["nodes"].as_array().unwrap() {
            let id = hn["nid"].as_u64().unwrap() as u32;
            let n = nodes[&id];
            let kind = match hn["type"].as_str().unwrap() {
                "PF" | "Pr" => "function",
                "L" => "loop",
                _ => "line",
            };
            assert_eq!(&*p.cct.frame(n).kind, kind, "{rel} nid {id}");
            let hname = hn["name"].as_str().unwrap();
            check_old_name(p.cct.name(n), hname, kind, id, &mut quirks);
            assert_eq!(
                p.cct.depth(n) as u64,
                hn["depth"].as_u64().unwrap(),
                "{rel} nid {id}"
            );
            let inc = p.metrics.get(&format!("{} (inc)", p.default_metric), n);
            let exc = p.metrics.get(&p.default_metric, n);
            assert!(
                same(inc, num(&hn["time (inc)"])),
                "{rel} nid {id}: {inc} vs {}",
                hn["time (inc)"]
            );
            assert!(
                same(exc, num(&hn["time"])),
                "{rel} nid {id}: {exc} vs {}",
                hn["time"]
            );
        }
        eprintln!("{rel}: statements Hatchet names after another file: {quirks:?}");
        if rel == &OLD[0] {
            assert_eq!(quirks, [60]);
        }
    }
    let ps = load(&c.join(OLD[1]));
    assert_eq!(ps.len(), 21);
    assert_eq!(ps[2].source.label, "rank 0 thread 1");
}

/// cct.db holds the same tensor as profile.db, context-major: a check of both parsers.
fn cct_db_values(d: &[u8]) -> Result<HashMap<(u32, u16, u32), f64>, String> {
    let b = Bytes { name: "cct.db", d };
    let (_, s) = header(&b, b"ctxt", b"__ctx.db", &["CtxInfos"])?;
    let p_ctxs = b.u64(s[0].p)?;
    let n_ctxs = b.u32(s[0].p + 8)? as u64;
    let sz_ctx = b.u8(s[0].p + 0x0c)? as u64;
    b.check_array(p_ctxs, n_ctxs, sz_ctx, s[0].p, s[0].end(), "contexts")?;
    let mut out = HashMap::new();
    for ctx in 0..n_ctxs {
        let at = p_ctxs + ctx * sz_ctx;
        let n_values = b.u64(at)?;
        let p_values = b.u64(at + 8)?;
        let n_metrics = b.u16(at + 0x10)? as u64;
        let p_idx = b.u64(at + 0x18)?;
        for k in 0..n_metrics {
            let metric = b.u16(p_idx + 10 * k)?;
            let start = b.u64(p_idx + 10 * k + 2)?;
            let end = if k + 1 < n_metrics {
                b.u64(p_idx + 10 * (k + 1) + 2)?
            } else {
                n_values
            };
            for v in start..end {
                let prof = b.u32(p_values + 12 * v)?;
                out.insert((ctx as u32, metric, prof), b.f64(p_values + 12 * v + 4)?);
            }
        }
    }
    Ok(out)
}

#[test]
fn profile_db_agrees_with_cct_db() {
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    for rel in V4 {
        let dir = c.join(rel);
        let prof = std::fs::read(dir.join("profile.db")).unwrap();
        let db = parse_profile_db(&prof).unwrap();
        let mut from_prof = HashMap::new();
        for (i, p) in db.profiles.iter().enumerate() {
            if p.is_summary {
                continue;
            }
            db.values(i, |ctx, m, v| {
                from_prof.insert((ctx, m, i as u32), v);
            })
            .unwrap();
        }
        let from_cct = cct_db_values(&std::fs::read(dir.join("cct.db")).unwrap()).unwrap();
        assert_eq!(from_prof.len(), from_cct.len(), "{rel}");
        assert_eq!(from_prof, from_cct, "{rel}");
    }
}

#[test]
fn traces_load() {
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    for rel in V4 {
        let dir = c.join(rel);
        let ps = load(&dir);
        let nodes = ctx_nodes(&ps[0].cct);
        let traces = read_traces(&dir).unwrap();
        assert_eq!(traces.is_empty(), !dir.join("trace.db").exists(), "{rel}");
        for (prof, line) in &traces {
            assert!(*prof > 0 && *prof < ps.len(), "{rel}: profile {prof}");
            assert!(line.windows(2).all(|w| w[0].0 <= w[1].0), "{rel}: unsorted");
            for (_, ctx) in line {
                assert!(*ctx == 0 || nodes.contains_key(ctx), "{rel}: ctx {ctx}");
            }
        }
    }
    let pp = read_traces(&c.join("pipit/pipit/tests/data/ping-pong-hpctoolkit")).unwrap();
    assert!(!pp.is_empty());
    assert!(read_traces(&c.join(OLD[0])).unwrap().is_empty());
}

#[test]
fn truncated_or_corrupt_v4_files_are_errors() {
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    for rel in [V4[0], V4[1]] {
        let dir = c.join(rel);
        let meta = std::fs::read(dir.join("meta.db")).unwrap();
        let prof = std::fs::read(dir.join("profile.db")).unwrap();
        assert!(parse_v4(&meta, &prof).is_ok());
        // Every truncation loses the footer at least.
        for cut in 0..meta.len() {
            let e = parse_v4(&meta[..cut], &prof).expect_err("truncated meta.db");
            assert!(e.starts_with("meta.db: at byte "), "{e}");
        }
        for cut in 0..prof.len() {
            let e = parse_v4(&meta, &prof[..cut]).expect_err("truncated profile.db");
            assert!(e.starts_with("profile.db: at byte "), "{e}");
        }
        // Any corrupted byte: an error or a tree, never a panic.
        for (i, v) in (0..meta.len()).flat_map(|i| [(i, 0xffu8), (i, 0x00)]) {
            let mut m = meta.clone();
            m[i] = v;
            let _ = parse_v4(&m, &prof);
        }
        for (i, v) in (0..prof.len()).flat_map(|i| [(i, 0xffu8), (i, 0x00)]) {
            let mut p = prof.clone();
            p[i] = v;
            let _ = parse_v4(&meta, &p);
        }
        let trace = std::fs::read(dir.join("trace.db")).unwrap();
        for cut in 0..trace.len() {
            assert!(parse_traces(&trace[..cut]).is_err());
        }
        for i in 0..trace.len() {
            let mut t = trace.clone();
            t[i] ^= 0xff;
            let _ = parse_traces(&t);
        }
    }
    // Larger databases: a sample of offsets.
    let dir = c.join("hpctoolkit/tests/data/dbase/recursion-cuda-nvidiapc-t.d");
    let meta = std::fs::read(dir.join("meta.db")).unwrap();
    let prof = std::fs::read(dir.join("profile.db")).unwrap();
    for i in (0..meta.len()).step_by(61) {
        let mut m = meta.clone();
        m[i] ^= 0xff;
        let _ = parse_v4(&m, &prof);
    }
    for i in (0..prof.len()).step_by(53) {
        let mut p = prof.clone();
        p[i] ^= 0xff;
        let _ = parse_v4(&meta, &p);
    }
    // The same through the files.
    let tmp = temp("v4");
    copy_dir(&c.join(V4[0]), &tmp);
    let full = std::fs::read(tmp.join("profile.db")).unwrap();
    std::fs::write(tmp.join("profile.db"), &full[..full.len() / 2]).unwrap();
    let e = read(&tmp).unwrap_err();
    assert!(e.starts_with("profile.db: at byte "), "{e}");
    std::fs::remove_file(tmp.join("profile.db")).unwrap();
    assert!(read(&tmp)
        .unwrap_err()
        .starts_with("profile.db: cannot read"));
    std::fs::write(tmp.join("profile.db"), &full).unwrap();
    assert_eq!(read(&tmp).unwrap().len(), 2);
    let m = std::fs::read(tmp.join("meta.db")).unwrap();
    std::fs::write(tmp.join("meta.db"), &m[..100]).unwrap();
    assert!(read(&tmp).unwrap_err().starts_with("meta.db: at byte "));
    assert!(read_traces(&tmp).unwrap_err().starts_with("meta.db: "));
    std::fs::write(tmp.join("meta.db"), &m).unwrap();
    assert_eq!(read_traces(&tmp).unwrap().len(), 1);
    let t = std::fs::read(tmp.join("trace.db")).unwrap();
    std::fs::write(tmp.join("trace.db"), &t[..t.len() - 3]).unwrap();
    assert!(read_traces(&tmp).unwrap_err().starts_with("trace.db: "));
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn truncated_or_corrupt_old_files_are_errors() {
    let Some(c) = corpus() else {
        crate::corpus_skip!()
    };
    let dir = c.join(OLD[0]);
    let xml = std::fs::read(dir.join("experiment.xml")).unwrap();
    assert!(parse_experiment(&xml).is_ok());
    // Cutting inside the element tree leaves elements open.
    let root = xml
        .windows(21)
        .position(|w| w == b"<HPCToolkitExperiment")
        .unwrap();
    for cut in (root..xml.len() - 2).step_by(7) {
        let e = parse_experiment(&xml[..cut])
            .err()
            .expect("truncated experiment.xml");
        assert!(e.starts_with("experiment.xml: line "), "{e}");
    }
    for i in (0..xml.len()).step_by(5) {
        let mut x = xml.clone();
        x[i] = b'<';
        let _ = parse_experiment(&x);
        x[i] = b'"';
        let _ = parse_experiment(&x);
    }
    let e = parse_experiment(b"<HPCToolkitExperiment version=\"2.0\">\n<Header n=\"x\">\n</Foo>")
        .err()
        .unwrap();
    assert_eq!(e, "experiment.xml: line 3: </Foo> closes <Header>");

    let tmp = temp("old");
    copy_dir(&dir, &tmp);
    let name = "1.cpi-000002-000-a8c00270-160445-0.metric-db";
    let db = std::fs::read(tmp.join(name)).unwrap();
    for cut in [0, 10, 31, 40, db.len() - 1] {
        std::fs::write(tmp.join(name), &db[..cut]).unwrap();
        let e = read(&tmp).unwrap_err();
        assert!(e.starts_with(&format!("{name}: at byte ")), "{e}");
    }
    std::fs::write(tmp.join(name), &db).unwrap();
    std::fs::write(tmp.join("experiment.xml"), &xml[..xml.len() / 2]).unwrap();
    assert!(read(&tmp).unwrap_err().starts_with("experiment.xml: line "));
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn xml_tokenizer() {
    let mut x = Xml::new(b"<?xml version=\"1.0\"?>\n<!DOCTYPE a [ <!ELEMENT a (b)*> <!-- ] > --> <!ATTLIST a v (x|y) \"x\"> ]>\n<a v='1 &amp; &lt;2&gt; &#65;&#x42;'><!-- c --><b/></a>");
    match x.next().unwrap() {
        Tok::Start {
            name, attrs, empty, ..
        } => {
            assert_eq!(name, "a");
            assert_eq!(attrs, [("v".to_string(), "1 & <2> AB".to_string())]);
            assert!(!empty);
        }
        t => panic!("{t:?}"),
    }
    assert!(matches!(x.next().unwrap(), Tok::Start { empty: true, .. }));
    assert!(matches!(x.next().unwrap(), Tok::End { .. }));
    assert!(matches!(x.next().unwrap(), Tok::Eof));
    assert_eq!(unescape("a &bogus; &"), "a &bogus; &");
}

#[test]
fn labels_and_units() {
    let kinds: Vec<String> = [
        "SUMMARY",
        "NODE",
        "RANK",
        "THREAD",
        "GPUDEVICE",
        "GPUCONTEXT",
        "GPUSTREAM",
        "CORE",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let ids = [
        (1u8, true, 0u32, 0x11u64),
        (2, false, 3, 3),
        (3, false, 1, 1),
    ];
    assert_eq!(tuple_label(&ids, &kinds, false), "rank 3 thread 1");
    assert_eq!(tuple_label(&ids, &kinds, true), "node 0x11 rank 3 thread 1");
    let gpu = [
        (1u8, true, 0u32, 0x11u64),
        (5, false, 0, 0),
        (6, false, 2, 2),
    ];
    assert_eq!(tuple_label(&gpu, &kinds, false), "GPU context 0 stream 2");
    assert_eq!(unit_of("CPUTIME (sec)"), "s");
    assert_eq!(unit_of("GXCOPY:H2D (B)"), "B");
    assert_eq!(unit_of("GKER:COUNT"), "");
    assert_eq!(unit_of("CPUTIME (usec) (inc)"), "us");
    assert_eq!(unit_of("GSAMP:PER (cyc)"), "");
    assert_eq!(
        rank_thread("1.cpi-000003-001-a8c00270-160446-0.metric-db"),
        Some((3, 1))
    );
    let m = OldMetric {
        id: "2".into(),
        name: "CPUTIME (usec):Sum (I)".into(),
        kind: "inclusive".into(),
        db_id: None,
    };
    assert_eq!(m.column(), "CPUTIME (usec) (inc)");
    let m = OldMetric {
        id: "3".into(),
        name: "CPUTIME (usec):Max (E)".into(),
        kind: "exclusive".into(),
        db_id: None,
    };
    assert_eq!(m.column(), "CPUTIME (usec):max");
}
