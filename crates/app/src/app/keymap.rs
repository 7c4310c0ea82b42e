//! Keymaps: TOML files binding keys to command strings, layered default -> user file
//! (XDG config dir) -> `--keymap FILE`. Unknown commands, bad keys and a key bound
//! twice in one file are load errors.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::command::Command;
use super::keys::Key;

pub const DEFAULT: &str = include_str!("../../../../keymaps/default.toml");

/// Key sections: `normal` applies everywhere; each panel's section, named after it
/// (`app::panels::PANELS`), comes first on that panel.
pub fn sections() -> impl Iterator<Item = &'static str> {
    std::iter::once("normal").chain(super::panels::PANELS.iter().map(|p| p.name()))
}

#[derive(Debug, Clone)]
pub struct Binding {
    pub mode: &'static str,
    pub keys: Vec<Key>,
    pub run: String,
    pub desc: String,
}

#[derive(Debug, Clone, Default)]
pub struct Keymap {
    map: HashMap<(&'static str, Key), usize>,
    /// Bindings in file order (the help overlay lists them so).
    pub bindings: Vec<Binding>,
}

impl Keymap {
    pub fn default_map() -> Keymap {
        let mut k = Keymap::default();
        k.merge_text(DEFAULT, "keymaps/default.toml")
            .expect("the default keymap is valid");
        k
    }

    /// Default, then the user's file when present, then an explicit file.
    pub fn load(explicit: Option<&Path>) -> Result<Keymap, String> {
        let mut k = Keymap::default_map();
        if let Some(user) = user_keymap_path() {
            if user.exists() {
                k.merge_file(&user)?;
            }
        }
        if let Some(p) = explicit {
            k.merge_file(p)?;
        }
        Ok(k)
    }

    pub fn merge_file(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        self.merge_text(&text, &path.display().to_string())
    }

    pub fn merge_text(&mut self, text: &str, origin: &str) -> Result<(), String> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            format!(
                "{origin}: {}",
                e.to_string().lines().next().unwrap_or("invalid TOML")
            )
        })?;
        for key in doc.keys() {
            if !sections().any(|m| m == key) {
                let all: Vec<&str> = sections().collect();
                return Err(format!(
                    "{origin}: unknown section [[{key}]] (sections: {})",
                    all.join(", ")
                ));
            }
        }
        for mode in sections() {
            if let Some(list) = doc.get(mode) {
                self.merge_mode(mode, list, origin)?;
            }
        }
        Ok(())
    }

    fn merge_mode(
        &mut self,
        mode: &'static str,
        list: &toml::Value,
        origin: &str,
    ) -> Result<(), String> {
        let list = list
            .as_array()
            .ok_or_else(|| format!("{origin}: [[{mode}]] must be a list of bindings"))?;
        let mut seen: HashMap<Key, usize> = HashMap::new();
        for (i, b) in list.iter().enumerate() {
            let at = format!("{origin}: [[{mode}]] binding {}", i + 1);
            let t = b.as_table().ok_or_else(|| format!("{at}: not a table"))?;
            let run = t
                .get("run")
                .and_then(|v| v.as_str())
                .ok_or_else(|| format!("{at}: missing run = \"command\""))?
                .to_string();
            if run != "no-op" {
                Command::parse(&run).map_err(|e| format!("{at}: run = {run:?}: {e}"))?;
            }
            let on: Vec<String> = match t.get("on") {
                Some(toml::Value::String(s)) => vec![s.clone()],
                Some(toml::Value::Array(a)) => a
                    .iter()
                    .map(|v| v.as_str().map(|s| s.to_string()))
                    .collect::<Option<_>>()
                    .ok_or_else(|| format!("{at}: on must be key strings"))?,
                _ => return Err(format!("{at}: missing on = [\"key\", ...]")),
            };
            let keys = on
                .iter()
                .map(|s| Key::parse(s).map_err(|e| format!("{at}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            for k in &keys {
                if let Some(prev) = seen.insert(*k, i) {
                    return Err(format!(
                        "{at}: key {k} is already bound by binding {} of this section",
                        prev + 1
                    ));
                }
            }
            let desc = t
                .get("desc")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string();
            // A later file replaces earlier bindings of the same keys in the same section.
            for k in &keys {
                if let Some(&old) = self.map.get(&(mode, *k)) {
                    self.bindings[old].keys.retain(|x| x != k);
                }
            }
            if run == "no-op" {
                for k in &keys {
                    self.map.remove(&(mode, *k));
                }
                continue;
            }
            let idx = self.bindings.len();
            for k in &keys {
                self.map.insert((mode, *k), idx);
            }
            self.bindings.push(Binding {
                mode,
                keys,
                run,
                desc,
            });
        }
        // Re-index after removals.
        self.bindings.retain(|b| !b.keys.is_empty());
        self.map.clear();
        for (i, b) in self.bindings.iter().enumerate() {
            for k in &b.keys {
                self.map.insert((b.mode, *k), i);
            }
        }
        Ok(())
    }

    /// The command of a key in a section, falling back to `normal`.
    pub fn lookup_in(&self, mode: &str, key: &Key) -> Option<&str> {
        let m = sections().find(|m| *m == mode).unwrap_or("normal");
        self.map
            .get(&(m, *key))
            .or_else(|| self.map.get(&("normal", *key)))
            .map(|&i| self.bindings[i].run.as_str())
    }

    pub fn lookup(&self, key: &Key) -> Option<&str> {
        self.lookup_in("normal", key)
    }
}

pub fn user_keymap_path() -> Option<PathBuf> {
    config_dir().map(|d| d.join("grove").join("keymap.toml"))
}

pub use crate::config::config_dir;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_overrides() {
        let mut k = Keymap::default_map();
        assert_eq!(k.lookup(&Key::char('j')), Some("down"));
        assert_eq!(
            k.lookup(&Key::parse("<C-d>").unwrap()),
            Some("half-page-down")
        );
        k.merge_text(
            "[[normal]]\non = [\"j\"]\nrun = \"up\"\n[[normal]]\non=\"q\"\nrun=\"no-op\"",
            "user",
        )
        .unwrap();
        assert_eq!(k.lookup(&Key::char('j')), Some("up"));
        assert_eq!(k.lookup(&Key::char('q')), None);
        assert_eq!(k.lookup(&Key::char('k')), Some("up"));
        assert_eq!(k.lookup(&Key::parse("<Down>").unwrap()), Some("down"));
    }

    /// Every panel has a section, named after it, looked up before `[[normal]]`.
    #[test]
    fn each_panel_has_its_section() {
        let mut k = Keymap::default_map();
        k.merge_text("[[summary]]\non = \"j\"\nrun = \"up\"", "user")
            .unwrap();
        assert_eq!(k.lookup_in("summary", &Key::char('j')), Some("up"));
        assert_eq!(k.lookup_in("tree", &Key::char('j')), Some("down"));
        let e = k.merge_text("[[sunburst]]\non = \"j\"\nrun = \"up\"", "f");
        let want = "f: unknown section [[sunburst]] (sections: normal, tree, heatmap, kernels, timeline, summary, flame, functions, sql)";
        assert_eq!(e.unwrap_err(), want);
    }

    #[test]
    fn load_errors() {
        let mut k = Keymap::default_map();
        let e = k
            .merge_text("[[normal]]\non=[\"x\"]\nrun=\"frobnicate\"", "f")
            .unwrap_err();
        assert!(e.contains("unknown command"), "{e}");
        let e = k
            .merge_text(
                "[[normal]]\non=[\"x\"]\nrun=\"up\"\n[[normal]]\non=[\"x\"]\nrun=\"down\"",
                "f",
            )
            .unwrap_err();
        assert!(e.contains("already bound"), "{e}");
        assert!(k
            .merge_text("[[normal]]\non=[\"<Nope>\"]\nrun=\"up\"", "f")
            .is_err());
    }
}
