//! grove: a terminal explorer for performance profiles and traces.

pub mod app;
pub mod cli;
pub mod ensemble;
pub mod export;
pub mod gpu;
pub mod json;
pub mod model;
pub mod query;
pub mod readers;
pub mod session;
pub mod summary;
pub mod transform;
pub mod tui;
pub mod ui;
