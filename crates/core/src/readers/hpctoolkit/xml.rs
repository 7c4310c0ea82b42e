//! Old format: a minimal XML tokenizer.

use super::*;

#[derive(Debug)]
pub(super) enum Tok {
    Start {
        name: String,
        attrs: Vec<(String, String)>,
        empty: bool,
        pos: usize,
    },
    End {
        name: String,
        pos: usize,
    },
    Eof,
}

pub(super) struct Xml<'a> {
    pub(super) s: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Xml<'a> {
    pub(super) fn new(s: &'a [u8]) -> Xml<'a> {
        let s = s.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(s);
        Xml { s, pos: 0 }
    }

    pub(super) fn err(&self, pos: usize, msg: impl Display) -> String {
        let pos = pos.min(self.s.len());
        let line = 1 + self.s[..pos].iter().filter(|&&b| b == b'\n').count();
        format!("experiment.xml: line {line}: {msg}")
    }

    pub(super) fn find(&self, from: usize, pat: &[u8]) -> Option<usize> {
        self.s
            .get(from..)?
            .windows(pat.len())
            .position(|w| w == pat)
            .map(|i| from + i)
    }

    pub(super) fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    pub(super) fn name(&mut self) -> Result<String, String> {
        let start = self.pos;
        while self.pos < self.s.len() {
            let c = self.s[self.pos];
            if c.is_ascii_alphanumeric() || matches!(c, b'_' | b':' | b'.' | b'-') || c >= 0x80 {
                self.pos += 1;
            } else {
                break;
            }
        }
        if self.pos == start {
            return Err(self.err(start, "expected a name"));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    /// Skips `<!DOCTYPE ...>` (with an internal subset) or another `<!...>` declaration.
    pub(super) fn skip_decl(&mut self) -> Result<(), String> {
        let start = self.pos;
        let mut depth = 0usize;
        let mut i = self.pos + 2;
        while i < self.s.len() {
            match self.s[i] {
                b'"' | b'\'' => {
                    let q = self.s[i];
                    i = match self.s[i + 1..].iter().position(|&c| c == q) {
                        Some(k) => i + 1 + k + 1,
                        None => break,
                    };
                    continue;
                }
                b'<' if self.s[i..].starts_with(b"<!--") => {
                    i = match self.find(i + 4, b"-->") {
                        Some(k) => k + 3,
                        None => break,
                    };
                    continue;
                }
                b'[' => depth += 1,
                b']' => depth = depth.saturating_sub(1),
                b'>' if depth == 0 => {
                    self.pos = i + 1;
                    return Ok(());
                }
                _ => {}
            }
            i += 1;
        }
        Err(self.err(start, "unterminated <! declaration"))
    }

    pub(super) fn next(&mut self) -> Result<Tok, String> {
        loop {
            let Some(lt) = self.s[self.pos..].iter().position(|&c| c == b'<') else {
                self.pos = self.s.len();
                return Ok(Tok::Eof);
            };
            self.pos += lt;
            let rest = &self.s[self.pos..];
            let start = self.pos;
            if rest.starts_with(b"<!--") {
                let end = self
                    .find(self.pos + 4, b"-->")
                    .ok_or_else(|| self.err(start, "unterminated comment"))?;
                self.pos = end + 3;
            } else if rest.starts_with(b"<![CDATA[") {
                let end = self
                    .find(self.pos + 9, b"]]>")
                    .ok_or_else(|| self.err(start, "unterminated CDATA section"))?;
                self.pos = end + 3;
            } else if rest.starts_with(b"<?") {
                let end = self
                    .find(self.pos + 2, b"?>")
                    .ok_or_else(|| self.err(start, "unterminated <? ?> instruction"))?;
                self.pos = end + 2;
            } else if rest.starts_with(b"<!") {
                self.skip_decl()?;
            } else if rest.starts_with(b"</") {
                self.pos += 2;
                let name = self.name()?;
                self.skip_ws();
                if self.s.get(self.pos) != Some(&b'>') {
                    return Err(self.err(self.pos, format!("expected '>' to close </{name}")));
                }
                self.pos += 1;
                return Ok(Tok::End { name, pos: start });
            } else {
                self.pos += 1;
                let name = self.name()?;
                let mut attrs = Vec::new();
                loop {
                    self.skip_ws();
                    match self.s.get(self.pos) {
                        Some(b'>') => {
                            self.pos += 1;
                            return Ok(Tok::Start {
                                name,
                                attrs,
                                empty: false,
                                pos: start,
                            });
                        }
                        Some(b'/') if self.s.get(self.pos + 1) == Some(&b'>') => {
                            self.pos += 2;
                            return Ok(Tok::Start {
                                name,
                                attrs,
                                empty: true,
                                pos: start,
                            });
                        }
                        None => return Err(self.err(start, format!("unterminated <{name}> tag"))),
                        _ => {}
                    }
                    let key = self.name()?;
                    self.skip_ws();
                    if self.s.get(self.pos) != Some(&b'=') {
                        return Err(
                            self.err(self.pos, format!("expected '=' after attribute {key}"))
                        );
                    }
                    self.pos += 1;
                    self.skip_ws();
                    let q = match self.s.get(self.pos) {
                        Some(&q @ (b'"' | b'\'')) => q,
                        _ => {
                            return Err(
                                self.err(self.pos, format!("expected a quoted value for {key}"))
                            )
                        }
                    };
                    let vstart = self.pos + 1;
                    let len = self.s[vstart..]
                        .iter()
                        .position(|&c| c == q)
                        .ok_or_else(|| self.err(vstart, format!("unterminated value of {key}")))?;
                    let value = unescape(&String::from_utf8_lossy(&self.s[vstart..vstart + len]));
                    self.pos = vstart + len + 1;
                    attrs.push((key, value));
                }
            }
        }
    }
}

/// A loop or statement of experiment.xml: `loop at file.c:12` / `file.c:12`, named by
/// the innermost enclosing file.
pub(super) fn source_frame(
    prefix: &str,
    kind: &str,
    file: &Option<Arc<str>>,
    line: &Option<String>,
) -> Frame {
    let l = line.as_deref().unwrap_or_default();
    let shown = file.as_deref().map(basename).unwrap_or("<unknown file>");
    let mut f = Frame::new(&format!("{prefix}{shown}:{l}"), kind);
    if let Some(file) = file {
        f.attrs.push(("file".into(), file.clone()));
    }
    f.attrs.push(("line".into(), l.into()));
    f
}

/// XML entities, shared with CUBE's anchor.xml reader.
pub(super) use crate::readers::xml_entities::unescape;

pub(super) fn attr<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}
