use super::*;

fn source() -> Source {
    Source {
        path: None,
        format: Format::Gecko,
        size: 0,
        gzip: false,
        label: "t".into(),
    }
}

fn load(text: &str) -> Result<Profile, String> {
    assert!(claims(text.as_bytes()), "not claimed: {text}");
    let mut p = read(&mut text.as_bytes(), source())?;
    p.cct.finish();
    Ok(p)
}

/// `root;a;b` -> (exclusive, inclusive) of the named metric.
fn at(p: &Profile, path: &str, metric: &str) -> (f64, f64) {
    let mut parent: Option<u32> = None;
    for seg in path.split(';') {
        let kids: Vec<u32> = match parent {
            None => p.cct.root_ids(),
            Some(n) => p.cct.children(n).collect(),
        };
        parent = kids.into_iter().find(|&k| p.cct.name(k) == seg);
        assert!(parent.is_some(), "no {seg} in {path}");
    }
    let n = parent.unwrap() as usize;
    let v = |m: &str| p.metrics.values(m).unwrap()[n];
    (v(metric), v(&format!("{metric} (inc)")))
}

/// A raw Gecko profile: main -> work -> inner (x2), main -> work (x1), one null stack,
/// a sub-process with one sample, and two markers.
const RAW: &str = r#"{"meta":{"version":27,"interval":1,"stackwalk":1,"startTime":1000,"product":"Firefox","processType":0},
 "libs":[],
 "threads":[{"name":"GeckoMain","processName":"firefox","pid":10,"tid":10,
   "stringTable":["main (in prog)","work (prog.c:12:3)","inner (in prog)","0x1234"],
   "frameTable":{"schema":{"location":0,"relevantForJS":1,"line":2},"data":[[0,false,null],[1,false,null],[2,false,7]]},
   "stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0],[0,1],[1,2]]},
   "samples":{"schema":{"stack":0,"time":1,"threadCPUDelta":2},"data":[[2,1.0,5],[2,2.0,6],[1,3.0,7],[null,4.0,1]]},
   "markers":{"schema":{"name":0,"startTime":1,"endTime":2,"phase":3},"data":[[3,1.0,2.0,1],[3,2.0,null,0]]}}],
 "processes":[{"meta":{"version":27,"product":"child","startTime":1001},"threads":[{"name":"Worker","pid":11,"tid":12,
   "stringTable":["run"],
   "frameTable":{"schema":{"location":0},"data":[[0]]},
   "stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0]]},
   "samples":{"schema":{"stack":0,"time":1},"data":[[0,1.0]]}}]}]}"#;

#[test]
fn raw_gecko_threads_stacks_and_cpu() {
    let p = load(RAW).unwrap();
    let root = "firefox / GeckoMain (tid 10)";
    assert_eq!(
        at(&p, &format!("{root};main;work;inner"), "samples"),
        (2.0, 2.0)
    );
    assert_eq!(at(&p, &format!("{root};main;work"), "samples"), (1.0, 3.0));
    assert_eq!(
        at(&p, &format!("{root};main;work;inner"), "cpu"),
        (11.0, 11.0)
    );
    assert_eq!(at(&p, "child / Worker (tid 12);run", "samples"), (1.0, 1.0));
    let work = p.cct.root_ids()[0];
    let work = p
        .cct
        .children(p.cct.children(work).next().unwrap())
        .next()
        .unwrap();
    let f = p.cct.frame(work);
    assert_eq!(
        (f.attr("file"), f.attr("line")),
        (Some("prog.c"), Some("12"))
    );
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("1 of 5 samples have no stack")),
        "{:?}",
        p.warnings
    );
    // The interval marker is a row on the thread's lane; the instant one is counted.
    let ev = p.events.as_ref().expect("a markers lane");
    assert_eq!((ev.len(), ev.ts[0], ev.dur[0]), (1, 1_000_000, 1_000_000));
    assert_eq!(ev.strings.resolve(ev.name[0]), "0x1234");
    assert_eq!(ev.strings.resolve(ev.tid[0]), "10");
    assert_eq!(ev.node, vec![p.cct.root_ids()[0]]);
    assert!(p
        .warnings
        .iter()
        .any(|w| w.contains("1 instant marker(s) skipped")));
    assert!(
        p.dialect.starts_with("Gecko profile (version 27)"),
        "{}",
        p.dialect
    );
    assert!(!p.metrics.has("weight"));
}

/// A processed profile (strings shared), with weights and a bad stack index.
const PROCESSED: &str = r#"{"meta":{"version":24,"preprocessedProfileVersion":47,"interval":1,"startTime":0,
   "product":"spin","sampleUnits":{"time":"ms","eventDelay":"ms","threadCPUDelta":"µs"}},
 "libs":[{"name":"spin"}],
 "shared":{"stringArray":["main","inner","spin","/src/spin.c"]},
 "threads":[{"processName":"spin","name":"spin","pid":"7","tid":8,
   "funcTable":{"length":2,"name":[0,1],"resource":[0,-1],"fileName":[null,3],"lineNumber":[null,2],"isJS":[false,false]},
   "resourceTable":{"length":1,"name":[2],"lib":[0],"type":[1]},
   "frameTable":{"length":3,"func":[0,1,1],"address":[1,2,3],"line":[null,null,null]},
   "stackTable":{"length":3,"prefix":[null,0,0],"frame":[0,1,2]},
   "samples":{"length":4,"stack":[1,2,0,9],"time":[0,1,2,3],"weight":[1,2,1,1],"weightType":"samples",
              "threadCPUDelta":[null,1000,900,1]},
   "markers":{"length":0,"name":[],"startTime":[],"endTime":[],"phase":[],"data":[]}}]}"#;

#[test]
fn processed_profile_merges_frames_of_one_function() {
    let p = load(PROCESSED).unwrap();
    let root = "spin (tid 8)";
    // Frames 1 and 2 are both `inner`: one node, as the Firefox Profiler's call tree.
    assert_eq!(at(&p, &format!("{root};main;inner"), "samples"), (2.0, 2.0));
    assert_eq!(at(&p, &format!("{root};main;inner"), "weight"), (3.0, 3.0));
    assert_eq!(
        at(&p, &format!("{root};main;inner"), "cpu"),
        (1000.0, 1000.0)
    );
    assert_eq!(at(&p, &format!("{root};main"), "cpu"), (900.0, 1900.0));
    assert_eq!(at(&p, &format!("{root};main"), "samples"), (1.0, 3.0));
    assert_eq!(p.metrics.unit("cpu"), "us");
    let main = p.cct.children(p.cct.root_ids()[0]).next().unwrap();
    assert_eq!(p.cct.frame(main).attr("module"), Some("spin"));
    let inner = p.cct.children(main).next().unwrap();
    assert_eq!(p.cct.frame(inner).attr("file"), Some("/src/spin.c"));
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("1 samples name a stack that is out of range")),
        "{:?}",
        p.warnings
    );
    assert!(p.dialect.contains("processed profile (version 47)"));
}

#[test]
fn bad_input_is_an_error_or_a_warning_never_a_panic() {
    // A stack table whose prefixes loop.
    let looped = PROCESSED.replace(r#""prefix":[null,0,0]"#, r#""prefix":[2,0,1]"#);
    let p = load(&looped).unwrap();
    assert!(
        p.warnings.iter().any(|w| w.contains("loops")),
        "{:?}",
        p.warnings
    );
    assert!(load(r#"{"meta":{"stackwalk":1},"threads":[]}"#).is_err());
    assert!(load(r#"{"meta":{"stackwalk":1},"threads":[{"samples":5,"stackTable":"x"}]"#).is_err());
    // A damaged `length` far beyond the columns (found by the fuzzer: 4e9 rows).
    let long = PROCESSED.replace(
        r#""stackTable":{"length":3"#,
        r#""stackTable":{"length":3999999999"#,
    );
    assert!(load(&long).is_ok());
    let odd = r#"{"meta":{"stackwalk":1},"threads":[{"samples":{"schema":{"stack":9},"data":[[1],5,null]},"stackTable":{"schema":{},"data":[1]}}, "str", 3]}"#;
    let _ = load(odd);
}

/// Processed markers: an interval, a start/end pair matched by name, an instant, an
/// end without its start; categories named by `meta.categories`.
#[test]
fn processed_markers_with_durations_become_a_lane() {
    let text = PROCESSED
        .replace(
            r#""startTime":0,"#,
            r#""startTime":0,"categories":[{"name":"Other"},{"name":"GC / CC"}],"#,
        )
        .replace(
            r#""markers":{"length":0,"name":[],"startTime":[],"endTime":[],"phase":[],"data":[]}"#,
            r#""markers":{"length":5,"name":[0,1,1,2,2],"startTime":[1,2,null,3,null],
               "endTime":[1.5,null,4,null,9],"phase":[1,2,3,0,3],"category":[1,0,0,0,0],
               "data":[null,{"type":"GC"},null,null,null]}"#,
        );
    let p = load(&text).unwrap();
    let ev = p.events.as_ref().expect("a markers lane");
    let rows: Vec<(&str, &str, i64, i64)> = (0..ev.len())
        .map(|i| {
            (
                ev.strings.resolve(ev.name[i]),
                ev.strings.resolve(ev.cat[i]),
                ev.ts[i],
                ev.dur[i],
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("main", "GC / CC", 1_000_000, 500_000),
            ("inner", "Other", 2_000_000, 2_000_000)
        ]
    );
    assert_eq!(ev.strings.resolve(ev.pid[0]), "7");
    for w in ["1 instant marker", "1 interval marker start(s) or end(s)"] {
        assert!(
            p.warnings.iter().any(|x| x.contains(w)),
            "{w}: {:?}",
            p.warnings
        );
    }
}

#[test]
fn other_json_is_not_claimed() {
    assert!(!claims(br#"{"traceEvents":[],"meta":{}}"#));
    assert!(!claims(br#"{"nodes":[{"callFrame":{}}]}"#));
    assert!(claims(br#"{"meta":{"preprocessedProfileVersion":51}}"#));
}

#[test]
fn a_gecko_like_object_without_its_tables_is_refused_by_name() {
    let text = br#"{"meta":{"version":1},"libs":[],"threads":[]}"#;
    let e = crate::readers::load_reader(Box::new(&text[..]), None, 0, "t").unwrap_err();
    assert!(
        e.contains("a Firefox Profiler (Gecko) profile without the tables"),
        "{e}"
    );
}

/// Samples are counted per stack first; float values must still add up in file order
/// per node (0.1 + 0.2 + 0.3 is not 0.1 + 0.3 + 0.2: stacks 1 and 2 share `inner`).
#[test]
fn per_stack_sums_keep_file_order_for_floats_and_node_order() {
    let text = PROCESSED
        .replace(
            r#""length":4,"stack":[1,2,0,9]"#,
            r#""length":5,"stack":[2,1,2,0,null]"#,
        )
        .replace(r#""weight":[1,2,1,1]"#, r#""weight":[0.1,0.2,0.3,7,1]"#)
        .replace(
            r#""threadCPUDelta":[null,1000,900,1]"#,
            r#""threadCPUDelta":[1,2,3,4,5]"#,
        );
    let p = load(&text).unwrap();
    let root = "spin (tid 8)";
    let (w, _) = at(&p, &format!("{root};main;inner"), "weight");
    assert_eq!(w.to_bits(), (0.1f64 + 0.2 + 0.3).to_bits());
    assert_eq!(at(&p, &format!("{root};main;inner"), "samples"), (3.0, 3.0));
    assert_eq!(at(&p, &format!("{root};main;inner"), "cpu"), (6.0, 6.0));
    assert_eq!(at(&p, &format!("{root};main"), "weight"), (7.0, 7.0 + w));
    let main = p.cct.children(p.cct.root_ids()[0]).next().unwrap();
    let inner = p.cct.children(main).next().unwrap();
    assert!(main < inner, "a node after its parent");
    assert!(p
        .warnings
        .iter()
        .any(|w| w.contains("1 of 5 samples have no stack")));
}
