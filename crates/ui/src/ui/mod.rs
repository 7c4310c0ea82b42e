//! Views: pure functions from the application state and a theme to a frame.

pub mod charts;
pub mod gaps;
pub mod help;
pub mod layout;
pub mod loading;
pub mod panels;
pub mod text;
pub mod theme;

pub use layout::draw;
// The presentation helpers moved below `ui`; these names stay for existing callers.
pub use crate::present::{format, glyphs, heat};
