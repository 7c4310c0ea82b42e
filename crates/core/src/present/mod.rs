//! Presentation helpers shared by the views (`ui`), the headless exports and the GPU
//! reports: number and duration formatting, heat scales, glyph sets. They sit below
//! `ui` so that `export` and `gpu` can use them without importing the TUI.

pub mod distinct;
pub mod format;
pub mod glyphs;
pub mod heads;
pub mod heat;
pub mod readable;
pub mod suggest;
