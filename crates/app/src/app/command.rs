//! The command language. Every key resolves to a command string in this grammar, the
//! `:` line takes the same text, and the session file logs it, so a command's
//! canonical text (`Display`) parses back to the same command.
//!
//! Grammar: `NAME [ARG ...]`; arguments are words or double-quoted strings (`\"` and
//! `\\` escape). Node paths are `/`-separated names from a root (`\/` escapes a slash
//! inside a name) with an optional `#k` to pick the k-th of same-named siblings.
//!
//! What each command is called, how it parses and prints, whether it is logged and
//! how it completes is declared once, in the table of `super::commands`; this file
//! holds the value types and the tokenizer the table's parsers share.

use std::fmt;

use super::commands::{self, Spec};
use crate::query::expr::Expr;
use crate::transform::derive::Arith;

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    // Cursor movement (logged only with --log-nav).
    Down(usize),
    Up(usize),
    PageDown,
    PageUp,
    HalfPageDown,
    HalfPageUp,
    Top,
    Bottom,
    Parent,
    NextSibling,
    PrevSibling,
    /// Moves the cursor to a node (by path).
    Select(String),
    // Folding: a missing path means the node under the cursor.
    Toggle(Option<String>),
    Expand(Option<String>),
    Collapse(Option<String>),
    /// Collapse if open, otherwise go to the parent (h / Left).
    CollapseOrParent,
    ExpandChildren(Option<String>),
    CollapseChildren(Option<String>),
    ExpandAll(Option<String>),
    CollapseAll(Option<String>),
    /// Follow the heaviest child repeatedly from a node.
    HotPath(Option<String>),
    Search(String),
    SearchNext,
    SearchPrev,
    /// `sort next` cycles; otherwise a metric name (or `name`, `data`) and a direction.
    Sort(SortSpec),
    Metric(MetricChoice),
    Metric2(MetricChoice),
    PickMetric,
    /// Opens the input line: `prompt search` (/) or `prompt command` (:).
    Prompt(PromptKind),
    Help,
    /// Lists every load warning (the status line shows only the start).
    Messages,
    Quit,
    /// Keep the nodes an expression (or a Hatchet query) selects, with their ancestors;
    /// `squash` re-parents them instead.
    Filter {
        squash: bool,
        query: Parsed<Selector>,
    },
    /// Squash the last filter's matches (Hatchet's squash).
    Squash,
    /// The bottom-up tree: functions with self cost as roots, their callers below.
    Invert,
    /// Hide nodes below a threshold, shown as one aggregate row per run of siblings.
    Prune(Parsed<Expr>),
    PruneOff,
    /// Shows the pruned children of a node.
    Unprune(String),
    Hide(String),
    Show(String),
    Compose {
        names: Vec<String>,
        new: String,
    },
    GroupBy(String),
    /// `NAME = EXPR`: the name and the arithmetic, parsed once.
    Derive(Parsed<(String, Arith)>),
    Focus(Option<String>),
    Unfocus,
    /// Hide what is below a share of the total (`limit 1%`, `limit off`).
    Limit(Option<f64>),
    Undo,
    Redo,
    Reset,
    /// Esc: drop the latest filter-like command.
    PopFilter,
    Source(String),
    Export {
        format: crate::export::formats::Format,
        path: String,
    },
    Save(String),
    /// Switch the main panel.
    Panel(PanelMove),
    /// Kernel table options; unset fields keep their value.
    Kernels(KernelsSpec),
    /// Select a kernel by name (the row under the cursor without a name).
    SelectKernel(Option<String>),
    /// The summary panel as charts (`false`) or as HTA's tables (`true`); `None`
    /// toggles (resolved before it is logged).
    Summary(Option<bool>),
    /// The flame graph: zoom, zoom out, flip, move to a sibling.
    Flame(FlameCmd),
    /// The functions panel: sort, focus, select along an edge, open the tree.
    Functions(FunctionsCmd),
    /// SQL over the loaded trace's tables: a query, the answer's sort, go to a row, filter.
    Sql(crate::app::panels::sql::SqlCmd),
    /// Timeline window.
    Zoom(ZoomSpec),
    Pan(bool),
    NextKernel,
    PrevKernel,
    /// Timeline lanes: GPU streams only (false) or CPU threads too (true).
    Lanes(bool),
    /// Jump from the selected kernel to the call path that launched it.
    GotoLaunch,
    /// The timeline's stack chart: cursor, lanes, steps, links.
    Timeline(super::panels::timeline::TimelineCmd),
    /// Jump to an idle gap of a timeline lane.
    Gap(GapSpec),
    /// List the `n` longest idle gaps of each GPU stream (at least `min` ns long).
    Gaps {
        n: usize,
        min: Option<i64>,
    },
    /// Heatmap normalisation: row | column | global | zscore | next.
    HeatmapNorm(String),
    /// Sort the tree by the heatmap column under the cursor.
    HeatmapSort,
    /// Move the heatmap's column cursor.
    HeatmapColumn(bool),
    /// Compare two ensemble members: `diff = nz(metric@A) - nz(metric@B)`, with markers
    /// for the nodes one of them lacks.
    Diff(String, String),
    /// Move to the next (`true`) or previous node of the diff's ranking: the largest
    /// increase first, then the decreases, largest first.
    DiffStep(bool),
    /// Keep the ensemble members whose metadata match (`key = value`, `key ~ regex`);
    /// `off` shows all again.
    MetaFilter(Option<String>),
    /// How ensemble statistics treat a node a member lacks (`stats zero|present`).
    Stats(crate::ensemble::Stats),
    /// Scrolls the details pane (`true`) or the table panel sideways (`false`) by N.
    Scroll(bool, i64),
    /// Hides or shows a part of the screen: the details pane (`true`) or the tree's
    /// count column (`false`), so a narrow screen gives the names their width.
    TogglePane(bool),
}

/// An expression argument as written (its canonical text) with what it parsed to, so
/// it is parsed once: the parsed form is what runs and what undo replays.
#[derive(Debug, Clone)]
pub struct Parsed<T> {
    pub text: String,
    /// Byte offset of the expression in the command text it was parsed from (carets).
    pub at: usize,
    pub value: T,
}

/// The text determines the parse, so two parsed expressions are equal when their texts
/// are (the parsed forms need not be comparable).
impl<T> PartialEq for Parsed<T> {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl<T> fmt::Display for Parsed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// What a filter selects with.
#[derive(Debug, Clone)]
pub enum Selector {
    Expr(Expr),
    /// A Hatchet query: the string dialect parsed, or `None` for the object dialect
    /// and for a query that does not parse. Hatchet queries are only checked when they
    /// run (the object dialect reads its predicates against the tree's columns), so a
    /// syntax error is reported then, as documented.
    Hatchet(Option<crate::query::cypher::Parsed>),
}

/// What `panel` switches to: a panel, or the next or previous one that can show this
/// profile (resolved before the command is logged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelMove {
    To(super::panels::PanelId),
    Next,
    Prev,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelsSpec {
    /// Some(None) = all rows.
    pub top: Option<Option<usize>>,
    /// "total" | "mean" | "count" | "next"
    pub by: Option<String>,
    /// Show memcpy and memset rows.
    pub memory: Option<bool>,
    pub by_category: Option<bool>,
}

/// What `flame` does.
#[derive(Debug, Clone, PartialEq)]
pub enum FlameCmd {
    /// Zoom so the node at the path (the selection without one) spans the width.
    Zoom(Option<String>),
    /// Back to the zoom before.
    Out,
    /// Roots on top (icicle) or at the bottom (flame graph).
    Flip,
    /// What a frame's colour says: `heat` (its inclusive value), `kind` (the frame's
    /// kind: function, cpu_op, kernel, …), `module` (its module or file), or `next`.
    Colour(String),
    /// The previous or next sibling.
    Left,
    Right,
}

/// What `functions` does.
#[derive(Debug, Clone, PartialEq)]
pub enum FunctionsCmd {
    /// Sort the table by a column (`self`, `inclusive`, `calls`, `name`) or the next.
    Sort(String),
    /// Move the focus: `table`, `callers`, `callees` or `next`.
    Focus(String),
    /// On the callers or callees: select that function in the table.
    Enter,
    /// Open the tree filtered to every call path of the selected function.
    Tree,
    /// Show the callers and callees as a small call graph around the function (callers
    /// above, callees below, cycles marked) or as two lists side by side.
    Graph,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ZoomSpec {
    /// Window in ns from the trace start.
    Window(i64, i64),
    In,
    Out,
    Fit,
    Kernel,
}

/// Which idle gap `gap` jumps to.
#[derive(Debug, Clone, PartialEq)]
pub enum GapSpec {
    /// The next (true) or previous gap on the cursor's lane, at least this long (ns;
    /// None: the last length given, at first 30us).
    Step(bool, Option<i64>),
    /// The gap of the lane with this label that starts at (or contains) this time (ns
    /// from the trace start): what a row of the `gaps` list jumps to.
    At(String, i64),
}

/// Parses `12.5ms`, `300us`, `2s`, `1500ns`, `1500` (ns) to ns.
pub fn parse_time(t: &str) -> Option<i64> {
    let t = t.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(t.len());
    let v: f64 = t[..split].parse().ok()?;
    let unit = if split == t.len() { "ns" } else { &t[split..] };
    crate::query::convert_unit(v, unit, "ns").map(|x| x.round() as i64)
}

/// ns as an exact, readable time: `12.5ms`, `1585.956us`, `800ns` (parses back exactly).
pub fn format_time(ns: i64) -> String {
    let trim = |s: String| s.trim_end_matches('0').trim_end_matches('.').to_string();
    if ns != 0 && ns % 1000 == 0 && (ns / 1000) % 1000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1000 == 0 && ns.abs() >= 1_000_000 {
        format!("{}ms", trim(format!("{:.3}", ns as f64 / 1e6)))
    } else if ns.abs() >= 1000 {
        format!(
            "{}us",
            trim(format!("{}.{:03}", ns / 1000, (ns % 1000).abs()))
        )
    } else {
        format!("{ns}ns")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    Search,
    Command,
}

#[derive(Debug, Clone, PartialEq)]
pub enum MetricChoice {
    Next,
    Named(String),
    Off,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SortSpec {
    Next,
    By { key: String, descending: bool },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// Byte offset of the offending token in the command text.
    pub pos: usize,
    pub len: usize,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.pos + 1, self.msg)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub text: String,
    pub pos: usize,
    pub len: usize,
    pub quoted: bool,
}

pub fn tokenize(s: &str) -> Result<Vec<Token>, ParseError> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if b[i] == b'"' {
            i += 1;
            let mut text = String::new();
            let mut closed = false;
            let mut chars = s[i..].char_indices();
            while let Some((off, c)) = chars.next() {
                match c {
                    '"' => {
                        i += off + 1;
                        closed = true;
                        break;
                    }
                    '\\' => match chars.next() {
                        Some((_, e)) => text.push(e),
                        None => break,
                    },
                    c => text.push(c),
                }
            }
            if !closed {
                return Err(ParseError {
                    pos: start,
                    len: s.len() - start,
                    msg: "unterminated string".into(),
                });
            }
            out.push(Token {
                text,
                pos: start,
                len: i - start,
                quoted: true,
            });
        } else {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            out.push(Token {
                text: s[start..i].to_string(),
                pos: start,
                len: i - start,
                quoted: false,
            });
        }
    }
    Ok(out)
}

/// Quotes an argument when it would not survive tokenizing as a bare word.
pub fn quote(arg: &str) -> String {
    if !arg.is_empty() && !arg.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
        arg.to_string()
    } else {
        let mut s = String::from("\"");
        for c in arg.chars() {
            if c == '"' || c == '\\' {
                s.push('\\');
            }
            s.push(c);
        }
        s.push('"');
        s
    }
}

/// The tokens of one command line, and the argument styles the table's parsers share.
pub struct Input<'a> {
    pub text: &'a str,
    pub head: &'a Token,
    pub args: &'a [Token],
}

impl<'a> Input<'a> {
    pub fn at(t: &Token, msg: impl Into<String>) -> ParseError {
        ParseError {
            pos: t.pos,
            len: t.len,
            msg: msg.into(),
        }
    }

    /// An argument is missing: the error points at the end of the line.
    pub fn missing(&self, msg: impl Into<String>) -> ParseError {
        ParseError {
            pos: self.text.len(),
            len: 0,
            msg: msg.into(),
        }
    }

    pub fn too_many(t: &Token) -> ParseError {
        Input::at(t, format!("unexpected argument {:?}", t.text))
    }

    pub fn no_args(&self, c: Command) -> Result<Command, ParseError> {
        match self.args.first() {
            Some(t) => Err(Input::too_many(t)),
            None => Ok(c),
        }
    }

    /// An optional path: one argument, or the rest of the line.
    pub fn opt_path(&self) -> Option<String> {
        match self.args {
            [] => None,
            [p] => Some(p.text.clone()),
            [first, ..] => Some(self.text[first.pos..].trim_end().to_string()),
        }
    }

    pub fn count(&self) -> Result<usize, ParseError> {
        match self.args {
            [] => Ok(1),
            [n] => n
                .text
                .parse::<usize>()
                .map_err(|_| Input::at(n, "expected a row count")),
            [_, t, ..] => Err(Input::too_many(t)),
        }
    }

    /// One argument as it is, or several words verbatim to the end of the line.
    pub fn rest(&self, what: &str) -> Result<String, ParseError> {
        match self.args {
            [] => Err(self.missing(format!("expected {what}"))),
            [one] => Ok(one.text.clone()),
            [first, ..] => Ok(self.text[first.pos..].trim_end().to_string()),
        }
    }

    /// The text after the command name, verbatim (expressions keep their own quoting),
    /// and where it starts.
    pub fn raw_rest(&self) -> (&'a str, usize) {
        let after = self.head.pos + self.head.len;
        let rest = &self.text[after..];
        let trimmed = rest.trim_start();
        (trimmed.trim_end(), after + rest.len() - trimmed.len())
    }

    /// Exactly one of a few fixed words.
    pub fn word(&self, words: &[&str], msg: &str) -> Result<&'a str, ParseError> {
        match self.args {
            [t] if words.contains(&t.text.as_str()) => Ok(t.text.as_str()),
            [t, ..] => Err(Input::at(t, msg)),
            [] => Err(self.missing(msg)),
        }
    }
}

impl Command {
    /// The table entry that declares this command.
    pub fn spec(&self) -> &'static Spec {
        commands::spec(self.name()).expect("every command name is in the table")
    }

    /// The command's name in the table: the one place a variant maps to its name.
    pub fn name(&self) -> &'static str {
        use Command::*;
        match self {
            Down(_) => "down",
            Up(_) => "up",
            PageDown => "page-down",
            PageUp => "page-up",
            HalfPageDown => "half-page-down",
            HalfPageUp => "half-page-up",
            Top => "top",
            Bottom => "bottom",
            Parent => "parent",
            NextSibling => "next-sibling",
            PrevSibling => "prev-sibling",
            Select(_) => "select",
            Toggle(_) => "toggle",
            Expand(_) => "expand",
            Collapse(_) => "collapse",
            CollapseOrParent => "collapse-or-parent",
            ExpandChildren(_) => "expand-children",
            CollapseChildren(_) => "collapse-children",
            ExpandAll(_) => "expand-all",
            CollapseAll(_) => "collapse-all",
            HotPath(_) => "hot-path",
            Search(_) => "search",
            SearchNext => "search-next",
            SearchPrev => "search-prev",
            Sort(_) => "sort",
            Metric(_) => "metric",
            Metric2(_) => "metric2",
            PickMetric => "pick-metric",
            Prompt(_) => "prompt",
            Help => "help",
            Messages => "messages",
            Quit => "quit",
            Filter { .. } => "filter",
            Squash => "squash",
            Invert => "invert",
            Prune(_) | PruneOff => "prune",
            Unprune(_) => "unprune",
            Hide(_) => "hide",
            Show(_) => "show",
            Compose { .. } => "compose",
            GroupBy(_) => "group-by",
            Derive(_) => "derive",
            Focus(_) => "focus",
            Unfocus => "unfocus",
            Limit(_) => "limit",
            Undo => "undo",
            Redo => "redo",
            Reset => "reset",
            PopFilter => "pop-filter",
            Source(_) => "source",
            Export { .. } => "export",
            Save(_) => "save",
            Panel(_) => "panel",
            Kernels(_) => "kernels",
            SelectKernel(_) => "select-kernel",
            Summary(_) => "summary",
            Flame(_) => "flame",
            Functions(_) => "functions",
            Sql(_) => "sql",
            Zoom(_) => "zoom",
            Pan(_) => "pan",
            NextKernel => "next-kernel",
            PrevKernel => "prev-kernel",
            Lanes(_) => "lanes",
            GotoLaunch => "goto-launch",
            Timeline(_) => "timeline",
            Gap(_) => "gap",
            Gaps { .. } => "gaps",
            HeatmapNorm(_) | HeatmapSort | HeatmapColumn(_) => "heatmap",
            Diff(..) => "diff",
            DiffStep(true) => "diff-next",
            DiffStep(false) => "diff-prev",
            MetaFilter(_) => "meta",
            Stats(_) => "stats",
            Scroll(..) => "scroll",
            TogglePane(_) => "toggle-pane",
        }
    }

    /// How this command is logged (some commands log differently per form).
    pub fn log(&self) -> commands::Log {
        self.spec().log.of(self)
    }

    /// True for commands that change what is shown (logged to the session file).
    pub fn changes_view(&self) -> bool {
        self.log().changes_view()
    }

    /// Commands that Esc (`pop-filter`) can take back; the `off` forms undo a rule
    /// rather than add one, so they are not.
    pub fn is_filter_like(&self) -> bool {
        self.spec().pops && !matches!(self, Command::PruneOff | Command::Limit(None))
    }

    /// Commands that rebuild the tree (filter, squash, compose, group-by).
    pub fn rebuilds(&self) -> bool {
        self.spec().rebuilds
    }

    pub fn parse(text: &str) -> Result<Command, ParseError> {
        let toks = tokenize(text)?;
        let Some(head) = toks.first() else {
            return Err(ParseError {
                pos: 0,
                len: 0,
                msg: "empty command".into(),
            });
        };
        let Some(spec) = commands::lookup(&head.text) else {
            let names = commands::SPECS
                .iter()
                .flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied()));
            let hint = crate::present::suggest::did_you_mean(&head.text, names);
            return Err(Input::at(
                head,
                format!("unknown command {:?}{hint}", head.text),
            ));
        };
        (spec.parse)(&Input {
            text,
            head,
            args: &toks[1..],
        })
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.spec().print)(self, f)
    }
}

/// Writes `name` and an optional quoted path.
pub fn write_opt(f: &mut fmt::Formatter<'_>, name: &str, p: &Option<String>) -> fmt::Result {
    match p {
        Some(p) => write!(f, "{name} {}", quote(p)),
        None => f.write_str(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_text_round_trips() {
        for text in [
            "down",
            "down 5",
            "expand",
            "expand \"thread 1 (python)/ProfilerStep#2\"",
            "search attn",
            "search \"a \\\"b\\\"\"",
            "sort next",
            "sort \"time (inc)\" desc",
            "sort name asc",
            "metric gpu_time",
            "metric2 off",
            "hot-path",
            "quit",
            "filter time (inc) > 5% and name ~ \"^Calc\"",
            "filter --squash MATCH (\"*\")->(\".\", p) WHERE p.\"name\" STARTS WITH \"MPI_\"",
            "squash",
            "prune time (inc) < 1ms",
            "prune off",
            "hide main/solve",
            "compose MPI_Send MPI_Isend as send",
            "group-by module",
            "derive ratio = gpu_time / time",
            "focus main",
            "limit 1.5%",
            "limit off",
            "undo",
            "export csv out.csv",
            "save \"my session.jsonl\"",
            "panel timeline",
            "kernels top 20 by mean memory on group category",
            "kernels all",
            "select-kernel \"void foo<int>(int)\"",
            "zoom 12.5ms 14ms",
            "zoom 1585.956us 2ms",
            "zoom 800ns 1ms",
            "zoom fit",
            "pan left",
            "goto-launch",
            "heatmap norm zscore",
            "heatmap sort",
            "diff gcc llvm",
            "meta compiler = gcc",
            "meta off",
        ] {
            let c = Command::parse(text).unwrap();
            assert_eq!(c.to_string(), text, "{c:?}");
            assert_eq!(Command::parse(&c.to_string()).unwrap(), c);
        }
    }

    #[test]
    fn bare_words_join() {
        assert_eq!(
            Command::parse("sort time (inc)").unwrap(),
            Command::Sort(SortSpec::By {
                key: "time (inc)".into(),
                descending: true
            })
        );
        assert_eq!(
            Command::parse("metric time (inc)").unwrap(),
            Command::Metric(MetricChoice::Named("time (inc)".into()))
        );
    }

    #[test]
    fn errors_point_at_tokens() {
        let e = Command::parse("  frobnicate x").unwrap_err();
        assert_eq!((e.pos, e.len), (2, 10));
        let e = Command::parse("down x").unwrap_err();
        assert_eq!(e.pos, 5);
        let e = Command::parse("search \"open").unwrap_err();
        assert_eq!(e.pos, 7);
        let e = Command::parse("quit now").unwrap_err();
        assert_eq!(e.pos, 5);
        let e = Command::parse("filter time >> 3").unwrap_err();
        assert_eq!((e.pos, e.len), (13, 1));
        let e = Command::parse("filter   --squash  (time > 3").unwrap_err();
        assert_eq!(e.pos, 28);
        let e = Command::parse("derive x = time +").unwrap_err();
        assert_eq!(e.pos, 17);
        let e = Command::parse("prune time > 1 and leaf").unwrap_err();
        assert_eq!(e.pos, 6);
        let e = Command::parse("limit lots").unwrap_err();
        assert_eq!(e.pos, 6);
        let e = Command::parse("compose a as").unwrap_err();
        assert_eq!(e.pos, 0);
    }
}
