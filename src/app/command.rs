//! The command language. Every key resolves to a command string in this grammar, the
//! `:` line takes the same text, and the session file logs it, so a command's
//! canonical text (`Display`) parses back to the same command.
//!
//! Grammar: `NAME [ARG ...]`; arguments are words or double-quoted strings (`\"` and
//! `\\` escape). Node paths are `/`-separated names from a root (`\/` escapes a slash
//! inside a name) with an optional `#k` to pick the k-th of same-named siblings.

use std::fmt;

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
    Quit,
    /// Keep the nodes an expression (or a Hatchet query) selects, with their ancestors;
    /// `squash` re-parents them instead. `at` is where the expression starts in the text.
    Filter {
        squash: bool,
        expr: String,
        at: usize,
    },
    /// Squash the last filter's matches (Hatchet's squash).
    Squash,
    /// Hide nodes below a threshold, shown as one aggregate row per run of siblings.
    Prune {
        expr: String,
        at: usize,
    },
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
    Derive {
        def: String,
        at: usize,
    },
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
        format: ExportFormat,
        path: String,
    },
    Save(String),
    /// Switch the main panel.
    Panel(PanelChoice),
    /// Kernel table options; unset fields keep their value.
    Kernels(KernelsSpec),
    /// Select a kernel by name (the row under the cursor without a name).
    SelectKernel(Option<String>),
    /// Timeline window.
    Zoom(ZoomSpec),
    Pan(bool),
    NextKernel,
    PrevKernel,
    /// Timeline lanes: GPU streams only (false) or CPU threads too (true).
    Lanes(bool),
    /// Jump from the selected kernel to the call path that launched it.
    GotoLaunch,
    /// Heatmap normalisation: row | column | global | zscore | next.
    HeatmapNorm(String),
    /// Sort the tree by the heatmap column under the cursor.
    HeatmapSort,
    /// Move the heatmap's column cursor.
    HeatmapColumn(bool),
    /// Compare two ensemble members: `diff = metric@A - metric@B`, with ◀ ▶ markers.
    Diff(String, String),
    /// Keep the ensemble members whose metadata match (`key = value`, `key ~ regex`);
    /// `off` shows all again.
    MetaFilter(Option<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelChoice {
    Tree,
    Heatmap,
    Kernels,
    Timeline,
    Summary,
    Next,
    Prev,
}

impl PanelChoice {
    pub fn name(self) -> &'static str {
        match self {
            PanelChoice::Tree => "tree",
            PanelChoice::Heatmap => "heatmap",
            PanelChoice::Kernels => "kernels",
            PanelChoice::Timeline => "timeline",
            PanelChoice::Summary => "summary",
            PanelChoice::Next => "next",
            PanelChoice::Prev => "prev",
        }
    }
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

#[derive(Debug, Clone, PartialEq)]
pub enum ZoomSpec {
    /// Window in ns from the trace start.
    Window(i64, i64),
    In,
    Out,
    Fit,
    Kernel,
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
pub enum ExportFormat {
    Hatchet,
    Json,
    Csv,
    Parquet,
    Folded,
}

impl ExportFormat {
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Hatchet => "hatchet",
            ExportFormat::Json => "json",
            ExportFormat::Csv => "csv",
            ExportFormat::Parquet => "parquet",
            ExportFormat::Folded => "folded",
        }
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

/// The text after the command name, verbatim (expressions keep their own quoting).
fn raw_rest<'a>(text: &'a str, head: &Token) -> (&'a str, usize) {
    let after = head.pos + head.len;
    let rest = &text[after..];
    let trimmed = rest.trim_start();
    (trimmed.trim_end(), after + rest.len() - trimmed.len())
}

fn from_query(e: crate::query::QueryError, at: usize) -> ParseError {
    ParseError {
        pos: e.pos + at,
        len: e.len,
        msg: e.msg,
    }
}

/// Syntax check of a filter: a Hatchet query or a grove expression.
fn check_query(expr: &str, at: usize) -> Result<(), ParseError> {
    if crate::query::cypher::is_hatchet_query(expr) {
        // Hatchet queries are checked against the tree when they run.
        return Ok(());
    }
    crate::query::expr::parse(expr)
        .map(|_| ())
        .map_err(|e| from_query(e, at))
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

/// Command names with a one-line description, for help and completion.
pub const COMMANDS: &[(&str, &str)] = &[
    ("down", "move the cursor down [N rows]"),
    ("up", "move the cursor up [N rows]"),
    ("page-down", "move one page down"),
    ("page-up", "move one page up"),
    ("half-page-down", "move half a page down"),
    ("half-page-up", "move half a page up"),
    ("top", "go to the first row"),
    ("bottom", "go to the last row"),
    ("parent", "go to the parent node"),
    ("next-sibling", "go to the next sibling"),
    ("prev-sibling", "go to the previous sibling"),
    ("select", "move the cursor to PATH"),
    ("toggle", "open or close a fold [PATH]"),
    ("expand", "open a fold [PATH]"),
    ("collapse", "close a fold [PATH]"),
    (
        "collapse-or-parent",
        "close the fold, or go to the parent when closed",
    ),
    ("expand-children", "open a node and its children [PATH]"),
    ("collapse-children", "close the children of a node [PATH]"),
    ("expand-all", "open a whole subtree [PATH]"),
    ("collapse-all", "close a whole subtree [PATH]"),
    ("hot-path", "follow the heaviest child repeatedly [PATH]"),
    ("search", "find nodes whose name contains TEXT"),
    ("search-next", "go to the next match"),
    ("search-prev", "go to the previous match"),
    ("sort", "sort siblings: next | METRIC|name|data [asc|desc]"),
    ("metric", "primary metric: next | NAME"),
    ("metric2", "second metric: next | NAME | off"),
    ("pick-metric", "choose the primary metric from a list"),
    ("prompt", "open the input line: search | command"),
    ("help", "show the keys and their commands"),
    (
        "filter",
        "keep nodes matching EXPR (or a Hatchet query) and their ancestors; --squash re-parents",
    ),
    (
        "squash",
        "squash the last filter: re-parent matches to their nearest kept ancestor",
    ),
    (
        "prune",
        "hide nodes where METRIC < VALUE, one aggregate row per run of siblings; prune off",
    ),
    ("unprune", "show the pruned children of PATH"),
    ("hide", "elide the subtree at PATH"),
    ("show", "undo hide PATH"),
    (
        "compose",
        "NAME1 NAME2 ... as NEW: treat those functions as one",
    ),
    (
        "group-by",
        "aggregate by an attribute (module, file, type, ...)",
    ),
    (
        "derive",
        "NAME = EXPR: a new metric from arithmetic on metrics",
    ),
    ("focus", "show only the subtree at PATH"),
    ("unfocus", "show the whole tree again"),
    (
        "limit",
        "hide what is below a share of the total: limit 1% | limit off",
    ),
    ("undo", "undo the last change"),
    ("redo", "redo what undo undid"),
    ("reset", "back to the tree as loaded"),
    (
        "pop-filter",
        "drop the latest filter, prune, limit or focus",
    ),
    ("source", "run the commands of a session or text file"),
    (
        "export",
        "hatchet|json|csv|parquet|folded FILE: write the current tree",
    ),
    ("save", "write the session so far to FILE"),
    ("panel", "switch the panel: tree | heatmap | kernels | timeline | summary | next | prev"),
    ("kernels", "kernel table: [top N|all] [by total|mean|count|next] [memory on|off] [group name|category]"),
    ("select-kernel", "select a kernel by name (marks its call paths and instances)"),
    ("zoom", "timeline window: zoom START END | in | out | fit | kernel"),
    ("pan", "move the timeline window: pan left | right"),
    ("lanes", "timeline lanes: gpu | all (CPU threads too)"),
    ("next-kernel", "next kernel on the timeline lane"),
    ("prev-kernel", "previous kernel on the timeline lane"),
    ("goto-launch", "show the call path that launched the selected kernel"),
    ("heatmap", "heatmap: norm row|column|global|zscore|next | sort | column next|prev"),
    ("diff", "A B: metric@A - metric@B, with markers for nodes in one profile only"),
    ("meta", "filter ensemble members by metadata: meta KEY = VALUE | KEY ~ REGEX | off"),
    ("quit", "leave grove"),
];

impl Command {
    /// True for commands that change what is shown (logged to the session file).
    pub fn changes_view(&self) -> bool {
        !matches!(
            self,
            Command::Down(_)
                | Command::Up(_)
                | Command::PageDown
                | Command::PageUp
                | Command::HalfPageDown
                | Command::HalfPageUp
                | Command::Top
                | Command::Bottom
                | Command::Parent
                | Command::NextSibling
                | Command::PrevSibling
                | Command::Select(_)
                | Command::SearchNext
                | Command::SearchPrev
                | Command::Help
                | Command::PickMetric
                | Command::Prompt(_)
                | Command::Quit
                | Command::Export { .. }
                | Command::Save(_)
                | Command::NextKernel
                | Command::PrevKernel
                | Command::HeatmapColumn(_)
        )
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
        let args = &toks[1..];
        let end = text.len();
        let too_many = |t: &Token| ParseError {
            pos: t.pos,
            len: t.len,
            msg: format!("unexpected argument {:?}", t.text),
        };
        let no_args = |c: Command| -> Result<Command, ParseError> {
            match args.first() {
                Some(t) => Err(too_many(t)),
                None => Ok(c),
            }
        };
        // A path is the rest of the line, quoted or not (names may hold spaces).
        let opt_path = |f: fn(Option<String>) -> Command| -> Result<Command, ParseError> {
            match args {
                [] => Ok(f(None)),
                [p] => Ok(f(Some(p.text.clone()))),
                [first, ..] => Ok(f(Some(text[first.pos..].trim_end().to_string()))),
            }
        };
        let count = || -> Result<usize, ParseError> {
            match args {
                [] => Ok(1),
                [n] => n.text.parse::<usize>().map_err(|_| ParseError {
                    pos: n.pos,
                    len: n.len,
                    msg: "expected a row count".into(),
                }),
                [_, t, ..] => Err(too_many(t)),
            }
        };
        let rest = |what: &str| -> Result<String, ParseError> {
            match args.first() {
                None => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: format!("expected {what}"),
                }),
                Some(first) => Ok(if args.len() == 1 {
                    first.text.clone()
                } else {
                    text[first.pos..].trim_end().to_string()
                }),
            }
        };
        let metric_choice = |allow_off: bool| -> Result<MetricChoice, ParseError> {
            let m = rest("a metric name or 'next'")?;
            Ok(match m.as_str() {
                "next" if !args[0].quoted => MetricChoice::Next,
                "off" if allow_off && !args[0].quoted => MetricChoice::Off,
                _ => MetricChoice::Named(m),
            })
        };
        match head.text.as_str() {
            "down" | "j" => Ok(Command::Down(count()?)),
            "up" | "k" => Ok(Command::Up(count()?)),
            "page-down" => no_args(Command::PageDown),
            "page-up" => no_args(Command::PageUp),
            "half-page-down" => no_args(Command::HalfPageDown),
            "half-page-up" => no_args(Command::HalfPageUp),
            "top" => no_args(Command::Top),
            "bottom" => no_args(Command::Bottom),
            "parent" => no_args(Command::Parent),
            "next-sibling" => no_args(Command::NextSibling),
            "prev-sibling" => no_args(Command::PrevSibling),
            "select" => Ok(Command::Select(rest("a node path")?)),
            "toggle" => opt_path(Command::Toggle),
            "expand" => opt_path(Command::Expand),
            "collapse" => opt_path(Command::Collapse),
            "collapse-or-parent" => no_args(Command::CollapseOrParent),
            "expand-children" => opt_path(Command::ExpandChildren),
            "collapse-children" => opt_path(Command::CollapseChildren),
            "expand-all" => opt_path(Command::ExpandAll),
            "collapse-all" => opt_path(Command::CollapseAll),
            "hot-path" => opt_path(Command::HotPath),
            "search" => Ok(Command::Search(rest("a text to search for")?)),
            "search-next" => no_args(Command::SearchNext),
            "search-prev" => no_args(Command::SearchPrev),
            "sort" => match args {
                [] => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "expected 'next' or a sort key".into(),
                }),
                [t] if t.text == "next" && !t.quoted => Ok(Command::Sort(SortSpec::Next)),
                _ => {
                    let (key_toks, descending) = match args.last() {
                        Some(t) if !t.quoted && (t.text == "asc" || t.text == "desc") => {
                            (&args[..args.len() - 1], t.text == "desc")
                        }
                        _ => (args, true),
                    };
                    let Some(first) = key_toks.first() else {
                        return Err(ParseError {
                            pos: args[0].pos,
                            len: args[0].len,
                            msg: "expected a sort key before the direction".into(),
                        });
                    };
                    let key = if key_toks.len() == 1 {
                        first.text.clone()
                    } else {
                        let last = key_toks.last().unwrap();
                        text[first.pos..last.pos + last.len].to_string()
                    };
                    let descending = if key == "name" || key == "data" {
                        matches!(args.last(), Some(t) if t.text == "desc")
                    } else {
                        descending
                    };
                    Ok(Command::Sort(SortSpec::By { key, descending }))
                }
            },
            "metric" => Ok(Command::Metric(metric_choice(false)?)),
            "metric2" => Ok(Command::Metric2(metric_choice(true)?)),
            "pick-metric" => no_args(Command::PickMetric),
            "prompt" => match args {
                [t] if t.text == "search" => Ok(Command::Prompt(PromptKind::Search)),
                [t] if t.text == "command" => Ok(Command::Prompt(PromptKind::Command)),
                [t, ..] => Err(ParseError {
                    pos: t.pos,
                    len: t.len,
                    msg: "expected 'search' or 'command'".into(),
                }),
                [] => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "expected 'search' or 'command'".into(),
                }),
            },
            "help" => no_args(Command::Help),
            "filter" => {
                let (mut expr, mut at) = raw_rest(text, head);
                let mut squash = false;
                if let Some(r) = expr.strip_prefix("--squash") {
                    if r.is_empty() || r.starts_with(char::is_whitespace) {
                        squash = true;
                        let trimmed = r.trim_start();
                        at += expr.len() - trimmed.len();
                        expr = trimmed;
                    }
                }
                if expr.is_empty() {
                    return Err(ParseError {
                        pos: end,
                        len: 0,
                        msg: "expected an expression or a Hatchet query".into(),
                    });
                }
                check_query(expr, at)?;
                Ok(Command::Filter {
                    squash,
                    expr: expr.to_string(),
                    at,
                })
            }
            "squash" => no_args(Command::Squash),
            "prune" => {
                let (expr, at) = raw_rest(text, head);
                if expr == "off" {
                    return Ok(Command::PruneOff);
                }
                match crate::query::expr::parse(expr) {
                    Ok(crate::query::expr::Expr::Cmp { .. }) => Ok(Command::Prune {
                        expr: expr.to_string(),
                        at,
                    }),
                    Ok(_) => Err(ParseError {
                        pos: at,
                        len: expr.len(),
                        msg: "prune takes one comparison: METRIC < VALUE".into(),
                    }),
                    Err(e) => Err(from_query(e, at)),
                }
            }
            "unprune" => Ok(Command::Unprune(rest("a node path")?)),
            "hide" => Ok(Command::Hide(rest("a node path")?)),
            "show" => Ok(Command::Show(rest("a node path")?)),
            "compose" => {
                let as_at = args.iter().rposition(|t| t.text == "as" && !t.quoted);
                match as_at {
                    Some(i) if i >= 1 && i + 2 == args.len() => Ok(Command::Compose {
                        names: args[..i].iter().map(|t| t.text.clone()).collect(),
                        new: args[i + 1].text.clone(),
                    }),
                    _ => Err(ParseError {
                        pos: head.pos,
                        len: text.len() - head.pos,
                        msg: "usage: compose NAME1 NAME2 ... as NEW".into(),
                    }),
                }
            }
            "group-by" => Ok(Command::GroupBy(rest(
                "an attribute (module, file, type, ...)",
            )?)),
            "derive" => {
                let (def, at) = raw_rest(text, head);
                crate::transform::derive::parse_definition(def).map_err(|e| from_query(e, at))?;
                Ok(Command::Derive {
                    def: def.to_string(),
                    at,
                })
            }
            "focus" => opt_path(Command::Focus),
            "unfocus" => no_args(Command::Unfocus),
            "limit" => match args {
                [t] if t.text == "off" => Ok(Command::Limit(None)),
                [t] => {
                    let v = t.text.strip_suffix('%').and_then(|x| x.parse::<f64>().ok());
                    match v {
                        Some(v) if (0.0..=100.0).contains(&v) => Ok(Command::Limit(Some(v))),
                        _ => Err(ParseError {
                            pos: t.pos,
                            len: t.len,
                            msg: "expected a percentage such as 1% (or off)".into(),
                        }),
                    }
                }
                [_, t, ..] => Err(too_many(t)),
                [] => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "expected a percentage such as 1% (or off)".into(),
                }),
            },
            "panel" => {
                match args {
                    [t] => Ok(Command::Panel(match t.text.as_str() {
                        "tree" | "1" => PanelChoice::Tree,
                        "heatmap" | "2" => PanelChoice::Heatmap,
                        "kernels" | "3" => PanelChoice::Kernels,
                        "timeline" | "4" => PanelChoice::Timeline,
                        "summary" | "5" => PanelChoice::Summary,
                        "next" => PanelChoice::Next,
                        "prev" => PanelChoice::Prev,
                        _ => return Err(ParseError {
                            pos: t.pos,
                            len: t.len,
                            msg: "expected tree, heatmap, kernels, timeline, summary, next or prev"
                                .into(),
                        }),
                    })),
                    [_, t, ..] => Err(too_many(t)),
                    [] => Err(ParseError {
                        pos: end,
                        len: 0,
                        msg: "expected a panel".into(),
                    }),
                }
            }
            "kernels" => {
                let mut spec = KernelsSpec::default();
                let mut i = 0;
                while i < args.len() {
                    let key = &args[i];
                    let val = args.get(i + 1);
                    let bad = |t: &Token, m: &str| ParseError {
                        pos: t.pos,
                        len: t.len,
                        msg: m.to_string(),
                    };
                    match key.text.as_str() {
                        "all" => {
                            spec.top = Some(None);
                            i += 1;
                            continue;
                        }
                        "top" => match val.map(|v| v.text.parse::<usize>()) {
                            Some(Ok(n)) => spec.top = Some(Some(n)),
                            _ => {
                                return Err(bad(
                                    val.unwrap_or(key),
                                    "expected a row count after top",
                                ))
                            }
                        },
                        "by" => match val.map(|v| v.text.as_str()) {
                            Some(b @ ("total" | "mean" | "count" | "next")) => {
                                spec.by = Some(b.to_string())
                            }
                            _ => {
                                return Err(bad(
                                    val.unwrap_or(key),
                                    "expected total, mean, count or next",
                                ))
                            }
                        },
                        "memory" => match val.map(|v| v.text.as_str()) {
                            Some("on") => spec.memory = Some(true),
                            Some("off") => spec.memory = Some(false),
                            _ => return Err(bad(val.unwrap_or(key), "expected on or off")),
                        },
                        "group" => match val.map(|v| v.text.as_str()) {
                            Some("name") => spec.by_category = Some(false),
                            Some("category") => spec.by_category = Some(true),
                            _ => return Err(bad(val.unwrap_or(key), "expected name or category")),
                        },
                        _ => return Err(bad(key, "expected top, all, by, memory or group")),
                    }
                    i += 2;
                }
                Ok(Command::Kernels(spec))
            }
            "select-kernel" => Ok(Command::SelectKernel(match args {
                [] => None,
                _ => Some(rest("a kernel name")?),
            })),
            "zoom" => match args {
                [t] => Ok(Command::Zoom(match t.text.as_str() {
                    "in" => ZoomSpec::In,
                    "out" => ZoomSpec::Out,
                    "fit" => ZoomSpec::Fit,
                    "kernel" => ZoomSpec::Kernel,
                    _ => {
                        return Err(ParseError {
                            pos: t.pos,
                            len: t.len,
                            msg: "expected in, out, fit, kernel or START END".into(),
                        })
                    }
                })),
                [a, b] => {
                    let ta = parse_time(&a.text).ok_or(ParseError {
                        pos: a.pos,
                        len: a.len,
                        msg: "expected a time such as 12.5ms".into(),
                    })?;
                    let tb = parse_time(&b.text).ok_or(ParseError {
                        pos: b.pos,
                        len: b.len,
                        msg: "expected a time such as 14ms".into(),
                    })?;
                    if tb <= ta {
                        return Err(ParseError {
                            pos: b.pos,
                            len: b.len,
                            msg: "the end must come after the start".into(),
                        });
                    }
                    Ok(Command::Zoom(ZoomSpec::Window(ta, tb)))
                }
                [_, _, t, ..] => Err(too_many(t)),
                [] => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "expected in, out, fit, kernel or START END".into(),
                }),
            },
            "pan" => match args {
                [t] if t.text == "left" => Ok(Command::Pan(false)),
                [t] if t.text == "right" => Ok(Command::Pan(true)),
                [t, ..] => Err(ParseError {
                    pos: t.pos,
                    len: t.len,
                    msg: "expected left or right".into(),
                }),
                [] => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "expected left or right".into(),
                }),
            },
            "heatmap" => match args {
                [t, v] if t.text == "norm" => match v.text.as_str() {
                    "row" | "column" | "global" | "zscore" | "next" => {
                        Ok(Command::HeatmapNorm(v.text.clone()))
                    }
                    _ => Err(ParseError {
                        pos: v.pos,
                        len: v.len,
                        msg: "expected row, column, global, zscore or next".into(),
                    }),
                },
                [t] if t.text == "sort" => Ok(Command::HeatmapSort),
                [t, v] if t.text == "column" && (v.text == "next" || v.text == "prev") => {
                    Ok(Command::HeatmapColumn(v.text == "next"))
                }
                [t, ..] => Err(ParseError {
                    pos: t.pos,
                    len: t.len,
                    msg: "expected norm MODE, sort or column next|prev".into(),
                }),
                [] => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "expected norm MODE, sort or column next|prev".into(),
                }),
            },
            "diff" => match args {
                [a, b] => Ok(Command::Diff(a.text.clone(), b.text.clone())),
                [_, _, t, ..] => Err(too_many(t)),
                _ => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "usage: diff A B (two ensemble labels)".into(),
                }),
            },
            "meta" => match args {
                [t] if t.text == "off" => Ok(Command::MetaFilter(None)),
                [] => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "usage: meta KEY = VALUE | KEY ~ REGEX | off".into(),
                }),
                _ => {
                    let (e, at) = raw_rest(text, head);
                    let ok = e.contains('=') || e.contains('~');
                    if !ok {
                        return Err(ParseError {
                            pos: at,
                            len: e.len(),
                            msg: "usage: meta KEY = VALUE | KEY ~ REGEX | off".into(),
                        });
                    }
                    Ok(Command::MetaFilter(Some(e.to_string())))
                }
            },
            "lanes" => match args {
                [t] if t.text == "gpu" => Ok(Command::Lanes(false)),
                [t] if t.text == "all" => Ok(Command::Lanes(true)),
                [t, ..] => Err(ParseError {
                    pos: t.pos,
                    len: t.len,
                    msg: "expected gpu or all".into(),
                }),
                [] => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "expected gpu or all".into(),
                }),
            },
            "next-kernel" => no_args(Command::NextKernel),
            "prev-kernel" => no_args(Command::PrevKernel),
            "goto-launch" => no_args(Command::GotoLaunch),
            "undo" => no_args(Command::Undo),
            "redo" => no_args(Command::Redo),
            "reset" => no_args(Command::Reset),
            "pop-filter" => no_args(Command::PopFilter),
            "source" => Ok(Command::Source(rest("a file")?)),
            "save" => Ok(Command::Save(rest("a file")?)),
            "export" => match args {
                [f, p] => {
                    let format = match f.text.as_str() {
                        "hatchet" => ExportFormat::Hatchet,
                        "json" => ExportFormat::Json,
                        "csv" => ExportFormat::Csv,
                        "parquet" => ExportFormat::Parquet,
                        "folded" => ExportFormat::Folded,
                        _ => {
                            return Err(ParseError {
                                pos: f.pos,
                                len: f.len,
                                msg: "expected hatchet, json, csv, parquet or folded".into(),
                            })
                        }
                    };
                    Ok(Command::Export {
                        format,
                        path: p.text.clone(),
                    })
                }
                [_, _, t, ..] => Err(too_many(t)),
                _ => Err(ParseError {
                    pos: end,
                    len: 0,
                    msg: "usage: export hatchet|json|csv|parquet|folded FILE".into(),
                }),
            },
            "quit" | "q" => no_args(Command::Quit),
            other => Err(ParseError {
                pos: head.pos,
                len: head.len,
                msg: format!("unknown command {other:?}"),
            }),
        }
    }
}

fn opt(f: &mut fmt::Formatter<'_>, name: &str, p: &Option<String>) -> fmt::Result {
    match p {
        Some(p) => write!(f, "{name} {}", quote(p)),
        None => f.write_str(name),
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Down(1) => f.write_str("down"),
            Command::Down(n) => write!(f, "down {n}"),
            Command::Up(1) => f.write_str("up"),
            Command::Up(n) => write!(f, "up {n}"),
            Command::PageDown => f.write_str("page-down"),
            Command::PageUp => f.write_str("page-up"),
            Command::HalfPageDown => f.write_str("half-page-down"),
            Command::HalfPageUp => f.write_str("half-page-up"),
            Command::Top => f.write_str("top"),
            Command::Bottom => f.write_str("bottom"),
            Command::Parent => f.write_str("parent"),
            Command::NextSibling => f.write_str("next-sibling"),
            Command::PrevSibling => f.write_str("prev-sibling"),
            Command::Select(p) => write!(f, "select {}", quote(p)),
            Command::Toggle(p) => opt(f, "toggle", p),
            Command::Expand(p) => opt(f, "expand", p),
            Command::Collapse(p) => opt(f, "collapse", p),
            Command::CollapseOrParent => f.write_str("collapse-or-parent"),
            Command::ExpandChildren(p) => opt(f, "expand-children", p),
            Command::CollapseChildren(p) => opt(f, "collapse-children", p),
            Command::ExpandAll(p) => opt(f, "expand-all", p),
            Command::CollapseAll(p) => opt(f, "collapse-all", p),
            Command::HotPath(p) => opt(f, "hot-path", p),
            Command::Search(t) => write!(f, "search {}", quote(t)),
            Command::SearchNext => f.write_str("search-next"),
            Command::SearchPrev => f.write_str("search-prev"),
            Command::Sort(SortSpec::Next) => f.write_str("sort next"),
            Command::Sort(SortSpec::By { key, descending }) => write!(
                f,
                "sort {} {}",
                quote(key),
                if *descending { "desc" } else { "asc" }
            ),
            Command::Metric(m) | Command::Metric2(m) => {
                let name = if matches!(self, Command::Metric(_)) {
                    "metric"
                } else {
                    "metric2"
                };
                match m {
                    MetricChoice::Next => write!(f, "{name} next"),
                    MetricChoice::Off => write!(f, "{name} off"),
                    MetricChoice::Named(n) => write!(f, "{name} {}", quote(n)),
                }
            }
            Command::PickMetric => f.write_str("pick-metric"),
            Command::Prompt(PromptKind::Search) => f.write_str("prompt search"),
            Command::Prompt(PromptKind::Command) => f.write_str("prompt command"),
            Command::Help => f.write_str("help"),
            Command::Filter { squash, expr, .. } => {
                write!(f, "filter {}{expr}", if *squash { "--squash " } else { "" })
            }
            Command::Squash => f.write_str("squash"),
            Command::Prune { expr, .. } => write!(f, "prune {expr}"),
            Command::PruneOff => f.write_str("prune off"),
            Command::Unprune(p) => write!(f, "unprune {}", quote(p)),
            Command::Hide(p) => write!(f, "hide {}", quote(p)),
            Command::Show(p) => write!(f, "show {}", quote(p)),
            Command::Compose { names, new } => {
                let names: Vec<String> = names.iter().map(|n| quote(n)).collect();
                write!(f, "compose {} as {}", names.join(" "), quote(new))
            }
            Command::GroupBy(a) => write!(f, "group-by {}", quote(a)),
            Command::Derive { def, .. } => write!(f, "derive {def}"),
            Command::Focus(p) => opt(f, "focus", p),
            Command::Unfocus => f.write_str("unfocus"),
            Command::Limit(None) => f.write_str("limit off"),
            Command::Limit(Some(v)) => write!(f, "limit {v}%"),
            Command::Undo => f.write_str("undo"),
            Command::Redo => f.write_str("redo"),
            Command::Reset => f.write_str("reset"),
            Command::PopFilter => f.write_str("pop-filter"),
            Command::Source(p) => write!(f, "source {}", quote(p)),
            Command::Export { format, path } => {
                write!(f, "export {} {}", format.name(), quote(path))
            }
            Command::Save(p) => write!(f, "save {}", quote(p)),
            Command::Panel(p) => write!(f, "panel {}", p.name()),
            Command::Kernels(k) => {
                f.write_str("kernels")?;
                match k.top {
                    Some(Some(n)) => write!(f, " top {n}")?,
                    Some(None) => f.write_str(" all")?,
                    None => {}
                }
                if let Some(b) = &k.by {
                    write!(f, " by {b}")?;
                }
                if let Some(m) = k.memory {
                    write!(f, " memory {}", if m { "on" } else { "off" })?;
                }
                if let Some(c) = k.by_category {
                    write!(f, " group {}", if c { "category" } else { "name" })?;
                }
                Ok(())
            }
            Command::SelectKernel(None) => f.write_str("select-kernel"),
            Command::SelectKernel(Some(n)) => write!(f, "select-kernel {}", quote(n)),
            Command::Zoom(ZoomSpec::Window(a, b)) => {
                write!(f, "zoom {} {}", format_time(*a), format_time(*b))
            }
            Command::Zoom(ZoomSpec::In) => f.write_str("zoom in"),
            Command::Zoom(ZoomSpec::Out) => f.write_str("zoom out"),
            Command::Zoom(ZoomSpec::Fit) => f.write_str("zoom fit"),
            Command::Zoom(ZoomSpec::Kernel) => f.write_str("zoom kernel"),
            Command::Pan(right) => write!(f, "pan {}", if *right { "right" } else { "left" }),
            Command::NextKernel => f.write_str("next-kernel"),
            Command::Lanes(all) => f.write_str(if *all { "lanes all" } else { "lanes gpu" }),
            Command::PrevKernel => f.write_str("prev-kernel"),
            Command::GotoLaunch => f.write_str("goto-launch"),
            Command::HeatmapNorm(m) => write!(f, "heatmap norm {m}"),
            Command::HeatmapSort => f.write_str("heatmap sort"),
            Command::HeatmapColumn(next) => {
                write!(f, "heatmap column {}", if *next { "next" } else { "prev" })
            }
            Command::Diff(a, b) => write!(f, "diff {} {}", quote(a), quote(b)),
            Command::MetaFilter(None) => f.write_str("meta off"),
            Command::MetaFilter(Some(e)) => write!(f, "meta {e}"),
            Command::Quit => f.write_str("quit"),
        }
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
