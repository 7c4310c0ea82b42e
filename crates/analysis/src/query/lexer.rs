//! Tokens of the filter, derive and Hatchet query languages, each with its byte
//! position so every error can point at its token.

use super::QueryError;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    /// A number with an optional unit suffix (`1.5ms`, `5%`, `10`).
    Number(f64, Option<String>),
    Str(String),
    /// Operators and punctuation: `> >= < <= == != = ~ !~ =~ -> + - * / ( ) { } , .`
    Sym(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub pos: usize,
    pub len: usize,
}

const SYMS: [&str; 21] = [
    ">=", "<=", "==", "!=", "!~", "=~", "->", ">", "<", "=", "~", "+", "-", "*", "/", "(", ")",
    "{", "}", ",", ".",
];

fn ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '@'
}

pub fn lex(s: &str) -> Result<Vec<Token>, QueryError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i..].chars().next().unwrap();
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        if c == '"' || c == '\'' {
            let quote = c;
            i += 1;
            let mut text = String::new();
            let mut closed = false;
            let mut it = s[i..].char_indices();
            while let Some((off, ch)) = it.next() {
                if ch == quote {
                    i += off + 1;
                    closed = true;
                    break;
                }
                if ch == '\\' {
                    match it.next() {
                        Some((_, e)) if e == quote || e == '\\' => text.push(e),
                        // Keep other escapes for regexes (`\d`, `\.`).
                        Some((_, e)) => {
                            text.push('\\');
                            text.push(e);
                        }
                        None => break,
                    }
                } else {
                    text.push(ch);
                }
            }
            if !closed {
                return Err(QueryError::new(
                    start,
                    s.len() - start,
                    "unterminated string",
                ));
            }
            out.push(Token {
                tok: Tok::Str(text),
                pos: start,
                len: i - start,
            });
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && s[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
        {
            let b = s.as_bytes();
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    i = j;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let num_end = i;
            let value: f64 = s[start..num_end]
                .parse()
                .map_err(|_| QueryError::new(start, num_end - start, "invalid number"))?;
            // Unit suffix: letters (µ included) or %.
            let rest = &s[i..];
            let unit_len = if rest.starts_with('%') {
                1
            } else {
                rest.char_indices()
                    .find(|(_, ch)| !(ch.is_alphabetic()))
                    .map(|(k, _)| k)
                    .unwrap_or(rest.len())
            };
            let unit = (unit_len > 0).then(|| rest[..unit_len].to_string());
            i += unit_len;
            out.push(Token {
                tok: Tok::Number(value, unit),
                pos: start,
                len: i - start,
            });
            continue;
        }
        if ident_start(c) {
            let mut end = i;
            for (off, ch) in s[i..].char_indices() {
                if ident_char(ch) {
                    end = i + off + ch.len_utf8();
                } else {
                    break;
                }
            }
            out.push(Token {
                tok: Tok::Ident(s[start..end].to_string()),
                pos: start,
                len: end - start,
            });
            i = end;
            continue;
        }
        match SYMS.iter().find(|sym| s[i..].starts_with(**sym)) {
            Some(sym) => {
                out.push(Token {
                    tok: Tok::Sym(sym),
                    pos: start,
                    len: sym.len(),
                });
                i += sym.len();
            }
            None => {
                return Err(QueryError::new(
                    start,
                    c.len_utf8(),
                    format!("unexpected character {c:?}"),
                ))
            }
        }
    }
    Ok(out)
}

/// A cursor over tokens with position-carrying errors.
pub struct Cursor<'a> {
    pub toks: &'a [Token],
    pub i: usize,
    /// Length of the whole text, for errors at the end.
    pub end: usize,
    /// Current nesting (parentheses, `not`, unary minus), bounded by `limits::MAX_DEPTH`.
    pub depth: u32,
}

impl<'a> Cursor<'a> {
    pub fn new(toks: &'a [Token], end: usize) -> Cursor<'a> {
        Cursor {
            toks,
            i: 0,
            end,
            depth: 0,
        }
    }

    /// Enters one level of nesting; past `MAX_DEPTH` an error instead of a deeper
    /// recursion (the stack overflow of issue 14). Pair with `ascend`.
    pub fn descend(&mut self) -> Result<(), QueryError> {
        self.depth += 1;
        if self.depth > super::limits::MAX_DEPTH {
            return Err(self.error_here(format!(
                "expression nested too deeply (limit: {} levels)",
                super::limits::MAX_DEPTH
            )));
        }
        Ok(())
    }

    pub fn ascend(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    pub fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.i)
    }

    pub fn peek_at(&self, k: usize) -> Option<&'a Token> {
        self.toks.get(self.i + k)
    }

    pub fn advance(&mut self) -> Option<&'a Token> {
        let t = self.toks.get(self.i);
        if t.is_some() {
            self.i += 1;
        }
        t
    }

    pub fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }

    pub fn is_sym(&self, sym: &str) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Sym(s), .. }) if *s == sym)
    }

    /// Case-insensitive keyword check.
    pub fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Ident(s), .. }) if s.eq_ignore_ascii_case(kw))
    }

    pub fn eat_sym(&mut self, sym: &str) -> bool {
        if self.is_sym(sym) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    pub fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    pub fn error_here(&self, msg: impl Into<String>) -> QueryError {
        match self.peek() {
            Some(t) => QueryError::new(t.pos, t.len, msg),
            None => QueryError::new(self.end, 0, msg),
        }
    }

    pub fn expect_sym(&mut self, sym: &str) -> Result<&'a Token, QueryError> {
        if self.is_sym(sym) {
            Ok(self.advance().unwrap())
        } else {
            Err(self.error_here(format!("expected '{sym}'")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let t = lex(r#"time (inc) > 1.5ms and name ~ "^Calc\d" or count>=10 and x > 5%"#).unwrap();
        assert_eq!(t[0].tok, Tok::Ident("time".into()));
        assert_eq!(t[1].tok, Tok::Sym("("));
        assert_eq!(t[5].tok, Tok::Number(1.5, Some("ms".into())));
        assert_eq!(t[8].tok, Tok::Sym("~"));
        assert_eq!(t[9].tok, Tok::Str("^Calc\\d".into()));
        assert_eq!(t[12].tok, Tok::Sym(">="));
        assert_eq!(t.last().unwrap().tok, Tok::Number(5.0, Some("%".into())));
        let e = lex("name == \"open").unwrap_err();
        assert_eq!(e.pos, 8);
        let e = lex("a $ b").unwrap_err();
        assert_eq!(e.pos, 2);
    }
}
