//! Hand-encoded packet streams: the sequence state, clocks, tracks and GPU lanes.

use super::*;
use crate::model::events::EventKind;

/// A tiny protobuf writer for the tests.
#[derive(Default, Clone)]
pub struct W(pub Vec<u8>);

impl W {
    fn key(&mut self, f: u32, wt: u8) -> &mut Self {
        self.var(u64::from(f) << 3 | u64::from(wt))
    }
    fn var(&mut self, mut v: u64) -> &mut Self {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return self;
            }
            self.0.push(b | 0x80);
        }
    }
    pub fn int(&mut self, f: u32, v: u64) -> &mut Self {
        self.key(f, 0).var(v)
    }
    pub fn bytes(&mut self, f: u32, b: &[u8]) -> &mut Self {
        self.key(f, 2).var(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    pub fn fixed64(&mut self, f: u32, v: u64) -> &mut Self {
        self.key(f, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn msg(&mut self, f: u32, m: &W) -> &mut Self {
        self.bytes(f, &m.0)
    }
    pub fn str(&mut self, f: u32, s: &str) -> &mut Self {
        self.bytes(f, s.as_bytes())
    }
}

fn w() -> W {
    W::default()
}

fn source() -> Source {
    Source {
        path: None,
        format: Format::Perfetto,
        size: 0,
        gzip: false,
        label: "t".into(),
    }
}

fn load(packets: &[W]) -> Result<Profile, String> {
    let mut t = w();
    for p in packets {
        t.msg(1, p);
    }
    read(&mut &t.0[..], source())
}

/// A thread track (uuid 10, pid 1, tid 2 "main") under its process (uuid 1).
fn descriptors() -> Vec<W> {
    let process = w().int(1, 1).str(6, "app").clone();
    let thread = w().int(1, 1).int(2, 2).str(5, "main").clone();
    vec![
        w().int(10, 7)
            .msg(60, w().int(1, 1).msg(3, &process))
            .clone(),
        w().int(10, 7)
            .msg(60, w().int(1, 10).int(5, 1).msg(4, &thread))
            .clone(),
    ]
}

/// A packet on sequence 7 at `ts` with a track event.
fn event(ts: u64, ev: &W) -> W {
    w().int(8, ts).int(10, 7).int(13, 2).msg(11, ev).clone()
}

/// A counter track (uuid 20) on sequence 7, incremental, with a unit.
fn counter_track() -> W {
    w().int(10, 7)
        .msg(
            60,
            w().int(1, 20)
                .str(2, "bytes")
                .msg(8, w().int(4, 1).int(5, 1)),
        )
        .clone()
}

#[test]
fn slices_nest_with_interned_names() {
    let mut ps = descriptors();
    ps.push(counter_track());
    let interned = w()
        .msg(2, w().int(1, 1).str(2, "outer"))
        .msg(2, w().int(1, 2).str(2, "inner"))
        .msg(1, w().int(1, 5).str(2, "cat"))
        .clone();
    // The first packet clears the state and sets the default track.
    ps.push(
        w().int(10, 7)
            .int(13, 1)
            .msg(12, &interned)
            .msg(59, w().msg(11, w().int(11, 10)))
            .clone(),
    );
    ps.push(event(100, w().int(9, 1).int(10, 1).int(3, 5)));
    ps.push(event(110, w().int(9, 1).int(10, 2)));
    ps.push(event(130, w().int(9, 2)));
    ps.push(event(150, w().int(9, 3).str(23, "mark")));
    ps.push(event(200, w().int(9, 2)));
    let p = load(&ps).unwrap();
    let ev = p.events.as_ref().unwrap();
    assert_eq!(ev.len(), 3);
    let names: Vec<&str> = (0..3).map(|i| ev.name_of(i)).collect();
    // CPU slices are rows from their begin, in the order they start.
    assert_eq!(names, vec!["outer", "inner", "mark"]);
    assert_eq!((ev.ts[0], ev.dur[0]), (100, 100));
    assert_eq!((ev.ts[1], ev.dur[1]), (110, 20));
    assert_eq!(ev.kind[2], EventKind::Instant);
    assert_eq!(ev.strings.resolve(ev.cat[0]), "cat");
    assert_eq!(ev.strings.resolve(ev.tid[0]), "2");
    let root = p.cct.roots[0];
    assert_eq!(&*p.cct.frame(root).name, "main");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn lost_state_skips_packets_that_need_it() {
    let mut ps = descriptors();
    ps.push(
        w().int(10, 7)
            .int(13, 1)
            .msg(59, w().msg(11, w().int(11, 10)))
            .clone(),
    );
    ps.push(event(100, w().int(9, 1).str(23, "a")));
    ps.push(event(120, w().int(9, 2)));
    // A packet was dropped: what needs the state is skipped until it is cleared.
    ps.push(w().int(10, 7).int(42, 1).clone());
    ps.push(event(130, w().int(9, 1).str(23, "b")));
    let p = load(&ps).unwrap();
    assert_eq!(p.events.as_ref().unwrap().len(), 1);
    assert!(p.warnings.iter().any(|w| w.contains("dropped packet")));
}

#[test]
fn incremental_clock_in_microseconds() {
    let mut ps = descriptors();
    let snap = w()
        .msg(1, w().int(1, 6).int(2, 1_000_000))
        .msg(1, w().int(1, 64).int(2, 500).int(3, 1).int(4, 1000))
        .clone();
    ps.push(
        w().int(10, 7)
            .int(13, 1)
            .msg(6, &snap)
            .msg(59, w().int(58, 64).msg(11, w().int(11, 10)))
            .clone(),
    );
    // Deltas: +3 µs, +2 µs.
    ps.push(event(3, w().int(9, 1).str(23, "a")));
    ps.push(event(2, w().int(9, 2)));
    let p = load(&ps).unwrap();
    let ev = p.events.as_ref().unwrap();
    // 503 µs on clock 64 is 1,000,000 + 3,000 ns of BOOTTIME.
    assert_eq!((ev.ts[0], ev.dur[0]), (1_003_000, 2000));
}

#[test]
fn rocprof_kernels_go_to_gpu_lanes_under_their_launch() {
    let mut ps = descriptors();
    ps.push(
        w().int(10, 7)
            .msg(
                60,
                w().int(1, 99).str(2, "COMPUTE AGENT [3] QUEUE [0] (GPU)"),
            )
            .clone(),
    );
    let corr = |v| w().str(10, "corr_id").int(3, v).clone();
    ps.push(event(
        100,
        w().int(9, 1)
            .int(11, 10)
            .str(22, "hip_api")
            .str(23, "hipLaunchKernel")
            .msg(4, &corr(5)),
    ));
    ps.push(event(110, w().int(9, 2).int(11, 10)));
    ps.push(event(
        200,
        w().int(9, 1)
            .int(11, 99)
            .str(22, "kernel_dispatch")
            .str(23, "vadd")
            .msg(4, &corr(5))
            .msg(4, w().str(10, "grid_size").int(3, 1024)),
    ));
    ps.push(event(260, w().int(9, 2).int(11, 99)));
    let p = load(&ps).unwrap();
    let ev = p.events.as_ref().unwrap();
    let k = (0..ev.len())
        .find(|&i| ev.kind[i] == EventKind::Kernel)
        .unwrap();
    assert_eq!((ev.device[k], ev.stream[k], ev.correlation[k]), (3, 0, 5));
    assert_eq!(ev.dur[k], 60);
    let args = ev.args_of(k).unwrap();
    assert_eq!(args.get("grid_size").and_then(|v| v.as_i64()), Some(1024));
    // The kernel hangs under the call that launched it.
    let node = ev.node[k];
    let parent = p.cct.parent(node).unwrap();
    assert_eq!(&*p.cct.frame(parent).name, "hipLaunchKernel");
}

#[test]
fn other_packets_are_counted_and_damage_is_one_line() {
    let mut ps = descriptors();
    ps.push(w().int(10, 7).msg(1, w().int(1, 0)).clone());
    ps.push(w().int(10, 7).msg(1, w().int(1, 0)).clone());
    ps.push(w().int(10, 7).msg(33, w().int(1, 0)).clone());
    ps.push(event(5, w().int(9, 3).int(11, 10).str(23, "i")));
    let p = load(&ps).unwrap();
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("2 packet(s)") && w.contains("ftrace_events (field 1) ×2")),
        "{:?}",
        p.warnings
    );
    assert!(p.meta.iter().any(|(_, v)| v.contains("trace_config")));
    assert!(read(&mut &b"\x0a\x05ab"[..], source()).is_err());
    assert!(read(&mut &b""[..], source()).is_err());
}

#[test]
fn detection() {
    let mut t = w();
    for p in descriptors() {
        t.msg(1, &p);
    }
    assert!(claims(&t.0));
    assert!(claims(&t.0[..6]));
    assert!(!claims(b"\nmain;foo 12\n"));
    // pprof: field 1 is a ValueType of varints.
    assert!(!claims(&[0x0a, 0x04, 0x08, 0x01, 0x10, 0x02]));
    assert!(!claims(b"{\"traceEvents\":[]}"));
}

/// The stream of `fast_path_reads_as_the_general_path`: SDK-shaped packets, each
/// written by `pack` (in the SDK's field order, or another the fast path leaves alone).
fn sdk_stream(pack: &dyn Fn(u64, u64, &W) -> W) -> Vec<W> {
    let mut ps = descriptors();
    ps.push(
        w().int(10, 7)
            .msg(60, w().int(1, 11).int(5, 1).msg(4, w().int(1, 1).int(2, 3)))
            .clone(),
    );
    ps.push(counter_track());
    let interned = w()
        .msg(2, w().int(1, 1).str(2, "outer"))
        .msg(2, w().int(1, 2).str(2, "inner"))
        .msg(2, w().int(1, 300).str(2, "far"))
        .msg(1, w().int(1, 1).str(2, "main"))
        .msg(1, w().int(1, 2).str(2, "hip_api"))
        .msg(1, w().int(1, 3).str(2, "kernel_dispatch"))
        .clone();
    let snap = |boot: u64, seq: u64| {
        w().msg(1, w().int(1, 6).int(2, boot))
            .msg(1, w().int(1, 64).int(2, seq).int(3, 1).int(4, 1))
            .clone()
    };
    let defaults = |track: u64| w().int(58, 64).msg(11, w().int(11, track)).clone();
    ps.push(
        w().int(8, 1_000)
            .int(58, 6)
            .int(10, 7)
            .int(13, 1)
            .msg(12, &interned)
            .msg(59, &defaults(10))
            .msg(6, &snap(1_000, 0))
            .clone(),
    );
    let begin = |cat: u64, name: u64| w().int(9, 1).int(3, cat).int(10, name).clone();
    let end = w().int(9, 2).clone();
    let ann = w().int(1, 1).int(4, 42).clone();
    let corr = w().str(10, "corr_id").int(4, 9).clone();
    let inline = |kind: u64, track: u64, cat: &str, name: &str| {
        w().int(9, kind)
            .int(11, track)
            .str(22, cat)
            .str(23, name)
            .clone()
    };
    let mut evs: Vec<(u64, W)> = vec![
        (10, begin(1, 1)),
        (5, begin(1, 2)),
        (5, begin(1, 2).msg(4, &ann).clone()),
        (3, w().int(9, 3).int(3, 1).int(10, 300).clone()),
        (4, end.clone()),
        (4, end.clone()),
        // An unknown name, an unknown category, a runtime call with annotations, a
        // category met first here, GPU activity on the thread's track.
        (2, begin(1, 9)),
        (2, end.clone()),
        (2, begin(9, 1)),
        (2, end.clone()),
        (2, begin(2, 1).msg(4, &ann).clone()),
        (2, begin(3, 2)),
        (2, end.clone()),
        (2, end.clone()),
        (2, begin(2, 1)),
        (2, end.clone()),
        (7, end.clone()),
        // Unmatched: one end too many.
        (1, end.clone()),
        // Counter values: integer, double, on a track that is no counter track.
        (1, w().int(9, 4).int(11, 20).int(30, 5).clone()),
        (
            1,
            w().int(9, 4)
                .int(11, 20)
                .fixed64(44, 2.5f64.to_bits())
                .clone(),
        ),
        (1, w().int(9, 4).int(11, 10).int(30, 7).clone()),
        (1, begin(1, 1)),
        (1, end.clone()),
        // Slices on a track the event names (as rocprofv3's GPU queues), and an end on
        // a track not seen before.
        (1, begin(1, 2).int(11, 11).clone()),
        (1, w().int(9, 2).int(11, 11).clone()),
        (1, w().int(9, 2).int(11, 77).clone()),
        // Names inline on a track the event names (rocprofv3's layout): a kernel with
        // its `corr_id`, an instant, a CPU slice, a runtime call with two annotations,
        // an end on a track without an open slice.
        (
            1,
            inline(1, 12, "kernel_dispatch", "gemm")
                .msg(4, &corr)
                .clone(),
        ),
        (
            1,
            w().int(9, 3)
                .int(11, 12)
                .str(22, "kernel_dispatch")
                .str(23, "mark")
                .clone(),
        ),
        (2, w().int(9, 2).int(11, 12).clone()),
        (1, inline(1, 13, "cpu", "inl")),
        (
            1,
            inline(1, 13, "hip_api", "hipLaunch")
                .msg(4, &corr)
                .msg(4, w().str(10, "k").str(6, "v"))
                .clone(),
        ),
        (1, w().int(9, 2).int(11, 13).clone()),
        (1, w().int(9, 2).int(11, 13).clone()),
        (1, w().int(9, 2).int(11, 14).clone()),
    ];
    for (d, e) in evs.drain(..) {
        ps.push(pack(d, 2, &e));
    }
    // A new snapshot (the clock restarts), then the defaults move to another track.
    ps.push(
        w().int(8, 5_000)
            .int(58, 6)
            .int(10, 7)
            .msg(6, &snap(5_000, 100))
            .clone(),
    );
    ps.push(pack(1, 2, &begin(1, 1)));
    ps.push(pack(1, 2, &end));
    ps.push(w().int(10, 7).msg(59, &defaults(11)).clone());
    ps.push(pack(1, 2, &begin(1, 2)));
    ps.push(pack(1, 2, &begin(1, 2)));
    ps.push(pack(3, 2, &end));
    // A dropped packet: what needs the state is skipped until it is cleared again.
    ps.push(w().int(10, 7).int(42, 1).clone());
    ps.push(pack(1, 2, &begin(1, 1)));
    ps.push(pack(1, 0, &end));
    ps
}

#[test]
fn fast_path_reads_as_the_general_path() {
    let sdk =
        |d: u64, flags: u64, e: &W| w().int(8, d).int(10, 7).int(13, flags).msg(11, e).clone();
    let other =
        |d: u64, flags: u64, e: &W| w().int(10, 7).int(8, d).int(13, flags).msg(11, e).clone();
    let dump = |ps: Vec<W>| {
        let p = load(&ps).unwrap();
        let ev = p.events.as_ref().unwrap();
        let rows: Vec<String> = (0..ev.len())
            .map(|i| {
                format!(
                    "{} {} {:?} {} {} {} {} {} {:?}",
                    ev.name_of(i),
                    ev.strings.resolve(ev.cat[i]),
                    ev.kind[i],
                    ev.ts[i],
                    ev.dur[i],
                    ev.seq.get(i),
                    ev.strings.resolve(ev.tid[i]),
                    ev.correlation[i],
                    ev.args_of(i).map(|a| a.to_json().to_string()),
                )
            })
            .collect();
        let nodes: Vec<String> = (0..p.cct.len() as u32)
            .map(|n| format!("{} {:?}", p.cct.frame(n).name, p.cct.parent(n)))
            .collect();
        let c = p.counters.as_ref().unwrap();
        let counters: Vec<String> = (0..c.ts.len())
            .map(|i| {
                format!(
                    "{} {} {}",
                    c.ts[i],
                    c.value[i],
                    ev.strings.resolve(c.name[i])
                )
            })
            .collect();
        format!(
            "{rows:#?}\n{nodes:#?}\n{counters:?}\n{:?}\n{:?}",
            p.warnings, p.meta
        )
    };
    let (fast, general) = (dump(sdk_stream(&sdk)), dump(sdk_stream(&other)));
    assert_eq!(fast, general);
    // The stream reaches what the fast path leaves to the general one.
    for want in [
        "counter value(s) on a track",
        "7.5",
        "<unknown name>",
        "without an open slice",
        "dropped packet",
        "far",
        "kernel_dispatch",
        "hipLaunch",
        "corr_id",
    ] {
        assert!(fast.contains(want), "{want}: {fast}");
    }
    // And the fast path read most of it.
    let count = |ps: Vec<W>| {
        let mut t = w();
        for p in &ps {
            t.msg(1, p);
        }
        let mut d = packets::Decoder::new();
        d.read_stream(&mut &t.0[..]).unwrap();
        d.stats.fast_packets
    };
    assert_eq!(count(sdk_stream(&other)), 0);
    assert!(count(sdk_stream(&sdk)) >= 15, "{}", count(sdk_stream(&sdk)));
}
