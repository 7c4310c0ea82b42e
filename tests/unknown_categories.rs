//! Issue 11, the silent zero: a Kineto trace whose device activity has a category
//! grove does not know (here MTIA's `mtia_ccp_events`) must say so, naming the
//! category and its count, in `grove info` and on stderr of the other headless commands. A plain Chrome trace
//! with its own categories stays quiet.

mod common;

use common::grove;

#[test]
fn unknown_device_category_is_reported() {
    // `info` lists warnings in its report; `kernels` and `summary` print them on stderr.
    for cmd in ["info", "kernels", "summary"] {
        let (code, out, err) = grove(&[cmd, "testdata/mtia_unknown.trace.json"]);
        assert_eq!(code, 0, "{cmd}: {err}");
        let text = if cmd == "info" { &out } else { &err };
        let line = text
            .lines()
            .find(|l| l.contains("categories grove does not know"))
            .unwrap_or_else(|| panic!("{cmd}: no warning in {text:?}"));
        assert!(line.contains("3 event(s)"), "{line}");
        assert!(line.contains("mtia_ccp_events (3)"), "{line}");
        // Host categories grove reads as CPU slices on purpose are not named.
        assert!(
            !line.contains("overhead") && !line.contains("python_function"),
            "{line}"
        );
    }
}

#[test]
fn plain_chrome_categories_stay_quiet() {
    let dir = std::env::temp_dir().join(format!("grove-unknown-cat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("plain.json");
    std::fs::write(
        &f,
        r#"{"traceEvents": [
          {"ph": "X", "cat": "blink", "name": "Layout", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
          {"ph": "X", "cat": "v8,devtools", "name": "Compile", "pid": 1, "tid": 1, "ts": 6, "dur": 2}
        ]}"#,
    )
    .unwrap();
    let (code, out, err) = grove(&["info", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("does not know") && !err.contains("does not know"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
