//! `grove sql` (issue 31) against grove's own views: the kernels table grouped by name
//! is `grove kernels --format csv`, and the nodes' metrics are `grove tree --format
//! csv`'s, on the corpus traces (skipped, with a line saying so, without the corpus).

mod common;

use std::collections::BTreeMap;

use common::{corpus, grove, manifest_rows, repo};

/// The fields of one RFC 4180 line (kernel names hold commas and quotes).
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// A CSV's rows keyed by column `key`, each row as column name -> text.
fn by_key(csv: &str, key: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut lines = csv.lines();
    let head = fields(lines.next().unwrap_or_default());
    let k = head.iter().position(|h| h == key).expect(key);
    lines
        .map(|l| {
            let f = fields(l);
            let row = head.iter().cloned().zip(f.iter().cloned()).collect();
            (f[k].clone(), row)
        })
        .collect()
}

/// The Kineto traces of the corpus' MANIFEST; None without the corpus.
fn kineto_traces() -> Option<Vec<std::path::PathBuf>> {
    let dir = corpus("")?;
    let rows = manifest_rows(&dir).into_iter();
    let kineto = rows.filter(|(_, format)| format.starts_with("Kineto/Chrome trace JSON"));
    Some(kineto.filter_map(|(path, _)| corpus(&path)).collect())
}

#[test]
fn kernels_grouped_by_name_are_grove_kernels() {
    let Some(traces) = kineto_traces() else {
        skip!()
    };
    let mut compared = 0;
    for f in traces {
        let file = f.to_str().unwrap();
        let (code, kernels, err) = grove(&["kernels", file, "--format", "csv"]);
        if code != 0 {
            // No GPU events: sql answers with no rows instead.
            assert!(
                err.contains("not a trace") || err.contains("no GPU"),
                "{file}: {err}"
            );
            continue;
        }
        let q =
            "select name, count(*) as count, sum(duration) as total_ns from kernels group by name";
        let (code, sql, err) = grove(&["sql", file, q, "--format", "csv"]);
        assert_eq!(code, 0, "{file}: {err}");
        let want = by_key(&kernels, "name");
        let got = by_key(&sql, "name");
        assert_eq!(
            want.keys().collect::<Vec<_>>(),
            got.keys().collect::<Vec<_>>(),
            "{file}"
        );
        for (name, w) in &want {
            let g = &got[name];
            assert_eq!(w["count"], g["count"], "{file}: {name}");
            assert_eq!(w["total_ns"], g["total_ns"], "{file}: {name}");
        }
        compared += 1;
    }
    eprintln!("compared {compared} traces with kernels");
}

/// Every metric of every node, by path, as `grove tree --format csv` prints it.
fn nodes_equal_tree(file: &str) {
    let (code, tree, err) = grove(&["tree", file, "--format", "csv"]);
    assert_eq!(code, 0, "{file}: {err}");
    let want = by_key(&tree, "path");
    let head = fields(tree.lines().next().unwrap());
    let metrics: Vec<&String> = head[4..]
        .iter()
        .filter(|h| {
            !matches!(h.as_str(), "estimated")
                && !h.starts_with("op_")
                && !h.starts_with("input_")
                && !h.starts_with("output_")
                && !h.starts_with("tf_")
                && !h.starts_with("hlo_")
        })
        .collect();
    let cols: Vec<String> = metrics.iter().map(|m| format!("\"{m}\"")).collect();
    let q = format!("select path, depth, {} from nodes", cols.join(", "));
    let (code, sql, err) = grove(&["sql", file, &q, "--format", "csv"]);
    assert_eq!(code, 0, "{file}: {err}\n{q}");
    let got = by_key(&sql, "path");
    assert_eq!(want.len(), got.len(), "{file}");
    for (path, w) in &want {
        let g = got
            .get(path)
            .unwrap_or_else(|| panic!("{file}: no node {path}"));
        assert_eq!(w["depth"], g["depth"], "{file}: {path}");
        for m in &metrics {
            assert_eq!(w[*m], g[*m], "{file}: {path}: {m}");
        }
    }
}

#[test]
fn node_totals_are_grove_tree() {
    nodes_equal_tree(
        repo("testdata/small.trace.json")
            .to_str()
            .unwrap_or_default(),
    );
    nodes_equal_tree(
        repo("testdata/steps4.trace.json.gz")
            .to_str()
            .unwrap_or_default(),
    );
    if corpus("").is_none() {
        skip!()
    }
    for rel in [
        "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        "hatchet/hatchet/tests/data/perfflowaspect-laghos/laghos_1iter.pfw",
    ] {
        if let Some(f) = corpus(rel) {
            nodes_equal_tree(f.to_str().unwrap());
        }
    }
}

#[test]
fn a_bad_query_is_one_line_and_exit_2() {
    let f = repo("testdata/small.trace.json");
    let (code, out, err) = grove(&["sql", f.to_str().unwrap(), "select name frm nodes"]);
    assert_eq!(code, 2, "{out}{err}");
    // The reader's own warnings about the file (small.trace.json has GPU activities with no
    // launch) still reach stderr before the query runs; the query's error is one line.
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("grove: warning: "))
        .collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].starts_with("grove: sql: column "), "{err}");
}

#[test]
fn formats_and_sql_file() {
    let f = repo("testdata/small.trace.json");
    let f = f.to_str().unwrap();
    let q = "select count(*) as n from nodes where depth = 0";
    let (code, json, err) = grove(&["sql", f, q, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v[0]["n"].as_u64().unwrap() >= 1, "{json}");
    let dir = std::env::temp_dir().join(format!("grove-sql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let qf = dir.join("q.sql");
    std::fs::write(&qf, q).unwrap();
    let (code, text, err) = grove(&["sql", f, "--sql-file", qf.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.starts_with("n\n")
            || text.starts_with("  n\n")
            || text.lines().next().unwrap().trim() == "n",
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `:sql` opens the answer; Enter goes to the event, the node or the function a row
/// names; `sql filter` is a logged filter; a bad query leaves the state as it was.
#[test]
fn the_sql_panel_goes_where_a_row_points() {
    let mut app = common::open_app("testdata/small.trace.json");
    app.run("sql select id, name, duration from kernels order by duration desc limit 3")
        .unwrap();
    assert_eq!(app.panel.name(), "sql");
    assert_eq!(app.sql_rows(), 3);
    app.run("sql open").unwrap();
    assert_eq!(app.panel.name(), "timeline");
    let picked = app.timeline.selected.expect("an event is selected");
    let ev = app.profile.events.as_ref().unwrap();
    assert_eq!(ev.kind[picked as usize], grove::model::EventKind::Kernel);

    app.run("sql select id as node, path from nodes where depth = 1 limit 1")
        .unwrap();
    app.run("sql open").unwrap();
    assert_eq!(app.panel.name(), "tree");

    app.run("sql select name from functions order by name limit 1")
        .unwrap();
    app.run("sql open").unwrap();
    assert_eq!(app.panel.name(), "functions");

    app.run("sql select distinct node from kernels where node is not null limit 2")
        .unwrap();
    let before = app.log.len();
    app.run("sql filter").unwrap();
    assert_eq!(app.panel.name(), "tree");
    let logged = &app.log[before..];
    assert!(
        logged.iter().any(|l| l.starts_with("filter (name == ")),
        "{logged:?}"
    );
    assert!(
        app.log.iter().any(|l| l.starts_with("sql select ")),
        "{:?}",
        app.log
    );

    let rows = app.sql_rows();
    let e = app.run("sql select name frm nodes").unwrap_err();
    assert!(e.contains("sql"), "{e}");
    assert_eq!(app.sql_rows(), rows);
}

/// A directory of `grove summarize` summaries answers `kernels` across them (read from
/// their kernel tables, no tree): per input, what `grove kernels` counts.
#[test]
fn kernels_across_summaries() {
    let f = repo("testdata/small.trace.json");
    let f = f.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("grove-sql-sum-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, _, err) = grove(&["summarize", f, "-o", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // A second rank: the same summary under another name.
    for t in ["cct", "meta", "kernels"] {
        let from = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.to_str().unwrap().ends_with(&format!(".{t}.parquet")))
            .unwrap();
        std::fs::copy(&from, dir.join(format!("zz.{t}.parquet"))).unwrap();
    }
    let (_, kernels, _) = grove(&["kernels", f, "--format", "csv"]);
    let want = by_key(&kernels, "name");
    let q = "select profile, name, sum(count) as count, sum(total_ns) as total_ns \
             from kernels where kind = 'kernel' group by profile, name order by profile, name";
    let (code, sql, err) = grove(&["sql", dir.to_str().unwrap(), q, "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let mut profiles = BTreeMap::<String, usize>::new();
    let mut lines = sql.lines();
    let head = fields(lines.next().unwrap());
    assert_eq!(head, ["profile", "name", "count", "total_ns"]);
    for l in lines {
        let f = fields(l);
        *profiles.entry(f[0].clone()).or_default() += 1;
        let w = &want[&f[1]];
        assert_eq!((&w["count"], &w["total_ns"]), (&f[2], &f[3]), "{l}");
    }
    assert_eq!(profiles.len(), 2, "{sql}");
    assert!(profiles.values().all(|&n| n == want.len()), "{sql}");
    // Over summaries, the trees come with a query that names them.
    let (code, sql, err) = grove(&[
        "sql",
        dir.to_str().unwrap(),
        "select count(distinct profile) as n from nodes",
        "--format",
        "csv",
    ]);
    assert_eq!((code, sql.as_str()), (0, "n\n2\n"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
