//! grove's entry point: parse the command line, hand it to the shell, turn an error
//! into one line and an exit status (2, or 1 for a finding; see `grove --help`).

mod shell;

use std::process::ExitCode;

use clap::Parser;

use grove::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The user's configuration (keymap, theme, kernel categories) is read where it is
    // used, each from `config::config_dir()`: the TUI's keymap and theme in
    // shell/tui.rs, the categories in gpu/classify.rs.
    match shell::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("grove: {}", e.message);
            ExitCode::from(e.status)
        }
    }
}
