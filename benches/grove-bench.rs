//! Benchmarks that need real sizes, run in release with
//! `cargo bench --bench grove-bench -- MODE ARGS` (a bench target, so `cargo install`
//! leaves it out):
//!   grove-bench load [--threads N] FILE...
//!                                 load time, throughput, peak RSS, tree size
//!   grove-bench parse [--threads N] FILE...
//!                                 the Chrome reader's parse alone (no tree) of plain
//!                                 JSON files: time and
//!                                 throughput; N threads (default: GROVE_THREADS, else
//!                                 the cores, at most 8)
//!   grove-bench frame FILE        TUI frame time at 200x50, collapsed and expanded
//!   grove-bench timeline FILE     the timeline's stack chart on a trace, every CPU lane
//!                                 shown: frames at 200x50 from the whole trace down to
//!                                 10 µs, zoom and pan steps (command + frame), the stack
//!                                 rows' memory
//!   grove-bench panels [KERNELS] [RANKS] [NODES]
//!                                 summary and heatmap panel frames with the cursor
//!                                 moving: on a synthetic GPU trace (default 5M kernels)
//!                                 and a synthetic ensemble (default 64 ranks of 100k nodes)
//!   grove-bench panels-dir DIR    the same panels on the ensemble of a directory's files
//!   grove-bench otf2 ARCHIVE      an OTF2 archive: load time, events per second, peak
//!                                 RSS against the archive's size, and otf2-print's time
//!                                 to print the same archive (when it is installed)
//!   grove-bench first-frame-cold FILE
//!                                 a cold open (no cache) of an uncompressed Chrome trace: where
//!                                 the time from "events parsed" to the first TUI frame
//!                                 goes, before (everything derived first) and after (the
//!                                 GPU index built behind the tree, `Pending::index`)
//!   grove-bench resident FILE     resident memory after a load and the explorer's start
//!                                 (and the peak): run with and without GROVE_LOW_MEMORY=1
//!   grove-bench functions [NODES] the functions table, one function's callers and
//!                                 callees, and the inverted tree of a synthetic tree
//!                                 (default 1M nodes)
//!   grove-bench first-frame --warm|--cold FILE...
//!                                 time to the TUI's first frame at 200x50: the inputs
//!                                 loaded as `grove FILE...` loads them (`--warm`: through
//!                                 grove's cache, the events then loading behind;
//!                                 `--cold`: without it), the app built, one frame drawn
//! Numbers go to stdout as `name value unit` lines; docs/performance.md records them.

use std::time::Instant;

use grove::app::command::Command;
use grove::app::keymap::Keymap;
use grove::app::App;
use grove::load::load_path;
use grove::ui::glyphs::Glyphs;
use grove::ui::layout::tree_rows;
use grove::ui::theme::{ColorDepth, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn resident_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// CPU seconds (user + system) from a `/proc/.../stat` file: the whole process
/// (`self`) or the calling thread (`thread-self`).
fn cpu_secs(which: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{which}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // utime and stime are fields 14 and 15 of the stat line, in clock ticks (100 Hz).
    f.get(11)
        .zip(f.get(12))
        .map(|(u, s)| (u + s) / 100.0)
        .unwrap_or(f64::NAN)
}

fn uncompressed_size(path: &std::path::Path) -> u64 {
    use std::io::Read;
    // A database directory: all its files.
    if path.is_dir() {
        return std::fs::read_dir(path)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| uncompressed_size(&e.path()))
                    .sum()
            })
            .unwrap_or(0);
    }
    let f = std::fs::File::open(path).unwrap();
    let mut head = [0u8; 2];
    let mut f2 = std::fs::File::open(path).unwrap();
    let _ = f2.read_exact(&mut head);
    if head == [0x1f, 0x8b] {
        let mut d = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(f));
        std::io::copy(&mut d, &mut std::io::sink()).unwrap_or(0)
    } else {
        f.metadata().map(|m| m.len()).unwrap_or(0)
    }
}

/// A random CCT like Hatchet's benchmark trees: fan-out about 4, names from a pool of
/// 2,000, log-normal exclusive time, exact inclusive time.
fn synthetic(n: usize) -> grove::model::Profile {
    use grove::model::{Cct, Format, Frame, MetricTable, Profile, Source};
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let names: Vec<String> = (0..2000).map(|i| format!("func_{i}")).collect();
    let mut cct = Cct::default();
    let mut queue = std::collections::VecDeque::new();
    let root = cct.add_node(None, Frame::new("main", "function"));
    queue.push_back(root);
    while cct.len() < n {
        let Some(p) = queue.pop_front() else { break };
        let kids = 1 + rnd() % 7;
        for _ in 0..kids {
            if cct.len() >= n {
                break;
            }
            let name = &names[(rnd() % 2000) as usize];
            let c = cct.add_node(Some(p), Frame::new(name, "function"));
            queue.push_back(c);
        }
    }
    let time: Vec<f64> = (0..cct.len())
        .map(|_| {
            // Sum of uniforms ~ normal; exp gives a log-normal.
            let z: f64 = (0..4)
                .map(|_| (rnd() % 10_000) as f64 / 10_000.0)
                .sum::<f64>()
                - 2.0;
            (z * 1.5).exp() * 1000.0
        })
        .collect();
    let mut m = MetricTable::new(cct.len());
    m.set("time", "ns", time);
    m.derive_inclusive(&cct, &["time"]);
    Profile {
        call_graph: None,
        source: Source {
            path: None,
            format: Format::HatchetLiteral,
            size: 0,
            gzip: false,
            label: "synthetic".into(),
        },
        dialect: "synthetic".into(),
        cct,
        metrics: m,
        events: None,
        counters: None,
        meta: Vec::new(),
        warnings: Vec::new(),
        default_metric: "time".into(),
    }
}

/// A trace with `n` kernels on 4 streams (some overlapping), built in memory: the
/// timeline and kernel-table benchmarks read the event table, not JSON.
fn synthetic_trace(n: usize) -> grove::model::Profile {
    use grove::model::{EventKind, EventTable, Format, MetricTable, Profile, Source};
    let mut ev = EventTable::default();
    let names: Vec<u32> = (0..200)
        .map(|i| {
            ev.strings
                .intern(&format!("void kernel_{i}<float, {i}>(float*, int)"))
        })
        .collect();
    let cat = ev.strings.intern("kernel");
    let pid = ev.strings.intern("0");
    let mut seed = 0x9E3779B97F4A7C15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut t = [1_700_000_000_000_000_000i64; 4];
    for k in 0..n {
        let s = k % 4;
        let dur = 2_000 + (rnd() % 40_000) as i64;
        let gap = (rnd() % 6_000) as i64 - 500; // a few overlap (PDL)
        let name = names[(rnd() % 200) as usize];
        let tid = ev.strings.intern(&(7 + s).to_string());
        let i = ev.push(
            name,
            cat,
            EventKind::Kernel,
            t[s] + gap.max(-400),
            dur,
            pid,
            tid,
        );
        ev.device[i] = 0;
        ev.stream[i] = 7 + s as i64;
        t[s] += gap.max(-400) + dur;
    }
    ev.node = vec![u32::MAX; ev.len()];
    ev.launch = grove::model::events::Sparse::with_len(ev.len());
    Profile {
        call_graph: None,
        source: Source {
            path: None,
            format: Format::ChromeTrace,
            size: 0,
            gzip: false,
            label: "synthetic".into(),
        },
        dialect: "synthetic".into(),
        cct: Default::default(),
        metrics: MetricTable::new(0),
        events: Some(ev),
        counters: None,
        meta: Vec::new(),
        warnings: Vec::new(),
        default_metric: "time".into(),
    }
}

/// The stack chart on a real trace: frames over windows from the whole trace to 10 µs,
/// a zoom and a pan step, and the memory of the stack rows beside the trace's.
fn timeline_bench(file: &str) {
    let t = Instant::now();
    let p = load_path(std::path::Path::new(file)).unwrap_or_else(|e| panic!("{e}"));
    println!("load {:.2} s", t.elapsed().as_secs_f64());
    println!("events {}", p.events.as_ref().map_or(0, |e| e.len()));
    let rss_loaded = resident_mib();
    let mut app = App::new(p, Keymap::default_map());
    app.page = tree_rows(200, 50);
    app.run("panel timeline").unwrap();
    app.run("lanes all").unwrap();
    let g = app.gpu.as_ref().unwrap();
    // `lanes all` built the CPU lanes (they are built on their first use).
    let cpu = g.cpu(app.profile.events.as_ref().unwrap());
    let lanes = g.lanes.iter().chain(cpu.lanes.iter().map(|(_, l)| l));
    let (rows, bytes) = lanes.fold((0, 0), |(r, b), l| {
        (r + l.stack.depth(), b + l.stack.heap_bytes())
    });
    println!(
        "stack_rows {rows} rows, {:.1} MiB; resident after load {rss_loaded:.1} MiB",
        bytes as f64 / (1 << 20) as f64
    );
    // The whole lane index (ids, packed times, stack rows) and the gaps, built behind
    // the TUI's first frame (issue 30's peak).
    let lanes = g.lanes.iter().chain(cpu.lanes.iter().map(|(_, l)| l));
    let (slices, index) = lanes.fold((0, 0), |(n, b), l| (n + l.events.len(), b + l.heap_bytes()));
    let all_gaps = || g.gaps.iter().chain(&cpu.gaps);
    let gaps: usize = all_gaps().map(|v| v.capacity() * 24).sum();
    println!(
        "lane_index {slices} slices, {:.1} MiB; gaps {} ({:.1} MiB); resident with the index {:.1} MiB",
        index as f64 / (1 << 20) as f64,
        all_gaps().map(|v| v.len()).sum::<usize>(),
        gaps as f64 / (1 << 20) as f64,
        resident_mib()
    );
    let (a, b) = g.span;
    let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
    let glyphs = Glyphs::pick(false);
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    let mid = a + (b - a) / 2;
    let us = |t: i64| format!("{}us", (t - g.origin) / 1000);
    let windows: Vec<(&str, String)> = vec![
        ("whole", "zoom fit".into()),
        (
            "1pct",
            format!("zoom {} {}", us(mid), us(mid + (b - a) / 100)),
        ),
        ("1ms", format!("zoom {} {}", us(mid), us(mid + 1_000_000))),
        ("100us", format!("zoom {} {}", us(mid), us(mid + 100_000))),
        ("10us", format!("zoom {} {}", us(mid), us(mid + 10_000))),
    ];
    // The cursor on the lowest CPU row, so every lane above it is drawn expanded; one
    // frame first, so what the first frame derives once is not counted.
    app.run("down 10000").ok();
    term.draw(|f| grove::ui::draw(f, &app, &theme, &glyphs))
        .unwrap();
    for (label, cmd) in &windows {
        app.run(cmd).unwrap();
        let reps = 20;
        let t = Instant::now();
        for _ in 0..reps {
            term.draw(|f| grove::ui::draw(f, &app, &theme, &glyphs))
                .unwrap();
        }
        println!(
            "timeline_stack_frame_{label} {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3 / reps as f64
        );
    }
    app.run("zoom fit").unwrap();
    // Each step timed in two parts, the command (with its undo checkpoint: zoom and pan
    // are undoable) and the frame after it, so a cost that grows with the trace shows
    // which side it is on (issue 30).
    for cmd in ["zoom in", "pan right", "zoom out", "timeline next", "down"] {
        let reps = 20;
        let (mut command, mut frame) = (0.0, 0.0);
        for _ in 0..reps {
            let t = Instant::now();
            app.run(cmd).ok();
            command += t.elapsed().as_secs_f64();
            let t = Instant::now();
            term.draw(|f| grove::ui::draw(f, &app, &theme, &glyphs))
                .unwrap();
            frame += t.elapsed().as_secs_f64();
        }
        let ms = |s: f64| s * 1e3 / reps as f64;
        println!(
            "timeline_step_{} {:.3} ms (command and frame: {:.3} + {:.3} ms)",
            cmd.replace(' ', "_"),
            ms(command + frame),
            ms(command),
            ms(frame)
        );
    }
    // The tree's selection marked (`timeline mark`): the node of the selected slice,
    // the set found once, then whole-trace frames reading it.
    if let Some(i) = app.timeline.selected {
        let ev = app.profile.events.as_ref().unwrap();
        let node = ev.node[i as usize];
        let path = grove::model::paths::path_of(app.original().0, node);
        let cmd = format!("timeline mark {}", grove::app::command::quote(&path));
        let t = Instant::now();
        app.run(&cmd).unwrap();
        let marks = app.timeline.marks.as_ref().map_or(0, |m| m.count);
        println!(
            "timeline_mark {:.3} ms ({marks} instances of {path})",
            t.elapsed().as_secs_f64() * 1e3
        );
        app.run("zoom fit").unwrap();
        let reps = 20;
        let t = Instant::now();
        for _ in 0..reps {
            term.draw(|f| grove::ui::draw(f, &app, &theme, &glyphs))
                .unwrap();
        }
        println!(
            "timeline_stack_frame_whole_marked {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3 / reps as f64
        );
    }
    println!("peak_rss {:.1} MiB", peak_rss_mib());
}

fn gpu(n: usize) {
    use grove::app::panels::GpuState;
    use grove::gpu::classify::Categories;
    let p = synthetic_trace(n);
    let ev = p.events.as_ref().unwrap();
    println!("kernels {}", ev.len());
    let t = Instant::now();
    let g = GpuState::new(ev, Categories::builtin()).unwrap();
    println!(
        "gpu_index_build {:.1} ms ({} lanes)",
        t.elapsed().as_secs_f64() * 1e3,
        g.lanes.len()
    );
    let t = Instant::now();
    let rows = grove::gpu::kernels::table(
        ev,
        &g.model,
        &grove::gpu::kernels::TableOptions {
            all: false,
            by_category: false,
            sort: grove::gpu::kernels::KernelSort::Total,
        },
    );
    println!(
        "kernel_table {:.1} ms ({} rows)",
        t.elapsed().as_secs_f64() * 1e3,
        rows.len()
    );
    let width = 200 - 12;
    let (a, b) = g.span;
    for (label, window) in [
        ("zoomed_out", (a, b)),
        (
            "zoomed_1pct",
            (a + (b - a) / 2, a + (b - a) / 2 + (b - a) / 100),
        ),
        (
            "zoomed_in_100us",
            (a + (b - a) / 3, a + (b - a) / 3 + 100_000),
        ),
    ] {
        let reps = 20;
        let t = Instant::now();
        for _ in 0..reps {
            for lane in &g.lanes {
                std::hint::black_box(lane.cells(window.0, window.1, width));
            }
        }
        println!(
            "timeline_cells_{label} {:.3} ms per frame ({} lanes x {width} columns)",
            t.elapsed().as_secs_f64() * 1e3 / reps as f64,
            g.lanes.len()
        );
    }
    // A full TUI frame at 200x50 on the timeline panel.
    let mut app = App::new(p, Keymap::default_map());
    app.page = tree_rows(200, 50);
    app.run("panel timeline").unwrap();
    let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
    let glyphs = Glyphs::pick(false);
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    for (label, cmd) in [
        ("zoomed_out", "zoom fit"),
        ("zoomed_in", "zoom 100ms 100.1ms"),
    ] {
        app.run(cmd).unwrap();
        let reps = 20;
        let t = Instant::now();
        for _ in 0..reps {
            term.draw(|f| grove::ui::draw(f, &app, &theme, &glyphs))
                .unwrap();
        }
        println!(
            "timeline_frame_{label} {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3 / reps as f64
        );
    }
    app.run("panel kernels").unwrap();
    let t = Instant::now();
    app.run("kernels by mean").unwrap();
    println!(
        "kernels_resort_command {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    println!("peak_rss {:.1} MiB", peak_rss_mib());
}

/// Frames of one panel at 200x50 with the cursor moving (`down` before each frame):
/// the first frame (which derives the panel's tables) and the mean of the next ones.
fn panel_frames(app: &mut App, panel: &str, label: &str) {
    let (w, h) = (200u16, 50u16);
    app.page = tree_rows(w, h);
    let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
    let glyphs = Glyphs::pick(false);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.run(&format!("panel {panel}")).unwrap();
    let t = Instant::now();
    term.draw(|f| grove::ui::draw(f, app, &theme, &glyphs))
        .unwrap();
    println!(
        "{panel}_first_frame_{label} {:.3} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let n = 200;
    let t = Instant::now();
    for i in 0..n {
        // Down the rows, then back up: the cursor moves on every frame.
        let _ = app.run(if (i / 40) % 2 == 0 { "down" } else { "up" });
        term.draw(|f| grove::ui::draw(f, app, &theme, &glyphs))
            .unwrap();
    }
    println!(
        "{panel}_frame_{label} {:.3} ms (cursor moving, mean of {n})",
        t.elapsed().as_secs_f64() * 1e3 / n as f64
    );
}

/// The flame graph of a synthetic tree of `n` nodes at 200x50: the first frame (which
/// lays it out), frames with the cursor moving down and up the levels and sideways,
/// and the frame after a zoom (laid out again).
fn flame(n: usize) {
    let p = synthetic(n);
    println!("nodes {}", p.cct.len());
    let mut app = App::new(p, Keymap::default_map());
    // The tree's frames on the same tree, for comparison.
    panel_frames(&mut app, "tree", "synthetic");
    panel_frames(&mut app, "flame", "synthetic");
    let (w, h) = (200u16, 50u16);
    let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
    let glyphs = Glyphs::pick(false);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.run("top").unwrap();
    app.run("down 3").unwrap();
    let m = 200;
    let t = Instant::now();
    for i in 0..m {
        let _ = app.run(if (i / 3) % 2 == 0 {
            "flame right"
        } else {
            "flame left"
        });
        term.draw(|f| grove::ui::draw(f, &app, &theme, &glyphs))
            .unwrap();
    }
    println!(
        "flame_frame_sideways {:.3} ms (mean of {m})",
        t.elapsed().as_secs_f64() * 1e3 / m as f64
    );
    let t = Instant::now();
    app.run("flame zoom").unwrap();
    term.draw(|f| grove::ui::draw(f, &app, &theme, &glyphs))
        .unwrap();
    println!(
        "flame_zoom_first_frame {:.3} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    println!("peak_rss {:.1} MiB", peak_rss_mib());
}

/// An ensemble of `ranks` synthetic trees of `nodes` nodes, merged as `grove a b ...`
/// merges files.
fn synthetic_ensemble(ranks: usize, nodes: usize) -> grove::model::Profile {
    // The same tree on every rank (the generator is seeded): the union has `nodes`
    // nodes and 2 x `ranks` metric columns, the heatmap's worst case for columns.
    let profiles: Vec<grove::model::Profile> = (0..ranks).map(|_| synthetic(nodes)).collect();
    let labels: Vec<String> = (0..ranks).map(|r| format!("rank{r}")).collect();
    grove::ensemble::unify(&profiles, &labels)
}

fn panels_on(p: grove::model::Profile, label: &str) {
    let mut app = App::new(p, Keymap::default_map());
    for panel in ["summary", "heatmap"] {
        panel_frames(&mut app, panel, label);
    }
    app.run("panel tree").unwrap();
}

fn commands(n: usize) {
    let t = Instant::now();
    let p = synthetic(n);
    println!("nodes {}", p.cct.len());
    println!("build_tree {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    // The p90 of inclusive time, as in Hatchet's benchmark.
    let mut inc = p.metrics.values("time (inc)").unwrap().to_vec();
    inc.sort_by(f64::total_cmp);
    let p90 = inc[inc.len() * 9 / 10];
    let t = Instant::now();
    let mut app = App::new(p, Keymap::default_map());
    println!("open_app {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let tree = grove::query::Tree {
        cct: &app.profile.cct,
        metrics: &app.profile.metrics,
    };
    let e = grove::query::expr::parse(&format!("time (inc) > {p90}")).unwrap();
    let t = Instant::now();
    let sel = grove::query::expr::select(&e, &tree).unwrap();
    println!(
        "filter_select {:.1} ms ({} match)",
        t.elapsed().as_secs_f64() * 1e3,
        sel.iter().filter(|x| **x).count()
    );
    let q = format!("MATCH (\"*\")->(\".\", p) WHERE p.\"time (inc)\" > {p90}");
    let t = Instant::now();
    let sel = grove::query::cypher::select(&q, &tree).unwrap();
    println!(
        "hatchet_query_select {:.1} ms ({} kept)",
        t.elapsed().as_secs_f64() * 1e3,
        sel.iter().filter(|x| **x).count()
    );
    let mut table = app.profile.metrics.clone();
    let (name, def) =
        grove::transform::derive::parse_definition("ratio = time / (time (inc) + 1)").unwrap();
    let t = Instant::now();
    grove::transform::derive::derive(&mut table, &name, &def).unwrap();
    println!("derive_eval {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    for cmd in [
        format!("filter time (inc) > {p90}"),
        "undo".to_string(),
        "derive ratio = time / (time (inc) + 1)".to_string(),
        format!("filter time (inc) > {p90}"),
        "undo".to_string(),
        format!("filter --squash time (inc) > {p90}"),
        "undo".to_string(),
        format!("prune time (inc) < {p90}"),
        "sort name asc".to_string(),
        "expand-all main".to_string(),
        // Popping a filter: right after it, and with a command applied after it.
        format!("filter time (inc) > {p90}"),
        "pop-filter".to_string(),
        format!("filter time (inc) > {p90}"),
        "sort name desc".to_string(),
        "pop-filter".to_string(),
        "undo".to_string(),
    ] {
        let t = Instant::now();
        app.run(&cmd).unwrap();
        println!("command {:.1} ms  :{cmd}", t.elapsed().as_secs_f64() * 1e3);
    }
    println!("peak_rss {:.1} MiB", peak_rss_mib());
}

/// The functions table and the inverted tree of a synthetic tree of `n` nodes (issue
/// 26's bars: 200 ms and 500 ms for 1M nodes), best of 5 each.
fn functions(n: usize) {
    use grove::transform::{functions::Functions, invert};
    let p = synthetic(n);
    println!("nodes {}", p.cct.len());
    let best = |f: &mut dyn FnMut() -> usize| {
        (0..5)
            .map(|_| {
                let t = Instant::now();
                let size = f();
                (t.elapsed().as_secs_f64() * 1e3, size)
            })
            .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a })
    };
    let (ms, len) = best(&mut || Functions::of_paths(&p.cct, &p.metrics).len());
    println!("functions_table {ms:.1} ms ({len} functions)");
    let t = Functions::of_paths(&p.cct, &p.metrics);
    let hot = t.order(0, grove::transform::functions::Column::Self_, false)[0];
    let (ms, len) = best(&mut || t.callers(hot).len() + t.callees(hot).len());
    println!("callers_and_callees {ms:.1} ms ({len} edges)");
    // The tree made, not freed (the explorer keeps it): each is dropped after its time.
    let (mut ms, mut len) = (f64::INFINITY, 0);
    for _ in 0..5 {
        let t = Instant::now();
        let made = invert::invert(&p.cct, &p.metrics).unwrap();
        ms = ms.min(t.elapsed().as_secs_f64() * 1e3);
        len = made.0.len();
    }
    println!("invert {ms:.1} ms ({len} nodes)");
    // The panel: its first frame builds the table; then each cursor move selects
    // another function, whose callers and callees are made for that frame.
    let mut app = App::new(p, Keymap::default_map());
    panel_frames(&mut app, "functions", "synthetic");
    println!("peak_rss {:.1} MiB", peak_rss_mib());
}

/// An OTF2 archive (a directory or its anchor): grove's load against otf2-print.
fn otf2(path: &std::path::Path) {
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent().unwrap().to_path_buf()
    };
    let bytes = uncompressed_size(&dir);
    let t = Instant::now();
    let p = load_path(path).unwrap_or_else(|e| panic!("{e}"));
    let secs = t.elapsed().as_secs_f64();
    let events: u64 = p
        .meta_value("otf2.events")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let rss = peak_rss_mib();
    println!("archive {}", path.display());
    println!("archive_bytes {bytes} B");
    println!("events {events}");
    println!(
        "event_rows {}",
        p.events.as_ref().map(|e| e.len()).unwrap_or(0)
    );
    println!("nodes {}", p.cct.len());
    println!("load_time {secs:.3} s");
    println!("events_per_second {:.1} M/s", events as f64 / 1e6 / secs);
    println!("throughput {:.1} MB/s", bytes as f64 / 1e6 / secs);
    println!("peak_rss {rss:.1} MiB");
    println!("rss_over_archive {:.2}", rss * 1048576.0 / bytes as f64);
    for w in &p.warnings {
        println!("warning {w}");
    }
    let anchor = if path.is_dir() {
        path.join("traces.otf2")
    } else {
        path.to_path_buf()
    };
    let t = Instant::now();
    let status = std::process::Command::new("otf2-print")
        .arg(&anchor)
        .stdout(std::process::Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => {
            let print = t.elapsed().as_secs_f64();
            println!("otf2_print_time {print:.3} s");
            println!("speedup {:.1} x", print / secs);
        }
        _ => println!("otf2_print_time not measured (otf2-print not installed)"),
    }
}

/// `first-frame-cold FILE`: the phases of a cold open (no cache) of a Chrome/Kineto
/// trace. The parse and the tree build are timed apart on one read; then the TUI's path
/// on a second read: the cache write of a miss, the app with everything derived before
/// the first frame (as it was), and the app with the GPU index built behind the tree.
fn first_frame_cold(path: &std::path::Path) {
    use grove::app::background::Pending;
    use grove::gpu::classify::Categories;
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let input = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let t = Instant::now();
    let tr = grove::readers::chrome::parse(input).unwrap_or_else(|e| panic!("{e}"));
    println!("events {}", tr.events.len());
    println!("parse_events {:.0} ms", ms(t));
    let t = Instant::now();
    let tree = grove::readers::trace_cct::build(&tr);
    let cct_ms = ms(t);
    println!("cct_and_metrics {cct_ms:.0} ms ({} nodes)", tree.cct.len());
    drop((tr, tree));
    let t = Instant::now();
    let p = load_path(path).unwrap_or_else(|e| panic!("{e}"));
    println!("load_path {:.0} ms (parse, tree, names)", ms(t));
    // A miss writes the tree to the cache (before the first frame, as it was).
    let cache = std::env::temp_dir().join(format!("grove-bench-cache-{}", std::process::id()));
    std::env::set_var("XDG_CACHE_HOME", &cache);
    let t = Instant::now();
    let stored = grove::summary::cache::store(path, &p);
    let store_ms = ms(t);
    println!("cache_store {store_ms:.0} ms ({stored:?})");
    let _ = std::fs::remove_dir_all(&cache);
    let t = Instant::now();
    let g = p
        .events
        .as_ref()
        .and_then(|ev| grove::app::panels::GpuState::new(ev, Categories::builtin()));
    println!("gpu_index {:.0} ms", ms(t));
    drop(g);
    let (w, h) = (200u16, 50u16);
    let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
    let glyphs = Glyphs::pick(false);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    let mut frame = |app: &App| {
        term.draw(|f| grove::ui::draw(f, app, &theme, &glyphs))
            .unwrap();
    };
    let t = Instant::now();
    let mut app = App::new(p, Keymap::default_map());
    app.page = tree_rows(w, h);
    frame(&app);
    let before = ms(t);
    println!("app_and_frame_everything_first {before:.0} ms (app, GPU index, kernel table, frame)");
    println!(
        "parsed_to_first_frame_before {:.0} ms (tree, cache write, app, frame)",
        cct_ms + store_ms + before
    );
    drop(app);
    let mut p = load_path(path).unwrap_or_else(|e| panic!("{e}"));
    let t = Instant::now();
    let t_copy = Instant::now();
    let store = grove::load::store_later(path.to_path_buf(), &p);
    println!("tree_copy_for_the_cache {:.0} ms", ms(t_copy));
    let behind = Pending::index_then(&mut p, Categories::builtin(), store);
    let mut app = App::new(p, Keymap::default_map());
    app.background = behind;
    app.page = tree_rows(w, h);
    frame(&app);
    let after = ms(t);
    println!("app_and_frame_tree_first {after:.0} ms (tree copy for the cache, app, frame)");
    println!(
        "parsed_to_first_frame_after {:.0} ms (tree, app, frame)",
        cct_ms + after
    );
    while app.loading() {
        if !app.poll_background() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    println!(
        "events_ready_behind {:.0} ms (GPU index and cache write)",
        ms(t)
    );
    let _ = std::fs::remove_dir_all(&cache);
    println!("peak_rss {:.1} MiB", peak_rss_mib());
}

/// `resident FILE`: the memory the explorer holds once a trace is open (`VmRSS`), and
/// the peak of the load (`VmHWM`); `GROVE_LOW_MEMORY=1` selects low-memory mode.
fn resident(path: &std::path::Path) {
    let rss = || {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .unwrap_or(f64::NAN)
    };
    let t = Instant::now();
    let p = load_path(path).unwrap_or_else(|e| panic!("{e}"));
    println!("low_memory {}", grove::memory::low_memory());
    println!("load {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
    println!(
        "event_rows {}",
        p.events.as_ref().map(|e| e.len()).unwrap_or(0)
    );
    let mut app = App::new(p, Keymap::default_map());
    app.run("panel kernels").unwrap();
    println!("kernel_rows {}", app.kernels.rows.len());
    println!("resident_open {:.1} MiB", rss());
    println!("peak_rss {:.1} MiB", peak_rss_mib());
}

/// CPU time (s) of this process's threads so far, from the scheduler's statistics
/// (ns, unlike `getrusage`'s ticks): on a loaded machine the honest figure beside the
/// wall time. `thread`: the calling thread alone.
fn cpu_s(thread: bool) -> f64 {
    let run_ns = |p: &std::path::Path| -> f64 {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    if thread {
        return run_ns(std::path::Path::new("/proc/thread-self/schedstat")) / 1e9;
    }
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| run_ns(&e.path().join("schedstat")))
                .sum::<f64>()
        })
        .unwrap_or(0.0)
        / 1e9
}

/// `first-frame`: what `grove FILE...` does before its first frame, timed: the load
/// (`load_inputs_cached`, as the TUI calls it), the app, the background load of the
/// events when the tree came from the cache, and one frame on a 200x50 test terminal.
fn first_frame(args: &[String]) {
    let t0 = Instant::now();
    let warm = match args.first().map(String::as_str) {
        Some("--warm") => true,
        Some("--cold") => false,
        _ => {
            eprintln!("usage: grove-bench first-frame --warm|--cold FILE...");
            std::process::exit(2);
        }
    };
    let files: Vec<std::path::PathBuf> = args[1..].iter().map(Into::into).collect();
    let mut c = grove::load::load_inputs_cached(&files, &Default::default(), None, warm)
        .unwrap_or_else(|e| panic!("{e}"));
    let loaded = t0.elapsed().as_secs_f64();
    let from_cache = c.warm.is_some();
    let t = Instant::now();
    // As the TUI does (shell/tui.rs): a warm open's events load on a thread, a cold
    // open's GPU index is built on one, both behind the first frame.
    let cats = grove::gpu::classify::Categories::builtin();
    let behind = match c.warm.take() {
        Some(path) => Some(grove::app::background::Pending::full_load(
            path,
            cats.clone(),
        )),
        None => grove::app::background::Pending::index(&mut c.profile, cats.clone()),
    };
    let mut app = App::with_categories(c.profile, Keymap::default_map(), cats);
    app.background = behind;
    let built = t.elapsed().as_secs_f64();
    let (w, h) = (200u16, 50u16);
    let t = Instant::now();
    app.page = tree_rows(w, h);
    let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
    let glyphs = Glyphs::pick(false);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| grove::ui::draw(f, &app, &theme, &glyphs))
        .unwrap();
    let drawn = t.elapsed().as_secs_f64();
    let total = t0.elapsed().as_secs_f64();
    let (cpu_main, cpu_all) = (cpu_s(true), cpu_s(false));
    let mode = if warm { "warm" } else { "cold" };
    println!("files {}", files.len());
    println!("nodes {}", app.profile.cct.len());
    println!(
        "cache {}",
        match (warm, from_cache) {
            (false, _) => "off",
            (true, true) => "hit",
            (true, false) => "miss (entry written)",
        }
    );
    println!("load {:.3} s", loaded);
    println!("app {:.3} s", built);
    println!("frame {:.3} s", drawn);
    println!("first_frame_{mode} {total:.3} s");
    // Since the process started (the load's threads and the events loading behind
    // included in the second).
    println!("cpu_main_thread {cpu_main:.3} s");
    println!("cpu_all_threads {cpu_all:.3} s");
    println!("peak_rss {:.1} MiB", peak_rss_mib());
    // The events still loading behind are not waited for (the TUI shows the tree
    // meanwhile); nor is the app's memory handed back.
    std::process::exit(0);
}

fn main() {
    // `cargo bench` appends `--bench` to a harness-less bench's arguments.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    // `--threads N` anywhere after the mode: the Chrome reader's threads.
    let mut args = args;
    if let Some(i) = args.iter().position(|a| a == "--threads") {
        let n: usize = args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("--threads needs a number"));
        args.drain(i..i + 2);
        grove::readers::chrome::set_thread_override(None, Some(n));
    }
    match args.first().map(|s| s.as_str()) {
        Some("parse") => {
            println!("threads {}", grove::readers::chrome::threads());
            for f in &args[1..] {
                let path = std::path::Path::new(f);
                let bytes = uncompressed_size(path);
                let (cpu0, main0) = (cpu_secs("self"), cpu_secs("thread-self"));
                let t = Instant::now();
                // Plain JSON only: a compressed file would time its decoder too.
                let file = std::fs::File::open(path).unwrap();
                // The allocator as a load sets it (`readers::load_all`).
                let _alloc = grove::memory::LoadAllocator::begin();
                let tr = grove::readers::chrome::parse(file).unwrap_or_else(|e| panic!("{e}"));
                let secs = t.elapsed().as_secs_f64();
                println!("file {f}");
                println!("input_bytes {bytes} B");
                println!("events {}", tr.events.len());
                println!("parse_time {secs:.3} s");
                println!("parse_throughput {:.1} MB/s", bytes as f64 / 1e6 / secs);
                // On a loaded machine the wall time says little about threads: the CPU
                // of the whole process and of the loading thread (which handles the
                // events in order) bound what N free cores would take:
                // max(loading thread, all / N).
                let (cpu, main) = (cpu_secs("self") - cpu0, cpu_secs("thread-self") - main0);
                println!("parse_cpu {cpu:.2} s");
                println!("parse_cpu_loading_thread {main:.2} s");
                println!("peak_rss {:.1} MiB", peak_rss_mib());
            }
        }
        Some("load") => {
            println!("threads {}", grove::readers::chrome::threads());
            // GROVE_BENCH_PROGRESS=1: count the load as the TUI and a terminal's
            // stderr do (the counting reader and event counter), to measure their cost.
            let _progress = std::env::var_os("GROVE_BENCH_PROGRESS").map(|_| {
                grove::readers::progress::attach(grove::readers::progress::Progress::new())
            });
            for f in &args[1..] {
                let path = std::path::Path::new(f);
                let bytes = uncompressed_size(path);
                let t = Instant::now();
                let p = load_path(path).unwrap_or_else(|e| panic!("{e}"));
                let secs = t.elapsed().as_secs_f64();
                let events = p.events.as_ref().map(|e| e.len()).unwrap_or(0);
                println!("file {f}");
                println!("input_bytes {bytes} B");
                println!("events {events}");
                println!("nodes {}", p.cct.len());
                println!("load_time {secs:.3} s");
                println!("throughput {:.1} MB/s", bytes as f64 / 1e6 / secs);
                println!("peak_rss {:.1} MiB", peak_rss_mib());
            }
        }
        Some("frame") => {
            let path = std::path::Path::new(&args[1]);
            let p = load_path(path).unwrap_or_else(|e| panic!("{e}"));
            let mut app = App::new(p, Keymap::default_map());
            let (w, h) = (200u16, 50u16);
            app.page = tree_rows(w, h);
            let theme = Theme::builtin("default", ColorDepth::Ansi256).unwrap();
            let glyphs = Glyphs::pick(false);
            let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
            let mut time_frames = |app: &App, label: &str| {
                let n = 200;
                let t = Instant::now();
                for _ in 0..n {
                    term.draw(|f| grove::ui::draw(f, app, &theme, &glyphs))
                        .unwrap();
                }
                println!(
                    "frame_{label} {:.3} ms",
                    t.elapsed().as_secs_f64() * 1e3 / n as f64
                );
            };
            time_frames(&app, "collapsed");
            for r in app.profile.cct.root_ids() {
                let path = app.path_of(r);
                let t = Instant::now();
                app.update(Command::ExpandAll(Some(path))).unwrap();
                println!("expand_all_root {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
            }
            println!("visible_rows {}", app.tree.visible.len());
            app.update(Command::Bottom).unwrap();
            time_frames(&app, "expanded_bottom");
            let t = Instant::now();
            app.update(Command::parse("sort next").unwrap()).unwrap();
            println!("resort {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        }
        Some("timeline") => timeline_bench(&args[1]),
        Some("gpu") => {
            let n: usize = args
                .get(1)
                .and_then(|x| x.parse().ok())
                .unwrap_or(5_000_000);
            gpu(n);
        }
        Some("ensemble") => {
            // Every file of a directory, loaded in parallel and merged.
            let dir = std::path::Path::new(&args[1]);
            let files = grove::load::expand_inputs(&[dir.to_path_buf()]).unwrap();
            let bytes: u64 = files
                .iter()
                .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
                .sum();
            let t = Instant::now();
            let p = grove::load::load_ensemble(&files, &Default::default())
                .unwrap_or_else(|e| panic!("{e}"));
            let secs = t.elapsed().as_secs_f64();
            println!("files {}", files.len());
            println!("input_bytes {bytes} B");
            println!("union_nodes {}", p.cct.len());
            println!("metric_columns {}", p.metrics.names().len());
            println!("load_and_merge {secs:.2} s");
            println!("peak_rss {:.1} MiB", peak_rss_mib());
        }
        Some("panels") => {
            let arg = |i: usize, d: usize| args.get(i).and_then(|x| x.parse().ok()).unwrap_or(d);
            let (kernels, ranks, nodes) = (arg(1, 5_000_000), arg(2, 64), arg(3, 100_000));
            let t = Instant::now();
            let p = synthetic_trace(kernels);
            println!(
                "gpu_trace {kernels} kernels built in {:.1} s",
                t.elapsed().as_secs_f64()
            );
            panels_on(p, "gpu");
            let t = Instant::now();
            let p = synthetic_ensemble(ranks, nodes);
            println!(
                "ensemble {ranks} ranks, {} union nodes, built in {:.1} s",
                p.cct.len(),
                t.elapsed().as_secs_f64()
            );
            panels_on(p, "ensemble");
            println!("peak_rss {:.1} MiB", peak_rss_mib());
        }
        Some("panels-dir") => {
            let dir = std::path::Path::new(&args[1]);
            let files = grove::load::expand_inputs(&[dir.to_path_buf()]).unwrap();
            let p = grove::load::load_ensemble(&files, &Default::default())
                .unwrap_or_else(|e| panic!("{e}"));
            println!("files {} union nodes {}", files.len(), p.cct.len());
            panels_on(p, "ensemble_dir");
        }
        Some("flame") => {
            let n: usize = args
                .get(1)
                .and_then(|x| x.parse().ok())
                .unwrap_or(1_000_000);
            flame(n);
        }
        Some("otf2") => otf2(std::path::Path::new(&args[1])),
        Some("first-frame-cold") => first_frame_cold(std::path::Path::new(&args[1])),
        Some("resident") => resident(std::path::Path::new(&args[1])),
        Some("first-frame") => first_frame(&args[1..]),
        Some("functions") => {
            let n: usize = args
                .get(1)
                .and_then(|x| x.parse().ok())
                .unwrap_or(1_000_000);
            functions(n);
        }
        Some("commands") => {
            let n: usize = args
                .get(1)
                .and_then(|x| x.parse().ok())
                .unwrap_or(1_000_000);
            commands(n);
        }
        _ => {
            eprintln!("usage: grove-bench load [--threads N] FILE... | grove-bench parse [--threads N] FILE... | grove-bench frame FILE | grove-bench panels [KERNELS] [RANKS] [NODES] | grove-bench panels-dir DIR | grove-bench otf2 ARCHIVE | grove-bench commands [NODES] | grove-bench flame [NODES] | grove-bench functions [NODES] | grove-bench first-frame --warm|--cold FILE... | grove-bench first-frame-cold FILE | grove-bench resident FILE");
            std::process::exit(2);
        }
    }
}
