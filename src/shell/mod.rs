//! The shell: one module per subcommand, plus the parts they share (inputs, output,
//! look). `main` parses the command line and hands it here; nothing below the shell
//! knows about the command line's shape beyond `cli`.

mod completions;
mod diff;
mod functions;
mod info;
mod input;
mod kernels;
mod look;
mod output;
mod progress;
mod replay;
mod sql;
mod summarize;
mod summary;
mod timeline;
mod tree;
mod tui;

use grove::cli::{Cli, Sub};

/// Leaves a finished headless command's profile to the operating system: the process
/// ends right after, and freeing a big tree and its events piece by piece took about a
/// tenth of `grove info` on a 300 MB trace. Never used by the TUI, whose terminal must
/// be restored first.
/// Prints (and clears) the app's notes on Hatchet metric names, as warnings on stderr:
/// headless, that is where the status line's note goes.
pub fn print_notes(app: &mut grove::app::App) {
    for n in app.notes.drain(..) {
        eprintln!("grove: warning: {n}");
    }
}

pub fn leave<T>(done: T) {
    std::mem::forget(done);
}

/// Why grove stops: a message for stderr and the exit status (documented in `grove
/// --help`): 1 for a finding (`replay --strict` on a changed input), 2 for a usage or
/// input error. clap exits with 2 on its own usage errors.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub status: u8,
}

impl Failure {
    pub fn finding(message: String) -> Failure {
        Failure { message, status: 1 }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::from(message.to_string())
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure { message, status: 2 }
    }
}

/// Runs what the command line asks for.
pub fn run(mut cli: Cli) -> Result<(), Failure> {
    // The memory grove may use (cgroup, ulimit, --max-memory), before anything loads.
    grove::memory::configure(cli.max_memory.as_deref())?;
    grove::memory::set_low_memory(cli.low_memory);
    grove::readers::select::configure(cli.steps.as_deref(), cli.window.as_deref())?;
    input::set_warnings(cli.strict, cli.command.is_some());
    cli.replay_opts.strict = cli.strict;
    cli.replay_opts.keep_steps = cli.keep_steps;
    // An execution trace is attached by the TUI and `tree`; elsewhere only the one
    // found beside the trace by name is, so an explicit --et is refused, not ignored.
    if cli.keep_steps && !matches!(cli.command, None | Some(Sub::Replay(_))) {
        return Err("--keep-steps before a subcommand is read by the TUI and `grove replay` (`grove diff --keep-steps` has its own)".to_string().into());
    }
    if cli.et.is_some() && !matches!(cli.command, None | Some(Sub::Tree(_))) {
        return Err("--et is read by the TUI and `grove tree` (other subcommands attach an ET found beside the trace by name)".to_string().into());
    }
    if let Some(sub) = &cli.command {
        if let Some(opt) = cli.explorer_options().first() {
            return Err(format!(
                "{opt} belongs to the explorer (`grove [OPTIONS] FILE...`), not to `grove {}`; see `grove {} --help`",
                sub.name(),
                sub.name()
            )
            .into());
        }
    }
    match cli.command.take() {
        None => tui::run(cli),
        Some(Sub::Tree(args)) => Ok(tree::run(
            // `grove --et ET tree FILE` as well as `grove tree FILE --et ET`.
            args.et.clone().or(cli.et.clone()),
            args,
            cli.label.as_deref(),
            &cli.look,
            !cli.no_cache,
        )?),
        Some(Sub::Diff(args)) => diff::run(args, cli.label.as_deref(), &cli.look),
        Some(Sub::Info(args)) => Ok(info::run(args, cli.label.as_deref())?),
        Some(Sub::Kernels(args)) => Ok(kernels::run(args, cli.label.as_deref(), &cli.look)?),
        Some(Sub::Functions(args)) => {
            Ok(functions::run(args, cli.label.as_deref(), !cli.no_cache)?)
        }
        Some(Sub::Summary(args)) => Ok(summary::run(args, cli.label.as_deref())?),
        Some(Sub::Timeline(args)) => Ok(timeline::run(args, cli.window.clone(), &cli.look)?),
        Some(Sub::Replay(mut args)) => {
            args.opts.strict = cli.strict;
            args.opts.keep_steps = cli.keep_steps;
            replay::run(args, &cli.look)
        }
        Some(Sub::Summarize(args)) => Ok(summarize::run(args)?),
        Some(Sub::Sql(args)) => Ok(sql::run(args)?),
        Some(Sub::Completions(args)) => Ok(completions::completions(args.shell)?),
        Some(Sub::Man) => Ok(completions::man()?),
    }
}

/// The user's kernel categories (`$XDG_CONFIG_HOME/grove/categories.toml`), else the
/// built-in ones. Read here, in the shell, and passed to the app: `App::new` reads no
/// configuration, so tests never depend on the machine's config folder.
pub(crate) fn user_categories() -> grove::gpu::classify::Categories {
    grove::gpu::classify::Categories::load(None)
        .unwrap_or_else(|_| grove::gpu::classify::Categories::builtin())
}
