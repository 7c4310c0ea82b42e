//! Load warnings reach every headless command (one stderr line each, capped with a
//! count) and `--strict` turns them into an error with exit code 2; inputs no reader
//! can make sense of are one line that says what they look like.

mod common;

use std::path::PathBuf;

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grove-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Folded stacks with one stray line: it loads, with a warning.
fn warned() -> PathBuf {
    tmp(
        "warned.txt",
        b"main;a 3\nmain;b 2\nmain;c 1\nmain;d 1\nstray line\n",
    )
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
            "callgrind.out.1",
            b"# callgrind format\nversion: 1\ncreator: callgrind\nevents: Ir\nsummary: 9\nfn=main\n1 9\n",
            "a callgrind/cachegrind file",
        ),
        ("t.csv", b"name, calls, time\nmain, 1, 3\n", "a CSV file with columns name, calls, time"),
        (
            "perf.txt",
            b"perf 12 [000] 1.000001: 1 cpu-clock:\n\t4005f0 main (/a.out)\n\n",
            "perf script text",
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
