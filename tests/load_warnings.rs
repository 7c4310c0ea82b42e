//! Load warnings reach every headless command (one stderr line each, capped with a
//! count) and `--strict` turns them into an error with exit code 2; inputs no reader
//! can make sense of are one line that says what they look like.

mod common;

use std::path::PathBuf;

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = common::scratch("warn").join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Folded stacks with one stray line in eleven: it loads, with a warning (that hides
/// less than 10% of the lines).
fn warned() -> PathBuf {
    tmp(
        "warned.txt",
        b"main;a 3\nmain;b 2\nmain;c 1\nmain;d 1\nmain;e 1\nmain;f 1\nmain;g 1\nmain;h 1\nmain;i 1\nmain;j 1\nstray line\n",
    )
}

/// Folded stacks where one line in six is not `stack count`: the warning hides 16.7% of
/// the lines, so it leads the stderr lines, and `--strict` names it with its share.
#[test]
fn a_warning_that_hides_much_of_the_file_is_shown_first_and_fails_strict() {
    let f = tmp(
        "half.txt",
        b"main;a 3\nmain;b 2\nmain;c 1\nstray line\nmain;d 1\nmain;e 1\n",
    );
    let f = f.to_str().unwrap();
    let (code, out, err) = common::grove(&["info", f]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with("grove: warning: half.txt: data hidden: 1 line(s) are not 'stack count'"),
        "{err}"
    );
    assert!(err.contains("[hides 16.7% of the data]"), "{err}");
    assert!(out.contains("HIDDEN:   1 line(s)"), "{out}");
    let (code, _, err) = common::grove(&["info", "--format", "json", f]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("data hidden"), "{err}");
    let (code, out, err) = common::grove(&["tree", "--strict", f]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("[hides 16.7% of the data] (--strict)"),
        "{err}"
    );
}

#[test]
fn warnings_go_to_stderr_in_headless_commands() {
    let f = warned();
    let f = f.to_str().unwrap();
    for args in [vec!["tree", f], vec!["info", f]] {
        let (code, out, err) = common::grove(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(!out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("grove: warning: warned.txt: 1 line(s) are not 'stack count'"),
            "{err}"
        );
    }
}

#[test]
fn strict_turns_a_warning_into_exit_code_2() {
    let f = warned();
    let f = f.to_str().unwrap();
    for args in [
        // After the subcommand's name: before it, grove reads `tree` as a file.
        vec!["tree", "--strict", f],
        vec!["tree", f, "--strict"],
        vec!["info", "--strict", f],
    ] {
        let (code, out, err) = common::grove(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("(--strict)"), "{err}");
    }
}

#[test]
fn other_formats_are_refused_with_what_they_look_like() {
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "sysinfo.txt",
            b"CMD: rocminfo\nROCk module is loaded\n",
            "a rocminfo dump",
        ),
        ("t.csv", b"name, calls, time\nmain, 1, 3\n", "a CSV file with columns name, calls, time"),
        (
            "contention.txt",
            b"--- contention ---\ncycles/second=3294500000\n",
            "a legacy pprof text profile",
        ),
        ("empty.json", b"{\"traceEvents\": [{\"ph\": \"C\", \"ts\": 1, \"name\": \"c\", \"pid\": 1, \"args\": {\"v\": 1}}]}", "no call-tree node"),
    ];
    for (name, bytes, what) in cases {
        let f = tmp(name, bytes);
        let (code, out, err) = common::grove(&["tree", f.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(out.is_empty(), "{name}: {out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(name) && err.contains(what), "{err}");
    }
}

const FOLDED: &[u8] = b"main;a 3\nmain;b 2\n";

#[test]
fn compressed_inputs_are_detected_by_magic_bytes() {
    let zst = zstd::encode_all(FOLDED, 3).unwrap();
    let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    std::io::Write::write_all(&mut bz, FOLDED).unwrap();
    let bz = bz.finish().unwrap();
    let mut xz = Vec::new();
    lzma_rs::xz_compress(&mut &FOLDED[..], &mut xz).unwrap();
    // Names without the usual extension: the magic bytes decide.
    for (name, bytes, c) in [
        ("z.txt", zst, "zstd"),
        ("b.txt", bz, "bzip2"),
        ("x.txt", xz, "xz"),
    ] {
        let p = grove::load::load_path(&tmp(name, &bytes)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.source.format, grove::model::Format::Folded, "{name}");
        assert_eq!(p.cct.len(), 3, "{name}");
        assert_eq!(p.meta_value("input.compression"), Some(c), "{name}");
        assert!(p.warnings.is_empty(), "{name}: {:?}", p.warnings);
    }
}

#[test]
fn a_truncated_gzip_loads_what_is_complete_and_says_it_is_partial() {
    let mut lines = String::new();
    for i in 0..20_000 {
        lines.push_str(&format!("main;f{i} {i}\n"));
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
    std::io::Write::write_all(&mut gz, lines.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let f = tmp("cut.txt.gz", &gz[..gz.len() / 2]);
    let p = grove::load::load_path(&f).unwrap();
    assert!(grove::readers::is_partial(&p), "{:?}", p.warnings);
    assert!(p.cct.len() > 100);
    let (code, out, err) = common::grove(&["info", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("partial"), "{out}");
    assert!(
        err.contains("partial input: the gzip stream ends early"),
        "{err}"
    );
    let (code, _, err) = common::grove(&["info", "--strict", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn dash_and_dev_stdin_read_standard_input() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
    gz.write_all(FOLDED).unwrap();
    let gz = gz.finish().unwrap();
    for arg in ["-", "/dev/stdin"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_grove"))
            .args(["info", arg])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&gz).unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{arg}: {err}");
        assert!(
            text.contains("format:   folded stacks, gzip"),
            "{arg}: {text}"
        );
        assert!(text.contains("nodes:    3"), "{arg}: {text}");
    }
}

#[test]
fn the_messages_command_lists_the_warnings_in_the_tui() {
    use grove::app::keymap::Keymap;
    use grove::app::{App, Mode};
    let p = grove::load::load_path(&warned()).unwrap();
    assert_eq!(p.warnings.len(), 1);
    let mut a = App::new(p, Keymap::default_map());
    a.run("messages").unwrap();
    assert_eq!(a.mode, Mode::Messages { scroll: 0 });
    // Without warnings it says so instead of opening an empty list.
    let clean = grove::load::load_path(&tmp("clean.txt", FOLDED)).unwrap();
    let mut a = App::new(clean, Keymap::default_map());
    a.run("messages").unwrap();
    assert_eq!(a.mode, Mode::Normal);
}
