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

/// The one entry directory of a cache.
fn entry_dir(cache: &Path) -> PathBuf {
    std::fs::read_dir(cache.join("grove"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.join("stamp.json").exists() || p.is_dir())
        .unwrap()
}

fn mkfifo(p: &Path) {
    let _ = std::fs::remove_file(p);
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// Fault injection (issue 32): whatever happens to an entry, the tree is the cold one,
/// exit 0, no hang. Each fault is applied to a freshly written entry.
#[test]
fn a_damaged_entry_is_a_miss_never_a_wrong_tree() {
    let dir = scratch("faults");
    let cache = dir.join("cache");
    let file = dir.join("t.trace.json.gz");
    std::fs::copy(data("rank0.trace.json.gz"), &file).unwrap();
    let (_, cold, _) = tree(&file, &cache, &["--no-cache"], "csv");
    // A foreign entry: another trace's summary files.
    let other_cache = dir.join("other");
    let other = dir.join("o.trace.json.gz");
    std::fs::copy(data("rank1.trace.json.gz"), &other).unwrap();
    tree(&other, &other_cache, &[], "csv");
    let foreign = entry_dir(&other_cache);
    type Fault = Box<dyn Fn(&Path)>;
    let cct = |e: &Path| e.join("trace.tree");
    let faults: Vec<(&str, Fault)> = vec![
        (
            "bit flips in the tree",
            Box::new(move |e: &Path| {
                let mut b = std::fs::read(cct(e)).unwrap();
                for k in 1..8 {
                    let i = b.len() * k / 8;
                    b[i] ^= 0x10;
                }
                std::fs::write(cct(e), b).unwrap();
            }),
        ),
        (
            "the tree cut short",
            Box::new(move |e: &Path| {
                let b = std::fs::read(cct(e)).unwrap();
                std::fs::write(cct(e), &b[..b.len() / 2]).unwrap();
            }),
        ),
        (
            "another trace's files",
            Box::new(move |e: &Path| {
                std::fs::copy(foreign.join("trace.tree"), e.join("trace.tree")).unwrap();
            }),
        ),
        (
            "a FIFO for the stamp",
            Box::new(|e: &Path| mkfifo(&e.join("stamp.json"))),
        ),
        (
            "a FIFO for the tree",
            Box::new(move |e: &Path| mkfifo(&cct(e))),
        ),
        (
            "the stamp a link to /dev/zero",
            Box::new(|e: &Path| {
                let s = e.join("stamp.json");
                std::fs::remove_file(&s).unwrap();
                std::os::unix::fs::symlink("/dev/zero", &s).unwrap();
            }),
        ),
        (
            "a 100 GB sparse stamp",
            Box::new(|e: &Path| {
                let f = std::fs::File::options()
                    .write(true)
                    .open(e.join("stamp.json"))
                    .unwrap();
                f.set_len(100 << 30).unwrap();
            }),
        ),
        (
            "the tree a directory",
            Box::new(move |e: &Path| {
                std::fs::remove_file(cct(e)).unwrap();
                std::fs::create_dir(cct(e)).unwrap();
            }),
        ),
    ];
    for (what, fault) in faults {
        let _ = std::fs::remove_dir_all(&cache);
        let (code, first, _) = tree(&file, &cache, &[], "csv");
        assert!(code == 0 && first == cold, "{what}: first open");
        fault(&entry_dir(&cache));
        let (code, warm, err) = tree(&file, &cache, &[], "csv");
        assert_eq!(code, 0, "{what}: {err}");
        assert!(warm == cold, "{what}: a different tree");
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An edit in the middle of the file, its size and modification time put back (`dd
/// conv=notrunc` then `touch -r`): the status change time tells.
#[test]
fn an_edit_in_place_with_the_time_put_back_is_a_miss() {
    let dir = scratch("inplace");
    let cache = dir.join("cache");
    let file = dir.join("t.json");
    // Large enough that the edit is outside the hashed first and last 64 KiB.
    let mut events = Vec::new();
    for i in 0..6000 {
        events.push(format!(
            r#"{{"ph":"X","name":"op{}","pid":1,"tid":1,"ts":{},"dur":1000}}"#,
            i % 7,
            i * 2000
        ));
    }
    let text = format!(r#"{{"traceEvents":[{}]}}"#, events.join(",\n"));
    std::fs::write(&file, &text).unwrap();
    let (_, before, _) = tree(&file, &cache, &[], "csv");
    let (_, warm, _) = tree(&file, &cache, &[], "csv");
    assert_eq!(before, warm);
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let mut bytes = text.into_bytes();
    let mid = bytes.len() / 2;
    let at = mid
        + bytes[mid..]
            .windows(10)
            .position(|w| w == b"\"dur\":1000")
            .unwrap();
    bytes[at + 6] = b'9';
    std::fs::write(&file, &bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let (_, cold, _) = tree(&file, &cache, &["--no-cache"], "csv");
    let (code, after, err) = tree(&file, &cache, &[], "csv");
    assert_eq!(code, 0, "{err}");
    assert!(cold != before, "the edit changes the tree");
    assert!(after == cold, "the edited file opened with the old numbers");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The temporary entry of a grove killed while it wrote (SIGHUP during a cold load
/// left an empty `.tmp-*`) is removed by the next write; a live writer's stays.
#[test]
fn a_dead_writers_temporary_entry_is_swept() {
    let dir = scratch("sweep");
    let root = dir.join("grove");
    // A process that has exited: its pid names no process now.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = root.join(format!(".tmp-{dead}-1234abcd"));
    let live = root.join(format!(".tmp-{}-1234abcd", std::process::id()));
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::create_dir_all(&live).unwrap();
    let (code, _, err) = tree(&data("rank0.trace.json.gz"), &dir, &[], "csv");
    assert_eq!(code, 0, "{err}");
    assert!(!stale.exists(), "the dead writer's entry is still there");
    assert!(live.exists(), "a live writer's entry was removed");
    assert_eq!(entries(&dir), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Concurrent cold loads of one trace: each writes the entry, the losers of the rename
/// race quietly keep the winner's (one warned `Directory not empty (os error 39)`).
#[test]
fn concurrent_writers_do_not_warn() {
    let dir = scratch("writers");
    let file = data("rank0.trace.json.gz");
    let (_, want, _) = grove_env(
        &[
            "tree",
            file.to_str().unwrap(),
            "--no-cache",
            "--format",
            "csv",
        ],
        &[],
    );
    for round in 0..3 {
        let _ = std::fs::remove_dir_all(dir.join("grove"));
        let kids: Vec<_> = (0..6)
            .map(|_| {
                std::process::Command::new(env!("CARGO_BIN_EXE_grove"))
                    .args(["tree", file.to_str().unwrap(), "--format", "csv"])
                    .env("XDG_CACHE_HOME", &dir)
                    .env("GROVE_CACHE_MIN_BYTES", "0")
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for k in kids {
            let out = k.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "round {round}: {err}");
            assert!(!err.contains("warning: cache"), "round {round}: {err}");
            assert_eq!(String::from_utf8_lossy(&out.stdout), want);
        }
        assert_eq!(entries(&dir), 1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A full cache file system is one clear warning ("the disk is full"), not the Parquet
/// writer's `Invalid thrift: transport error`; the tree is the cold one. Runs in a
/// user and mount namespace on a 64 KiB tmpfs, filled first (skipped where `unshare`
/// cannot make one).
#[test]
fn a_full_cache_disk_is_one_clear_warning() {
    let dir = scratch("full");
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let probe = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c"])
        .arg(format!(
            "mount -t tmpfs -o size=64k tmpfs '{}'",
            mnt.display()
        ))
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        skip!("unshare -rm cannot mount a tmpfs here")
    }
    let file = data("rank0.trace.json.gz");
    let (_, want, _) = grove_env(
        &[
            "tree",
            file.to_str().unwrap(),
            "--no-cache",
            "--format",
            "csv",
        ],
        &[],
    );
    let script = format!(
        "mount -t tmpfs -o size=64k tmpfs '{m}' && mkdir -p '{m}/grove' && \
         (dd if=/dev/zero of='{m}/fill' bs=4k 2>/dev/null; true) && \
         XDG_CACHE_HOME='{m}' GROVE_CACHE_MIN_BYTES=0 '{exe}' tree '{f}' --format csv",
        m = mnt.display(),
        exe = env!("CARGO_BIN_EXE_grove"),
        f = file.display()
    );
    let out = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", &script])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    assert!(err.contains("the disk is full"), "{err}");
    assert!(!err.contains("thrift"), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.contains("cache")).count(),
        1,
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A warm open in the TUI shows the order the entry saved (`SavedOrder`): the same
/// rows, pre-order and heat scale as the cold open that sorted the tree, read where
/// they lie in the entry instead of sorted again; sorting again gives the same order.
#[test]
fn the_tuis_warm_open_shows_the_saved_order() {
    use grove::app::keymap::Keymap;
    use grove::app::App;
    let file = data("rank0.trace.json.gz");
    let dir = scratch("saved-order");
    let mut cold_profile = grove::load::load_path(&file).unwrap();
    cold_profile.events = None;
    let cold = App::new(cold_profile, Keymap::default_map());
    // The cold app recorded its order on the tree: the write saves that one.
    assert!(cold.profile.cct.saved_order().is_some());
    grove::summary::cache::store_in(&dir, &file, &cold.profile).unwrap();
    let warm_profile = grove::summary::cache::lookup_in(&dir, &file).expect("a warm entry");
    let saved = warm_profile.cct.saved_order().expect("the entry's order");
    assert!(
        saved.po.node.is_lent(),
        "read in place from the mapped entry"
    );
    let column = saved.column.clone();
    let mut warm = App::new(warm_profile, Keymap::default_map());
    let (a, b) = (&cold.tree.po, &warm.tree.po);
    assert_eq!(
        (&a.node[..], &a.pos[..], &a.end[..]),
        (&b.node[..], &b.pos[..], &b.end[..])
    );
    assert_eq!(&a.depth[..], &b.depth[..]);
    assert!((0..a.len() as u32).all(|p| a.parent(p) == b.parent(p)));
    assert_eq!(cold.tree.visible, warm.tree.visible);
    assert_eq!(
        (cold.view.heat.min, cold.view.heat.max),
        (warm.view.heat.min, warm.view.heat.max)
    );
    // Sorting again (away and back) makes the same order from the column itself.
    warm.run("sort name").unwrap();
    assert!(
        warm.profile.cct.saved_order().is_none(),
        "let go once sorted otherwise"
    );
    warm.run(&format!("sort \"{column}\" desc")).unwrap();
    assert_eq!(&cold.tree.po.node[..], &warm.tree.po.node[..]);
    let _ = std::fs::remove_dir_all(&dir);
}
