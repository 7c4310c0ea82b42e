//! grove's cache of opened traces (`summary::cache`): a warm open shows exactly the
//! tree of a cold one, a changed file is never served from the cache, `--no-cache`
//! bypasses it, and a cache that cannot be written is a warning, not an error. The
//! TUI's warm open takes the events when the background load delivers them.

use std::path::{Path, PathBuf};

mod common;
use common::grove_env;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("grove-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Entries in a cache directory (a stamp each).
fn entries(cache: &Path) -> usize {
    std::fs::read_dir(cache.join("grove"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().join("stamp.json").is_file())
                .count()
        })
        .unwrap_or(0)
}

fn tree(file: &Path, cache: &Path, extra: &[&str], format: &str) -> (i32, String, String) {
    let f = file.to_str().unwrap();
    let mut args = vec!["tree", f, "--format", format];
    args.extend_from_slice(extra);
    grove_env(
        &args,
        &[
            ("XDG_CACHE_HOME", cache.to_str().unwrap()),
            ("GROVE_CACHE_MIN_BYTES", "0"),
        ],
    )
}

/// A call-graph format's tree is estimated from its graph, which the cache does not
/// keep: it is never cached, and says what it is each time.
#[test]
fn call_graph_trees_are_not_cached() {
    let cache = scratch("callgrind");
    let file = data("callgrind/rec.callgrind.out");
    for _ in 0..2 {
        let (code, out, err) = tree(&file, &cache, &[], "text");
        assert_eq!(code, 0, "{err}");
        assert!(
            out.starts_with("(call paths estimated from the call graph)"),
            "{out}"
        );
        assert_eq!(entries(&cache), 0);
    }
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn warm_trees_equal_cold_ones() {
    for (name, file) in [
        ("kineto", data("rank0.trace.json.gz")),
        ("perf", data("perf/spin.perf.txt")),
        ("nsys", data("nsys/schema_3_16.sqlite")),
    ] {
        let cache = scratch(name);
        for format in ["csv", "json", "text"] {
            let (code, cold, err) = tree(&file, &cache, &["--no-cache"], format);
            assert_eq!(code, 0, "{name}: {err}");
            // The first open writes the entry, the second reads it.
            let (code, first, err) = tree(&file, &cache, &[], format);
            assert_eq!(code, 0, "{name}: {err}");
            assert_eq!(entries(&cache), 1, "{name}");
            let (code, warm, err) = tree(&file, &cache, &[], format);
            assert_eq!(code, 0, "{name}: {err}");
            assert!(first == cold, "{name} {format}: first open differs");
            assert!(
                warm == cold,
                "{name} {format}: warm open differs:\n{warm}\n---\n{cold}"
            );
        }
        let _ = std::fs::remove_dir_all(&cache);
    }
}

#[test]
fn a_changed_file_is_read_again() {
    let dir = scratch("changed");
    let cache = dir.join("cache");
    let file = dir.join("t.trace.json.gz");
    std::fs::copy(data("rank0.trace.json.gz"), &file).unwrap();
    let (_, before, _) = tree(&file, &cache, &[], "csv");
    assert_eq!(entries(&cache), 1);
    // Another trace under the same name: its own tree, not the cached one.
    std::fs::copy(data("rank1.trace.json.gz"), &file).unwrap();
    let (_, cold, _) = tree(&file, &cache, &["--no-cache"], "csv");
    let (_, after, _) = tree(&file, &cache, &[], "csv");
    assert!(after == cold && after != before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn same_size_and_time_but_other_bytes_is_a_miss() {
    let dir = scratch("ends");
    let file = dir.join("t.json");
    std::fs::copy(data("small.trace.json"), &file).unwrap();
    std::env::set_var("XDG_CACHE_HOME", dir.join("cache"));
    std::env::set_var("GROVE_CACHE_MIN_BYTES", "0");
    let cached = grove::load::load_inputs_cached(
        std::slice::from_ref(&file),
        &Default::default(),
        None,
        true,
    )
    .unwrap();
    assert!(cached.warm.is_none() && cached.cache_warning.is_none());
    let again = grove::load::load_inputs_cached(
        std::slice::from_ref(&file),
        &Default::default(),
        None,
        true,
    )
    .unwrap();
    assert_eq!(again.warm.as_deref(), Some(file.as_path()));
    assert!(again.profile.events.is_none());
    // Rewrite one byte in place and put the modification time back.
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let i = bytes.iter().position(|&b| b == b'1').unwrap();
    bytes[i] = b'2';
    std::fs::write(&file, &bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let third = grove::load::load_inputs_cached(
        std::slice::from_ref(&file),
        &Default::default(),
        None,
        true,
    )
    .unwrap();
    assert!(
        third.warm.is_none(),
        "a rewritten file must not open from the cache"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_cache_writes_nothing_and_an_unwritable_cache_is_a_warning() {
    let dir = scratch("nocache");
    let file = data("rank0.trace.json.gz");
    let (code, _, _) = tree(&file, &dir, &["--no-cache"], "csv");
    assert_eq!(code, 0);
    assert_eq!(entries(&dir), 0);
    // XDG_CACHE_HOME names a file: the cache cannot be made there.
    let blocker = dir.join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let (code, out, err) = tree(&file, &blocker, &[], "csv");
    assert_eq!(code, 0, "{err}");
    assert!(!out.is_empty());
    assert!(err.contains("warning: cache"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_tui_takes_the_events_when_they_arrive() {
    use grove::app::keymap::Keymap;
    use grove::app::App;
    let file = data("rank0.trace.json.gz");
    let full = grove::load::load_path(&file).unwrap();
    let mut tree_only = grove::load::load_path(&file).unwrap();
    tree_only.events = None;
    tree_only.counters = None;
    let mut app = App::new(tree_only, Keymap::default_map());
    assert!(app.gpu.is_none());
    let (tx, rx) = std::sync::mpsc::channel();
    app.background = Some(grove::app::background::Pending {
        rx,
        what: "rank0".into(),
        why: "the tree came from the cache",
        start: None,
    });
    // While loading, the GPU panels open and say so.
    app.run("panel kernels").unwrap();
    assert!(!app.poll_background());
    let cats = grove::gpu::classify::Categories::builtin();
    tx.send(Ok(grove::app::background::Events::indexed(full, cats)))
        .unwrap();
    assert!(app.poll_background());
    assert!(!app.loading());
    assert!(app.gpu.is_some());
    app.run("panel timeline").unwrap();
    assert!(app.timeline.window.1 > app.timeline.window.0);
}
