//! Reading a text format line by line, shared by the line-oriented readers (callgrind,
//! perf script): one buffer reused for every line, lines numbered from 1 for error
//! messages, and invalid UTF-8 decoded lossily but remembered, so the reader can warn
//! that it happened instead of passing it silently.

use std::borrow::Cow;
use std::io::BufRead;

pub struct Lines<'a> {
    input: &'a mut dyn BufRead,
    buf: Vec<u8>,
    number: u64,
    lossy: bool,
}

impl<'a> Lines<'a> {
    pub fn new(input: &'a mut dyn BufRead) -> Lines<'a> {
        Lines {
            input,
            buf: Vec::new(),
            number: 0,
            lossy: false,
        }
    }

    /// The next line (its ending kept) with its number, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(u64, Cow<'_, str>)>, String> {
        self.buf.clear();
        let n = self
            .input
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| format!("cannot read after line {}: {e}", self.number))?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        let line = match std::str::from_utf8(&self.buf) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => {
                self.lossy = true;
                String::from_utf8_lossy(&self.buf)
            }
        };
        Ok(Some((self.number, line)))
    }

    /// How many lines were read.
    pub fn count(&self) -> u64 {
        self.number
    }

    /// Whether some line was not valid UTF-8.
    pub fn lossy(&self) -> bool {
        self.lossy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lines_and_remembers_invalid_utf8() {
        let mut src: &[u8] = b"a\nb\xff\nc";
        let mut lines = Lines::new(&mut src);
        let mut seen = Vec::new();
        while let Some((n, l)) = lines.next_line().unwrap() {
            seen.push((n, l.into_owned()));
        }
        assert_eq!(
            seen,
            [
                (1, "a\n".into()),
                (2, "b\u{fffd}\n".into()),
                (3, "c".into())
            ]
        );
        assert_eq!(lines.count(), 3);
        assert!(lines.lossy());
    }
}
