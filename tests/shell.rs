//! How grove fits the shell: completions, man page, help examples, --version, one
//! `--format` flag across the subcommands, `info` over several inputs, colour control
//! and exit codes.

use std::path::{Path, PathBuf};

use grove::app::keymap::Keymap;
use grove::app::App;
use grove::load::load_path;
use grove::session;

mod common;
use common::grove_env;

fn grove(args: &[&str]) -> (i32, String, String) {
    // The tests set the colour variables themselves.
    grove_env(args, &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "")])
}

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = common::scratch("shell-test").join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn completions_for_each_shell() {
    for (shell, mark) in [
        ("bash", "_grove()"),
        ("zsh", "#compdef grove"),
        ("fish", "complete -c grove"),
    ] {
        let (code, out, err) = grove(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains(mark), "{shell}: {out}");
        // Subcommands and their flags are in it.
        assert!(out.contains("kernels") && out.contains("format"), "{shell}");
    }
    let (code, _, err) = grove(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn man_page_is_roff() {
    let (code, out, err) = grove(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(".TH grove 1"), "{out}");
    assert!(out.contains("completions"), "{out}");
}

#[test]
fn every_help_has_examples() {
    let (_, top, _) = grove(&["--help"]);
    assert!(top.contains("Examples:"), "{top}");
    assert!(top.contains("Exit status:"), "{top}");
    for sub in [
        "tree",
        "diff",
        "info",
        "kernels",
        "functions",
        "summary",
        "replay",
        "completions",
        "man",
    ] {
        let (code, out, err) = grove(&[sub, "--help"]);
        assert_eq!(code, 0, "{sub}: {err}");
        assert!(out.contains("Examples:"), "{sub}: {out}");
        assert!(out.contains(&format!("grove {sub}")), "{sub}: {out}");
    }
}

#[test]
fn version_names_commit_and_date() {
    let (code, out, _) = grove(&["--version"]);
    assert_eq!(code, 0);
    // grove 0.1.0 (abcdef123456 2026-11-24)
    let inner = out
        .trim()
        .strip_prefix(&format!("grove {} (", env!("CARGO_PKG_VERSION")))
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{out}"));
    let (commit, date) = inner.split_once(' ').unwrap();
    assert!(
        commit == "unknown" || commit.chars().all(|c| c.is_ascii_hexdigit()),
        "{out}"
    );
    assert!(date == "unknown" || date.len() == 10, "{out}");
}

#[test]
fn tree_prints_folded_stacks() {
    let (code, out, err) = grove(&["tree", &data("small.trace.json"), "--format", "folded"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.is_empty());
    for line in out.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        assert!(!stack.is_empty(), "{line}");
        assert!(n.parse::<f64>().is_ok(), "{line}");
    }
}

#[test]
fn formats_each_subcommand_does_not_take_are_usage_errors() {
    let f = data("small.trace.json");
    for args in [
        vec!["kernels", &f, "--format", "folded"],
        vec!["summary", &f, "--format", "parquet"],
        vec!["info", &f, "--format", "csv"],
        vec!["tree", &f, "--format", "tree"],
    ] {
        let (code, _, err) = grove(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("invalid value"), "{args:?}: {err}");
    }
    for args in [
        vec!["kernels", &f, "--format", "json"],
        vec!["summary", &f, "--format", "csv"],
        vec!["info", &f, "--format", "json"],
    ] {
        let (code, _, err) = grove(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
}

/// A recorded session of testdata/small.trace.json (a copy: the strict test edits it).
fn session_file(name: &str) -> (PathBuf, PathBuf) {
    let dir = tmpdir(name);
    let copy = dir.join("trace.json");
    std::fs::copy(data("small.trace.json"), &copy).unwrap();
    let path = dir.join("s.jsonl");
    let mut a = App::new(load_path(&copy).unwrap(), Keymap::default_map());
    a.session = Some(session::Writer::create(&path, &a.session_header()).unwrap());
    a.run("sort name asc").unwrap();
    drop(a);
    (path, copy)
}

#[test]
fn replay_format_and_the_old_print_agree() {
    let (path, _) = session_file("formats");
    let s = path.to_str().unwrap();
    for (new, old) in [
        ("text", "tree"),
        ("json", "json"),
        ("csv", "csv"),
        ("hatchet", "hatchet"),
        ("folded", "folded"),
    ] {
        let (c1, a, e1) = grove(&["replay", s, "--format", new]);
        let (c2, b, e2) = grove(&["replay", s, "--print", old]);
        assert_eq!((c1, c2), (0, 0), "{e1} {e2}");
        assert_eq!(a, b, "{new}");
    }
    let (_, default, _) = grove(&["replay", s]);
    let (_, text, _) = grove(&["replay", s, "--format", "text"]);
    assert_eq!(default, text);
    let (code, _, _) = grove(&["replay", s, "--format", "json", "--print", "csv"]);
    assert_eq!(code, 2);
}

#[test]
fn strict_finding_exits_1() {
    let (path, copy) = session_file("strict");
    let mut bytes = std::fs::read(&copy).unwrap();
    bytes.extend_from_slice(b"\n");
    std::fs::write(&copy, bytes).unwrap();
    let (code, _, err) = grove(&["replay", path.to_str().unwrap(), "--strict"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.starts_with("grove: ") && err.lines().count() == 1,
        "{err}"
    );
    // Input errors stay 2.
    let (code, _, _) = grove(&["tree", "/nonexistent/trace.json"]);
    assert_eq!(code, 2);
}

#[test]
fn info_over_several_inputs_as_json_lines() {
    let (a, b) = (data("rank0.trace.json.gz"), data("rank1.trace.json.gz"));
    let (code, out, err) = grove(&["info", &a, &b, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0]["file"], a.as_str());
    assert_eq!(lines[1]["file"], b.as_str());
    assert_eq!(lines[0]["rank"], "0");
    assert_eq!(lines[2]["ensemble"], true);
    assert!(lines[0]["events"].as_u64().unwrap() > 0);
    let names: Vec<&str> = lines[2]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(
        names.iter().any(|n| n.ends_with("@0") || n.contains('@')),
        "{names:?}"
    );
    // One input: one line, no ensemble.
    let (_, one, _) = grove(&["info", &a, "--format", "json"]);
    assert_eq!(one.lines().count(), 1);
    // Text: each input, then the ensemble.
    let (_, text, _) = grove(&["info", &a, &b]);
    let files = text.lines().filter(|l| l.starts_with("file:")).count();
    assert_eq!(files, 2, "{text}");
    assert!(text.contains("\nensemble: 2 inputs\n"), "{text}");
}

#[test]
fn colour_follows_flag_then_environment() {
    let f = data("small.trace.json");
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["tree", f.as_str(), "--depth", "1"];
        args.extend_from_slice(extra);
        let mut all = vec![("NO_COLOR", ""), ("CLICOLOR_FORCE", "")];
        all.extend_from_slice(env);
        let (code, out, err) = grove_env(&args, &all);
        assert_eq!(code, 0, "{err}");
        out.contains('\x1b')
    };
    // stdout is a pipe here.
    assert!(!run(&[], &[]));
    assert!(run(&["--color", "always"], &[]));
    assert!(run(&["--color", "256"], &[]));
    assert!(!run(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]));
    assert!(run(&[], &[("CLICOLOR_FORCE", "1")]));
    assert!(!run(&[], &[("CLICOLOR_FORCE", "0")]));
    assert!(!run(&[], &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]));
    assert!(run(&["--color", "always"], &[("NO_COLOR", "1")]));
}

/// A global option before the subcommand leaves the subcommand a subcommand (it was
/// taken for an input file), and a headless load's warnings are printed once.
#[test]
fn global_options_before_the_subcommand() {
    let trace = data("demo.trace.json.gz");
    for args in [
        vec!["--no-cache", "kernels", &trace],
        vec!["--low-memory", "kernels", &trace],
        vec!["--strict", "--no-cache", "tree", &trace, "--depth", "1"],
        vec!["kernels", "--no-cache", &trace],
    ] {
        let (code, out, err) = grove(&args);
        if args.contains(&"--strict") {
            // The demo's unattributed activities are a warning: --strict finds it.
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(err.contains("(--strict)"), "{args:?}: {err}");
            continue;
        }
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains("name"), "{args:?}: {out}");
        let warnings = err.lines().filter(|l| l.contains("no launch")).count();
        assert_eq!(warnings, 1, "{args:?}: {err}");
    }
}

/// The explorer's own options with a subcommand are refused (exit 2), not ignored.
#[test]
fn explorer_options_with_a_subcommand_are_refused() {
    let trace = data("demo.trace.json.gz");
    for (args, named) in [
        (vec!["--cmd", "hot-path", "tree", &trace], "--cmd"),
        (vec!["--no-session", "kernels", &trace], "--no-session"),
        (vec![&trace, "tree"], "FILE"),
    ] {
        let (code, _, err) = grove(&args);
        if named == "FILE" {
            // A file first: the rest are files too, and `tree` is not one.
            assert_eq!(code, 2, "{args:?}: {err}");
            continue;
        }
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(named) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}
