//! Command-line interface: the TUI by default, and headless twins of the views.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "grove",
    version,
    about = "A terminal explorer for performance profiles and traces",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Profiles or traces to open (format detected from content; .gz by magic bytes).
    /// Several files, or a directory of them, open as an ensemble: one tree, one
    /// column per profile. Without a file, grove opens a demo profile embedded in the
    /// binary.
    pub files: Vec<PathBuf>,

    /// Labels of ensemble members: STEM=LABEL or INDEX=LABEL, comma-separated
    /// (default: distributedInfo.rank, else the file stem).
    #[arg(long, value_name = "STEM=LABEL,...", global = true)]
    pub label: Option<String>,

    #[command(flatten)]
    pub look: Look,

    /// Treat every load warning (truncated input, skipped lines, ...) as an error
    /// (exit code 2); with a replay, also refuse an input that changed since the
    /// session was recorded.
    #[arg(long, global = true)]
    pub strict: bool,

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
    #[arg(long, value_name = "SIZE", global = true)]
    pub max_memory: Option<String>,

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

#[derive(clap::Args, Debug, Clone)]
pub struct Look {
    /// Theme name (default, light, mono) or a theme TOML file.
    #[arg(long, global = true, value_name = "NAME|FILE")]
    pub theme: Option<String>,

    /// Colour depth; auto detects (truecolor only when COLORTERM says so).
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
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrintFormat {
    /// Hatchet's tree() layout of the current tree.
    Tree,
    Json,
    Hatchet,
    Csv,
    /// The CSV's table as Parquet (binary: redirect it to a file).
    Parquet,
    Folded,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum KernelBy {
    Total,
    Mean,
    Count,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutFormat {
    Text,
    Csv,
    Json,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SummaryTable {
    Temporal,
    Idle,
    Overlap,
    Launch,
    Queue,
    Memory,
    Overhead,
    All,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Never,
    #[value(name = "16")]
    C16,
    #[value(name = "256")]
    C256,
    Truecolor,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum TreeFormat {
    /// Hatchet's tree() layout with its legend.
    Text,
    /// grove's JSON schema (docs/formats.md).
    Json,
    /// One row per node: path, name, type, depth, every metric column.
    Csv,
    /// The CSV's table as Parquet, typed, units in its metadata (redirect it to a file).
    Parquet,
    /// Hatchet literal JSON (GraphFrame.from_literal loads it).
    Hatchet,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Print the calling context tree.
    Tree(TreeArgs),
    /// Print the detected format, counts and metrics of a file.
    Info(InfoArgs),
    /// The GPU kernel table (nsys' cuda_gpu_kern_sum columns), over all the files.
    Kernels(KernelsArgs),
    /// HTA's breakdowns per rank and stream (one file per rank).
    Summary(SummaryArgs),
    /// Run a session file headless and print the resulting tree.
    Replay(ReplayArgs),
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
    #[arg(long, value_enum, default_value_t = TreeFormat::Text)]
    pub format: TreeFormat,
    /// Decimals of text values.
    #[arg(long, default_value_t = 3)]
    pub precision: usize,
    /// Leave out the legend after the text tree.
    #[arg(long)]
    pub no_legend: bool,
    /// Print full names instead of shortening those over 39 characters.
    #[arg(long)]
    pub expand_names: bool,
    /// Run commands first (sort, expand, ...), as in the TUI.
    #[arg(long = "cmd", value_name = "COMMAND")]
    pub cmds: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    pub file: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct KernelsArgs {
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Rows to print.
    #[arg(long, default_value_t = usize::MAX, hide_default_value = true)]
    pub top: usize,
    #[arg(long, value_enum, default_value_t = KernelBy::Total)]
    pub by: KernelBy,
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// Include memcpy and memset rows.
    #[arg(long)]
    pub all: bool,
    /// One row per category instead of per kernel name.
    #[arg(long)]
    pub by_category: bool,
    /// Category rules placed before the built-in ones.
    #[arg(long, value_name = "FILE")]
    pub categories: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct SummaryArgs {
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Which table (default: temporal; `all` prints every one).
    #[arg(long, value_enum, default_value_t = SummaryTable::Temporal)]
    pub table: SummaryTable,
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
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
    /// What to print.
    #[arg(long, value_enum, default_value_t = PrintFormat::Tree)]
    pub print: PrintFormat,
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
}
