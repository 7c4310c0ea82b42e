//! grove's entry point: parse the command line, hand it to the shell, turn an error
//! into one line and an exit status (2, or 1 for a finding; see `grove --help`).

mod shell;

use std::process::ExitCode;

use clap::Parser;

use grove::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The user's configuration (keymap, theme, kernel categories) is read by the shell
    // and passed in, never by `App`: the TUI's keymap (`Keymap::load`) and theme
    // (`look::theme_of`) in shell/tui.rs, the kernel categories in
    // `shell::user_categories` (`gpu::classify::Categories::load`).
    match shell::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("grove: {}", e.message);
            ExitCode::from(e.status)
        }
    }
}
