//! Command-line interface: the TUI by default, and headless twins of the views.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

mod help;

/// `grove --version` (it lives at the crate's root: the summaries record it too).
pub use crate::VERSION;

#[derive(Parser, Debug)]
#[command(
    name = "grove",
    version = VERSION,
    about = "A terminal explorer for performance profiles and traces",
    after_help = help::MAIN,
    after_long_help = help::MAIN_LONG,
)]
pub struct Cli {
    /// Profiles or traces to open (format detected from content; .gz by magic bytes).
    /// Several files, or a directory of them (searched 4 levels down), open as an
    /// ensemble: one tree, one column per profile. Without a file, grove opens a demo
    /// profile embedded in the binary.
    pub files: Vec<PathBuf>,

    /// Labels of ensemble members: STEM=LABEL or INDEX=LABEL, comma-separated
    /// (default: distributedInfo.rank, else the file stem, or the parts of the paths
    /// that differ when stems repeat).
    #[arg(long, value_name = "STEM=LABEL,...", global = true)]
    pub label: Option<String>,

    /// PyTorch execution trace of the same run as the (Kineto) trace given: its
    /// operators' schemas, input/output shapes and types are attached to the trace's
    /// CPU ops by record-function id. Without it, `NAME_et.json[.gz]` (or
    /// `NAME.et.json[.gz]`) beside `NAME_trace.json[.gz]` is attached when present.
    // Not global: only the explorer and `grove tree` read it, so only their help
    // lists it (issue 28: `grove info --help` offered an option `info` refused).
    #[arg(long, value_name = "ET")]
    pub et: Option<PathBuf>,

    /// Two profiles opened together are compared, and their PyTorch training steps
    /// (`ProfilerStep#N`, numbered differently in two runs) merge into one
    /// `ProfilerStep#*` node per side, as `grove diff` merges them: keep them apart.
    // Not global: `grove diff` has its own.
    #[arg(long)]
    pub keep_steps: bool,

    #[command(flatten)]
    pub look: Look,

    /// Treat every load warning (truncated input, skipped lines, ...) as an error
    /// (exit code 2); with a replay, also refuse an input that changed since the
    /// session was recorded.
    #[arg(long, global = true)]
    pub strict: bool,

    /// Do not use grove's cache of opened traces (`$XDG_CACHE_HOME/grove`): neither
    /// open a trace's tree from it nor write it.
    #[arg(long, global = true)]
    pub no_cache: bool,

    /// Keymap file layered over the defaults and the user's keymap.
    #[arg(long, value_name = "FILE")]
    pub keymap: Option<PathBuf>,

    /// Run a command at start (repeatable), e.g. --cmd "hot-path".
    #[arg(long = "cmd", value_name = "COMMAND")]
    pub cmds: Vec<String>,

    /// Do not wrap frames in synchronized-output escapes.
    #[arg(long)]
    pub no_sync: bool,

    /// Write the session (every command that changes the view) to FILE instead of the
    /// default in $XDG_STATE_HOME/grove/sessions.
    #[arg(long, value_name = "FILE", conflicts_with = "no_session")]
    pub session: Option<PathBuf>,

    /// Memory grove may use (512M, 4G; default: the cgroup limit, `ulimit -v` or
    /// physical memory, whichever is smallest). Loads that cannot fit are refused.
    // A negative size reaches grove's own parser, which refuses it in one line (clap
    // would print its usage block).
    #[arg(long, value_name = "SIZE", global = true, allow_hyphen_values = true)]
    pub max_memory: Option<String>,

    /// Keep the full tree with all its metrics and the kernel table's numbers, but only
    /// a level-of-detail summary of a trace's events (also GROVE_LOW_MEMORY=1); a trace
    /// that does not fit then loads whole instead of its leading steps.
    #[arg(long, global = true)]
    pub low_memory: bool,

    /// Load only ProfilerStep#A to #B of a Chrome/Kineto trace (`5-7`, or one step `5`):
    /// their slices, the slices enclosing them and the GPU work they launched.
    #[arg(long, value_name = "A-B", global = true, conflicts_with = "window")]
    pub steps: Option<String>,

    /// Load only a time window of a Chrome/Kineto trace, counted from its first event
    /// (`2.1s-2.4s`, `100ms-250ms`; units ns, us, ms, s): the slices starting in it, the
    /// slices enclosing them and the GPU work they launched.
    #[arg(long, value_name = "START-END", global = true)]
    pub window: Option<String>,

    /// Do not write a session file.
    #[arg(long)]
    pub no_session: bool,

    /// Log cursor movement to the session too (for bug reports).
    #[arg(long)]
    pub log_nav: bool,

    /// Reopen a session's inputs and restore its view, then continue in the TUI.
    #[arg(long, value_name = "SESSION")]
    pub replay: Option<PathBuf>,

    #[command(flatten)]
    pub replay_opts: ReplayOpts,

    #[command(subcommand)]
    pub command: Option<Sub>,
}

impl Cli {
    /// The explorer's own options (not global) given on the command line: with a
    /// subcommand they would do nothing, so the shell refuses them instead of ignoring
    /// them.
    pub fn explorer_options(&self) -> Vec<&'static str> {
        let given = [
            (!self.files.is_empty(), "a FILE before the subcommand"),
            (self.keymap.is_some(), "--keymap"),
            (!self.cmds.is_empty(), "--cmd"),
            (self.no_sync, "--no-sync"),
            (self.session.is_some(), "--session"),
            (self.no_session, "--no-session"),
            (self.log_nav, "--log-nav"),
            (self.replay.is_some(), "--replay"),
            (self.replay_opts.until.is_some(), "--until"),
        ];
        given.iter().filter(|(g, _)| *g).map(|(_, n)| *n).collect()
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct Look {
    /// Theme name (default, light, mono) or a theme TOML file.
    #[arg(long, global = true, value_name = "NAME|FILE")]
    pub theme: Option<String>,

    /// Colour: auto colours a terminal only (NO_COLOR turns it off, CLICOLOR_FORCE on);
    /// always colours pipes too; 8, 16, 256 and truecolor also force the depth (auto
    /// detects it: truecolor only when COLORTERM says so, else what `tput colors` says
    /// of TERM; 8 and 16 colours are written as SGR 30-37/90-97).
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,

    /// Use ASCII instead of box-drawing glyphs (automatic when the locale is not UTF-8).
    #[arg(long, global = true)]
    pub ascii: bool,
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReplayOpts {
    /// Replay only the first N commands.
    #[arg(long, value_name = "N")]
    pub until: Option<usize>,

    /// Set from the global `--strict` (`Cli::strict`) by the shell.
    #[arg(skip)]
    pub strict: bool,

    /// Set from `--keep-steps` (`Cli::keep_steps`) by the shell: a session of two
    /// profiles reopens them as the TUI opened them.
    #[arg(skip)]
    pub keep_steps: bool,
}

pub use crate::export::formats::{Format, Writes};
use crate::gpu::report::Table;

/// A `--format` parser accepting the formats of `FORMATS` that write `w`, so each
/// subcommand's help and completion list its own.
fn formats(w: Writes) -> impl TypedValueParser<Value = Format> {
    let values =
        crate::export::formats::writing(w).map(|f| PossibleValue::new(f.name).help(f.help));
    PossibleValuesParser::new(values).map(|s| Format::named(&s).unwrap_or(Format::Text))
}

/// `replay --print`, the old name of `--format`: `tree` for text, and the tree formats.
fn print_formats() -> impl TypedValueParser<Value = Format> {
    let values = std::iter::once(PossibleValue::new("tree")).chain(
        crate::export::formats::writing(Writes::Tree)
            .filter(|f| f.format != Format::Text)
            .map(|f| PossibleValue::new(f.name)),
    );
    PossibleValuesParser::new(values).map(|s| Format::named(&s).unwrap_or(Format::Text))
}

/// `grove summary --table`: one of `report::Table::ALL` by name, or `all`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryTables(pub Vec<Table>);

fn summary_tables() -> impl TypedValueParser<Value = SummaryTables> {
    let names = Table::ALL.iter().map(|t| t.name()).chain(["all"]);
    PossibleValuesParser::new(names).map(|s| {
        SummaryTables(match Table::ALL.iter().find(|t| t.name() == s) {
            Some(t) => vec![*t],
            None => Table::ALL.to_vec(),
        })
    })
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum KernelBy {
    Total,
    Mean,
    Count,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
    #[value(name = "8")]
    C8,
    #[value(name = "16")]
    C16,
    #[value(name = "256")]
    C256,
    Truecolor,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Print the calling context tree.
    #[command(after_help = help::TREE)]
    Tree(TreeArgs),
    /// Rank what changed from BASE to NEW by call path and by kernel; exit 1 on a
    /// regression past the threshold.
    #[command(after_help = help::DIFF)]
    Diff(DiffArgs),
    /// Print the detected format, counts and metrics of each input, then of the ensemble.
    #[command(after_help = help::INFO)]
    Info(InfoArgs),
    /// The GPU kernel table (nsys' cuda_gpu_kern_sum columns), over all the files.
    #[command(after_help = help::KERNELS)]
    Kernels(KernelsArgs),
    /// Every function once, merged over its call sites: self, inclusive, calls, % of
    /// total; or one function's callers or callees.
    #[command(after_help = help::FUNCTIONS)]
    Functions(FunctionsArgs),
    /// The timeline's stack chart as text (or its slices as CSV): a window (global
    /// `--window A-B`, from the trace's start), a step, or the whole trace.
    Timeline(TimelineArgs),
    /// HTA's breakdowns per rank and stream (one file per rank).
    #[command(after_help = help::SUMMARY)]
    Summary(SummaryArgs),
    /// Run a session file headless and print the resulting tree.
    #[command(after_help = help::REPLAY)]
    Replay(ReplayArgs),
    /// Write a Parquet summary of each trace (tree, kernels, breakdowns, metadata) into
    /// a directory; `grove DIR` opens the summaries as an ensemble.
    #[command(after_help = help::SUMMARIZE)]
    Summarize(SummarizeArgs),
    /// Run an SQL query over the inputs' tables (nodes, functions, events, kernels,
    /// lanes, steps, counters, profiles; docs/sql.md).
    #[command(after_help = help::SQL)]
    Sql(SqlArgs),
    /// Print a shell completion script.
    #[command(after_help = help::COMPLETIONS)]
    Completions(CompletionsArgs),
    /// Print grove's man page (roff).
    #[command(after_help = help::MAN)]
    Man,
}

impl Sub {
    /// The subcommand's name on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Sub::Tree(_) => "tree",
            Sub::Diff(_) => "diff",
            Sub::Info(_) => "info",
            Sub::Kernels(_) => "kernels",
            Sub::Functions(_) => "functions",
            Sub::Timeline(_) => "timeline",
            Sub::Summary(_) => "summary",
            Sub::Replay(_) => "replay",
            Sub::Summarize(_) => "summarize",
            Sub::Sql(_) => "sql",
            Sub::Completions(_) => "completions",
            Sub::Man => "man",
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct SummarizeArgs {
    /// Traces or profiles (files, directories, quoted globs), each summarized alone.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Directory to write into (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub out: PathBuf,
    /// Name of the summary (one input only; default: rank{R} when the trace names its
    /// rank, else the file stem).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Round times inward to whole µs first in the breakdowns, as HTA does.
    #[arg(long)]
    pub hta_rounding: bool,
}

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

// One struct per subcommand, so each shell module takes its own arguments whole. Their
// help texts are the variants' doc comments above.

#[derive(clap::Args, Debug)]
pub struct TreeArgs {
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Metric column(s), comma-separated (default: the profile's default metric).
    #[arg(long, value_name = "NAME[,NAME...]")]
    pub metric: Option<String>,
    /// Print nodes down to this depth (roots are depth 0).
    #[arg(long)]
    pub depth: Option<usize>,
    /// Output format.
    #[arg(long, value_parser = formats(Writes::Tree), default_value = "text")]
    pub format: Format,
    /// Raw numbers with this many decimals in text output (implies --raw).
    #[arg(long, value_name = "N")]
    pub precision: Option<usize>,
    /// Text output as Hatchet prints it: raw numbers (3 decimals, or --precision), no
    /// header row, no units (csv and json are always raw).
    #[arg(long)]
    pub raw: bool,
    /// Leave out the legend after the text tree.
    #[arg(long)]
    pub no_legend: bool,
    /// Print full names instead of shortening those over 39 characters.
    #[arg(long)]
    pub expand_names: bool,
    /// Width in cells of the flame graph that `--cmd "panel flame"` prints as text
    /// (the panel's width in the TUI; default 80).
    #[arg(long, value_name = "N")]
    pub width: Option<u16>,
    /// Run commands first (sort, expand, ...), as in the TUI.
    #[arg(long = "cmd", value_name = "COMMAND")]
    pub cmds: Vec<String>,
    /// The bottom-up tree: roots are the functions with self cost, children their
    /// callers; a node's inclusive value is the root function's self cost on the call
    /// paths that end in its chain.
    #[arg(long)]
    pub inverted: bool,
    /// PyTorch execution trace of the same run, attached to the trace's CPU ops (as
    /// `grove --et ET FILE`); without it one beside the trace by name is attached.
    #[arg(long, value_name = "ET")]
    pub et: Option<PathBuf>,
}

/// What `grove functions` sorts by.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum FunctionSort {
    #[value(name = "self")]
    Self_,
    Inclusive,
    Calls,
    Name,
    Place,
}

#[derive(clap::Args, Debug)]
pub struct FunctionsArgs {
    /// Files, directories or quoted globs; several make an ensemble.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Metric (default: the profile's default metric); `NAME (inc)` names the same.
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Rows to print (functions, or callers/callees).
    #[arg(long, default_value_t = usize::MAX, hide_default_value = true)]
    pub top: usize,
    /// Column to sort by (largest first; names A to Z).
    #[arg(long, value_enum, default_value_t = FunctionSort::Self_)]
    pub sort: FunctionSort,
    /// Sort the other way round.
    #[arg(long)]
    pub reverse: bool,
    /// The functions that call NAME, with the cost along each edge.
    #[arg(long, value_name = "NAME", conflicts_with = "callees")]
    pub callers: Option<String>,
    /// The functions NAME calls, with the cost along each edge.
    #[arg(long, value_name = "NAME")]
    pub callees: Option<String>,
    /// Output format.
    #[arg(long, value_parser = formats(Writes::Tables), default_value = "text")]
    pub format: Format,
}

#[derive(clap::Args, Debug)]
pub struct TimelineArgs {
    /// A trace (Kineto/Chrome JSON, Nsight, OTF2, XPlane, ...); several (or a
    /// directory of ranks) draw each one's lanes under a header with its label.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Mark every slice of the tree node at PATH (as `timeline mark PATH`).
    #[arg(long, value_name = "PATH")]
    pub mark: Option<String>,
    /// Fit the window to ProfilerStep#N (instead of `--window`).
    #[arg(long, value_name = "N")]
    pub step: Option<u64>,
    /// Lanes to draw: gpu (the default), all (CPU threads too), cpu, or lane labels
    /// comma-separated (`GPU0 s7,CPU t12`).
    #[arg(long, value_name = "LANES")]
    pub lanes: Option<String>,
    /// Width in cells, lane labels included.
    #[arg(long, value_name = "N", default_value_t = 120)]
    pub width: u16,
    /// text: the stack chart; csv: the slices in the window, one per row.
    #[arg(long, value_parser = formats(Writes::Events), default_value = "text")]
    pub format: Format,
}

#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The baseline: a profile or trace, or a directory holding one Parquet summary.
    pub base: PathBuf,
    /// The run compared with it, read the same way.
    pub new: PathBuf,
    /// Metric to compare, without label or "(inc)" (default: the profiles' default
    /// metric).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Smallest difference that counts: N% of BASE's total, or an amount (2ms, 150us,
    /// or a plain number in the metric's unit).
    #[arg(long, value_name = "N%|AMOUNT", default_value = "1%")]
    pub threshold: String,
    /// Rows per list (regressions, improvements, for call paths and for kernels).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Output format.
    #[arg(long, value_parser = formats(Writes::Tables), default_value = "text")]
    pub format: Format,
    /// Keep training steps apart: by default the steps of each run (`ProfilerStep#N`,
    /// numbered differently in two runs) merge into one `ProfilerStep#*` node.
    #[arg(long)]
    pub keep_steps: bool,
    /// Reshape both sides before comparing (repeatable), as `grove tree --cmd`:
    /// e.g. --cmd "focus ProfilerStep#*" or --cmd "filter --squash type == 'kernel'".
    #[arg(long = "cmd", value_name = "COMMAND")]
    pub cmds: Vec<String>,
    /// Print full names in text output instead of shortening those over 39 characters.
    #[arg(long)]
    pub expand_names: bool,
}

#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    /// Files, directories or quoted globs; several make an ensemble.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format (json: one line per input, then one for the ensemble).
    #[arg(long, value_parser = formats(Writes::Info), default_value = "text")]
    pub format: Format,
}

#[derive(clap::Args, Debug)]
pub struct KernelsArgs {
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Rows to print (several profiles side by side: the rows of the first N kernels).
    #[arg(long, default_value_t = usize::MAX, hide_default_value = true)]
    pub top: usize,
    #[arg(long, value_enum, default_value_t = KernelBy::Total)]
    pub by: KernelBy,
    /// Output format.
    #[arg(long, value_parser = formats(Writes::Tables), default_value = "text")]
    pub format: Format,
    /// Include memcpy and memset rows.
    #[arg(long)]
    pub all: bool,
    /// One row per category instead of per kernel name.
    #[arg(long)]
    pub by_category: bool,
    /// Category rules placed before the built-in ones.
    #[arg(long, value_name = "FILE")]
    pub categories: Option<PathBuf>,
    /// Several inputs: one row per kernel over all of them (the ranks of one run),
    /// instead of a row per profile and kernel with a `profile` column.
    #[arg(long)]
    pub merge: bool,
}

#[derive(clap::Args, Debug)]
pub struct SqlArgs {
    /// Files, directories or quoted globs, then the query (unless --sql-file gives it);
    /// several inputs add a `profile` column to every table.
    #[arg(required = true, value_name = "FILE... QUERY")]
    pub args: Vec<String>,
    /// Read the query from this file instead.
    #[arg(long, value_name = "Q.sql")]
    pub sql_file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_parser = formats(Writes::Query), default_value = "text")]
    pub format: Format,
    /// Category rules placed before the built-in ones (the kernels table's category).
    #[arg(long, value_name = "FILE")]
    pub categories: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct SummaryArgs {
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Which table (default: temporal; `all` prints every one).
    #[arg(long, value_parser = summary_tables(), default_value = "temporal")]
    pub table: SummaryTables,
    /// Output format.
    #[arg(long, value_parser = formats(Writes::Tables), default_value = "text")]
    pub format: Format,
    /// Round times inward to whole µs first, as HTA does.
    #[arg(long)]
    pub hta_rounding: bool,
    /// Idle gaps shorter than this are "kernel wait" (a time such as 30us; a plain
    /// number is µs, as HTA's consecutive_kernel_delay).
    #[arg(long, value_name = "TIME", default_value = "30us")]
    pub kernel_wait: String,
}

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    pub session: PathBuf,
    /// Output format [default: text].
    #[arg(long, value_parser = formats(Writes::Tree), conflicts_with = "print")]
    pub format: Option<Format>,
    /// The old name of --format (tree is text).
    #[arg(long, value_parser = print_formats(), hide = true)]
    pub print: Option<Format>,
    /// Use this input instead of the one the session names.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    #[command(flatten)]
    pub opts: ReplayOpts,
    /// More commands after the session's (repeatable).
    #[arg(long = "cmd", value_name = "COMMAND")]
    pub cmds: Vec<String>,
    /// Print nodes down to this depth (tree, json, csv).
    #[arg(long)]
    pub depth: Option<usize>,
    /// Text output with raw numbers (3 decimals) and no header row, as before units.
    #[arg(long)]
    pub raw: bool,
}

impl ReplayArgs {
    /// `--format`, else the old `--print`, else text.
    pub fn format(&self) -> Format {
        self.format.or(self.print).unwrap_or(Format::Text)
    }
}
