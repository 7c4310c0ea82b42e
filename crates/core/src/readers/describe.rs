//! What an input no reader claims looks like, in a few words ("a callgrind file", "a
//! CSV file with columns a, b, c"), so that a refusal names what the user gave rather
//! than only what grove reads. Also the signatures that keep one reader from claiming
//! another format's file: known headers of text formats (for folded stacks) and the
//! top-level keys of JSON formats other than Chrome traces.

use std::path::Path;

use super::Probe;

/// A few words on what the input looks like, when it is recognisable.
pub fn describe(probe: &Probe) -> Option<String> {
    if probe.is_dir {
        return probe.path.and_then(describe_dir);
    }
    let head = probe.head;
    if head.starts_with(b"SQLite format 3\0") {
        let names = probe.path.and_then(sqlite_table_names).unwrap_or_default();
        // Nsight Systems writes META_DATA_EXPORT into every export, even one of a
        // run that traced nothing grove reads (no CUPTI or NVTX table).
        if names.iter().any(|n| n == "META_DATA_EXPORT") {
            return Some(format!(
                "an Nsight Systems export without event tables (no CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS; tables {}): profile with -t cuda,nvtx",
                list(&names, 6)
            ));
        }
        return Some(if names.is_empty() {
            "an SQLite database".into()
        } else {
            format!("an SQLite database with tables {}", list(&names, 6))
        });
    }
    if head.starts_with(b"PERFILE2") {
        return Some(
            "a perf.data recording (binary): open the text of `perf script` (perf script > perf.txt)"
                .into(),
        );
    }
    if super::cube::tar::is_tar(head) {
        let first = super::cube::tar::first_name(head).unwrap_or_default();
        return Some(format!(
            "a tar archive (first member {first:?}; a CUBE4 .cubex starts with anchor.xml or N.index/N.data)"
        ));
    }
    if is_binary(head) {
        return Some(binary_kind(probe).into());
    }
    if let Some(kind) = text_kind(probe) {
        return Some(kind.into());
    }
    let text = probe.text()?;
    if text[0] == b'{' {
        let keys = json_keys(text).0;
        if let Some(kind) = foreign_json(&keys) {
            return Some(kind.into());
        }
        return Some(format!(
            "a JSON object with keys {} (no traceEvents)",
            list(&keys, 6)
        ));
    }
    if text.starts_with(b"[[") || text.starts_with(b"[ [") {
        return Some("a JSON array of arrays".into());
    }
    let first = first_line(text);
    if first.matches(',').count() >= 2 {
        let cols: Vec<String> = first.split(',').map(|c| c.trim().to_string()).collect();
        return Some(format!("a CSV file with columns {}", list(&cols, 6)));
    }
    let shown: String = first.chars().take(40).collect();
    Some(format!("text starting {shown:?}"))
}

/// Text formats grove knows by their first lines but does not read (yet), or reads
/// with a reader that is not in the list yet.
fn text_kind(probe: &Probe) -> Option<&'static str> {
    let text = probe.text()?;
    let first = first_line(text);
    let has_line = |pat: &str| lines(text).any(|l| l.starts_with(pat));
    // `version: 0` starts it like a callgrind header: its `inputs:` and `roots:` say
    // otherwise.
    if has_line("inputs:") && has_line("roots:") && !has_line("fn=") {
        return Some(
            "an HPCToolkit metrics description (metrics/default.yaml): open the database directory",
        );
    }
    if callgrind_line(first)
        || has_line("events:") && (has_line("fn=") || has_line("version:"))
        || first.starts_with("# callgrind format")
    {
        return Some("a callgrind/cachegrind file");
    }
    if lines(text).take(64).any(perf_sample_header) || lines(text).take(64).any(perf_frame) {
        return Some("perf script text");
    }
    if first.starts_with("--- ") && first.ends_with(" ---")
        || first.starts_with("--- heapz")
        || first.contains("heap profile:")
        || first.contains("threadcreate profile:")
        || first.starts_with("--- symbol")
    {
        return Some("a legacy pprof text profile");
    }
    if first.starts_with("digraph") || first.starts_with("graph ") {
        return Some("a Graphviz DOT graph");
    }
    if first.starts_with("<?xml") {
        return Some("an XML document");
    }
    if first.starts_with("!db/") {
        return Some("an HPCToolkit database YAML dump");
    }
    if first.starts_with("%YAML") || first.starts_with("--- !") || first == "---" {
        return Some("a YAML document");
    }
    if first.starts_with("PROJECTIONS") {
        return Some("a Charm++ Projections log");
    }
    if first.starts_with("CMD: rocminfo") {
        return Some("a rocminfo dump (rocprof sysinfo)");
    }
    if first.ends_with("templated_functions") || first.contains("templated_functions_MULTI") {
        return Some("a TAU profile");
    }
    None
}

/// A callgrind header or spec line (`version: 1`, `events: Ir`, `fn=(1) main`).
pub fn callgrind_line(line: &str) -> bool {
    const HEADERS: &[&str] = &[
        "version:",
        "creator:",
        "pid:",
        "cmd:",
        "part:",
        "thread:",
        "positions:",
        "events:",
        "summary:",
        "totals:",
        "desc:",
    ];
    const SPECS: &[&str] = &[
        "fn=", "fl=", "fi=", "fe=", "ob=", "cob=", "cfn=", "cfi=", "cfl=", "calls=", "jump=",
        "jcnd=",
    ];
    HEADERS.iter().chain(SPECS).any(|h| line.starts_with(h))
}

/// A `perf script` sample header: `comm pid[/tid] [cpu] time: [period] event:`.
pub fn perf_sample_header(line: &str) -> bool {
    if line.starts_with(|c: char| c.is_whitespace()) {
        return false;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    // A time (`123.456:`) followed later by an event name ending in ':'.
    let Some(t) = words.iter().position(|w| {
        w.strip_suffix(':')
            .is_some_and(|n| n.contains('.') && n.parse::<f64>().is_ok())
    }) else {
        return false;
    };
    t > 0 && words[t + 1..].iter().any(|w| w.ends_with(':'))
}

/// A `perf script` frame line: an indented hex address, a symbol and `(dso)`.
pub fn perf_frame(line: &str) -> bool {
    let t = line.trim_start();
    let Some((addr, rest)) = t.split_once(char::is_whitespace) else {
        return false;
    };
    addr.len() >= 4 && addr.bytes().all(|b| b.is_ascii_hexdigit()) && rest.trim_end().ends_with(')')
}

/// JSON formats other than Chrome traces, by their top-level keys.
pub fn foreign_json(keys: &[String]) -> Option<&'static str> {
    let has = |k: &str| keys.iter().any(|x| x == k);
    if has("$schema") || has("shared") && has("profiles") {
        Some("speedscope JSON")
    } else if has("nodes") && (has("samples") || has("startTime") || has("timeDeltas")) {
        Some("a Chrome .cpuprofile (nodes/samples/timeDeltas)")
    } else if has("nodes") && has("schema") {
        Some("a PyTorch execution trace")
    } else if has("graph") && (has("dataframe") || has("exc_metrics")) || has("graph") {
        Some("a Hatchet GraphFrame in to_json form")
    } else if has("root_frame") {
        Some("pyinstrument JSON")
    } else if has("timemory") {
        Some("timemory JSON")
    } else if has("meta") && (has("threads") || has("processes") || has("libs")) {
        Some("a Firefox Profiler (Gecko) profile without the tables grove reads")
    } else {
        None
    }
}

/// The top-level keys of a JSON object as far as `text` goes, and whether the object
/// closes within it.
pub fn json_keys(text: &[u8]) -> (Vec<String>, bool) {
    let mut keys = Vec::new();
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    let mut start = 0;
    for (i, &b) in text.iter().enumerate() {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => {
                    in_str = false;
                    let after = text[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
                    if depth == 1 && after == Some(&b':') && keys.len() < 64 {
                        keys.push(String::from_utf8_lossy(&text[start..i]).into_owned());
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_str = true;
                start = i + 1;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return (keys, true);
                }
            }
            _ => {}
        }
    }
    (keys, false)
}

fn is_binary(head: &[u8]) -> bool {
    let sample = &head[..head.len().min(512)];
    sample
        .iter()
        .any(|&b| b == 0 || b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x1b | 0x0c))
}

fn binary_kind(probe: &Probe) -> &'static str {
    let ext = probe.extension().unwrap_or("");
    let name = probe.name.as_str();
    if super::perf_data::is_perf_data(probe.head) {
        "a perf.data file (grove runs `perf script` on it when given its path, not a stream)"
    } else if name.ends_with(".xplane.pb") {
        "a TensorFlow XSpace protobuf (.xplane.pb)"
    } else if name.contains(".pftrace") || name.contains(".perfetto-trace") {
        "a file named like a Perfetto trace whose first packet does not parse"
    } else if probe.head.first() == Some(&0x0a) && (probe.gzip || ext == "pb" || ext == "prof") {
        "a protobuf file (a pprof profile?)"
    } else if ext == "pstats" {
        "a cProfile pstats file (Python marshal)"
    } else if probe.gzip {
        "gzip-compressed binary data (a protobuf/binary file)"
    } else {
        "binary data (a protobuf/binary file)"
    }
}

/// Directories grove does not read as one input, by what they hold.
fn describe_dir(path: &Path) -> Option<String> {
    let names: Vec<String> = std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let any = |f: &dyn Fn(&str) -> bool| names.iter().any(|n| f(n));
    let what = if any(&|n| n.ends_with(".otf2")) {
        "a directory of .otf2 files without an OTF2 anchor file".to_string()
    } else if any(&|n| n.ends_with(".sts")) && any(&|n| n.contains(".log")) {
        "a directory of Charm++ Projections logs".to_string()
    } else if any(&|n| n.starts_with("profile.") && n.matches('.').count() == 3) {
        "a directory of TAU profiles".to_string()
    } else if any(&|n| n.ends_with(".hpcrun")) {
        "an HPCToolkit measurement directory (run hpcprof on it first)".to_string()
    } else {
        return None;
    };
    Some(what)
}

fn sqlite_table_names(path: &Path) -> Option<Vec<String>> {
    let db = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    let mut st = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .ok()?;
    let names: Vec<String> = st
        .query_map([], |r| r.get(0))
        .ok()?
        .filter_map(Result::ok)
        .collect();
    Some(names)
}

fn lines(text: &[u8]) -> impl Iterator<Item = &str> {
    text.split(|&b| b == b'\n')
        .map(|l| std::str::from_utf8(l).unwrap_or("").trim_end_matches('\r'))
}

fn first_line(text: &[u8]) -> &str {
    lines(text).next().unwrap_or("").trim()
}

/// `a, b, c` and "… (N in all)" past `max`.
fn list(items: &[String], max: usize) -> String {
    let mut s = items
        .iter()
        .take(max)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        s.push_str(&format!(", … ({} in all)", items.len()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn what(head: &[u8]) -> String {
        describe(&Probe::bytes(head)).unwrap_or_default()
    }

    #[test]
    fn descriptions() {
        assert_eq!(
            what(b"version: 1\ncreator: callgrind\nevents: Ir\nfn=main\n1 3\n"),
            "a callgrind/cachegrind file"
        );
        let perf = b"perf 1234 [000] 12.345678: 1 cpu-clock:\n\t4005f0 main (/a)\n\n";
        assert_eq!(what(perf), "perf script text");
        assert_eq!(
            what(b"a, b, c\n1, 2, 3\n"),
            "a CSV file with columns a, b, c"
        );
        assert_eq!(what(b"{\"$schema\": \"x\"}"), "speedscope JSON");
        assert_eq!(
            what(b"{\"x\": {\"y\": 1}, \"z\": 2}"),
            "a JSON object with keys x, z (no traceEvents)"
        );
        assert_eq!(what(b"\x00\x01"), "binary data (a protobuf/binary file)");
        assert!(what(b"PERFILE2h\x00\x00\x00").starts_with("a perf.data recording"));
        assert!(
            what(b"version: 0\ninputs:\n  - &x\n    metric: T\nroots:\n  - name: T\n")
                .starts_with("an HPCToolkit metrics description")
        );
        assert_eq!(what(b"hello world\n"), "text starting \"hello world\"");
    }

    #[test]
    fn keys_of_an_unfinished_object() {
        let (k, closed) = json_keys(b"{\"a\": [1, {\"b\": 2}], \"c\": \"d\\\"\", \"e\":");
        assert_eq!(k, ["a", "c", "e"]);
        assert!(!closed);
    }
}

/// What a refused file of each reader's kind is called, one entry per reader of
/// `READERS` (by its name): a new reader fails `every_reader_has_a_refusal_description`
/// until its entry says what grove calls a file of its kind that no reader claims.
/// (reader, file name, head, words of the description). A file name ending in `/` is a
/// directory holding the files the head lists; the head `<tar>` is a tar archive.
/// Formats without words of their own get the description of their structure (a CSV
/// file with columns …, a JSON object with keys …, binary data, text starting …).
#[cfg(test)]
const REFUSED: &[(&str, &str, &[u8], &str)] = &[
    (
        "HPCToolkit databases",
        "m/",
        b"a.hpcrun",
        "an HPCToolkit measurement directory",
    ),
    (
        "rocprof SQLite (results.db)",
        "results.db",
        b"SQLite format 3\0",
        "an SQLite database",
    ),
    (
        "OTF2 archives (Score-P)",
        "t/",
        b"0.otf2",
        "a directory of .otf2 files without an OTF2 anchor",
    ),
    (
        "Nsight Systems SQLite exports",
        "report.sqlite",
        b"SQLite format 3\0",
        "an SQLite database",
    ),
    (
        "TAU profiles",
        "profile.0.0.0",
        b"3 templated_functions_MULTI_TIME\n",
        "a TAU profile",
    ),
    (
        "Caliper .cali/JSON",
        "a.cali",
        b"__rec=node,id=1,attr=10,data=x\n",
        "a CSV file with columns __rec=node",
    ),
    (
        "grove Parquet export",
        "tree.parquet",
        b"PAR1\x00\x01",
        "binary data",
    ),
    (
        "Score-P CUBE4 (.cubex)",
        "profile.cubex",
        b"<tar>",
        "a CUBE4 .cubex starts with anchor.xml",
    ),
    (
        "CUBE 3 XML (.cube)",
        "profile.cube",
        b"<?xml version=\"1.0\"?>\n<x/>\n",
        "an XML document",
    ),
    (
        "perf.data (through perf script)",
        "perf.data",
        b"PERFILE2h\x00\x00\x00",
        "a perf.data recording",
    ),
    (
        "callgrind/cachegrind",
        "callgrind.out.1",
        b"events: Ir\nfn=main\n",
        "a callgrind/cachegrind file",
    ),
    (
        "grove tree JSON",
        "tree.json",
        b"{\"grove\": {}, \"nodes\": [",
        "a JSON object with keys grove, nodes",
    ),
    (
        "grove tree CSV",
        "tree.csv",
        b"path,name,time\n",
        "a CSV file with columns path, name, time",
    ),
    (
        "TensorFlow/JAX XPlane (.xplane.pb)",
        "host.xplane.pb",
        b"\x0a\x02\x00\x01",
        "a TensorFlow XSpace protobuf",
    ),
    (
        "pprof protobuf",
        "cpu.pb",
        b"\x0a\x04\x08\x01\x10\x02\x00",
        "a protobuf file (a pprof profile?)",
    ),
    (
        "Perfetto protobuf trace",
        "trace.pftrace",
        b"\x0a\x00\x00\xff",
        "a file named like a Perfetto trace",
    ),
    (
        "speedscope JSON",
        "",
        b"{\"$schema\": \"x\"}",
        "speedscope JSON",
    ),
    (
        "Firefox Profiler (Gecko) JSON",
        "",
        b"{\"meta\": {}, \"threads\": []}",
        "a Firefox Profiler (Gecko) profile",
    ),
    (
        "Chrome .cpuprofile",
        "",
        b"{\"nodes\": [], \"samples\": []}",
        "a Chrome .cpuprofile",
    ),
    (
        "rocprof CSV",
        "results.csv",
        b"Index,KernelName,gpu-id\n",
        "a CSV file with columns Index, KernelName",
    ),
    (
        "rocprofv3 JSON",
        "results.json",
        b"{\"rocprofiler-sdk-tool\": []}",
        "a JSON object with keys rocprofiler-sdk-tool",
    ),
    (
        "PlaidML event log",
        "eventlog",
        b"\x00\x01\x02",
        "binary data",
    ),
    (
        "gprof report",
        "gprof.txt",
        b"Flat profile:\n\nEach sample counts as 0.01 seconds.\n",
        "text starting \"Flat profile:\"",
    ),
    (
        "perf script text",
        "",
        b"perf 1234 [000] 12.345678: 1 cpu-clock:\n\t4005f0 main (/a)\n",
        "perf script text",
    ),
    (
        "perf JSON export",
        "perf.json",
        b"{\"linux-perf-json-version\": 1}",
        "a JSON object with keys linux-perf-json-version",
    ),
    (
        "PyTorch execution trace JSON",
        "",
        b"{\"schema\": \"1.0\", \"nodes\": []}",
        "a PyTorch execution trace",
    ),
    (
        "cProfile/pstats",
        "prof.pstats",
        b"{\x00\x00\x00",
        "a cProfile pstats file",
    ),
    (
        "pyinstrument JSON",
        "",
        b"{\"root_frame\": {}}",
        "pyinstrument JSON",
    ),
    ("gprof2dot DOT", "", b"digraph {\n", "a Graphviz DOT graph"),
    ("timemory JSON", "", b"{\"timemory\": {}}", "timemory JSON"),
    (
        "Thicket/Hatchet to_json",
        "",
        b"{\"graph\": []}",
        "a Hatchet GraphFrame in to_json form",
    ),
    (
        "Hatchet literal JSON",
        "",
        b"[{\"name\": 1}]",
        "text starting \"[{",
    ),
    (
        "Chrome/Kineto trace JSON",
        "",
        b"{\"schemaVersion\": 1, \"deviceProperties\": []}",
        "(no traceEvents)",
    ),
    (
        "folded stacks",
        "",
        b"main;foo 1\nmain;bar x\n",
        "text starting \"main;foo 1\"",
    ),
];

#[cfg(test)]
mod registry_tests {
    use super::*;

    /// The description of an entry of `REFUSED`.
    fn refused(name: &str, head: &[u8]) -> Option<String> {
        if let Some(dir) = name.strip_suffix('/') {
            let d =
                std::env::temp_dir().join(format!("grove-refused-{}-{dir}", std::process::id()));
            std::fs::create_dir_all(&d).unwrap();
            for f in head.split(|&b| b == b'\n') {
                std::fs::write(d.join(String::from_utf8_lossy(f).as_ref()), b"").unwrap();
            }
            let what = describe(&Probe::dir(&d));
            let _ = std::fs::remove_dir_all(&d);
            return what;
        }
        let mut tar = vec![0u8; 512];
        let head = if head == b"<tar>" {
            tar[..9].copy_from_slice(b"notes.txt");
            tar[257..262].copy_from_slice(b"ustar");
            &tar[..]
        } else {
            head
        };
        let mut probe = Probe::bytes(head);
        probe.name = name.to_string();
        describe(&probe)
    }

    #[test]
    fn every_reader_has_a_refusal_description() {
        let missing: Vec<&str> = crate::readers::READERS
            .iter()
            .map(|r| r.name())
            .filter(|n| !REFUSED.iter().any(|e| e.0 == *n))
            .collect();
        assert!(
            missing.is_empty(),
            "readers without an entry in describe.rs's REFUSED (what a refused file of \
             their kind is called): {}",
            missing.join(", ")
        );
        let mut wrong = Vec::new();
        for (reader, name, head, words) in REFUSED {
            assert!(
                crate::readers::READERS.iter().any(|r| r.name() == *reader),
                "REFUSED names {reader:?}, which is no reader of READERS"
            );
            let what = refused(name, head).unwrap_or_default();
            if !what.contains(words) {
                wrong.push(format!("{reader}: {what:?} does not say {words:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
