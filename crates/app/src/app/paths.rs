//! Node paths live in the model (`model::paths`); this name stays for the app's callers.

pub use crate::model::paths::*;
