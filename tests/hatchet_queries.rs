//! Hatchet's query language and squash, checked against Hatchet itself: the goldens in
//! testdata/hatchet_queries were written by running llnl-hatchet on the corpus literal
//! files (scripts/hatchet_goldens.py). Cases where Hatchet raises SyntaxError are bugs
//! in Hatchet's code generator (docs/commands.md) and are skipped.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use grove::load::load_path;
use grove::query::{cypher, expr, Tree};
use grove::transform::rebuild;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn queries_and_squash_match_hatchet() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = root.join("../shared/corpus");
    if !corpus.is_dir() {
        skip!()
    }
    let mut checked = 0;
    for entry in std::fs::read_dir(root.join("testdata/hatchet_queries")).unwrap() {
        let file = entry.unwrap().path();
        if file.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let g: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let p = load_path(&corpus.join(g["input"].as_str().unwrap())).unwrap();
        let t = Tree {
            cct: &p.cct,
            metrics: &p.metrics,
        };
        // gprof2dot-cpi is a call graph; grove's tree repeats shared nodes per path.
        let dag = g["input"].as_str().unwrap().contains("gprof2dot");
        for case in g["cases"].as_array().unwrap() {
            let q = case["query"].as_str().unwrap();
            let error = case["error"].as_str();
            if error.is_some_and(|e| e.starts_with("SyntaxError")) {
                continue;
            }
            let sel = match case["dialect"].as_str().unwrap() {
                "object" => cypher::select(&serde_json::to_string(&case["object"]).unwrap(), &t),
                "predicate" => {
                    let x = case["threshold"].as_f64().unwrap();
                    expr::parse(&format!("time (inc) > {x}")).and_then(|e| expr::select(&e, &t))
                }
                _ => cypher::select(q, &t),
            };
            let what = format!("{}: {q}", file.display());
            match error {
                Some(e) if e.starts_with("EmptyFilter") => {
                    assert!(
                        sel.unwrap().iter().all(|m| !m),
                        "{what}: Hatchet keeps nothing"
                    );
                    checked += 1;
                    continue;
                }
                Some(e) => {
                    assert!(sel.is_err(), "{what}: Hatchet raised {e}");
                    checked += 1;
                    continue;
                }
                None => {}
            }
            let sel = sel.unwrap_or_else(|e| panic!("{what}: {e}"));
            // Compare call paths by name (same-named siblings are told apart by #k in
            // Hatchet's file order, which grove's sibling order need not follow).
            let strip = |seg: &str| -> String {
                match seg.rfind('#') {
                    Some(i)
                        if seg[i + 1..].chars().all(|c| c.is_ascii_digit())
                            && i + 1 < seg.len() =>
                    {
                        seg[..i].to_string()
                    }
                    _ => seg.to_string(),
                }
            };
            let mut got: Vec<Vec<String>> = (0..p.cct.len() as u32)
                .filter(|&n| sel[n as usize])
                .map(|n| {
                    p.cct
                        .path(n)
                        .iter()
                        .map(|&x| p.cct.name(x).to_string())
                        .collect()
                })
                .collect();
            got.sort();
            let mut want: Vec<Vec<String>> = case["kept_paths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| {
                    x.as_array()
                        .unwrap()
                        .iter()
                        .map(|s| strip(s.as_str().unwrap()))
                        .collect()
                })
                .collect();
            want.sort();
            if dag {
                let want: BTreeSet<_> = want.into_iter().collect();
                assert!(
                    got.iter().all(|g| want.contains(g)),
                    "{what}: kept paths {got:?} not within {want:?}"
                );
            } else {
                assert_eq!(got, want, "{what}: kept paths");
            }
            // Squash: re-parent, merge equal siblings, recompute inclusive time.
            if dag || case["squashed"].is_null() {
                checked += 1;
                continue;
            }
            let r = rebuild(&p.cct, &p.metrics, &sel, &|_| None, true, true);
            let mut rows: Vec<(Vec<String>, f64, f64)> = (0..r.cct.len() as u32)
                .map(|n| {
                    let path = r
                        .cct
                        .path(n)
                        .iter()
                        .map(|&x| r.cct.name(x).to_string())
                        .collect();
                    (
                        path,
                        r.metrics.get("time", n),
                        r.metrics.get("time (inc)", n),
                    )
                })
                .collect();
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            let mut want: Vec<(Vec<String>, f64, f64)> = case["squashed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| {
                    let path = row["path"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s.as_str().unwrap().to_string())
                        .collect();
                    (
                        path,
                        row["time"].as_f64().unwrap(),
                        row["time (inc)"].as_f64().unwrap(),
                    )
                })
                .collect();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(rows.len(), want.len(), "{what}: squashed rows {rows:?}");
            for (a, b) in rows.iter().zip(&want) {
                assert_eq!(a.0, b.0, "{what}");
                assert!(close(a.1, b.1) && close(a.2, b.2), "{what}: {a:?} vs {b:?}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 100, "{checked}");
}
