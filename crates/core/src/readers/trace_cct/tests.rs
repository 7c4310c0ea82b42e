//! The tree build with one core (lanes linked through the event-to-node column) and with
//! two (lane lists gathered by both cores) gives the same tree, node for node.

use crate::model::coded::BytePairs;
use crate::readers::chrome::{parse, set_thread_override};

/// Everything the build gives, node by node and slot by slot.
fn digest(json: &str, threads: usize) -> String {
    let tr = parse(json.as_bytes()).expect("parses");
    set_thread_override(None, Some(threads));
    let t = super::build(&tr);
    set_thread_override(None, None);
    let c = &t.cct;
    let mut out = format!("roots {:?} slots {}\n", c.roots, c.slot_count());
    for f in c.frames() {
        out += &format!("frame {f:?}\n");
    }
    for n in 0..c.len() as u32 {
        out += &format!("node {n} {:?} slot {}\n", c.parent(n), c.frame_slot(n));
    }
    for m in t.metrics.names() {
        out += &format!("{m} {:?}\n", t.metrics.values(&m));
    }
    let launch: Vec<u32> = (0..tr.events.len()).map(|i| t.launch_of_event[i]).collect();
    out += &format!("{:?}\n{launch:?}\n{:?}\n", t.node_of_event, t.warnings);
    out
}

fn x(name: &str, cat: &str, tid: u32, ts: i64, dur: i64) -> String {
    format!(
        r#"{{"ph":"X","name":"{name}","cat":"{cat}","pid":1,"tid":{tid},"ts":{ts},"dur":{dur}}}"#
    )
}

/// Lanes whose rows interleave, one out of order (sorted from its list), nested,
/// zero-length, overlapping (Python frames cut, slices placed beside), unended and
/// B/E slices, a kernel under its launch: one core (linked lanes) makes the tree two
/// cores (lane lists) make, node for node.
#[test]
fn one_core_and_two_make_one_tree() {
    let mut ev = vec![
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":3,"args":{"name":"worker"}}"#.to_string(),
    ];
    for k in 0..40i64 {
        let t = k * 100;
        ev.push(x("outer", "cpu_op", 1, t, 90));
        ev.push(x(&format!("w{}", k % 3), "cpu_op", 2, t + 1, 50));
        ev.push(x("inner", "cpu_op", 1, t + 10, 20));
        ev.push(x("z", "cpu_op", 1, t + 10, 0));
        ev.push(x(&format!("w{}", k % 5), "cpu_op", 2, t + 10, 20));
        ev.push(x("py", "python_function", 1, t + 40, 30));
        ev.push(x("op", "cpu_op", 1, t + 50, 35));
        ev.push(x("late", "cpu_op", 2, t + 30, 40));
        // Tid 3's rows go back in time from its fifth row on.
        let back = if k >= 4 { t - 250 } else { t };
        ev.push(x("s", "user_annotation", 3, back + 5, 10));
        ev.push(x(&format!("s{}", k % 4), "cpu_op", 3, back + 6, 4));
    }
    ev.push(r#"{"ph":"B","name":"open","pid":1,"tid":4,"ts":3}"#.into());
    ev.push(r#"{"ph":"B","name":"b","pid":1,"tid":4,"ts":5}"#.into());
    ev.push(r#"{"ph":"E","pid":1,"tid":4,"ts":9}"#.into());
    ev.push(
        r#"{"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":2,"ts":4001,"dur":5,"args":{"correlation":7}}"#
            .into(),
    );
    ev.push(
        r#"{"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":4010,"dur":5,"args":{"correlation":7,"device":0,"stream":7}}"#
            .into(),
    );
    let json = format!("{{\"traceEvents\":[{}]}}", ev.join(",\n"));
    let one = digest(&json, 1);
    assert!(one.contains("overlap"), "{one}");
    assert_eq!(one, digest(&json, 2));
}

/// The lanes found through the pid and tid columns' byte codes are those found through
/// their values, links included, also where two codes stand for one value (a
/// Perfetto trace's tracks named at the end: two tracks of one thread) and where the
/// last row is kept apart (`Coded::push`, a Chrome trace's columns).
#[test]
fn lanes_by_codes_are_lanes_by_values() {
    use crate::model::events::{EventKind, EventTable};
    // Rows on tracks 0..4 (placeholders), one an instant, one out of time order.
    let tracks = [0u32, 1, 2, 0, 3, 2, 1, 0, 3, 2, 2, 0, 3];
    let table = |at_once: bool| {
        let mut ev = EventTable::default();
        for (i, &t) in tracks.iter().enumerate() {
            let kind = if i == 4 {
                EventKind::Instant
            } else {
                EventKind::Cpu
            };
            let ts = if i == 9 { 1 } else { 10 * i as i64 };
            ev.push(7, 8, kind, ts, 1, t, t);
        }
        if at_once {
            // Coded at once, as the Perfetto reader pushes them (no row kept apart).
            (ev.pid, ev.tid) = (Default::default(), Default::default());
            for &t in &tracks {
                ev.pid.push_final(t);
                ev.tid.push_final(t);
            }
        }
        // Tracks 0 and 2 are one thread; track 3 another process's.
        ev.pid.map_values(|t| if t == 3 { 200 } else { 100 });
        ev.tid.map_values(|t| if t == 2 { 50 } else { 50 + t });
        ev
    };
    let lanes = |ev: &EventTable, by_codes: bool| {
        let mut column = vec![u32::MAX; ev.len()];
        let mut l = super::LinkedLanes::default();
        let mut coded = 0;
        if by_codes {
            let pairs = BytePairs::new(&ev.pid, &ev.tid).expect("byte codes");
            coded = pairs.len();
            l.by_codes(ev, &mut column, &pairs);
        }
        l.by_values(ev, coded..ev.len(), &mut column);
        let list: Vec<String> = l.list.iter().map(|(k, x)| format!("{k:?} {x:?}")).collect();
        (list, column)
    };
    for at_once in [true, false] {
        let ev = table(at_once);
        let coded = BytePairs::new(&ev.pid, &ev.tid).expect("byte codes").len();
        assert_eq!(coded, tracks.len() - usize::from(!at_once));
        let (codes, values) = (lanes(&ev, true), lanes(&ev, false));
        assert_eq!(codes, values);
        assert_eq!(codes.0.len(), 3, "{codes:?}");
    }
}

/// Kernels whose attrs lists repeat, then more than 4096 that each make a new one (a
/// `corr_id` arg, as rocprofv3 writes): the second core makes lists ahead until they
/// stop repeating, the GPU pass the rest, and a node's attrs are still its first
/// kernel's, as one core makes them.
#[test]
fn attrs_lists_made_ahead_give_the_one_core_tree() {
    let mut ev = Vec::new();
    for k in 0..6000i64 {
        let t = k * 100;
        ev.push(x(&format!("op{}", k % 3), "cpu_op", 1, t, 50));
        ev.push(format!(
            r#"{{"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{k}}}}}"#,
            t + 1
        ));
        let config = if k < 500 {
            r#""grid":[1,1,1]"#.to_string()
        } else {
            format!(r#""corr_id":{k}"#)
        };
        ev.push(format!(
            r#"{{"ph":"X","name":"k{}","cat":"kernel","pid":0,"tid":7,"ts":{},"dur":5,"args":{{"correlation":{k},"device":0,"stream":7,{config}}}}}"#,
            k % 2,
            t + 10
        ));
    }
    let json = format!("{{\"traceEvents\":[{}]}}", ev.join(",\n"));
    let one = digest(&json, 1);
    assert!(one.contains("grid"), "the first kernels' attrs");
    assert_eq!(one, digest(&json, 2));
}
