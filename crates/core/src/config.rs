//! Where the user's configuration lives. The shell (`main`) loads what it needs from
//! here once (keymap, theme, kernel categories) and passes it down: `App::new` and the
//! tests never read the machine's config folder. This module sits at the floor (it
//! imports nothing from grove), so every layer may ask for the folder.

use std::path::PathBuf;

/// `$XDG_CONFIG_HOME`, else `~/.config`.
pub fn config_dir() -> Option<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME") {
        Some(d) if !d.is_empty() => Some(PathBuf::from(d)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")),
    }
}
