//! Keyboard workflows: a key script (`jjlE/attn<ret>`) goes through the real keymap and
//! `update`, renders into a fixed-size TestBackend, and is stored with insta in the
//! top-level `snapshots/` as the text plus a grid of theme roles, so colour and
//! selection regressions show as well as text ones.

mod common;

use std::path::Path;

use common::screen::screen;

struct Case<'a> {
    name: &'a str,
    file: &'a str,
    script: &'a str,
    size: (u16, u16),
    mono: bool,
    ascii: bool,
}

fn case(name: &'static str, script: &'static str) -> Case<'static> {
    Case {
        name,
        file: "testdata/small.trace.json",
        script,
        size: (120, 36),
        mono: false,
        ascii: false,
    }
}

fn check(c: Case) {
    let s = screen(c.file, c.script, c.size, c.mono, c.ascii);
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(c.name, s);
    });
}

#[test]
fn open() {
    check(case("open", ""));
}

#[test]
fn move_down() {
    check(case("move_down", "jjj"));
}

#[test]
fn hot_path() {
    check(case("hot_path", "H"));
}

#[test]
fn expand_all_then_bottom() {
    check(case("expand_all_bottom", "jEG"));
}

#[test]
fn search_and_next() {
    check(case("search_next", "/aten<ret>nn"));
}

#[test]
fn sort_cycles() {
    check(case("sort_cycle", "Hss"));
}

#[test]
fn metric_picker() {
    check(case("metric_picker", "m"));
}

#[test]
fn pick_second_metric() {
    check(case("pick_metric", "mj<ret>H"));
}

#[test]
fn help_overlay() {
    check(case("help", "?"));
}

#[test]
fn fold_and_parent() {
    check(case("fold_parent", "Hhhhu"));
}

#[test]
fn siblings() {
    check(case("siblings", "jl]]["));
}

#[test]
fn paging() {
    check(case("paging", "E<C-d><C-d><C-u>"));
}

#[test]
fn command_line_sort() {
    check(case("command_sort", ":sort name asc<ret>"));
}

#[test]
fn command_line_error() {
    check(case("command_error", ":frobnicate now<ret>"));
}

#[test]
fn filter_keeps_ancestors() {
    check(case("filter", ":filter name ~ \"^aten::(mm|addmm)\"<ret>"));
}

#[test]
fn filter_squash() {
    check(case(
        "filter_squash",
        ":filter --squash type == kernel<ret>",
    ));
}

#[test]
fn hatchet_query() {
    check(case(
        "hatchet_query",
        ":filter MATCH (\"*\")->(\".\", p) WHERE p.\"name\" STARTS WITH \"cudaLaunch\"<ret>",
    ));
}

#[test]
fn prune_aggregates() {
    check(case("prune", ":prune time (inc) < 50us<ret>E"));
}

#[test]
fn prune_then_open_aggregate() {
    check(case(
        "prune_unprune",
        ":prune time (inc) < 50us<ret>Ejjjjj<ret>",
    ));
}

#[test]
fn hide_subtree() {
    check(case(
        "hide",
        "j:hide \"python (main thread)/ProfilerStep#2/aten::item\"<ret>",
    ));
}

#[test]
fn compose_names() {
    check(case(
        "compose",
        ":compose aten::empty aten::to as alloc+copy<ret>E",
    ));
}

#[test]
fn group_by_type() {
    check(case("group_by", ":group-by type<ret>E"));
}

#[test]
fn derive_metric() {
    check(case(
        "derive",
        ":derive gpu_share = gpu_time / (time + 1)<ret>:metric gpu_share<ret>",
    ));
}

#[test]
fn focus_and_limit() {
    check(case("focus_limit", "jjz:limit 5%<ret>E"));
}

#[test]
fn undo_redo() {
    check(case(
        "undo_redo",
        ":filter leaf<ret>:sort name asc<ret>UU<C-r>",
    ));
}

#[test]
fn escape_pops_filter() {
    check(case(
        "pop_filter",
        ":filter leaf<ret>:prune count < 2<ret><Esc><Esc>",
    ));
}

#[test]
fn filter_error_caret() {
    check(case(
        "filter_error",
        ":filter time (inc) > 5 parsecs and nme ~ x<ret>",
    ));
}

#[test]
fn filter_unknown_metric_caret() {
    check(case("filter_unknown_metric", ":filter gpu_tme > 1ms<ret>"));
}

#[test]
fn command_history_and_completion() {
    check(case(
        "history_completion",
        ":sort name asc<ret>:<Up><BS><BS><BS>desc<ret>:gro<Tab>type<ret>",
    ));
}

#[test]
fn tab_completes_metrics_and_paths() {
    check(case(
        "tab_completion",
        ":focus pyt<Tab>Pro<Tab>aten::it<Tab><ret>",
    ));
}

#[test]
fn tab_lists_metric_candidates() {
    check(case("tab_metrics", ":filter gpu<Tab>"));
}

#[test]
fn kernels_panel() {
    check(case("kernels_panel", "3jj"));
}

#[test]
fn kernels_sort_cycle() {
    check(case("kernels_sort_cycle", "3ss"));
}

#[test]
fn kernels_by_category() {
    check(case("kernels_category", "3cM"));
}

#[test]
fn kernel_select_marks_tree() {
    check(case("kernel_select_tree", "3j<ret>1E"));
}

#[test]
fn timeline_panel() {
    check(case("timeline", "4"));
}

#[test]
fn timeline_zoom_pan_select() {
    check(case("timeline_zoom_pan", "4++lnn"));
}

#[test]
fn timeline_jump_to_call_path() {
    check(case("timeline_goto_launch", "4nnnn<ret>"));
}

#[test]
fn timeline_zoom_command() {
    check(case("timeline_zoom_cmd", "4:zoom 1ms 1.5ms<ret>nf"));
}

#[test]
fn timeline_cpu_lanes() {
    check(case("timeline_cpu", "4cjn"));
}

#[test]
fn timeline_idle_gaps_list() {
    check(case("timeline_gaps_list", "4Ij"));
}

#[test]
fn timeline_idle_gap_jump_and_step() {
    check(case("timeline_gaps_jump", "4Ij<ret>[]]"));
}

#[test]
fn summary_panel() {
    check(case("summary", "5"));
}

#[test]
fn heatmap_panel() {
    check(case("heatmap", "H2"));
}

#[test]
fn timeline_mono_ascii() {
    let mut c = case("timeline_mono_ascii", "4+n");
    c.mono = true;
    c.ascii = true;
    check(c);
}

fn ensemble(name: &'static str, script: &'static str) -> Case<'static> {
    let mut c = case(name, script);
    c.file = "testdata/rank0.trace.json.gz,testdata/rank1.trace.json.gz";
    c
}

#[test]
fn ensemble_open() {
    check(ensemble("ensemble_open", ""));
}

#[test]
fn ensemble_heatmap_scrolls_with_tree() {
    check(ensemble("ensemble_heatmap", "2jjlj"));
}

#[test]
fn ensemble_heatmap_norms() {
    check(ensemble("ensemble_heatmap_zscore", "2nnnjjl"));
}

#[test]
fn ensemble_heatmap_row_norm_sort() {
    check(ensemble("ensemble_heatmap_sort", "2nL<Right>s"));
}

#[test]
fn ensemble_diff_markers() {
    check(ensemble("ensemble_diff", ":diff rank0 rank1<ret>E"));
}

/// Two runs of one program (grove-gen, 1 layer and world 2 against 2 layers and world
/// 8; both rank 0, so labelled rank0#0 and rank0#1): `diff` on gpu_time, then `d`
/// four times down the ranking to the largest change a new node makes: the `new`
/// marker in its own column, the negative legend ranges with true minus signs.
fn runs(name: &'static str, script: &'static str) -> Case<'static> {
    let mut c = case(name, script);
    c.file = "testdata/rank0.trace.json.gz,testdata/demo.trace.json.gz";
    c
}

#[test]
fn diff_rank_new_marker() {
    check(runs(
        "diff_rank_new",
        ":metric gpu_time@mean<ret>:diff rank0#1 rank0#0<ret>dddd",
    ));
}

/// The other end of the ranking (`D` from the top): the largest decrease, a node only
/// the base run has (`gone`), in ASCII: `..` between the legend's signed bounds.
#[test]
fn diff_rank_gone_ascii() {
    let mut c = runs(
        "diff_rank_gone_ascii",
        ":metric gpu_time@mean<ret>:diff rank0#1 rank0#0<ret>D",
    );
    c.mono = true;
    c.ascii = true;
    check(c);
}

#[test]
fn ensemble_derive_speedup() {
    check(ensemble(
        "ensemble_derive",
        ":derive speedup = time@rank0 / time@rank1<ret>:metric speedup<ret>H",
    ));
}

#[test]
fn ensemble_metadata() {
    check(ensemble("ensemble_metadata", "5"));
}

#[test]
fn ensemble_heatmap_mono() {
    let mut c = ensemble("ensemble_heatmap_mono", "2j");
    c.mono = true;
    c.ascii = true;
    check(c);
}

#[test]
fn mono_ascii() {
    let mut c = case("mono_ascii", "H");
    c.mono = true;
    c.ascii = true;
    check(c);
}

#[test]
fn mono_ascii_help() {
    let mut c = case("mono_ascii_help", "?");
    c.mono = true;
    c.ascii = true;
    check(c);
}

#[test]
fn small_terminal() {
    let mut c = case("small_40x12", "jjl");
    c.size = (40, 12);
    check(c);
}

#[test]
fn hatchet_literal_file() {
    let Some(_) =
        std::fs::metadata(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")).ok()
    else {
        skip!()
    };
    let mut c = case("hatchet_literal", "E");
    c.file = "../shared/corpus/hatchet-exports/graph-literal.literal.json";
    check(c);
}

/// An HPCToolkit database's trace.db on the timeline; Enter jumps to the launch path.
#[test]
fn hpctoolkit_timeline_goto_launch() {
    let db = "../shared/corpus/hpctoolkit/tests/data/dbase/loops-cuda-nvidia-t.d";
    if !Path::new(env!("CARGO_MANIFEST_DIR")).join(db).is_dir() {
        skip!()
    }
    let mut c = case("hpctoolkit_timeline", "4cnn");
    c.file = db;
    check(c);
    let mut c = case("hpctoolkit_goto_launch", "4cnn<ret>");
    c.file = db;
    check(c);
}

/// A Kineto trace with the execution trace beside it (attached by name): the details
/// pane of an operator shows the ET's byte counts, schema, shapes and types.
#[test]
fn execution_trace_details() {
    check(Case {
        file: "testdata/et/chakra_small_trace.json",
        size: (160, 36),
        ..case("et_details", "jj")
    });
}

/// Issues 12 and 13 on Thicket's RAJAPerf runs (`<config>/<run>/<tuning>.cali`): the
/// directory is searched in depth, members are labelled by the parts of their paths
/// that differ, the primary metric is a time, the header keeps what is in effect, and
/// the heatmap and column headers keep the distinguishing end of a label.
#[test]
fn rajaperf_directory_of_runs() {
    let dir = "../shared/corpus/thicket/thicket/tests/data/rajaperf/lassen";
    if !Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).is_dir() {
        skip!()
    }
    let mut c = case("rajaperf_open", "j");
    c.file = dir;
    check(c);
    let mut c = case("rajaperf_heatmap", "2");
    c.file = dir;
    check(c);
    // 80x24 with a limit: the file gives way, what is in effect stays.
    let mut c = case("rajaperf_80x24_limit", ":limit 5%<ret>");
    c.file = dir;
    c.size = (80, 24);
    check(c);
    // The other convention of the statistics, said in the header.
    let mut c = case("rajaperf_stats_present", ":stats present<ret>j");
    c.file = dir;
    c.size = (160, 30);
    check(c);
    // The details pane scrolls (J/K); the metadata table scrolls sideways ({ }), the
    // columns that differ between the runs first.
    let mut c = case("rajaperf_details_scroll", "jJJ");
    c.file = dir;
    check(c);
    let mut c = case("rajaperf_metadata", "5}");
    c.file = dir;
    check(c);
}

/// An HPCToolkit database: per-thread labels in the heatmap keep their ends.
#[test]
fn hpctoolkit_heatmap_labels() {
    let db = "../shared/corpus/hpctoolkit/tests/data/dbase/loops-cputime-t.d";
    if !Path::new(env!("CARGO_MANIFEST_DIR")).join(db).is_dir() {
        skip!()
    }
    let mut c = case("hpctoolkit_heatmap_labels", "2");
    c.file = db;
    check(c);
}

/// The flame graph (an icicle) of the Kineto trace at 80x24 (no details pane) and at
/// 200x50 (with it), zoomed on `## forward ##` (two siblings right of the heaviest
/// path).
#[test]
fn flame_panel() {
    let mut c = case("flame_80x24", "6jjj");
    c.file = "testdata/rank0.trace.json.gz";
    c.size = (80, 24);
    check(c);
    let mut c = case("flame_200x50", "6jjll<Enter>j");
    c.file = "testdata/rank0.trace.json.gz";
    c.size = (200, 50);
    check(c);
}

/// Zoomed on a callgrind file (a breadcrumb row of the zoom root's ancestors), then
/// flipped to the classic flame graph, with a search's matches highlighted.
#[test]
fn flame_zoom_flip_search() {
    let mut c = case("flame_zoom_flip", "6jjj<Enter>f/fib<ret>");
    c.file = "testdata/callgrind/rec.callgrind.out";
    c.size = (120, 30);
    check(c);
}

/// The mono theme in ASCII: heat as glyph density, `:` for shaded runs.
#[test]
fn flame_mono_ascii() {
    let mut c = case("flame_mono_ascii", "6jj");
    c.file = "testdata/rank0.trace.json.gz";
    c.size = (100, 24);
    c.mono = true;
    c.ascii = true;
    check(c);
}

/// The differential flame graph: widths from rank1, colours from diff (inc), the legend
/// saying which colour is slower.
#[test]
fn flame_diff() {
    let mut c = ensemble("flame_diff", ":diff rank1 rank0<ret>6j");
    c.size = (120, 30);
    check(c);
}

/// The functions panel on the callgrind run at 80x24 (no details pane): the table by
/// self, `fib'2` selected, its callers and callees below with the callers focused; and
/// on the Kineto trace at 200x50, sorted by inclusive, with the callees focused.
#[test]
fn functions_panel() {
    let mut c = case("functions_80x24", "7jjhj");
    c.file = "testdata/callgrind/rec.callgrind.out";
    c.size = (80, 24);
    check(c);
    let mut c = case("functions_200x50", "7sjjjjl");
    c.file = "testdata/rank0.trace.json.gz";
    c.size = (200, 50);
    check(c);
}

/// The functions panel's small call graph (`g`): `fib'2`'s callers above it, its
/// callees below, its own recursion marked; in colour at 80x24 and in the mono theme in
/// ASCII at 100x30 on the Kineto trace.
#[test]
fn functions_graph() {
    let mut c = case("functions_graph_80x24", "7jjg");
    c.file = "testdata/callgrind/rec.callgrind.out";
    c.size = (80, 24);
    check(c);
    let mut c = case("functions_graph_mono_ascii", "7jgl");
    c.file = "testdata/rank0.trace.json.gz";
    c.size = (100, 30);
    c.mono = true;
    c.ascii = true;
    check(c);
}

/// The flame graph coloured by kind (`c`) on the Kineto trace, and by module on the
/// callgrind file (`cc`): each category on a slot of the palette, the legend listing
/// them heaviest first.
#[test]
fn flame_colour_by_category() {
    let mut c = case("flame_colour_kind", "6c");
    c.file = "testdata/rank0.trace.json.gz";
    c.size = (120, 30);
    check(c);
    let mut c = case("flame_colour_module", "6cc");
    c.file = "testdata/callgrind/rec.callgrind.out";
    c.size = (120, 30);
    check(c);
}

/// Issue 27 on a real H100 trace (TraceLens' Falconsai run): the summary panel as
/// charts and back to the tables, and the kernel panel whose cuBLAS/CUTLASS names
/// collide at 80 columns, at 80x24 and 200x50, in colour and in mono ASCII.
#[test]
fn h100_summary_charts_and_kernels() {
    let file = "../shared/corpus/tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz";
    if !Path::new(env!("CARGO_MANIFEST_DIR")).join(file).is_file() {
        skip!()
    }
    for (name, script) in [("summary_charts", "5"), ("kernels_names", "3jjjj")] {
        for (size, tag) in [((80, 24), "80x24"), ((200, 50), "200x50")] {
            for (mono, ascii, look) in [(false, false, ""), (true, true, "_mono_ascii")] {
                let leaked: &'static str =
                    Box::leak(format!("h100_{name}_{tag}{look}").into_boxed_str());
                check(Case {
                    name: leaked,
                    file,
                    script,
                    size,
                    mono,
                    ascii,
                });
            }
        }
    }
    // The charts scrolled to the histograms, and the tables behind `t`.
    let mut c = case("h100_summary_charts_scrolled", "5<C-d><C-d><C-d><C-d><C-d>");
    c.file = file;
    c.size = (80, 24);
    check(c);
    let mut c = case("h100_summary_tables", "5t");
    c.file = file;
    c.size = (200, 50);
    check(c);
}

/// The summary charts of a trace with communication kernels (the demo's all-reduce):
/// the overlap chart, scrolled to it.
#[test]
fn summary_charts_with_communication() {
    let mut c = case("summary_charts_comm", "5<C-d>");
    c.file = "testdata/demo.trace.json.gz";
    check(c);
}

/// The timeline's stack chart on a CUDA (H100) trace: CPU lanes shown, a window where
/// kernels and CPU ops are named boxes, the cursor moved down a depth and along a row,
/// the selected kernel's launch marked on its CPU lane.
fn stack_chart(name: &'static str, size: (u16, u16), plain: bool) -> Case<'static> {
    let mut c = case(name, "4c:zoom 2.55ms 2.9ms<ret>jj<Right>kk<Right>");
    c.size = size;
    c.mono = plain;
    c.ascii = plain;
    c
}

#[test]
fn timeline_stack_80x24() {
    check(stack_chart("timeline_stack_80x24", (80, 24), false));
}

#[test]
fn timeline_stack_80x24_ascii() {
    check(stack_chart("timeline_stack_80x24_ascii", (80, 24), true));
}

#[test]
fn timeline_stack_200x50() {
    check(stack_chart("timeline_stack_200x50", (200, 50), false));
}

#[test]
fn timeline_stack_200x50_ascii() {
    check(stack_chart("timeline_stack_200x50_ascii", (200, 50), true));
}

/// The flame graph and the functions panel in the mono theme in ASCII at 80x24 and
/// 200x50 (their colour snapshots are above).
#[test]
fn flame_and_functions_ascii() {
    for (size, tag) in [((80, 24), "80x24"), ((200, 50), "200x50")] {
        for (panel, script, file) in [
            ("flame", "6jj", "testdata/rank0.trace.json.gz"),
            ("functions", "7jjh", "testdata/callgrind/rec.callgrind.out"),
        ] {
            let name: &'static str =
                Box::leak(format!("{panel}_{tag}_mono_ascii").into_boxed_str());
            check(Case {
                name,
                file,
                script,
                size,
                mono: true,
                ascii: true,
            });
        }
    }
}

/// Issue 27: the timeline's stack chart on a ROCm (MI300), an OTF2 (CPU-only, MPI
/// ping-pong) and an XPlane (TensorFlow, multi-GPU) input of the shared corpus, at a
/// window where kernels (MPI calls) are ten cells wide or more, at 80x24 and 200x50,
/// in colour and in mono ASCII.
#[test]
fn timeline_stack_rocm_otf2_xplane() {
    let inputs = [
        (
            "rocm",
            "../shared/corpus/tracelens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
            "4c:zoom 1.55ms 1.7ms<ret><Left>",
        ),
        (
            "otf2",
            "../shared/corpus/pipit/pipit/tests/data/ping-pong-otf2",
            "4:zoom 194.6ms 199.6ms<ret>j<Right>",
        ),
        (
            "xplane",
            "../shared/corpus/tensorflow-profiler/demo/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb",
            "4:zoom 1800.1ms 1800.5ms<ret>jj<Right>",
        ),
    ];
    for (tag, file, script) in inputs {
        if !Path::new(env!("CARGO_MANIFEST_DIR")).join(file).exists() {
            skip!()
        }
        for (size, dims) in [((80, 24), "80x24"), ((200, 50), "200x50")] {
            for (plain, look) in [(false, ""), (true, "_ascii")] {
                let name: &'static str =
                    Box::leak(format!("timeline_stack_{tag}_{dims}{look}").into_boxed_str());
                check(Case {
                    name,
                    file,
                    script,
                    size,
                    mono: plain,
                    ascii: plain,
                });
            }
        }
    }
}
