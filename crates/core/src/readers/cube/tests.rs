use super::*;

fn src() -> Source {
    Source {
        path: None,
        format: Format::Cube,
        size: 0,
        gzip: false,
        label: "t.cubex".into(),
    }
}

const ANCHOR: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<cube version="4.4"><attr key="Creator" value="unit test"/>
<metrics>
<metric id="0" type="EXCLUSIVE"><uniq_name>visits</uniq_name><dtype>UINT64</dtype><uom>occ</uom></metric>
<metric id="1" type="INCLUSIVE"><uniq_name>time</uniq_name><dtype>DOUBLE</dtype><uom>sec</uom></metric>
<metric id="2" type="EXCLUSIVE"><uniq_name>max_time</uniq_name><dtype>MAXDOUBLE</dtype><uom>sec</uom></metric>
<metric id="3" type="POSTDERIVED"><uniq_name>derived</uniq_name><dtype>DOUBLE</dtype></metric>
<metric id="4" type="EXCLUSIVE"><uniq_name>hist</uniq_name><dtype>HISTOGRAM(3)</dtype></metric>
</metrics>
<program>
<region id="0" mod="a.c" begin="1" end="9"><name>main</name><paradigm>user</paradigm></region>
<region id="1" mod="a.c" begin="10" end="19"><name>f</name></region>
<region id="2" mod="a.c" begin="20" end="29"><name>g</name></region>
<cnode id="0" calleeId="0"><cnode id="1" calleeId="1"><cnode id="2" calleeId="2"></cnode></cnode><cnode id="3" calleeId="2"></cnode></cnode>
</program>
<system><systemtreenode Id="0"><name>machine</name><class>machine</class>
<locationgroup Id="0"><name>MPI Rank 0</name><rank>0</rank><type>process</type>
<location Id="0"><name>Master thread</name><rank>0</rank><type>thread</type></location></locationgroup>
<locationgroup Id="1"><name>MPI Rank 1</name><rank>1</rank><type>process</type>
<location Id="1"><name>Master thread</name><rank>0</rank><type>thread</type></location></locationgroup>
</systemtreenode></system></cube>"#;

fn index_dense() -> Vec<u8> {
    let mut b = b"CUBEX.INDEX".to_vec();
    b.extend([1, 0, 0, 0, 0, 0, 3]);
    b
}

fn index_sparse(rows: &[u32]) -> Vec<u8> {
    let mut b = b"CUBEX.INDEX".to_vec();
    b.extend([1, 0, 0, 0, 0, 0, 1]);
    b.extend((rows.len() as u32).to_le_bytes());
    for r in rows {
        b.extend(r.to_le_bytes());
    }
    b
}

fn data<T: Copy>(vals: &[T], le: impl Fn(T) -> [u8; 8]) -> Vec<u8> {
    let mut b = b"CUBEX.DATA".to_vec();
    for v in vals {
        b.extend(le(*v));
    }
    b
}

fn archive() -> Vec<u8> {
    // visits, exclusive, depth-first rows (main, f, g, g'), two locations each.
    let visits = data(&[1u64, 1, 2, 3, 4, 5, 6, 7], u64::to_le_bytes);
    // time, inclusive, rows in the wide enumeration: main, f, g' (main's children), g.
    let time = data(
        &[10.0f64, 20.0, 6.0, 8.0, 1.0, 2.0, 2.0, 3.0],
        f64::to_le_bytes,
    );
    // max_time, sparse: only f (row 1) and g (row 2) in depth-first order.
    let max = data(&[5.0f64, 0.5, 4.0, 7.0], f64::to_le_bytes);
    let (i0, i1, i2) = (index_dense(), index_dense(), index_sparse(&[1, 2]));
    tar::build(&[
        ("anchor.xml", ANCHOR.as_bytes()),
        ("0.index", &i0),
        ("0.data", &visits),
        ("1.index", &i1),
        ("1.data", &time),
        ("2.index", &i2),
        ("2.data", &max),
        ("4.index", &i0),
        ("4.data", &visits),
    ])
}

#[test]
fn reads_tree_metrics_and_locations() {
    let bytes = archive();
    assert!(claims_head(&bytes));
    let ps = read_bytes(&bytes, src()).unwrap();
    assert_eq!(ps.len(), 3);
    let s = &ps[0];
    assert_eq!(s.source.label, "summary");
    assert_eq!(ps[1].source.label, "rank 0");
    assert_eq!(ps[2].source.label, "rank 1");
    let names: Vec<&str> = (0..4).map(|n| s.cct.name(n)).collect();
    assert_eq!(names, ["main", "f", "g", "g"]);
    assert_eq!(s.cct.parent(2), Some(1));
    assert_eq!(s.cct.parent(3), Some(0));
    assert_eq!(s.default_metric, "time");
    assert_eq!(s.metrics.values("visits").unwrap(), &[2.0, 5.0, 9.0, 13.0]);
    assert_eq!(
        s.metrics.values("visits (inc)").unwrap(),
        &[29.0, 14.0, 9.0, 13.0]
    );
    // time (inc): main 30, f 14, g' 3 (row 2 of the wide order), g 5 (row 3).
    assert_eq!(
        s.metrics.values("time (inc)").unwrap(),
        &[30.0, 14.0, 5.0, 3.0]
    );
    assert_eq!(s.metrics.values("time").unwrap(), &[13.0, 9.0, 5.0, 3.0]);
    assert_eq!(ps[1].metrics.values("time").unwrap(), &[3.0, 4.0, 2.0, 1.0]);
    assert_eq!(s.metrics.unit("time"), "s");
    // max_time: f 5 / 0.5, g 4 / 7; main and g' have no row (no value).
    let shown = |m: &str| format!("{:?}", s.metrics.values(m).unwrap());
    assert_eq!(shown("max_time"), "[NaN, 5.0, 7.0, NaN]");
    assert_eq!(shown("max_time (inc)"), "[7.0, 7.0, 7.0, NaN]");
    assert_eq!(ps[1].metrics.values("max_time (inc)").unwrap()[0], 5.0);
    let w = s.warnings.join("\n");
    assert!(w.contains("derived") && w.contains("POSTDERIVED"), "{w}");
    assert!(w.contains("HISTOGRAM(3) is not read"), "{w}");
    assert_eq!(s.cct.frame(0).attr("file"), Some("a.c"));
}

#[test]
fn bad_archives_are_one_line_errors() {
    let bytes = archive();
    for cut in [0, 100, 600, 1500, bytes.len() / 2] {
        if let Err(e) = read_bytes(&bytes[..cut], src()) {
            assert!(!e.contains('\n'));
        }
    }
    let no_anchor = tar::build(&[("0.data", b"CUBEX.DATA")]);
    assert!(read_bytes(&no_anchor, src())
        .unwrap_err()
        .contains("no anchor.xml"));
    // A short data file skips the metric with a warning.
    let short = tar::build(&[
        ("anchor.xml", ANCHOR.as_bytes()),
        ("1.index", &index_dense()),
        ("1.data", b"CUBEX.DATA\0\0\0"),
    ]);
    let ps = read_bytes(&short, src()).unwrap();
    assert!(ps[0]
        .warnings
        .iter()
        .any(|w| w.contains("metric time: the data holds 3 bytes")));
}

#[test]
fn location_labels() {
    let l = |rank: &str, kind: &str| anchor::Location {
        id: 0,
        name: "CUDA[0:7]".into(),
        rank: rank.into(),
        kind: kind.into(),
        group_name: "MPI Rank 3".into(),
        group_rank: "3".into(),
    };
    assert_eq!(location_label(&l("0", "thread"), false), "rank 3");
    assert_eq!(location_label(&l("1", "thread"), true), "rank 3 thread 1");
    assert_eq!(
        location_label(&l("2", "accelerator"), false),
        "rank 3 accelerator 2"
    );
    assert_eq!(location_label(&l("", ""), false), "MPI Rank 3 CUDA[0:7]");
}
