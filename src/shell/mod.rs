//! The shell: one module per subcommand, plus the parts they share (inputs, output,
//! look). `main` parses the command line and hands it here; nothing below the shell
//! knows about the command line's shape beyond `cli`.

mod completions;
mod info;
mod input;
mod kernels;
mod look;
mod output;
mod replay;
mod summarize;
mod summary;
mod tree;
mod tui;

use grove::cli::{Cli, Sub};

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
    match cli.command.take() {
        None => tui::run(cli),
        Some(Sub::Tree(args)) => Ok(tree::run(args, cli.label.as_deref(), &cli.look)?),
        Some(Sub::Info(args)) => Ok(info::run(args, cli.label.as_deref())?),
        Some(Sub::Kernels(args)) => Ok(kernels::run(args, &cli.look)?),
        Some(Sub::Summary(args)) => Ok(summary::run(args)?),
        Some(Sub::Replay(args)) => replay::run(args, &cli.look),
        Some(Sub::Summarize(args)) => Ok(summarize::run(args)?),
        Some(Sub::Completions(args)) => Ok(completions::completions(args.shell)?),
        Some(Sub::Man) => Ok(completions::man()?),
    }
}
