//! grove's views: pure functions of the application state and a theme that draw each
//! panel with ratatui (`ui`), and the terminal loop that reads keys, runs their commands
//! and draws frames (`tui`).

use grove_analysis::{diff, ensemble, gpu, sql, transform};
use grove_app::app;
use grove_core::{model, present, readers, terminal_guard};

pub mod tui;
pub mod ui;
