//! The Chrome reader's block-wise fast path and its parallel parts give exactly what
//! the streaming reader alone gives: the whole parse result in process, with parts so
//! small that splits land everywhere (inside strings holding `},{` and braces too),
//! and the headless outputs (`tree --format csv`, `kernels`, `summary`, `info`) of the
//! binary with 1 to 4 threads.

mod common;

use grove::readers::chrome::{parse, set_thread_override, ChromeTrace};

/// Everything a parse gives, in a deterministic text (maps sorted).
fn digest(t: &ChromeTrace) -> String {
    let e = &t.events;
    let s = |id: u32| e.strings.resolve(id).to_string();
    let mut out = String::new();
    for i in 0..e.len() {
        let args = e
            .args_of(i)
            .map(|a| a.to_json().to_string())
            .unwrap_or_default();
        out += &format!(
            "{} {} {:?} {} {} {} {} {} {} {} {} {} {} {} {args}\n",
            s(e.name[i]),
            s(e.cat[i]),
            e.kind[i],
            e.ts[i],
            e.dur[i],
            s(e.pid[i]),
            s(e.tid[i]),
            e.device[i],
            e.stream[i],
            e.correlation[i],
            e.external_id[i],
            e.record_function_id[i],
            e.seq.get(i),
            e.begin_end[i],
        );
    }
    let c = &t.counters;
    for i in 0..c.ts.len() {
        out += &format!(
            "counter {} {} {} {} {}\n",
            s(c.name[i]),
            s(c.series[i]),
            s(c.pid[i]),
            c.ts[i],
            c.value[i]
        );
    }
    let mut maps: Vec<String> = Vec::new();
    maps.extend(
        t.thread_names
            .iter()
            .map(|((p, t), n)| format!("thread {} {} {n}", s(*p), s(*t))),
    );
    maps.extend(
        t.process_names
            .iter()
            .map(|(p, n)| format!("process {} {n}", s(*p))),
    );
    maps.extend(
        t.process_labels
            .iter()
            .map(|(p, n)| format!("labels {} {n}", s(*p))),
    );
    maps.extend(
        t.flows
            .maps()
            .0
            .iter()
            .map(|(id, (p, t, ts))| format!("flow {id} {} {} {ts}", s(*p), s(*t))),
    );
    maps.extend(
        t.flows
            .maps()
            .1
            .iter()
            .map(|((p, t, ts), id)| format!("end {id} {} {} {ts}", s(*p), s(*t))),
    );
    maps.sort();
    out += &maps.join("\n");
    // Interning order is visible to later steps (ids break ties): compare it too.
    let strings: Vec<&str> = (0..e.strings.len() as u32)
        .map(|i| e.strings.resolve(i))
        .collect();
    out += &format!(
        "\nstrings {strings:?}\nwarnings {:?}\nmeta {:?}\n{} {} {} {:?} {}",
        t.warnings, t.meta, t.kineto, t.old_dialect, t.array_form, t.rank, t.rocprof
    );
    out
}

fn parse_with(bytes: &[u8], part: Option<usize>, threads: Option<usize>) -> String {
    set_thread_override(part, threads);
    let r = parse(bytes);
    set_thread_override(None, None);
    match r {
        Ok(t) => digest(&t),
        Err(e) => format!("error {e}"),
    }
}

/// A trace made here whose strings hold what a split looks for: `},{`, `}, {`,
/// braces and brackets, escaped quotes, multi-byte text; with B/E pairs, flows,
/// counters, metadata and GPU rows so every later step is exercised.
fn generated() -> Vec<u8> {
    let mut rng = common::Rng(0x2545f4914f6cdd1d);
    let tricky = [
        "a},{\\\"ph\\\":\\\"X\\\"",
        "},\n{",
        "x } , { y",
        "[{]}",
        "é😀\\u00e9\\ud83d\\ude00",
        "plain",
        "\\\\},{",
    ];
    let mut s = String::from("{\"schemaVersion\": 1, \"traceEvents\": [\n");
    let mut first = true;
    let mut push = |s: &mut String, ev: String| {
        if !first {
            s.push_str(",\n");
        }
        first = false;
        s.push_str(&ev);
    };
    push(
        &mut s,
        r#"{"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"gpu},{0"}}"#.into(),
    );
    push(
        &mut s,
        r#"{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"main"}}"#.into(),
    );
    for i in 0..400u64 {
        let name = format!("{}_{i}", rng.pick(&tricky));
        let ts = 1000 + i * 10;
        match rng.next() % 7 {
            0 => push(
                &mut s,
                format!(r#"{{"ph":"B","name":"{name}","cat":"cpu_op","pid":1,"tid":1,"ts":{ts}}}"#),
            ),
            1 => push(
                &mut s,
                format!(r#"{{"ph":"E","pid":1,"tid":1,"ts":{}}}"#, ts + 3),
            ),
            2 => {
                push(
                    &mut s,
                    format!(
                        r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{ts}.5,"dur":2,"args":{{"correlation":{i},"note":"{name}"}}}}"#
                    ),
                );
                push(
                    &mut s,
                    format!(
                        r#"{{"ph":"s","id":{i},"pid":1,"tid":1,"ts":{ts}.5,"cat":"ac2g","name":"ac2g"}}"#
                    ),
                );
                push(
                    &mut s,
                    format!(
                        r#"{{"ph":"X","cat":"kernel","name":"k{name}","pid":0,"tid":"stream 7","ts":{},"dur":"4.25","args":{{"device":0,"stream":7,"correlation":{i},"grid":[1,{{"a":"}},{{"}}],"s":"{name}"}}}}"#,
                        ts + 5
                    ),
                );
                push(
                    &mut s,
                    format!(
                        r#"{{"ph":"f","id":{i},"pid":0,"tid":"stream 7","ts":{},"cat":"ac2g","name":"ac2g","bp":"e"}}"#,
                        ts + 5
                    ),
                );
            }
            3 => push(
                &mut s,
                format!(
                    r#"{{"ph":"C","name":"mem","pid":1,"ts":{ts},"args":{{"used":{i},"free":"7"}}}}"#
                ),
            ),
            4 => push(
                &mut s,
                format!(
                    r#"{{ "ph" : "X" , "name" : "{name}" , "pid" : 1 , "tid" : 1 , "ts" : {ts} , "dur" : 1e0 }}"#
                ),
            ),
            5 => push(
                &mut s,
                format!(
                    r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{ts},"dur":9,"args":{{"External id":{i},"Record function id":{i}}}}}"#,
                    i / 50
                ),
            ),
            _ => push(
                &mut s,
                format!(r#"{{"ph":"i","name":"{name}","pid":1,"tid":"1","ts":"{ts}","s":"t"}}"#),
            ),
        }
    }
    s.push_str("\n]}\n");
    s.into_bytes()
}

/// Corpus Chrome traces (JSON and gzip) of Kineto, HTA and Perfetto's test data.
fn corpus_traces() -> Vec<std::path::PathBuf> {
    [
        "kineto/docs/traces/before_fix_trace.json",
        "kineto/docs/traces/after_fix_trace.json",
        "kineto/tb_plugin/test/gpu_metrics_input.json",
        "kineto/profiler/plugin/trace_viewer/tf_trace_viewer/data/trace.json",
        "hta/tests/data/call_stack/backward_thread.json",
        "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
        "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "hta/tests/data/timeline_analysis/sampled_rank-0.json.gz",
        "hta/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz",
        "perfetto/inline_json/parser/json/test_json_flow.json",
        "perfetto/inline_json/parser/json/test_json_extreme_vals.json",
        "perfetto/inline_json/parser/json/test_json_metadata.json",
        "perfetto/inline_json/parser/json/test_json_sort_index_ordering.json",
        "speedscope/sample/profiles/trace-event/hermes-multiple-frames.json",
    ]
    .iter()
    .filter_map(|r| common::corpus(r))
    .collect()
}

fn decompressed(path: &std::path::Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out)
            .unwrap();
        out
    } else {
        bytes
    }
}

/// The parse result with parts of every small size and 1 to 4 threads equals the
/// streaming reader's.
#[test]
fn parts_of_any_size_parse_like_the_streaming_reader() {
    let mut inputs = vec![("generated".to_string(), generated())];
    for p in corpus_traces() {
        inputs.push((p.display().to_string(), decompressed(&p)));
    }
    for (name, bytes) in &inputs {
        let want = parse_with(bytes, Some(0), None);
        assert!(!want.starts_with("error"), "{name}: {want}");
        let big = bytes.len() > 200_000;
        let sizes: Vec<usize> = if big {
            vec![1, 97, 4093, 65_536, 1 << 22]
        } else {
            (1..48).chain([61, 97, 256, 1000, 4093, 1 << 22]).collect()
        };
        for &size in &sizes {
            for threads in 1..=4 {
                let got = parse_with(bytes, Some(size), Some(threads));
                assert!(
                    got == want,
                    "{name}: parts of {size} bytes, {threads} threads differ from the streaming reader"
                );
            }
        }
    }
}

/// Damaged input: errors and warnings (with their positions) are the streaming
/// reader's, wherever the parts end.
#[test]
fn damage_reads_the_same_in_parts() {
    let cases: [&[u8]; 7] = [
        b"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},\n{\"ph\":\"X\",\"name\":\"b\x01\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"name\":\"c\",\"ts\":3,\"dur\":1,\"pid\":1,\"tid\":1},]",
        b"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"name\":\"b\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":1},\n{\"ph\":\"X\",\"name\":\"c\",\"ts\":",
        b"[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":1},\n  {\"ph\":\"X\", \"ts\": ]",
        b"[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"name\":{\"x\":1},\"ts\":2,\"dur\":1,\"pid\":[1],\"tid\":1},7,{\"ph\":\"X\",\"name\":\"a\xffb\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":1}]",
        b"[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"name\":\"\\ud800\\n\",\"ts\":\"12a\",\"dur\":-1,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"name\":\"\\q\",\"ts\":2}]",
        b"[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1,\"args\":{\"a\":[1,2,],\"correlation\":[3]}}]",
        b"[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},{\"ph\":\"Q\",\"ts\":1},{},{\"ph\":\"X\",\"ts\":1,\"pid\":1,\"tid\":1,\"args\":{\"x\":\"\x02\"}},{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":9}",
    ];
    for (n, bytes) in cases.iter().enumerate() {
        let want = parse_with(bytes, Some(0), None);
        for size in 1..=bytes.len() + 1 {
            for threads in 1..=3 {
                assert_eq!(
                    parse_with(bytes, Some(size), Some(threads)),
                    want,
                    "case {n}: parts of {size} bytes, {threads} threads"
                );
            }
        }
    }
}

/// The binary's headless outputs with the streaming reader, with the defaults, and
/// with tiny parts on 2 to 4 threads, byte for byte.
#[test]
fn headless_outputs_match_serial() {
    let dir = std::env::temp_dir().join(format!("grove-parallel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gen = dir.join("generated.json");
    std::fs::write(&gen, generated()).unwrap();
    let mut files = vec![gen];
    files.extend(corpus_traces().into_iter().filter(|p| {
        let s = p.to_string_lossy();
        s.contains("kineto") || s.contains("hta")
    }));
    let commands: [&[&str]; 4] = [
        &["tree", "--no-cache", "--format", "csv"],
        &["kernels", "--format", "csv"],
        &["summary", "--format", "csv"],
        &["info", "--no-cache"],
    ];
    let configs: [(&str, &str); 4] = [("0", "1"), ("4194304", "1"), ("61", "2"), ("7", "4")];
    for f in &files {
        let f = f.to_str().unwrap();
        for cmd in commands {
            let mut args: Vec<&str> = cmd.to_vec();
            args.insert(1, f);
            let run = |(part, threads): (&str, &str)| {
                common::grove_env(
                    &args,
                    &[("GROVE_PART_BYTES", part), ("GROVE_THREADS", threads)],
                )
            };
            let want = run(configs[0]);
            for c in &configs[1..] {
                assert_eq!(run(*c), want, "{f}: {args:?} with parts {c:?}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
