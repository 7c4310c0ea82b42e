use super::buffer::Buf;
use super::defs::{self, ClockCorrection, IdMap};
use super::*;

#[test]
fn clock_offsets_interpolate_like_libotf2() {
    // One offset corrects nothing (libotf2 keeps it pending).
    let mut c = ClockCorrection::new(&[(1000, -30)]);
    assert_eq!(c.apply(5000), 5000);
    // Two: linear between them, extrapolated outside; ties round to even (rint).
    let mut c = ClockCorrection::new(&[(1000, -30), (3000, -10)]);
    assert_eq!(c.apply(500), 500 - 35);
    assert_eq!(c.apply(1000), 970);
    assert_eq!(c.apply(2000), 2000 - 20);
    assert_eq!(c.apply(5000), 5000 + 10);
}

#[test]
fn anchor_fields_and_refusals() {
    let mut a = vec![3u8, 0x42];
    a.extend_from_slice(b"OTF2\0");
    a.extend_from_slice(&[3, 2, 3, 0, 2]);
    a.extend_from_slice(&(1u64 << 20).to_le_bytes());
    a.extend_from_slice(&(1u64 << 18).to_le_bytes());
    a.extend_from_slice(&[1, 1]);
    a.extend_from_slice(&2u64.to_le_bytes());
    a.extend_from_slice(&533u64.to_le_bytes());
    a.extend_from_slice(b"\0Score-P 7.1\0\0");
    a.extend_from_slice(&1u32.to_le_bytes());
    a.extend_from_slice(b"K\0V\0");
    assert!(anchor::looks_like_anchor(&a));
    let x = anchor::parse(&a).unwrap().unwrap();
    assert_eq!(x.version, (3, 0, 2));
    assert_eq!((x.chunk_size_events, x.locations), (1 << 20, 2));
    assert_eq!(x.creator, "Score-P 7.1");
    assert_eq!(x.properties, vec![("K".to_string(), "V".to_string())]);
    // zlib compression is refused with a sentence, not misread.
    let mut z = a.clone();
    z[2 + 5 + 5 + 16 + 1] = 2;
    assert!(anchor::parse(&z).unwrap().unwrap_err().contains("zlib"));
    // Cut anywhere: an error with an offset, never a panic.
    for cut in 0..a.len() - 4 {
        let _ = anchor::parse(&a[..cut]);
    }
    assert!(!anchor::looks_like_anchor(b"OTF2 notes"));
}

#[test]
fn mapping_tables_dense_and_sparse() {
    let mut l = defs::Local {
        maps: vec![None; defs::MAP_KINDS],
        ..Default::default()
    };
    // COMM, 3 entries, dense: [1, 2, 0] (a corpus record).
    let body = [6u8, 1, 3, 0, 1, 1, 1, 2, 0];
    defs::local_record(&mut l, 5, &mut Buf::new(&body, 0)).unwrap();
    match &l.maps[defs::MAP_COMM as usize] {
        Some(m @ IdMap::Dense(_)) => assert_eq!((m.get(0), m.get(2), m.get(7)), (1, 0, 7)),
        other => panic!("{other:?}"),
    }
    // STRING, 1 entry, sparse: 257 -> 258.
    let body = [0u8, 1, 1, 1, 2, 1, 1, 2, 2, 1];
    defs::local_record(&mut l, 5, &mut Buf::new(&body, 0)).unwrap();
    assert_eq!(l.maps[0].as_ref().unwrap().get(257), 258);
    // A count larger than the record: an error before any allocation.
    let body = [0u8, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1];
    assert!(defs::local_record(&mut l, 5, &mut Buf::new(&body, 0)).is_err());
}

/// The placement rule of every metric mode (docs/formats.md, OTF2 "Metrics"), and
/// what it cannot place said with its reason.
#[test]
fn metric_modes_are_placed_by_their_timing() {
    let mut d = defs::Defs::default();
    // Members 0..4: ACCUMULATED_START, _POINT, _LAST, _NEXT; 4: ABSOLUTE_POINT with an
    // exponent.
    for (id, mode) in [(0u32, 0x00u8), (1, 0x10), (2, 0x20), (3, 0x30), (4, 0x11)] {
        d.strings.insert(id, format!("m{id}"));
        let exponent = if id == 4 { 3 } else { 0 };
        d.metric_members.insert(
            id,
            defs::MetricMember {
                name: id,
                mode,
                exponent,
                ..Default::default()
            },
        );
    }
    d.metric_classes.insert(
        10,
        defs::MetricClass {
            members: vec![0, 1, 2, 3, 4],
            occurrence: 2,
        },
    );
    let mut cct = crate::model::Cct::default();
    let root = cct.child(None, "loc", "thread");
    let f = cct.child(Some(root), "f", "function");
    let mut p = metrics::Placer::new(&d);
    p.start_location();
    let rec = |p: &mut metrics::Placer, node: u32, vals: [u64; 5]| {
        let v: Vec<(u8, u64)> = vals.iter().map(|&x| (4u8, x)).collect();
        p.record(&d, 10, &v, (node, root, 0), |_| false);
    };
    rec(&mut p, root, [5, 5, 5, 5, 7]);
    rec(&mut p, f, [8, 8, 2, 2, 3]);
    rec(&mut p, f, [6, 9, 1, 1, 9]);
    // A record of an undefined metric, and one with a value short.
    p.record(&d, 99, &[(4, 1)], (f, root, 0), |_| false);
    p.record(&d, 10, &[(4, 20)], (f, root, 0), |_| false);
    let warnings = p.warnings();
    let mut m = crate::model::MetricTable::new(cct.len());
    p.finish(&cct, &mut m, Vec::new());
    let at = |name: &str| {
        let v = m.values(name).unwrap();
        (v[root as usize], v[f as usize])
    };
    // START: 5 since the start at the root, then +3, -2, +14 at f; total = last value.
    assert_eq!(at("m0"), (5.0, 15.0));
    assert_eq!(at("m0 (inc)"), (20.0, 15.0));
    // POINT: the first value is the baseline.
    assert_eq!(at("m1 (inc)"), (4.0, 4.0));
    // LAST and NEXT: the values themselves.
    assert_eq!(at("m2"), (5.0, 3.0));
    assert_eq!(at("m3 (inc)"), (8.0, 3.0));
    // ABSOLUTE: the largest, never a sum; no column without a value.
    assert_eq!(at("m4:max"), (7.0, 9.0));
    assert_eq!(at("m4:max (inc)"), (9.0, 9.0));
    assert!(!m.has("m4"));
    for said in [
        "1 METRIC record(s) name a metric with no MetricClass",
        "1 value(s) of accumulated metrics are lower",
        "1 METRIC record(s) carry fewer values",
        "m4 (exponent 3)",
    ] {
        assert!(
            warnings.iter().any(|w| w.contains(said)),
            "{said}: {warnings:?}"
        );
    }
}
