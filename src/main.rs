//! grove's entry point: parse the command line, hand it to the shell, turn an error
//! into one line and an exit status (2, or 1 for a finding; see `grove --help`).

mod shell;

use std::process::ExitCode;

use clap::Parser;

use grove::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The user's configuration (config dir, keymap, theme, categories) is to be loaded
    // here, once, and passed to the shell; today each subcommand still loads what it
    // needs (shell/tui.rs, shell/kernels.rs, shell/summary.rs).
    match shell::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("grove: {}", e.message);
            ExitCode::from(e.status)
        }
    }
}
