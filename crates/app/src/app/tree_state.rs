//! The tree panel's state lives in `panels::tree`; this name stays for its callers.

pub use super::panels::tree::*;
