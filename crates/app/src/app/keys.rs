//! Key notation, shared by keymap files and key-script tests: `j`, `E`, `<C-d>`,
//! `<Down>`, `<ret>`, `<Esc>`, `<PageUp>`, `<lt>`; helix-style bare names (`C-d`,
//! `ret`, `pageup`) are accepted in keymaps too.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl Key {
    pub fn plain(code: KeyCode) -> Key {
        Key {
            code,
            ctrl: false,
            alt: false,
        }
    }

    pub fn char(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }

    /// Normalises a terminal key event: Shift is part of the character for letters.
    pub fn from_event(ev: KeyEvent) -> Key {
        let mut code = ev.code;
        if let KeyCode::Char(c) = code {
            if ev.modifiers.contains(KeyModifiers::SHIFT) && c.is_ascii_lowercase() {
                code = KeyCode::Char(c.to_ascii_uppercase());
            }
        }
        if code == KeyCode::Tab && ev.modifiers.contains(KeyModifiers::SHIFT) {
            code = KeyCode::BackTab;
        }
        Key {
            code,
            ctrl: ev.modifiers.contains(KeyModifiers::CONTROL),
            alt: ev.modifiers.contains(KeyModifiers::ALT),
        }
    }

    pub fn to_event(self) -> KeyEvent {
        let mut m = KeyModifiers::NONE;
        if self.ctrl {
            m |= KeyModifiers::CONTROL;
        }
        if self.alt {
            m |= KeyModifiers::ALT;
        }
        KeyEvent::new(self.code, m)
    }

    /// Parses one key: `x`, `<C-x>`, `C-x`, `<ret>`, `pageup`.
    pub fn parse(spec: &str) -> Result<Key, String> {
        let inner = spec
            .strip_prefix('<')
            .and_then(|s| s.strip_suffix('>'))
            .unwrap_or(spec);
        if inner.chars().count() == 1 {
            return Ok(Key::char(inner.chars().next().unwrap()));
        }
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = inner;
        let mut shift = false;
        loop {
            if let Some(r) = rest.strip_prefix("C-") {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("A-").or_else(|| rest.strip_prefix("M-")) {
                alt = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("S-") {
                shift = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = if rest.chars().count() == 1 {
            let c = rest.chars().next().unwrap();
            KeyCode::Char(if shift { c.to_ascii_uppercase() } else { c })
        } else {
            match rest.to_ascii_lowercase().as_str() {
                "ret" | "enter" | "cr" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" if shift => KeyCode::BackTab,
                "tab" => KeyCode::Tab,
                "backtab" => KeyCode::BackTab,
                "space" => KeyCode::Char(' '),
                "bs" | "backspace" => KeyCode::Backspace,
                "del" | "delete" => KeyCode::Delete,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "pageup" | "pgup" => KeyCode::PageUp,
                "pagedown" | "pgdn" => KeyCode::PageDown,
                "lt" => KeyCode::Char('<'),
                "gt" => KeyCode::Char('>'),
                "minus" => KeyCode::Char('-'),
                f if f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                    KeyCode::F(f[1..].parse().unwrap())
                }
                _ => return Err(format!("unknown key {spec:?}")),
            }
        };
        Ok(Key { code, ctrl, alt })
    }

    /// Parses a key script such as `jjlE/attn<ret>` into keys.
    pub fn parse_seq(script: &str) -> Result<Vec<Key>, String> {
        let mut keys = Vec::new();
        let mut rest = script;
        while let Some(c) = rest.chars().next() {
            // `<name>` is a named key when the name is one; otherwise `<` is typed.
            if c == '<' {
                if let Some(end) = rest.find('>') {
                    if end > 1 && !rest[1..end].contains([' ', '<']) {
                        keys.push(Key::parse(&rest[..=end])?);
                        rest = &rest[end + 1..];
                        continue;
                    }
                }
            }
            keys.push(Key::char(c));
            rest = &rest[c.len_utf8()..];
        }
        Ok(keys)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char('<') => "lt".to_string(),
            KeyCode::Char(c) if !self.ctrl && !self.alt => return write!(f, "{c}"),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "S-Tab".into(),
            KeyCode::Backspace => "BS".into(),
            KeyCode::Delete => "Del".into(),
            KeyCode::Up => "Up".into(),
            KeyCode::Down => "Down".into(),
            KeyCode::Left => "Left".into(),
            KeyCode::Right => "Right".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::PageUp => "PageUp".into(),
            KeyCode::PageDown => "PageDown".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        let mut pre = String::new();
        if self.ctrl {
            pre.push_str("C-");
        }
        if self.alt {
            pre.push_str("A-");
        }
        write!(f, "<{pre}{name}>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation() {
        assert_eq!(
            Key::parse("<C-d>").unwrap(),
            Key {
                code: KeyCode::Char('d'),
                ctrl: true,
                alt: false
            }
        );
        assert_eq!(Key::parse("C-d").unwrap(), Key::parse("<C-d>").unwrap());
        assert_eq!(Key::parse("ret").unwrap().code, KeyCode::Enter);
        assert_eq!(Key::parse("<PageUp>").unwrap().code, KeyCode::PageUp);
        let seq = Key::parse_seq("jE/a<ret><lt>").unwrap();
        assert_eq!(seq.len(), 6);
        assert_eq!(seq[4].code, KeyCode::Enter);
        assert_eq!(seq[5].code, KeyCode::Char('<'));
        for k in ["j", "<C-d>", "<Enter>", "<S-Tab>", "<Space>", "<lt>"] {
            let key = Key::parse(k).unwrap();
            assert_eq!(Key::parse(&key.to_string()).unwrap(), key, "{k}");
        }
        assert!(Key::parse("<Nope>").is_err());
        let seq = Key::parse_seq(":x < 5<ret>").unwrap();
        assert_eq!(seq[3], Key::char('<'));
        assert_eq!(seq.last().unwrap().code, KeyCode::Enter);
        let ev = KeyEvent::new(KeyCode::Char('e'), KeyModifiers::SHIFT);
        assert_eq!(Key::from_event(ev), Key::char('E'));
    }
}
