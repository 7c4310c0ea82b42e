//! The command table: one declaration per command. Its name and aliases, how its
//! arguments read, its help text, whether it is logged, whether Esc can take it back,
//! which panel it belongs to and how Tab completes it are declared here once;
//! parsing, printing, completion, logging and `apply`'s dispatch are derived from it.
//! The handlers live in one file per family, named like the `Family` values; a
//! command with a handler and state of its own has its own file (`stats`, `scroll`,
//! `gaps`), and a panel's own commands (`flame`, `functions`, `sql`, the timeline's)
//! live with the panel, in `app/panels/NAME.rs`.

use std::fmt;

use super::command::{Command, Input, ParseError};

mod ensemble;
mod fold;
pub mod gaps;
mod navigate;
mod panels;
mod reshape;
mod scroll;
pub(crate) use scroll::shifted;
mod session;
mod stats;
mod view;

pub use reshape::query_error;

/// Which file holds the command's parser, printer and handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Navigate,
    Fold,
    View,
    Reshape,
    Session,
    Panels,
    Ensemble,
}

/// Whether a command is written to the session log, and kept for undo.
#[derive(Debug, Clone, Copy)]
pub enum Log {
    /// Never logged: it opens an overlay, leaves, or writes a file.
    Ui,
    /// Moves a cursor: logged only with `--log-nav`, never undone.
    Nav,
    /// Works on the undo stack itself: logged, not kept on it.
    History,
    /// Changes what is shown: logged and kept for undo.
    View,
    /// Depends on the form (e.g. `heatmap column` moves, `heatmap norm` changes).
    ByForm(fn(&Command) -> Log),
}

impl Log {
    pub fn of(self, cmd: &Command) -> Log {
        match self {
            Log::ByForm(f) => f(cmd),
            other => other,
        }
    }

    pub fn changes_view(self) -> bool {
        matches!(self, Log::View | Log::History)
    }
}

/// What Tab offers for the command's argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Complete {
    None,
    /// A node path, one segment at a time.
    Path,
    /// Metric names and node attributes (sort keys, expressions).
    Metric,
    /// File names under the working directory.
    File,
    /// `export`: the formats with a tree writer (`export::formats`), then a file name.
    Export,
    Words(&'static [&'static str]),
    /// The panels' names (`app::panels::PANELS`), `next` and `prev`.
    Panels,
}

pub type ParseFn = fn(&Input) -> Result<Command, ParseError>;
pub type PrintFn = fn(&Command, &mut fmt::Formatter<'_>) -> fmt::Result;

pub struct Spec {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// The arguments, as the help and the docs show them.
    pub usage: &'static str,
    pub help: &'static str,
    pub family: Family,
    pub log: Log,
    /// Esc (`pop-filter`) can take it back.
    pub pops: bool,
    /// It rebuilds the tree (the status line counts these as "reshaped").
    pub rebuilds: bool,
    /// The panel it acts on, when not the tree.
    pub panel: Option<&'static str>,
    pub complete: Complete,
    /// A canonical text, used by the round-trip test and as the docs' example.
    pub example: &'static str,
    pub parse: ParseFn,
    pub print: PrintFn,
}

/// A spec with the defaults most commands share; each entry overrides what differs.
const fn base(name: &'static str, family: Family, parse: ParseFn, print: PrintFn) -> Spec {
    Spec {
        name,
        aliases: &[],
        usage: "",
        help: "",
        family,
        log: Log::View,
        pops: false,
        rebuilds: false,
        panel: None,
        complete: Complete::None,
        example: name,
        parse,
        print,
    }
}

macro_rules! spec {
    ($name:literal, $fam:ident, $parse:expr, $print:expr, { $($k:ident : $v:expr),* $(,)? }) => {
        Spec { $($k: $v,)* ..base($name, Family::$fam, $parse, $print) }
    };
}

use crate::app::panels::{panel_help, registry};
use Complete as C;

/// Every command grove knows, in the order help and completion list them.
pub static SPECS: &[Spec] = &[
    spec!("down", Navigate, navigate::parse_down, navigate::print, { aliases: &["j"], usage: "[N]", help: "move the cursor down [N rows]", log: Log::Nav, example: "down 5" }),
    spec!("up", Navigate, navigate::parse_up, navigate::print, { aliases: &["k"], usage: "[N]", help: "move the cursor up [N rows]", log: Log::Nav }),
    spec!("page-down", Navigate, |i| i.no_args(Command::PageDown), navigate::print, { help: "move one page down", log: Log::Nav }),
    spec!("page-up", Navigate, |i| i.no_args(Command::PageUp), navigate::print, { help: "move one page up", log: Log::Nav }),
    spec!("half-page-down", Navigate, |i| i.no_args(Command::HalfPageDown), navigate::print, { help: "move half a page down", log: Log::Nav }),
    spec!("half-page-up", Navigate, |i| i.no_args(Command::HalfPageUp), navigate::print, { help: "move half a page up", log: Log::Nav }),
    spec!("top", Navigate, |i| i.no_args(Command::Top), navigate::print, { help: "go to the first row", log: Log::Nav }),
    spec!("bottom", Navigate, |i| i.no_args(Command::Bottom), navigate::print, { help: "go to the last row", log: Log::Nav }),
    spec!("parent", Navigate, |i| i.no_args(Command::Parent), navigate::print, { help: "go to the parent node", log: Log::Nav }),
    spec!("next-sibling", Navigate, |i| i.no_args(Command::NextSibling), navigate::print, { help: "go to the next sibling", log: Log::Nav }),
    spec!("prev-sibling", Navigate, |i| i.no_args(Command::PrevSibling), navigate::print, { help: "go to the previous sibling", log: Log::Nav }),
    spec!("select", Navigate, |i| Ok(Command::Select(i.rest("a node path")?)), navigate::print, { usage: "PATH", help: "move the cursor to PATH", log: Log::Nav, complete: C::Path, example: "select main/solve" }),
    spec!("toggle", Fold, |i| Ok(Command::Toggle(i.opt_path())), fold::print, { usage: "[PATH]", help: "open or close a fold [PATH]", complete: C::Path }),
    spec!("expand", Fold, |i| Ok(Command::Expand(i.opt_path())), fold::print, { usage: "[PATH]", help: "open a fold [PATH]", complete: C::Path, example: "expand \"thread 1 (python)/ProfilerStep#2\"" }),
    spec!("collapse", Fold, |i| Ok(Command::Collapse(i.opt_path())), fold::print, { usage: "[PATH]", help: "close a fold [PATH]", complete: C::Path }),
    spec!("collapse-or-parent", Fold, |i| i.no_args(Command::CollapseOrParent), fold::print, { help: "close the fold, or go to the parent when closed" }),
    spec!("expand-children", Fold, |i| Ok(Command::ExpandChildren(i.opt_path())), fold::print, { usage: "[PATH]", help: "open a node and its children [PATH]", complete: C::Path }),
    spec!("collapse-children", Fold, |i| Ok(Command::CollapseChildren(i.opt_path())), fold::print, { usage: "[PATH]", help: "close the children of a node [PATH]", complete: C::Path }),
    spec!("expand-all", Fold, |i| Ok(Command::ExpandAll(i.opt_path())), fold::print, { usage: "[PATH]", help: "open a whole subtree [PATH]", complete: C::Path }),
    spec!("collapse-all", Fold, |i| Ok(Command::CollapseAll(i.opt_path())), fold::print, { usage: "[PATH]", help: "close a whole subtree [PATH]", complete: C::Path }),
    spec!("hot-path", Fold, |i| Ok(Command::HotPath(i.opt_path())), fold::print, { usage: "[PATH]", help: "follow the heaviest child repeatedly [PATH]", complete: C::Path, example: "hot-path main" }),
    spec!("search", Navigate, |i| Ok(Command::Search(i.rest("a text to search for")?)), navigate::print, { usage: "TEXT", help: "find nodes whose name contains TEXT", example: "search \"a \\\"b\\\"\"" }),
    spec!("search-next", Navigate, |i| i.no_args(Command::SearchNext), navigate::print, { help: "go to the next match", log: Log::Nav }),
    spec!("search-prev", Navigate, |i| i.no_args(Command::SearchPrev), navigate::print, { help: "go to the previous match", log: Log::Nav }),
    spec!("sort", View, view::parse_sort, view::print, { usage: "next | KEY [asc|desc]", help: "sort siblings: next | METRIC|name|data [asc|desc]", complete: C::Metric, example: "sort \"time (inc)\" desc" }),
    spec!("metric", View, |i| Ok(Command::Metric(view::metric_choice(i, false)?)), view::print, { usage: "next | NAME", help: "primary metric: next | NAME", complete: C::Metric, example: "metric gpu_time" }),
    spec!("metric2", View, |i| Ok(Command::Metric2(view::metric_choice(i, true)?)), view::print, { usage: "next | NAME | off", help: "second metric: next | NAME | off", complete: C::Metric, example: "metric2 off" }),
    spec!("pick-metric", View, |i| i.no_args(Command::PickMetric), view::print, { help: "choose the primary metric from a list", log: Log::Ui }),
    spec!("prompt", View, view::parse_prompt, view::print, { usage: "search | command", help: "open the input line: search | command", log: Log::Ui, complete: C::Words(&["search", "command"]), example: "prompt search" }),
    spec!("help", View, |i| i.no_args(Command::Help), view::print, { help: "show the keys and their commands", log: Log::Ui }),
    spec!("filter", Reshape, reshape::parse_filter, reshape::print, { usage: "[--squash] EXPR | QUERY", help: "keep nodes matching EXPR (or a Hatchet query) and their ancestors; --squash re-parents", pops: true, rebuilds: true, complete: C::Metric, example: "filter time (inc) > 5% and name ~ \"^Calc\"" }),
    spec!("squash", Reshape, |i| i.no_args(Command::Squash), reshape::print, { help: "squash the last filter: re-parent matches to their nearest kept ancestor", pops: true, rebuilds: true }),
    spec!("invert", Reshape, |i| i.no_args(Command::Invert), reshape::print, { help: "the bottom-up tree: functions with self cost as roots, their callers below (undo to go back)", rebuilds: true, example: "invert" }),
    spec!("prune", Reshape, reshape::parse_prune, reshape::print, { usage: "METRIC < VALUE | off", help: "hide nodes where METRIC < VALUE, one aggregate row per run of siblings; prune off", pops: true, complete: C::Metric, example: "prune time (inc) < 1ms" }),
    spec!("unprune", Reshape, |i| Ok(Command::Unprune(i.rest("a node path")?)), reshape::print, { usage: "PATH", help: "show the pruned children of PATH", complete: C::Path, example: "unprune main" }),
    spec!("hide", Reshape, |i| Ok(Command::Hide(i.rest("a node path")?)), reshape::print, { usage: "PATH", help: "elide the subtree at PATH", pops: true, complete: C::Path, example: "hide main/solve" }),
    spec!("show", Reshape, |i| Ok(Command::Show(i.rest("a node path")?)), reshape::print, { usage: "PATH", help: "undo hide PATH", complete: C::Path, example: "show main/solve" }),
    spec!("compose", Reshape, reshape::parse_compose, reshape::print, { usage: "NAME1 NAME2 ... as NEW", help: "NAME1 NAME2 ... as NEW: treat those functions as one", rebuilds: true, example: "compose MPI_Send MPI_Isend as send" }),
    spec!("group-by", Reshape, |i| Ok(Command::GroupBy(i.rest("an attribute (module, file, type, ...)")?)), reshape::print, { usage: "ATTR", help: "aggregate by an attribute (module, file, type, ...)", rebuilds: true, complete: C::Metric, example: "group-by module" }),
    spec!("derive", Reshape, reshape::parse_derive, reshape::print, { usage: "NAME = EXPR", help: "NAME = EXPR: a new metric from arithmetic on metrics", complete: C::Metric, example: "derive ratio = gpu_time / time" }),
    spec!("focus", Reshape, |i| Ok(Command::Focus(i.opt_path())), reshape::print, { usage: "[PATH]", help: "show only the subtree at PATH", pops: true, complete: C::Path, example: "focus main" }),
    spec!("unfocus", Reshape, |i| i.no_args(Command::Unfocus), reshape::print, { help: "show the whole tree again" }),
    spec!("limit", Reshape, reshape::parse_limit, reshape::print, { usage: "N% | off", help: "hide what is below a share of the total: limit 1% | limit off", pops: true, complete: C::Words(&["off"]), example: "limit 1.5%" }),
    spec!("undo", Session, |i| i.no_args(Command::Undo), session::print, { help: "undo the last change", log: Log::History }),
    spec!("redo", Session, |i| i.no_args(Command::Redo), session::print, { help: "redo what undo undid", log: Log::History }),
    spec!("reset", Session, |i| i.no_args(Command::Reset), session::print, { help: "back to the tree as loaded", log: Log::History }),
    spec!("pop-filter", Session, |i| i.no_args(Command::PopFilter), session::print, { help: "drop the latest filter, prune, limit or focus", log: Log::History }),
    spec!("source", Session, |i| Ok(Command::Source(i.rest("a file")?)), session::print, { usage: "FILE", help: "run the commands of a session or text file", complete: C::File, example: "source steps.txt" }),
    spec!("export", Session, session::parse_export, session::print, { usage: "FORMAT FILE", help: crate::export::formats::EXPORT_HELP, log: Log::Ui, complete: C::Export, example: "export csv out.csv" }),
    spec!("save", Session, |i| Ok(Command::Save(i.rest("a file")?)), session::print, { usage: "FILE", help: "write the session so far to FILE", log: Log::Ui, complete: C::File, example: "save \"my session.jsonl\"" }),
    spec!("panel", Panels, panels::parse_panel, panels::print, { usage: "NAME | next | prev", help: registry!(panel_help), complete: C::Panels, example: "panel timeline" }),
    spec!("kernels", Panels, panels::parse_kernels, panels::print, { usage: "[top N|all] [by KEY] [memory on|off] [group name|category]", help: "kernel table: [top N|all] [by total|mean|count|next] [memory on|off] [group name|category]", panel: Some("kernels"), complete: C::Words(&["top", "all", "by", "memory", "group"]), example: "kernels top 20 by mean memory on group category" }),
    spec!("select-kernel", Panels, panels::parse_select_kernel, panels::print, { usage: "[NAME]", help: "select a kernel by name (marks its call paths and instances)", panel: Some("kernels"), example: "select-kernel \"void foo<int>(int)\"" }),
    spec!("flame", Panels, panels::parse_flame, panels::print, { usage: "zoom [PATH] | out | flip | colour heat|kind|module|next | left | right", help: "flame graph: zoom [PATH] so a frame spans the width | out (the zoom before) | flip (roots on top or at the bottom) | colour (by heat, the frame's kind or its module/file) | left | right (siblings)", log: Log::ByForm(flame_log), panel: Some("flame"), complete: C::Words(&["zoom", "out", "flip", "colour", "left", "right"]), example: "flame zoom main/solve" }),
    spec!("functions", Panels, panels::parse_functions, panels::print, { usage: "sort next|self|inclusive|calls|name | focus next|table|callers|callees | enter | tree | graph", help: "functions panel: sort by a column | focus the table, callers or callees | enter (select the caller or callee in the table) | tree (the tree filtered to every call path of the function) | graph (callers above, callees below, cycles marked; again: side by side)", log: Log::ByForm(functions_log), panel: Some("functions"), complete: C::Words(&["sort", "focus", "enter", "tree", "graph"]), example: "functions sort inclusive" }),
    spec!("summary", Panels, panels::parse_summary, panels::print, { usage: "charts | tables | toggle", help: "summary panel: charts (stacked bars, histograms) | tables (HTA's tables, as grove summary prints them) | toggle", panel: Some("summary"), complete: C::Words(&["charts", "tables", "toggle"]), example: "summary tables" }),
    spec!("sql", Panels, crate::app::panels::sql::parse, crate::app::panels::sql::print, { usage: "QUERY | sort COLUMN|next [asc|desc] | sort reverse | open | filter", help: "SQL over the trace's tables (docs/sql.md): QUERY opens the answer | sort | open (go to the row's node, event or function) | filter (keep the answer's nodes)", log: Log::ByForm(crate::app::panels::sql::log), panel: Some("sql"), example: "sql select name, count(*), sum(duration) from kernels group by name" }),
    spec!("zoom", Panels, panels::parse_zoom, panels::print, { usage: "START END | in | out | fit | kernel", help: "timeline window: zoom START END | in | out | fit | kernel", panel: Some("timeline"), complete: C::Words(&["in", "out", "fit", "kernel"]), example: "zoom 12.5ms 14ms" }),
    spec!("pan", Panels, |i| Ok(Command::Pan(i.word(&["left", "right"], "expected left or right")? == "right")), panels::print, { usage: "left | right", help: "move the timeline window: pan left | right", panel: Some("timeline"), complete: C::Words(&["left", "right"]), example: "pan left" }),
    spec!("lanes", Panels, |i| Ok(Command::Lanes(i.word(&["gpu", "all"], "expected gpu or all")? == "all")), panels::print, { usage: "gpu | all", help: "timeline lanes: gpu | all (CPU threads too)", panel: Some("timeline"), complete: C::Words(&["gpu", "all"]), example: "lanes all" }),
    spec!("next-kernel", Panels, |i| i.no_args(Command::NextKernel), panels::print, { help: "next kernel on the timeline lane", log: Log::Nav, panel: Some("timeline") }),
    spec!("prev-kernel", Panels, |i| i.no_args(Command::PrevKernel), panels::print, { help: "previous kernel on the timeline lane", log: Log::Nav, panel: Some("timeline") }),
    spec!("goto-launch", Panels, |i| i.no_args(Command::GotoLaunch), panels::print, { help: "show the call path that launched the selected kernel", panel: Some("timeline") }),
    spec!("timeline", Panels, crate::app::panels::timeline::parse, crate::app::panels::timeline::print, { usage: "next | prev | collapse [LANE] | hide [LANE] | restore | step N | link", help: "timeline stack chart: next|prev slice on the cursor's row | collapse [LANE] (the lane, the cursor's without one, to one row, or back) | hide [LANE] | restore (every lane, expanded) | step N (fit ProfilerStep#N) | link (to the selected kernel's launch, or back)", log: Log::ByForm(crate::app::panels::timeline::log), panel: Some("timeline"), complete: C::Words(&["next", "prev", "collapse", "hide", "restore", "step", "link"]), example: "timeline step 3" }),
    spec!("gap", Panels, gaps::parse_gap, gaps::print, { usage: "next [MIN] | prev [MIN] | at LANE TIME", help: "timeline idle gap: next|prev [MIN] on the cursor's lane (at least MIN, default the last one or 30us) | at LANE TIME", log: Log::ByForm(gap_log), panel: Some("timeline"), complete: C::Words(&["next", "prev", "at"]), example: "gap next 1ms" }),
    spec!("gaps", Panels, gaps::parse_gaps, gaps::print, { usage: "[N] [--min DUR]", help: "list the N longest idle gaps of each GPU stream, with the CPU call path open then; Enter jumps to one", log: Log::Ui, panel: Some("timeline"), complete: C::Words(&["--min"]), example: "gaps 5 --min 100us" }),
    spec!("heatmap", Ensemble, ensemble::parse_heatmap, ensemble::print, { usage: "norm MODE | sort | column next|prev", help: "heatmap: norm row|column|global|zscore|next | sort | column next|prev", log: Log::ByForm(ensemble::heatmap_log), panel: Some("heatmap"), complete: C::Words(&["norm", "sort", "column"]), example: "heatmap norm zscore" }),
    spec!("diff", Ensemble, ensemble::parse_diff, ensemble::print, { usage: "A B", help: "A B: metric@A - metric@B, with markers for nodes in one profile only", example: "diff gcc llvm" }),
    spec!("diff-next", Ensemble, |i| i.no_args(Command::DiffStep(true)), ensemble::print, { help: "go to the next node of the diff's ranking (largest increase first)", log: Log::Nav }),
    spec!("diff-prev", Ensemble, |i| i.no_args(Command::DiffStep(false)), ensemble::print, { help: "go to the previous node of the diff's ranking", log: Log::Nav }),
    spec!("meta", Ensemble, ensemble::parse_meta, ensemble::print, { usage: "KEY = VALUE | KEY ~ REGEX | off", help: "filter ensemble members by metadata: meta KEY = VALUE | KEY ~ REGEX | off", example: "meta compiler = gcc" }),
    spec!("stats", Ensemble, stats::parse, stats::print, { usage: "zero | present", help: "ensemble statistics: a node a profile lacks counts as 0 (zero, for additive metrics) or is left out (present)", complete: C::Words(&["zero", "present"]), example: "stats present" }),
    spec!("scroll", View, scroll::parse, scroll::print, { usage: "details N | table N", help: "scroll the details pane down (N > 0) or up, or the summary/metadata table right or left", log: Log::Nav, complete: C::Words(&["details", "table"]), example: "scroll details 5" }),
    spec!("toggle-pane", View, scroll::parse_toggle, scroll::print, { usage: "details | count", help: "hide or show the details pane, or the tree's count column (the names get their width)", complete: C::Words(&["details", "count"]), example: "toggle-pane details" }),
    spec!("messages", View, |i| i.no_args(Command::Messages), view::print, { help: "list every message in full: load warnings, then this run's warnings and errors", log: Log::Ui }),
    spec!("quit", View, |i| i.no_args(Command::Quit), view::print, { aliases: &["q"], help: "leave grove", log: Log::Ui }),
];

/// Stepping to a gap moves the cursor; a jump to a named gap changes the window.
fn flame_log(c: &Command) -> Log {
    match c {
        Command::Flame(super::command::FlameCmd::Left | super::command::FlameCmd::Right) => {
            Log::Nav
        }
        _ => Log::View,
    }
}

/// Sorting changes the view; moving the focus or the selection moves a cursor; `tree`
/// logs the filter and the panel switch it runs, not itself.
fn functions_log(c: &Command) -> Log {
    match c {
        Command::Functions(
            super::command::FunctionsCmd::Sort(_) | super::command::FunctionsCmd::Graph,
        ) => Log::View,
        Command::Functions(super::command::FunctionsCmd::Tree) => Log::Ui,
        _ => Log::Nav,
    }
}

fn gap_log(c: &Command) -> Log {
    match c {
        Command::Gap(super::command::GapSpec::At(..)) => Log::View,
        _ => Log::Nav,
    }
}

impl super::App {
    /// Runs one command: the table says which family's handler takes it. Returns the
    /// canonical command to log (explicit paths instead of the cursor), if any.
    pub(super) fn apply(&mut self, cmd: Command) -> Result<Option<Command>, super::CmdError> {
        match cmd.spec().family {
            Family::Navigate => self.navigate(cmd),
            Family::Fold => self.fold_command(cmd),
            Family::View => self.view_command(cmd),
            Family::Reshape => self.reshape(cmd),
            Family::Session => self.session_command(cmd),
            Family::Panels => self.panel_command(cmd),
            Family::Ensemble => self.compare_command(cmd),
        }
    }
}

/// The entry for a name or an alias.
pub fn lookup(word: &str) -> Option<&'static Spec> {
    SPECS
        .iter()
        .find(|s| s.name == word || s.aliases.contains(&word))
}

/// The entry for a canonical name.
pub fn spec(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == name)
}

/// Command names with their one-line help, for the help overlay and completion.
pub fn names() -> impl Iterator<Item = (&'static str, &'static str)> {
    SPECS.iter().map(|s| (s.name, s.help))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_round_trips() {
        for s in SPECS {
            let c = Command::parse(s.example).unwrap_or_else(|e| panic!("{}: {e}", s.example));
            assert_eq!(c.name(), s.name, "{c:?}");
            assert_eq!(c.to_string(), s.example, "{c:?}");
            assert_eq!(Command::parse(&c.to_string()).unwrap(), c);
            for a in s.aliases {
                assert_eq!(lookup(a).map(|x| x.name), Some(s.name));
            }
        }
    }

    #[test]
    fn names_are_unique() {
        for (i, s) in SPECS.iter().enumerate() {
            for t in &SPECS[i + 1..] {
                assert_ne!(s.name, t.name);
                assert!(!t.aliases.contains(&s.name) && !s.aliases.contains(&t.name));
            }
        }
    }

    /// The decisions that used to be separate lists, now read from the table.
    #[test]
    fn logging_and_pop_filter_follow_the_table() {
        let p = |t: &str| Command::parse(t).unwrap();
        // Not view changes (the old `changes_view` list).
        for t in [
            "down",
            "page-up",
            "bottom",
            "parent",
            "next-sibling",
            "select a",
            "search-next",
            "help",
            "pick-metric",
            "prompt command",
            "quit",
            "export csv x",
            "save x",
            "next-kernel",
            "prev-kernel",
            "heatmap column next",
        ] {
            assert!(!p(t).changes_view(), "{t}");
        }
        // Never logged, even with --log-nav (the old `ui_only` list).
        for t in [
            "quit",
            "prompt search",
            "help",
            "pick-metric",
            "export csv x",
            "save x",
        ] {
            assert!(matches!(p(t).log(), Log::Ui), "{t}");
        }
        for t in ["undo", "redo", "reset", "pop-filter"] {
            assert!(matches!(p(t).log(), Log::History), "{t}");
        }
        for t in [
            "heatmap norm row",
            "heatmap sort",
            "search x",
            "hot-path",
            "source f",
        ] {
            assert!(matches!(p(t).log(), Log::View), "{t}");
        }
        // What Esc can pop (the old `is_filter_like`, which split the text).
        for t in [
            "filter leaf",
            "squash",
            "prune time < 1",
            "limit 1%",
            "focus a",
            "hide a",
        ] {
            assert!(p(t).is_filter_like(), "{t}");
        }
        for t in [
            "prune off",
            "limit off",
            "show a",
            "unfocus",
            "compose a as b",
            "derive x = time",
        ] {
            assert!(!p(t).is_filter_like(), "{t}");
        }
        for t in ["filter leaf", "squash", "compose a as b", "group-by module"] {
            assert!(p(t).rebuilds(), "{t}");
        }
    }

    #[test]
    fn expressions_are_parsed_with_the_command() {
        use crate::app::command::Selector;
        match Command::parse("filter time > 3").unwrap() {
            Command::Filter { query, .. } => assert!(matches!(query.value, Selector::Expr(_))),
            c => panic!("{c:?}"),
        }
        match Command::parse("filter MATCH (\"*\")->(\".\", p)").unwrap() {
            Command::Filter { query, .. } => {
                assert!(matches!(query.value, Selector::Hatchet(Some(_))))
            }
            c => panic!("{c:?}"),
        }
        match Command::parse("derive r = a / b").unwrap() {
            Command::Derive(d) => assert_eq!(d.value.0, "r"),
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn docs_mention_every_command() {
        let docs = include_str!("../../../../../docs/commands.md");
        for s in SPECS {
            assert!(
                docs.contains(&format!("`{}", s.name)),
                "docs/commands.md does not mention `{}`",
                s.name
            );
        }
    }
}
