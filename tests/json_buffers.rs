//! The streaming JSON reader must give the same values and the same repair counts
//! whatever its buffer size, and agree with a strict parser (serde_json) on strict
//! input. Regression: the first ordinary byte after a refill inside a string was
//! counted as a raw control character, so every large trace warned falsely.

mod common;

use grove::json::{set_thread_buffer_size, JsonReader, Kind, Repairs};
use serde_json::Value;

/// Reads one value with the pull API into a serde_json Value.
fn pull(r: &mut JsonReader<&[u8]>) -> Result<Value, String> {
    let mut text = Vec::new();
    match r.peek_kind().map_err(|e| e.to_string())? {
        Kind::Object => {
            r.begin_object().map_err(|e| e.to_string())?;
            let mut map = serde_json::Map::new();
            let mut first = true;
            let mut key = Vec::new();
            while r.next_key(first, &mut key).map_err(|e| e.to_string())? {
                first = false;
                let k = String::from_utf8_lossy(&key).into_owned();
                map.insert(k, pull(r)?);
            }
            Ok(Value::Object(map))
        }
        Kind::Array => {
            r.begin_array().map_err(|e| e.to_string())?;
            let mut v = Vec::new();
            let mut first = true;
            while r.next_element(first).map_err(|e| e.to_string())? {
                first = false;
                v.push(pull(r)?);
            }
            Ok(Value::Array(v))
        }
        Kind::Str => {
            r.read_str(&mut text).map_err(|e| e.to_string())?;
            Ok(Value::String(String::from_utf8_lossy(&text).into_owned()))
        }
        Kind::Num => {
            r.read_num(&mut text).map_err(|e| e.to_string())?;
            serde_json::from_slice(&text).map_err(|e| e.to_string())
        }
        Kind::True | Kind::False | Kind::Null => r.read_value().map_err(|e| e.to_string()),
    }
}

fn read_with(bytes: &[u8], size: usize) -> (Result<Value, String>, Repairs) {
    let mut r = JsonReader::with_buffer_size(bytes, size);
    r.skip_bom();
    let v = pull(&mut r);
    (v, r.repairs)
}

/// A trace made here: long names that span many buffers, escapes, multi-byte text.
fn generated() -> Vec<u8> {
    let mut rng = common::Rng(0x9e3779b97f4a7c15);
    let mut s = String::from("{\"traceEvents\": [\n");
    for i in 0..300 {
        let len = (rng.next() % 700) as usize;
        let mut name: String = (0..len)
            .map(|j| ['a', 'é', '😀', ' ', ':', '<', '>'][(j + i) % 7])
            .collect();
        if i % 5 == 0 {
            name.push_str("\\n\\\"q\\\"\\u00e9\\ud83d\\ude00");
        }
        s.push_str(&format!(
            "{}{{\"name\": \"{name}\", \"ph\": \"X\", \"ts\": {}.{:03}, \"dur\": {}, \"pid\": {}, \"tid\": \"stream {}\", \"args\": {{\"k\": [1, 2.5e3, true, null, {{}}]}}}}",
            if i == 0 { "" } else { ",\n" },
            1_700_000_000_000u64 + i as u64 * 17,
            i % 1000,
            (rng.next() % 1000) + 1,
            i % 3,
            i % 4
        ));
    }
    s.push_str("\n]}\n");
    s.into_bytes()
}

fn corpus_traces() -> Vec<(String, Vec<u8>)> {
    let mut out = vec![("generated".to_string(), generated())];
    for rel in [
        "kineto/docs/traces/before_fix_trace.json",
        "kineto/tb_plugin/test/gpu_metrics_input.json",
        "perfetto/inline_json/parser/json/test_json_extreme_vals.json",
        "perfetto/inline_json/parser/json/test_json_metadata.json",
        "speedscope/sample/profiles/trace-event/hermes-multiple-frames.json",
        "hta/tests/data/call_stack/backward_thread.json",
    ] {
        if let Some(p) = common::corpus(rel) {
            out.push((rel.to_string(), std::fs::read(p).unwrap()));
        }
    }
    out
}

#[test]
fn pull_reader_independent_of_buffer_size_and_matches_serde() {
    for (name, bytes) in corpus_traces() {
        let strict: Option<Value> = serde_json::from_slice(&bytes).ok();
        let (want, want_rep) = read_with(&bytes, 1 << 18);
        if let Some(s) = &strict {
            assert_eq!(
                want.as_ref().ok(),
                Some(s),
                "{name}: differs from serde_json"
            );
            assert_eq!(
                want_rep,
                Repairs::default(),
                "{name}: repairs on strict JSON"
            );
        }
        // Every size up to 4 KiB on small inputs; on big ones every size up to 64
        // bytes, then a prime stride (boundaries land everywhere) to keep it quick.
        let step = if bytes.len() > 8_000 { 61 } else { 1 };
        let sizes = (1..=64).chain((65..=4096).step_by(step));
        for size in sizes {
            let (v, rep) = read_with(&bytes, size);
            assert_eq!(v, want, "{name}: value with a {size}-byte buffer");
            assert_eq!(rep, want_rep, "{name}: repairs with a {size}-byte buffer");
        }
    }
}

/// The whole Chrome reader (events and warnings) with tiny buffers.
#[test]
fn chrome_reader_warnings_independent_of_buffer_size() {
    for (name, bytes) in corpus_traces() {
        let summary = |size: Option<usize>| {
            set_thread_buffer_size(size);
            let t = grove::readers::chrome::parse(&bytes[..]);
            set_thread_buffer_size(None);
            match t {
                Ok(t) => format!(
                    "{} events, warnings {:?}, meta {:?}",
                    t.events.len(),
                    t.warnings,
                    t.meta
                ),
                Err(e) => format!("error {e}"),
            }
        };
        let want = summary(None);
        assert!(
            !want.contains("control character"),
            "{name}: false control-character warning: {want}"
        );
        for size in [1, 2, 3, 5, 8, 13, 64, 100, 255, 256, 1000, 4095, 4096] {
            assert_eq!(summary(Some(size)), want, "{name}: buffer {size}");
        }
    }
}

#[test]
fn damage_is_counted() {
    // Invalid UTF-8 inside a string.
    let bytes = b"[{\"name\": \"a\xff\xfeb\", \"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"pid\": 1, \"tid\": 1}]";
    let t = grove::readers::chrome::parse(&bytes[..]).unwrap();
    assert!(
        t.warnings.iter().any(|w| w.contains("invalid UTF-8")),
        "{:?}",
        t.warnings
    );
    // A name given as an object, a pid as a list.
    let bytes = br#"[{"name": {"x": 1}, "ph": "X", "ts": 1, "dur": 1, "pid": [1, 2], "tid": 1}]"#;
    let t = grove::readers::chrome::parse(&bytes[..]).unwrap();
    assert!(
        t.warnings.iter().any(|w| w.contains("object or array")),
        "{:?}",
        t.warnings
    );
    // Real control characters are still counted, once each.
    let (_, rep) = read_with(b"[\"a\x01b\tc\"]", 2);
    assert_eq!(rep.control_chars, 2);
}
