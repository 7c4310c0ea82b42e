//! Views: pure functions from the application state and a theme to a frame.

pub mod format;
pub mod glyphs;
pub mod gpu_views;
pub mod heat;
pub mod heatmap_view;
pub mod help;
pub mod layout;
pub mod theme;
pub mod tree_view;

pub use layout::draw;
