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
