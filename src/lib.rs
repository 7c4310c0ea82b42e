//! grove: a terminal explorer for performance profiles and traces.
//!
//! The library is a workspace of layers (docs/architecture.md, "Layers"), re-exported
//! here under the paths the binary, the tests and the benchmarks use (`grove::model`,
//! `grove::app`, ...). This crate itself holds only the command line (`cli`); the
//! binary's shell (`src/shell/`) sits beside it.

pub use grove_analysis::{
    diff, ensemble, export, gpu, load, query, sql, summary, transform, VERSION,
};
pub use grove_app::{app, session};
pub use grove_core::{config, json, memory, model, present, readers, terminal_guard};
pub use grove_ui::{tui, ui};

pub mod cli;
