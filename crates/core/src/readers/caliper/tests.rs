use super::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

fn corpus() -> Option<PathBuf> {
    let p = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("../shared/corpus");
    p.is_dir().then_some(p)
}

fn goldens() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata/caliper")
}

/// Writes bytes to a fresh temporary file with the given name suffix.
fn temp(suffix: &str, bytes: &[u8]) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let p = std::env::temp_dir().join(format!("grove-caliper-{}-{n}{suffix}", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    p
}

fn read_bytes(suffix: &str, bytes: &[u8]) -> Result<Vec<Profile>, String> {
    let p = temp(suffix, bytes);
    let r = read(&p);
    let _ = std::fs::remove_file(&p);
    r
}

fn node(p: &Profile, path: &[&str]) -> u32 {
    (0..p.cct.len() as u32)
        .find(|&n| {
            let names: Vec<&str> = p.cct.path(n).iter().map(|&x| p.cct.name(x)).collect();
            names == path
        })
        .unwrap_or_else(|| panic!("no node {path:?}"))
}

fn get(p: &Profile, col: &str, path: &[&str]) -> f64 {
    p.metrics.get(col, node(p, path))
}

const CALI: &str = "\
__rec=node,id=12,attr=10,data=268,parent=3
__rec=node,id=13,attr=8,data=region,parent=12
__rec=node,id=14,attr=10,data=64,parent=3
__rec=node,id=15,attr=8,data=attribute.alias,parent=14
__rec=node,id=16,attr=8,data=attribute.unit,parent=14
__rec=node,id=17,attr=10,data=65,parent=5
__rec=node,id=18,attr=16,data=sec,parent=17
__rec=node,id=19,attr=8,data=sum#time.duration,parent=18
__rec=node,id=20,attr=15,data=Total time,parent=18
__rec=node,id=21,attr=8,data=sum#inclusive#sum#time.duration,parent=20
__rec=node,id=22,attr=10,data=77,parent=1
__rec=node,id=23,attr=8,data=mpi.rank,parent=22
__rec=node,id=24,attr=10,data=1612,parent=3
__rec=node,id=25,attr=8,data=cali.caliper.version,parent=24
__rec=node,id=26,attr=8,data=cluster,parent=24
__rec=node,id=30,attr=13,data=main
__rec=node,id=31,attr=13,data=a\\,b,parent=30
__rec=node,id=32,attr=13,data=c,parent=30
__rec=ctx,ref=30,attr=23=19=21,data=0=1.5=10
__rec=ctx,ref=31,attr=23=19=21,data=0=2=2
__rec=ctx,ref=30,attr=23=19,data=1=3
__rec=ctx,ref=32,attr=23=19=21,data=1=4=4
__rec=ctx,attr=23=19,data=0=100
__rec=globals,attr=25=26,data=2.9.0=quartz\\=1
";

#[test]
fn cali_stream() {
    let ps = read_bytes(".cali", CALI.as_bytes()).unwrap();
    assert_eq!(ps.len(), 2);
    let p = &ps[0];
    assert_eq!(p.cct.len(), 3);
    assert_eq!(p.dialect, "Caliper .cali");
    assert_eq!(p.source.format, Format::Caliper);
    assert!(
        p.source.label.ends_with(".cali rank 0"),
        "{}",
        p.source.label
    );
    assert_eq!(
        p.cct.frame(node(p, &["main", "a,b"])).kind.as_ref(),
        "region"
    );
    assert_eq!(get(p, "time", &["main"]), 1.5);
    assert_eq!(get(p, "time", &["main", "a,b"]), 2.0);
    assert!(get(p, "time", &["main", "c"]).is_nan());
    assert_eq!(get(p, "time (inc)", &["main"]), 3.5);
    assert_eq!(get(p, "Total time (inc)", &["main"]), 10.0);
    assert_eq!(p.metrics.unit("time"), "s");
    assert_eq!(p.metrics.unit("time (inc)"), "s");
    assert_eq!(p.metrics.unit("Total time (inc)"), "s");
    assert!(!p.metrics.has("Total time (inc) (inc)"));
    assert_eq!(p.default_metric, "time");
    assert_eq!(p.meta_value("cali.caliper.version"), Some("2.9.0"));
    assert_eq!(p.meta_value("cluster"), Some("quartz=1"));
    assert_eq!(p.meta_value("mpi.rank"), Some("0"));
    let q = &ps[1];
    assert_eq!(q.cct.len(), 3);
    assert_eq!(get(q, "time", &["main"]), 3.0);
    assert!(get(q, "time", &["main", "a,b"]).is_nan());
    assert_eq!(get(q, "time (inc)", &["main"]), 7.0);
    assert_eq!(q.meta_value("mpi.rank"), Some("1"));
}

const SPLIT: &str = r#"{
 "data": [[1, 0, 0.5, null], [2, 0, 1.5, 1], [3, 0, 2.0, 2], [2, 1, 1.0, 1]],
 "columns": ["Node order", "mpi.rank", "time", "path"],
 "column_metadata": [{"is_value": true, "attribute.alias": "Node order"}, {"is_value": true},
                 {"is_value": true, "attribute.unit": "sec"}, {"is_value": false}],
 "nodes": [{"label": "other", "column": "path"}, {"label": "main", "column": "path"},
       {"label": "solve", "column": "path", "parent": 1}],
 "cluster": "quartz", "mpi.world.size": 2, "obj": {"a": [1, 2]}, "flag": true
}"#;

#[test]
fn json_split() {
    let ps = read_bytes(".json", SPLIT.as_bytes()).unwrap();
    assert_eq!(ps.len(), 2);
    let p = &ps[0];
    assert_eq!(p.dialect, "Caliper json-split");
    // "Node order" puts main (2) before other (no order), whatever the nodes order.
    let roots: Vec<&str> = p.cct.root_ids().iter().map(|&r| p.cct.name(r)).collect();
    assert_eq!(roots, ["main", "other"]);
    assert_eq!(get(p, "time", &["main"]), 1.5);
    assert_eq!(get(p, "time (inc)", &["main"]), 3.5);
    assert!(get(p, "time", &["other"]).is_nan());
    assert!(!p.metrics.has("Node order"));
    assert_eq!(p.metrics.unit("time"), "s");
    assert_eq!(p.meta_value("cluster"), Some("quartz"));
    assert_eq!(p.meta_value("mpi.world.size"), Some("2"));
    assert_eq!(p.meta_value("obj"), Some(r#"{"a": [1, 2]}"#));
    assert_eq!(p.meta_value("flag"), Some("true"));
    let q = &ps[1];
    assert_eq!(get(q, "time", &["main"]), 1.0);
    assert!(get(q, "time", &["main", "solve"]).is_nan());
    assert_eq!(get(q, "time (inc)", &["main"]), 1.0);
}

const CALI_JSON: &str = r#"[
 {"sum#time.duration": 0.5},
 {"path": "main", "sum#time.duration": 1.0, "count": 1},
 {"path": "main/foo", "sum#time.duration": 2.0, "count": "3", "function": "x"},
 {"path": "main/foo", "sum#time.duration": 0.5, "avg#inclusive#sum#time.duration": 4},
 {"path": ["main", "a/b"], "sum#time.duration": 1}
]"#;

#[test]
fn cali_json() {
    let ps = read_bytes(".json", CALI_JSON.as_bytes()).unwrap();
    assert_eq!(ps.len(), 1);
    let p = &ps[0];
    assert_eq!(p.dialect, "Caliper cali-json");
    assert_eq!(p.cct.len(), 3);
    assert_eq!(get(p, "time", &["main", "foo"]), 2.5);
    assert_eq!(get(p, "time", &["main", "a/b"]), 1.0);
    assert_eq!(get(p, "time (inc)", &["main"]), 4.5);
    assert_eq!(get(p, "count", &["main", "foo"]), 3.0);
    assert_eq!(get(p, "count (inc)", &["main"]), 4.0);
    assert_eq!(get(p, "avg#sum#time.duration (inc)", &["main", "foo"]), 4.0);
    assert_eq!(p.cct.frame(0).kind.as_ref(), "region");
}

#[test]
fn sniffing() {
    let s = |t: &str| sniff(Path::new("x.json"), t.as_bytes());
    assert!(s(CALI));
    assert!(s(&format!("\u{feff}\n  {CALI}")));
    assert!(s(SPLIT));
    assert!(s(CALI_JSON));
    // Heads cut inside the data: still recognised.
    assert!(s("{\n \"data\": [\n  [ 21948.0, 0, 2"));
    assert!(s(r#"[{"path": "main", "sum#time.duration": 1"#));
    assert!(s(r#"{"columns": ["a"], "nodes": [], "data": []}"#));
    for no in [
        r#"{"traceEvents": [{"ph": "X", "name": "a"}]}"#,
        r#"[{"name": "a", "ph": "X", "ts": 1, "dur": 2, "path": "a", "time": 1}]"#,
        r#"[{"path": "a", "time": 1, "ph": "X"}]"#,
        r#"[{"frame": {"name": "a"}, "metrics": {"time": 1}, "path": "a"}]"#,
        r#"[{"name": "main", "metrics": {"time": 1}}]"#,
        r#"{"graph": [], "dataframe": [], "inclusive_metrics": []}"#,
        r#"{"data": {"x": 1}}"#,
        r#"{"data": [1, 2]}"#,
        r#"[{"path": "main", "label": "x"}]"#,
        "[]",
        "main;a;b 3\n",
        "",
    ] {
        assert!(!s(no), "claimed {no}");
    }
    assert!(sniff(Path::new("x.cali.gz"), &[0x1f, 0x8b, 8, 0]));
    assert!(!sniff(Path::new("x.json.gz"), &[0x1f, 0x8b, 8, 0]));
}

#[test]
fn gzip_cali() {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(CALI.as_bytes()).unwrap();
    let ps = read_bytes(".cali.gz", &enc.finish().unwrap()).unwrap();
    assert_eq!(ps.len(), 2);
    assert!(ps[0].source.gzip);
}

#[test]
fn errors_are_one_line_with_a_position() {
    let cases: Vec<(&str, String, &str)> = vec![
        (
            ".cali",
            "__rec=node,id=40,attr=8,data=x\n__rec=ctx,ref=99\n".into(),
            "line 2",
        ),
        (
            ".cali",
            "__rec=node,id=40,attr=8,data=x\nid=3\n".into(),
            "line 2",
        ),
        (".cali", "__rec=node,attr=8,data=x\n".into(), "line 1"),
        (".cali", "__rec=ctx,attr=40,data=1\n".into(), "line 1"),
        (".cali", "__rec=node,id=x,attr=8\n".into(), "line 1"),
        (".cali", "\n\n__rec=ctx,attr=8=9,data=1\n".into(), "line 3"),
        (".json", SPLIT[..200].to_string(), "line"),
        (
            ".json",
            SPLIT.replace("\"parent\": 1", "\"parent\": 7"),
            "byte",
        ),
        (
            ".json",
            SPLIT.replace("[3, 0, 2.0, 2]", "[3, 0, 2.0]"),
            "byte",
        ),
        (
            ".json",
            SPLIT.replace("[3, 0, 2.0, 2]", "[3, 0, 2.0, 9]"),
            "byte",
        ),
        (".json", SPLIT.replace("\"columns\"", "\"kolumns\""), "line"),
        (
            ".json",
            SPLIT.replace("\"path\"]", "\"where\"]"),
            "no hierarchy column",
        ),
        (
            ".json",
            SPLIT.replace("{\"is_value\": true},", ""),
            "column_metadata",
        ),
        (
            ".json",
            CALI_JSON[..CALI_JSON.len() - 3].to_string(),
            "line",
        ),
        (".json", format!("{CALI_JSON} x"), "line"),
    ];
    for (suffix, text, want) in cases {
        let e = read_bytes(suffix, text.as_bytes()).expect_err(&text);
        assert!(e.contains(want), "{e:?} lacks {want:?} for {text:?}");
        assert!(!e.contains('\n'), "{e:?}");
    }
    assert!(read_bytes(".cali", b"").unwrap_err().contains("empty"));
    assert!(read_bytes(".cali", b"hello\n").is_err());
}

/// Deterministic pseudo-random numbers (no dependency).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn robustness_inputs() -> Vec<(String, Vec<u8>)> {
    let mut v = vec![
        (".cali".to_string(), CALI.as_bytes().to_vec()),
        (".json".to_string(), SPLIT.as_bytes().to_vec()),
        (".json".to_string(), CALI_JSON.as_bytes().to_vec()),
    ];
    if let Some(c) = corpus() {
        for rel in [
            "hatchet/hatchet/tests/data/caliper-lulesh-cali/lulesh-annotation-profile.cali",
            "hatchet/hatchet/tests/data/caliper-lulesh-json/lulesh-annotation-profile.json",
            "hatchet/hatchet/tests/data/caliper-cpi-json/cpi-callpath-profile.json",
            "hatchet/hatchet/tests/data/spotdb/2.cali",
            "caliper/doc/sphinx/examples/160809-094411_72298_fuu1NeAHT2US.cali",
        ] {
            if let Ok(b) = std::fs::read(c.join(rel)) {
                let ext = if rel.ends_with(".cali") {
                    ".cali"
                } else {
                    ".json"
                };
                v.push((ext.to_string(), b));
            }
        }
    }
    v
}

#[test]
fn truncated_inputs_fail_cleanly() {
    for (suffix, bytes) in robustness_inputs() {
        let step = (bytes.len() / 40).max(1);
        let mut cut = 1;
        while cut < bytes.len() {
            let part = &bytes[..cut];
            let r = read_bytes(&suffix, part);
            let mid_line = part.last() != Some(&b'\n');
            if suffix == ".json" {
                assert!(
                    r.is_err(),
                    "{suffix} cut at {cut} of {} loaded",
                    bytes.len()
                );
            } else if mid_line {
                // A record cut short is an error, or (when what is left still parses)
                // a warning about the missing newline.
                if let Ok(ps) = &r {
                    assert!(
                        ps[0].warnings.iter().any(|w| w.contains("truncated")),
                        "cut at {cut}: no warning"
                    );
                }
            }
            if let Err(e) = &r {
                assert!(!e.contains('\n'), "{e:?}");
            }
            cut += step;
        }
    }
}

#[test]
fn corrupted_inputs_never_panic() {
    let mut rng = Lcg(42);
    let junk: &[u8] = b",=\\\n{}[]\":0-9.e#_ax";
    for (suffix, bytes) in robustness_inputs() {
        for _ in 0..60 {
            let mut b = bytes.clone();
            for _ in 0..1 + rng.next() % 4 {
                let i = (rng.next() as usize) % b.len();
                match rng.next() % 3 {
                    0 => b[i] = junk[(rng.next() as usize) % junk.len()],
                    1 => {
                        b.remove(i);
                    }
                    _ => b.insert(i, junk[(rng.next() as usize) % junk.len()]),
                }
            }
            if let Ok(ps) = read_bytes(&suffix, &b) {
                for p in &ps {
                    assert!(p.cct.check());
                    assert_eq!(p.metrics.rows(), p.cct.len());
                }
            }
        }
    }
    // Hand-made nasties: parent cycles, self-parents, huge ids, lone escapes.
    for text in [
        "__rec=node,id=40,attr=8,data=x,parent=40\n__rec=ctx,ref=40\n",
        "__rec=node,id=40,attr=41,data=x\n__rec=node,id=41,attr=8,data=y,parent=40\n__rec=ctx,ref=40\n",
        "__rec=node,id=18446744073709551615,attr=8,data=x\n__rec=ctx,attr=18446744073709551615,data=1\n",
        "__rec=node,id=40,attr=8,data=x\\",
        "__rec=ctx\n__rec=globals\n__rec=\n__rec=node,id=1,attr=8\n",
        "__rec=node,id=12,attr=10,data=256,parent=3\n__rec=node,id=13,attr=8,data=r,parent=12\n__rec=node,id=14,attr=13,data=a,parent=14\n__rec=ctx,ref=14\n",
    ] {
        let _ = read_bytes(".cali", text.as_bytes());
    }
}

/// grove's column for a Hatchet metric column: Hatchet calls SPOT's inclusive
/// metrics by their alias ("Avg time/rank"), grove adds " (inc)"; exclusive partners
/// aliased "... (exc)" are grove's plain names.
fn grove_column(p: &Profile, m: &str, hatchet_cols: &[String]) -> Option<String> {
    let mut c = Vec::new();
    if let Some(x) = m.strip_suffix(" (exc)") {
        c.push(x.to_string());
    } else if hatchet_cols.iter().any(|h| *h == format!("{m} (exc)")) {
        c.push(format!("{m}{INC_SUFFIX}"));
    }
    c.push(m.to_string());
    c.push(format!("{m}{INC_SUFFIX}"));
    if m.contains("inclusive#") {
        c.push(format!("{}{INC_SUFFIX}", m.replacen("inclusive#", "", 1)));
    }
    c.into_iter().find(|n| p.metrics.has(n))
}

fn value0(v: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) || (a - b).abs() < 1e-12
}

fn json_file(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Node counts, call paths and metric values against Hatchet's (testdata/caliper,
/// written by scripts/caliper_goldens.py).
#[test]
fn corpus_matches_hatchet() {
    let Some(root) = corpus() else {
        crate::corpus_skip!()
    };
    let index = json_file(&goldens().join("index.json"));
    let mut compared = 0;
    for entry in index.as_array().unwrap() {
        let rel = entry["file"].as_str().unwrap();
        let path = root.join(rel);
        if !path.exists() {
            continue;
        }
        let g = json_file(&goldens().join(entry["golden"].as_str().unwrap()));
        let ps = read(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert!(!ps.is_empty() && !ps[0].cct.is_empty(), "{rel}");
        if g.get("error").is_some() {
            continue; // Hatchet cannot read it: grove only has to
        }
        compared += 1;
        let p = &ps[0];
        assert_eq!(
            p.cct.len() as u64,
            g["nodes"].as_u64().unwrap(),
            "{rel}: nodes"
        );
        if let Some(r) = g["ranks"].as_array().filter(|r| r.len() > 1) {
            assert_eq!(ps.len(), r.len(), "{rel}: one profile per rank");
        }
        for q in &ps {
            assert_eq!(q.cct.len(), p.cct.len());
        }
        let h = Golden::new(rel, &ps, &g);
        let (values_checked, values_root_inc) = h.values();
        let (derived, hatchet_nan) = h.derived_inclusive();
        let root_inc_checked = values_root_inc + h.root_ranks() + h.doubled_roots() + derived;
        assert!(
            root_inc_checked > 0 || hatchet_nan > 0,
            "{rel}: no inclusive root value compared"
        );
        eprintln!(
            "{rel}: {} nodes, {values_checked} values and {root_inc_checked} root \
             inclusive values equal to Hatchet's",
            p.cct.len()
        );
    }
    assert!(compared >= 30, "only {compared} files compared");
}

/// One corpus file's profiles beside Hatchet's golden of it.
struct Golden<'a> {
    rel: &'a str,
    ps: &'a [Profile],
    g: &'a serde_json::Value,
    /// Hatchet's rows: a call path, its row count and its metrics.
    rows: &'a [serde_json::Value],
    /// grove's node of each call path.
    by_path: HashMap<Vec<String>, u32>,
    nranks: usize,
    hatchet_cols: Vec<String>,
}

impl<'a> Golden<'a> {
    /// Also checks that grove and Hatchet have the same call paths.
    fn new(rel: &'a str, ps: &'a [Profile], g: &'a serde_json::Value) -> Golden<'a> {
        let p = &ps[0];
        let mut by_path: HashMap<Vec<String>, u32> = HashMap::new();
        let mut mine: Vec<Vec<String>> = Vec::new();
        for n in 0..p.cct.len() as u32 {
            let names: Vec<String> = p
                .cct
                .path(n)
                .iter()
                .map(|&x| p.cct.name(x).to_string())
                .collect();
            by_path.insert(names.clone(), n);
            mine.push(names);
        }
        let rows = g["paths"].as_array().unwrap();
        let mut theirs: Vec<Vec<String>> = rows
            .iter()
            .map(|e| serde_json::from_value(e["path"].clone()).unwrap())
            .collect();
        mine.sort();
        theirs.sort();
        assert_eq!(mine, theirs, "{rel}: call paths");
        let nranks = g["ranks"].as_array().map(|r| r.len()).unwrap_or(1);
        let hatchet_cols: Vec<String> = g["exc_metrics"]
            .as_array()
            .unwrap()
            .iter()
            .chain(g["inc_metrics"].as_array().unwrap())
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        Golden {
            rel,
            ps,
            g,
            rows,
            by_path,
            nranks,
            hatchet_cols,
        }
    }

    /// grove's value of `col` at `n`, the mean over the ranks' profiles (absent values
    /// as 0, as Hatchet zero-fills them).
    fn mean(&self, col: &str, n: u32) -> f64 {
        self.ps
            .iter()
            .map(|q| value0(q.metrics.get(col, n)))
            .sum::<f64>()
            / self.ps.len() as f64
    }

    /// Whether Hatchet keeps two rows for (root, rank) in this row: it made the root as
    /// an implicit parent (its duplicated root entry).
    fn doubled(&self, e: &serde_json::Value) -> bool {
        e["rows"].as_u64().is_some_and(|r| r as usize > self.nranks)
    }

    fn roots(&self) -> impl Iterator<Item = &'a serde_json::Value> {
        self.rows
            .iter()
            .filter(|e| e["path"].as_array().unwrap().len() == 1)
    }

    /// Values: every Hatchet metric grove also has, at every node, means over ranks.
    /// (values compared, of which roots' inclusive values)
    fn values(&self) -> (usize, usize) {
        let (rel, p) = (self.rel, &self.ps[0]);
        let (mut values_checked, mut root_inc_checked) = (0, 0);
        for e in self.rows {
            let path: Vec<String> = serde_json::from_value(e["path"].clone()).unwrap();
            let n = self.by_path[&path];
            // Doubled roots are checked per rank (`root_ranks`).
            let doubled = self.doubled(e);
            for (m, v) in e["metrics"].as_object().unwrap() {
                let Some(v) = v.as_f64() else { continue };
                // Caliper min/max/avg combine by min/max/mean in grove where Hatchet
                // adds them up (several snapshots of one region in timeseries files);
                // Hatchet's "(inc)" of them is a sum of minima.
                if ["min#", "max#", "avg#"].iter().any(|p| m.starts_with(p)) {
                    continue;
                }
                let Some(col) = grove_column(p, m, &self.hatchet_cols) else {
                    continue; // derived by Hatchet's update_inclusive_columns only
                };
                if doubled {
                    continue; // Hatchet's mean counted a zero row per rank
                }
                let mine = self.mean(&col, n);
                assert!(
                    close(mine, v),
                    "{rel}: {path:?} {m} ({col}): grove {mine}, Hatchet {v}"
                );
                values_checked += 1;
                if path.len() == 1 && col.ends_with(INC_SUFFIX) {
                    root_inc_checked += 1;
                }
            }
        }
        (values_checked, root_inc_checked)
    }

    /// Per (root, rank) sums; the number of inclusive ones.
    fn root_ranks(&self) -> usize {
        let (rel, hatchet_cols) = (self.rel, &self.hatchet_cols);
        let mut root_inc_checked = 0;
        for rr in self.g["root_ranks"].as_array().into_iter().flatten() {
            let rank = rr["rank"].as_i64().unwrap();
            let q = self
                .ps
                .iter()
                .find(|q| q.meta_value("mpi.rank") == Some(&rank.to_string()))
                .unwrap_or_else(|| panic!("{rel}: no profile for rank {rank}"));
            let n = self.by_path[&vec![rr["root"].as_str().unwrap().to_string()]];
            for (m, v) in rr["metrics"].as_object().unwrap() {
                let (Some(v), Some(col)) = (v.as_f64(), grove_column(q, m, hatchet_cols)) else {
                    continue;
                };
                let mine = value0(q.metrics.get(&col, n));
                assert!(
                    close(mine, v),
                    "{rel}: rank {rank} root {m}: grove {mine}, Hatchet {v}"
                );
                if col.ends_with(INC_SUFFIX) {
                    root_inc_checked += 1;
                }
            }
        }
        root_inc_checked
    }

    /// The root's inclusive time rebuilt from the per-rank sums where Hatchet doubled
    /// the root row.
    fn doubled_roots(&self) -> usize {
        let rel = self.rel;
        let mut root_inc_checked = 0;
        for e in self.roots() {
            let (Some(inc), Some(exc)) = (
                e["metrics"]["time (inc)"].as_f64(),
                e["metrics"]["time"].as_f64(),
            ) else {
                continue;
            };
            if !self.doubled(e) {
                continue;
            }
            let name = e["path"][0].as_str().unwrap();
            let n = self.by_path[&vec![name.to_string()]];
            let rank_exc: Vec<f64> = self.g["root_ranks"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["root"] == name)
                .map(|r| r["metrics"]["time"].as_f64().unwrap())
                .collect();
            let want = inc - exc + rank_exc.iter().sum::<f64>() / rank_exc.len() as f64;
            let mine = self.mean("time (inc)", n);
            assert!(
                close(mine, want),
                "{rel}: root {name} time (inc): grove {mine}, Hatchet {want}"
            );
            root_inc_checked += 1;
        }
        root_inc_checked
    }

    /// Inclusive columns grove derives where Hatchet has only the exclusive one: each
    /// root's value is the sum of Hatchet's exclusive values in its subtree. (checked,
    /// skipped because Hatchet's sum is NaN)
    fn derived_inclusive(&self) -> (usize, usize) {
        let (rel, p, hatchet_cols) = (self.rel, &self.ps[0], &self.hatchet_cols);
        let (mut root_inc_checked, mut hatchet_nan) = (0, 0);
        for m in hatchet_cols {
            let Some(exc) = grove_column(p, m, hatchet_cols) else {
                continue;
            };
            let inc = inclusive_name(&exc);
            let inc_from_file = hatchet_cols
                .iter()
                .any(|h| grove_column(p, h, hatchet_cols).as_deref() == Some(inc.as_str()));
            if exc.ends_with(INC_SUFFIX) || inc_from_file || !p.metrics.has(&inc) {
                continue;
            }
            for root_row in self.roots() {
                if self.doubled(root_row) {
                    continue;
                }
                let root_name = &root_row["path"][0];
                let subtree: Vec<&serde_json::Value> = self
                    .rows
                    .iter()
                    .filter(|e| e["path"][0] == *root_name)
                    .map(|e| &e["metrics"][m.as_str()])
                    .collect();
                // Hatchet adds several records of one node with skipna=False: a node
                // where some record lacks the metric is NaN there (timeseries files).
                if subtree.iter().any(|v| v.is_null()) {
                    hatchet_nan += 1;
                    continue;
                }
                let want: f64 = subtree.iter().filter_map(|v| v.as_f64()).sum();
                let n = self.by_path[&vec![root_name.as_str().unwrap().to_string()]];
                let mine = self.mean(&inc, n);
                assert!(
                    close(mine, want),
                    "{rel}: root {root_name} {inc}: grove {mine}, Hatchet subtree sum {want}"
                );
                root_inc_checked += 1;
            }
        }
        (root_inc_checked, hatchet_nan)
    }
}

fn caliper_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut all = Vec::new();
    walk(root, &mut all);
    all.sort();
    all
}

fn is_caliper_file(rel: &str) -> bool {
    rel.ends_with(".cali")
        || (rel.ends_with(".json")
            && rel.contains("/caliper-")
            && rel.starts_with("hatchet/hatchet/tests/data/"))
}

/// Every Caliper file of the corpus loads; sniffing claims exactly those files.
#[test]
fn whole_corpus_sniff_and_load() {
    let Some(root) = corpus() else {
        crate::corpus_skip!()
    };
    let mut loaded = 0;
    for p in caliper_files(&root) {
        let rel = p
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let mut head = vec![0u8; 4096];
        let n = File::open(&p)
            .and_then(|mut f| f.read(&mut head))
            .unwrap_or(0);
        head.truncate(n);
        let claimed = sniff(&p, &head);
        assert_eq!(
            claimed,
            is_caliper_file(&rel),
            "{rel}: sniff says {claimed}"
        );
        if claimed {
            let ps = read(&p).unwrap_or_else(|e| panic!("{rel}: {e}"));
            assert!(
                ps.iter().all(|q| !q.cct.is_empty() && q.cct.check()),
                "{rel}"
            );
            loaded += 1;
        }
    }
    eprintln!("{loaded} Caliper files of the corpus load");
    assert!(loaded >= 38, "{loaded}");
}

#[test]
fn corpus_details() {
    let Some(root) = corpus() else {
        crate::corpus_skip!()
    };
    let load = |rel: &str| read(&root.join(rel)).unwrap();
    // json-split, 8 ranks, microsecond integers from an old Caliper.
    let ps = load("hatchet/hatchet/tests/data/caliper-lulesh-json/lulesh-annotation-profile.json");
    assert_eq!(ps.len(), 8);
    assert_eq!(ps[3].source.label, "lulesh-annotation-profile.json rank 3");
    assert_eq!(ps[0].metrics.unit("time"), "us");
    assert_eq!(get(&ps[0], "time (inc)", &["main"]), 5882425.0);
    assert_eq!(ps[0].cct.frame(0).kind.as_ref(), "region");
    // Sampled call paths: functions, statement children, module attribute.
    let ps = load("hatchet/hatchet/tests/data/caliper-cpi-json/cpi-callpath-profile.json");
    assert_eq!(ps.len(), 4);
    let p = &ps[0];
    assert_eq!(p.cct.frame(0).kind.as_ref(), "function");
    let stmts = (0..p.cct.len() as u32)
        .filter(|&n| p.cct.frame(n).kind.as_ref() == "statement")
        .count();
    assert_eq!(stmts, 42);
    assert!((0..p.cct.len() as u32).any(|n| p.cct.frame(n).attr("module").is_some()));
    // SPOT region profile: aliases, seconds, Adiak metadata.
    let p = &load(
        "thicket/thicket/tests/data/rajaperf/quartz/gcc10.3.1_1048576/O3/1/Base_Seq-default.cali",
    )[0];
    assert_eq!(p.metrics.unit("Avg time/rank (inc)"), "s");
    assert!(p.meta_value("cluster").is_some());
    assert!(p.meta_value("launchdate").is_some());
    assert_eq!(p.dialect, "Caliper .cali");
    // Node order: main's children in Caliper's order.
    let p = &load(
        "hatchet/hatchet/tests/data/caliper-ordered-cali/230525-151052_1930517_eWbGeyrlBOPT.cali",
    )[0];
    let main = p.cct.root_ids()[0];
    let kids: Vec<&str> = p.cct.children(main).map(|c| p.cct.name(c)).collect();
    assert_eq!(kids.first(), Some(&"lulesh.cycle"), "{kids:?}");
    // CUDA activity: kernels under their launch regions, 4 ranks.
    let ps = load("hatchet/hatchet/tests/data/caliper-sw4-cuda-activity-cali/caliper_cuda_activity_profile.cali");
    assert_eq!(ps.len(), 4);
    assert!((0..ps[0].cct.len() as u32).any(|n| ps[0].cct.frame(n).kind.as_ref() == "kernel"));
    assert_eq!(ps[0].metrics.unit("time (gpu)"), "s");
    // Timeseries: nanoseconds; Caliper 1.x: microseconds from time.unit.
    let p = &load("hatchet/hatchet/tests/data/caliper-timeseries-cali/timeseries.cali")[0];
    assert_eq!(p.metrics.unit("sum#time.duration.ns"), "ns");
    let p = &load("caliper/doc/sphinx/examples/160809-094411_72298_fuu1NeAHT2US.cali")[0];
    assert_eq!(p.metrics.unit("time.inclusive.duration (inc)"), "us");
    assert!(p.cct.root_ids().iter().any(|&r| p.cct.name(r) == "body"));
}
