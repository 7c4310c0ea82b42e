//! Headless renderings of a tree: Hatchet's `tree()` text, Hatchet literal JSON,
//! grove's own JSON, CSV, Parquet, folded stacks and Thicket JSON; `formats` is their
//! one table.

pub mod csv;
pub mod flame;
pub mod folded;
pub mod formats;
pub mod functions;
pub mod hatchet;
pub mod json;
pub mod parquet;
pub mod text;
pub mod thicket;
