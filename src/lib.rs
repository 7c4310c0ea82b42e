//! grove: a terminal explorer for performance profiles and traces.

pub mod app;
pub mod cli;
pub mod config;
pub mod diff;
pub mod ensemble;
pub mod export;
pub mod gpu;
pub mod json;
pub mod load;
pub mod memory;
pub mod model;
pub mod present;
pub mod query;
pub mod readers;
pub mod session;
pub mod sql;
pub mod summary;
pub mod terminal_guard;
pub mod transform;
pub mod tui;
pub mod ui;

/// grove's version: the crate version, the commit and the build date (build.rs), as
/// `grove --version` prints it and the summaries and the cache record it. At the root,
/// not in `cli`, so the layers below the shell can name it.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("GROVE_COMMIT"),
    " ",
    env!("GROVE_BUILD_DATE"),
    ")"
);
