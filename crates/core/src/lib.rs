//! grove's lowest layer: the one model every input becomes (`model`: the calling context
//! tree, metric columns, the event table), the readers that make it (`readers`, one module
//! per format behind one registry), the JSON decoder they share (`json`), and what every
//! layer above needs: memory budgets (`memory`), user configuration (`config`), the
//! terminal's restoration on signals (`terminal_guard`) and the presentation of numbers
//! and names (`present`). Nothing here knows of analyses, the application or ratatui.

pub mod config;
pub mod json;
pub mod memory;
pub mod model;
pub mod present;
pub mod readers;
pub mod terminal_guard;
