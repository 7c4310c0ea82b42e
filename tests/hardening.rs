//! Regression tests for issue 14: each case is the description's input, run through
//! the real binary; every failure must be one line on stderr and exit code 2.

mod common;

use common::grove;
use std::path::PathBuf;

fn demo() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/demo.trace.json.gz").to_string()
}

fn tmp(name: &str) -> PathBuf {
    common::scratch("hardening").join(name)
}

/// stderr without the demo's own load warnings, which come first: the error is the
/// one line after them.
fn errors_only(err: &str) -> String {
    err.lines()
        .filter(|l| !l.starts_with("grove: warning:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Runs `cmd` via `--cmd` and via `replay` of a command file; both must fail with a
/// one-line error containing `want`.
fn both_fail(cmd: &str, want: &str, file: &str) {
    let input = demo();
    let (code, _, err) = grove(&["tree", &input, "--cmd", cmd]);
    let err = errors_only(&err);
    assert_eq!(code, 2, "--cmd: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "--cmd: not one line: {err}"
    );
    assert!(err.contains(want), "--cmd: {err}");
    let f = tmp(file);
    std::fs::write(&f, format!("{cmd}\n")).unwrap();
    let (code, _, err) = grove(&["replay", f.to_str().unwrap(), "--input", &input]);
    let err = errors_only(&err);
    assert_eq!(code, 2, "replay: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "replay: not one line: {err}"
    );
    assert!(err.contains(want), "replay: {err}");
}

#[test]
fn deep_and_long_expressions_are_limited() {
    let parens = format!("{}name == \"a\"{}", "(".repeat(10_000), ")".repeat(10_000));
    both_fail(&format!("filter {parens}"), "limit", "parens.txt");
    both_fail(
        &format!("derive x = {}1", "-".repeat(100_000)),
        "limit",
        "minus.txt",
    );
    let terms = vec!["1"; 30_000].join("+");
    both_fail(&format!("derive x = {terms}"), "limit", "terms.txt");
    // Within the limits, the same shapes work.
    let ok = format!("{}name ~ \".\"{}", "(".repeat(50), ")".repeat(50));
    let (code, _, err) = grove(&["tree", &demo(), "--cmd", &format!("filter {ok}")]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = grove(&["tree", &demo(), "--cmd", "derive x = - - 1+1+1"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn quantifiers_are_limited() {
    both_fail("filter MATCH (999999999, p)", "limit", "q1.txt");
    both_fail("filter MATCH (18446744073709551616, p)", "limit", "q2.txt");
    both_fail(r#"filter [[999999999, {"name": "x"}]]"#, "limit", "q3.txt");
    let (code, _, err) = grove(&["tree", &demo(), "--cmd", "filter MATCH (3, p)"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn invalid_regex_is_one_line() {
    both_fail(
        r#"filter [{"name": "a(b"}]"#,
        "regular expression",
        "re1.txt",
    );
    both_fail(r#"filter name ~ "a(b""#, "regular expression", "re2.txt");
    both_fail(
        r#"filter MATCH (".", p) WHERE p."name" =~ "a(b""#,
        "regular expression",
        "re3.txt",
    );
}

#[test]
fn multibyte_whitespace_does_not_panic() {
    for (name, bytes) in [
        ("nel.txt", &b"\xc2\x85w"[..]),
        ("nbsp.txt", "main;foo\u{a0}12\n".as_bytes()),
        ("nbsp2.txt", "main;foo\u{a0}12\nmain;bar 3\n".as_bytes()),
    ] {
        let f = tmp(name);
        std::fs::write(&f, bytes).unwrap();
        let (code, _, err) = grove(&["info", f.to_str().unwrap()]);
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(code == 0 || code == 2, "{name}: {code} {err}");
        if code == 2 {
            assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        }
    }
    // U+00A0 separates the count like a space does.
    assert_eq!(
        grove::readers::folded::split_line("main;foo\u{a0}12"),
        Some(("main;foo", 12.0))
    );
    assert_eq!(grove::readers::folded::split_line("\u{85}w"), None);
}

#[test]
fn folded_lossy_utf8_warns() {
    let f = tmp("lossy.folded");
    std::fs::write(&f, b"main;f\xffoo 3\nmain;bar 2\n").unwrap();
    let (code, out, err) = grove(&["info", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        format!("{out}{err}").contains("invalid UTF-8"),
        "no warning: {out}{err}"
    );
}

#[test]
fn session_bom_is_ignored() {
    let f = tmp("bom.jsonl");
    let (code, _, err) = grove(&["tree", &demo(), "--cmd", "sort name asc"]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(&f, "\u{feff}sort name asc\n").unwrap();
    let (code, out_bom, err) = grove(&["replay", f.to_str().unwrap(), "--input", &demo()]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(&f, "sort name asc\n").unwrap();
    let (_, out, _) = grove(&["replay", f.to_str().unwrap(), "--input", &demo()]);
    assert_eq!(out_bom, out);
    // A JSONL session with a BOM is read as a session, not as commands.
    let s =
        grove::session::parse("\u{feff}{\"seq\": 1, \"t_ms\": 0, \"cmd\": \"sort name asc\"}\n")
            .unwrap();
    assert_eq!(s.commands, vec![(1, "sort name asc".to_string())]);
}

#[test]
fn devices_are_not_hashed() {
    // /dev/zero never ends: hashing must not read it.
    let t = std::time::Instant::now();
    let i = grove::session::input_of(std::path::Path::new("/dev/zero")).unwrap();
    assert_eq!(i.hash, grove::session::UNHASHABLE);
    let h = grove::session::content_hash(std::path::Path::new("/dev/zero")).unwrap();
    assert_eq!(h, grove::session::UNHASHABLE);
    assert!(t.elapsed().as_secs() < 5);
}

#[test]
fn session_file_is_locked() {
    let f = tmp("locked.jsonl");
    let header = grove::session::Header {
        format: grove::session::FORMAT.into(),
        version: grove::session::VERSION,
        tool_version: "test".into(),
        created: grove::session::now_rfc3339(),
        inputs: vec![],
        term: grove::session::Term { cols: 80, rows: 24 },
    };
    let mut first = grove::session::Writer::create(&f, &header).unwrap();
    first.append("sort name asc").unwrap();
    let second = grove::session::Writer::create(&f, &header);
    let e = second
        .err()
        .expect("a second writer must be refused")
        .to_string();
    assert!(e.contains("another grove process"), "{e}");
    // The first writer's lines are intact.
    first.append("expand all").unwrap();
    let s = grove::session::read(&f).unwrap();
    assert_eq!(s.commands.len(), 2);
    drop(first);
    // Released, but a process another test starts meanwhile holds a copy of the
    // descriptor, and with it the lock, from its fork until its exec: retry briefly.
    let free = (0..200).any(|_| {
        grove::session::Writer::create(&f, &header).is_ok() || {
            std::thread::sleep(std::time::Duration::from_millis(10));
            false
        }
    });
    assert!(free, "the lock outlived its writer");
}

#[test]
fn memory_limit_refuses_in_advance() {
    let (code, _, err) = grove(&["info", &demo(), "--max-memory", "1K"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("needs at least"), "{err}");
    assert!(err.contains("--max-memory"), "{err}");
    let (code, _, err) = grove(&["info", &demo(), "--max-memory", "lots"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = grove(&["info", &demo(), "--max-memory", "4G"]);
    assert_eq!(code, 0, "{err}");
}

/// An allocation that fails still prints one line, not Rust's abort message.
#[test]
fn allocation_failure_is_one_line() {
    let big = tmp("big.json");
    // A JSON trace under a 300 MB address-space limit that the estimate lets through
    // (small file) but whose load asks for more: a huge string.
    let mut s = String::from("[{\"name\": \"");
    s.push_str(&"x".repeat(60 << 20));
    s.push_str("\", \"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"pid\": 1, \"tid\": 1}]");
    std::fs::write(&big, s).unwrap();
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_grove"));
    cmd.args(["info", big.to_str().unwrap(), "--max-memory", "64G"]);
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::rlimit {
                rlim_cur: 200 << 20,
                rlim_max: 200 << 20,
            };
            libc::setrlimit(libc::RLIMIT_AS, &r);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        return; // the machine's allocator fit it after all
    }
    assert!(!err.contains("memory allocation of"), "{err}");
    assert!(err.contains("out of memory"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
}

/// Session and `source` inputs are bounded: a device is refused at once, a directory
/// too, a file over the bound is one line (issue 32: `replay /dev/urandom` ran past
/// 10 s, `/dev/zero` ran out of memory).
#[test]
fn session_inputs_are_bounded() {
    let small = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/small.trace.json");
    for dev in ["/dev/urandom", "/dev/zero"] {
        let (code, _, err) = common::grove(&["replay", dev]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("a device, not a session file"), "{err}");
        let (code, _, err) = common::grove(&["tree", small, "--cmd", &format!("source {dev}")]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("a device, not a session file"), "{err}");
    }
    let dir = std::env::temp_dir().join(format!("grove-bound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.grove");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(grove::session::MAX_BYTES + 1).unwrap();
    let (code, _, err) = common::grove(&["replay", big.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("larger than 64 MiB"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A named FIFO made with mkfifo(1), in a fresh temporary directory.
fn fifo(name: &str) -> PathBuf {
    let p = tmp(name);
    let _ = std::fs::remove_file(&p);
    let ok = std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo {}", p.display());
    p
}

/// Writes `bytes` into the FIFO from another thread (its open waits for grove's).
fn feed(fifo: &std::path::Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let fifo = fifo.to_path_buf();
    std::thread::spawn(move || {
        use std::io::Write;
        // grove may refuse the input before reading it all: a broken pipe is fine.
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&fifo) {
            let _ = f.write_all(&bytes);
        }
    })
}

fn small() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/small.trace.json")
}

/// Issue 32: a FIFO, `/dev/stdin` and `<(cmd)` are read once, as a stream (grove read
/// a 4 KiB head, closed and opened the path again: a FIFO hung, `/dev/stdin` and
/// `<(cat F)` were "the file is empty", `info` said `size: 0 bytes`).
#[test]
fn fifos_and_pipes_are_read_once() {
    let want = grove(&["tree", small(), "--depth", "2"]);
    assert_eq!(want.0, 0, "{}", want.2);
    let bytes = std::fs::read(small()).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &bytes).unwrap();
    let gz = gz.finish().unwrap();
    for (what, content) in [("plain", bytes.clone()), ("gzip", gz)] {
        let f = fifo(&format!("in-{what}"));
        let w = feed(&f, content);
        let got = grove(&["tree", f.to_str().unwrap(), "--depth", "2"]);
        w.join().unwrap();
        assert_eq!(got.0, 0, "{what}: {}", got.2);
        assert_eq!(got.1, want.1, "{what}");
        let _ = std::fs::remove_file(&f);
    }
    // `info` counts what came through the FIFO.
    let f = fifo("info");
    let w = feed(&f, bytes.clone());
    let (code, out, err) = grove(&["info", f.to_str().unwrap()]);
    w.join().unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("size:     {} bytes", bytes.len())),
        "{out}"
    );
    let _ = std::fs::remove_file(&f);
    // `cat F | grove tree /dev/stdin` and `grove tree <(cat F)`, through a shell.
    let exe = env!("CARGO_BIN_EXE_grove");
    for line in [
        format!("cat '{}' | '{exe}' tree /dev/stdin --depth 2", small()),
        format!("'{exe}' tree <(cat '{}') --depth 2", small()),
    ] {
        let out = std::process::Command::new("bash")
            .args(["-c", &line])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{line}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), want.1, "{line}");
    }
}

/// A FIFO no process writes to is one line after a bounded wait (shortened here), as
/// an input, a session to replay and a file to `source`; it used to block forever.
#[test]
fn a_fifo_without_a_writer_is_an_error_after_a_wait() {
    let f = fifo("lonely");
    let path = f.to_str().unwrap();
    let env = [("GROVE_TEST_FIFO_WAIT_MS", "300")];
    let source = format!("source {path}");
    for args in [
        vec!["tree", path],
        vec!["replay", path],
        vec!["tree", small(), "--cmd", &source],
    ] {
        let t = std::time::Instant::now();
        let (code, _, err) = common::grove_env(&args, &env);
        assert!(t.elapsed() < std::time::Duration::from_secs(30), "{args:?}");
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("a FIFO that no process writes to"),
            "{args:?}: {err}"
        );
        assert_eq!(
            errors_only(&err).trim().lines().count(),
            1,
            "{args:?}: {err}"
        );
    }
    let _ = std::fs::remove_file(&f);
}

/// Issue 32: replay and undo cost linear time and memory in the number of commands
/// (each checkpoint copied the metric table and the derive list: 1,000 derives took
/// 1.0 s, 2,000 7.0 s, 4,000 ran out of memory). 10,000 derives, then one undo.
#[test]
fn ten_thousand_derives_replay_and_undo() {
    let script = tmp("derives.txt");
    let mut text: String = (0..10_000)
        .map(|i| format!("derive d{i} = time * 2\n"))
        .collect();
    text.push_str("undo\n");
    std::fs::write(&script, text).unwrap();
    let (code, out, err) = grove(&[
        "replay",
        script.to_str().unwrap(),
        "--input",
        small(),
        "--cmd",
        "metric d9998",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("d9998 (inc)  d9998  name"), "{out}");
    // d9999 was undone; the metric it used is gone with it.
    let (code, _, err) = grove(&[
        "replay",
        script.to_str().unwrap(),
        "--input",
        small(),
        "--cmd",
        "metric d9999",
    ]);
    assert_eq!(code, 2, "{err}");
    let _ = std::fs::remove_file(&script);
}

/// A timemory tree of `depth` levels, one node each.
fn timemory_chain(depth: usize) -> String {
    let mut s = String::from(r#"{"timemory": {"wall": {"unit_repr": "sec", "graph": [["#);
    for i in 0..depth {
        s.push_str(&format!(
            r#"{{"node": {{"hash": {}, "prefix": "f{i}", "inclusive": {{"entry": {{"laps": 1}}}}}}, "children": ["#,
            i + 1
        ));
    }
    for _ in 0..depth {
        s.push_str("]}");
    }
    s.push_str("]]}}}");
    s
}

/// timemory trees of 10,000 levels load, as every other reader's do (serde_json's
/// recursion limit refused more than ~58: "recursion limit exceeded").
#[test]
fn deep_timemory_trees_load() {
    let p = tmp("deep.tree.json");
    std::fs::write(&p, timemory_chain(10_000)).unwrap();
    let (code, out, err) = grove(&["info", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nodes:    10000"), "{out}");
    let _ = std::fs::remove_file(&p);
}

/// Issue 32: a FIFO inside a directory input is not opened before its type is known (the
/// session's content hash opened every file of the inputs and blocked on a FIFO
/// without a writer): `grove tree DIR` ends, whatever it says of the FIFO.
#[test]
fn a_fifo_inside_a_directory_input_does_not_block() {
    let dir = tmp("fifo-dir");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(small(), dir.join("a.trace.json")).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(dir.join("b.trace.json"))
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_grove"))
        .args(["tree", dir.to_str().unwrap(), "--depth", "1"])
        .env("GROVE_TEST_FIFO_WAIT_MS", "300")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir_all(&dir);
    let status = status.expect("grove tree DIR with a FIFO inside blocked for 60 s");
    assert!(matches!(status.code(), Some(0) | Some(2)), "{status:?}");
}
