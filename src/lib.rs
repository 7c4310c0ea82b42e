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
