//! A streaming JSON pull reader.
//!
//! Traces are too big for a DOM, and real ones break strict JSON in ways the reference
//! tools accept (Perfetto's tokenizer is the model): trailing commas, an array that ends
//! without `]`, raw control characters inside strings. This reader walks the bytes once
//! through a fixed buffer, keeps numbers as their decimal text so timestamps convert to
//! integer nanoseconds exactly, and reports errors with byte offset, line and column.
//!
//! This module is grove's one JSON decoder. Beside the streaming reader here: the slice
//! lexer (`lexer`, strict JSON held whole in a slice, for fast paths such as the Chrome
//! scanner), the string decoder both use (`strings`: spans, escapes, surrogates) and
//! number conversion (`number`: exact scaled integers, serde_json's typing, doubles).

use std::fmt;
use std::io::Read;

pub mod lexer;
pub mod number;
pub mod strings;
pub mod value;

use lexer::{is_num, is_ws};
pub use number::parse_decimal_scaled;
use strings::{hex_digit, simple_escape, Escapes};
pub use value::{from_reader, from_reader_as, from_slice, from_slice_as};

const BUF_SIZE: usize = 256 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct JsonError {
    pub offset: u64,
    pub line: u64,
    pub column: u64,
    pub msg: String,
    /// True when the input ended before the value was complete.
    pub eof: bool,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {} (byte {}): {}",
            self.line, self.column, self.offset, self.msg
        )
    }
}

impl std::error::Error for JsonError {}

pub type Result<T> = std::result::Result<T, JsonError>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    Str,
    Num,
    True,
    False,
    Null,
}

/// Counters of the lenient repairs made while reading; the caller turns them into warnings.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Repairs {
    pub control_chars: u64,
    pub trailing_commas: u64,
    /// Strings read with `read_str` whose bytes were not valid UTF-8 (callers decode
    /// them lossily, so the user must hear about it).
    pub invalid_utf8: u64,
    /// `read_scalar` calls that found an object or array where a string or number
    /// belongs (an event `name` given as an object, a `pid` as a list).
    pub not_scalar: u64,
}

impl Repairs {
    /// The warnings a reader reports for these repairs, one per kind made.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.control_chars > 0 {
            w.push(format!(
                "{} raw control character(s) inside strings (invalid JSON) were kept",
                self.control_chars
            ));
        }
        if self.invalid_utf8 > 0 {
            w.push(format!(
                "{} string(s) with invalid UTF-8 were decoded lossily (U+FFFD)",
                self.invalid_utf8
            ));
        }
        if self.not_scalar > 0 {
            w.push(format!(
                "{} field(s) held an object or array where a string or number belongs; they were read as empty",
                self.not_scalar
            ));
        }
        if self.trailing_commas > 0 {
            w.push(format!(
                "{} trailing comma(s) ignored",
                self.trailing_commas
            ));
        }
        w
    }
}

thread_local! {
    /// Buffer size for readers made with `new` on this thread; None is the default.
    /// Only tests set it, to run whole readers with tiny buffers.
    static BUFFER_SIZE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Makes `JsonReader::new` on this thread use a buffer of `size` bytes (None: the
/// default). For tests that check results do not depend on where buffers end.
#[doc(hidden)]
pub fn set_thread_buffer_size(size: Option<usize>) {
    BUFFER_SIZE.with(|c| c.set(size));
}

pub struct JsonReader<R: Read> {
    src: R,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    /// Byte offset of buf[0] in the stream.
    base: u64,
    /// Newlines seen in bytes before buf[0].
    lines_before: u64,
    /// Offset of the byte after the last newline before buf[0].
    last_nl_before: u64,
    eof: bool,
    io_error: Option<String>,
    capture: Option<Vec<u8>>,
    /// The nesting stack of `skip_value`, kept to spare an allocation per skipped value.
    skip_depth: Vec<u8>,
    pub repairs: Repairs,
}

impl<R: Read> JsonReader<R> {
    pub fn new(src: R) -> Self {
        let size = BUFFER_SIZE.with(|c| c.get()).unwrap_or(BUF_SIZE);
        Self::with_buffer_size(src, size)
    }

    /// A reader with a buffer of `size` bytes (at least 1). Results must not depend on
    /// it; tests walk every small size to check that buffer ends are invisible.
    pub fn with_buffer_size(src: R, size: usize) -> Self {
        JsonReader {
            src,
            buf: vec![0u8; size.max(1)].into_boxed_slice(),
            pos: 0,
            len: 0,
            base: 0,
            lines_before: 0,
            last_nl_before: 0,
            eof: false,
            io_error: None,
            capture: None,
            skip_depth: Vec::new(),
            repairs: Repairs::default(),
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn refill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        // Line bookkeeping per buffer, not per byte: a counting loop vectorises.
        let chunk = &self.buf[..self.len];
        self.lines_before += memchr::memchr_iter(b'\n', chunk).count() as u64;
        if let Some(i) = memchr::memrchr(b'\n', chunk) {
            self.last_nl_before = self.base + i as u64 + 1;
        }
        self.base += self.len as u64;
        self.pos = 0;
        self.len = 0;
        loop {
            match self.src.read(&mut self.buf) {
                Ok(0) => {
                    self.eof = true;
                    return false;
                }
                Ok(n) => {
                    self.len = n;
                    return true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.io_error = Some(e.to_string());
                    self.eof = true;
                    return false;
                }
            }
        }
    }

    /// The unread bytes, at least `min` of them unless the input ends first (then all
    /// that is left): the buffer grows to `min` when smaller, keeps the unread tail and
    /// reads until full. For callers that parse a whole block as a slice (the Chrome
    /// reader's fast path) and then [`advance`](Self::advance) past what they took;
    /// memory follows `min`, not the input. The bool is true when the input has ended
    /// (or failed: the next read through the streaming methods reports it).
    pub fn window(&mut self, min: usize) -> (&[u8], bool) {
        if self.len - self.pos < min && !self.eof {
            // Drop the consumed prefix, keeping line bookkeeping for error positions.
            let done = &self.buf[..self.pos];
            self.lines_before += memchr::memchr_iter(b'\n', done).count() as u64;
            if let Some(i) = memchr::memrchr(b'\n', done) {
                self.last_nl_before = self.base + i as u64 + 1;
            }
            self.base += self.pos as u64;
            self.buf.copy_within(self.pos..self.len, 0);
            self.len -= self.pos;
            self.pos = 0;
            if self.buf.len() < min {
                let mut bigger = vec![0u8; min].into_boxed_slice();
                bigger[..self.len].copy_from_slice(&self.buf[..self.len]);
                self.buf = bigger;
            }
            while self.len < self.buf.len() {
                match self.src.read(&mut self.buf[self.len..]) {
                    Ok(0) => {
                        self.eof = true;
                        break;
                    }
                    Ok(n) => self.len += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.io_error = Some(e.to_string());
                        self.eof = true;
                        break;
                    }
                }
            }
        }
        (&self.buf[self.pos..self.len], self.eof)
    }

    /// Consumes `n` bytes of the [`window`](Self::window) (not captured).
    pub fn advance(&mut self, n: usize) {
        debug_assert!(self.pos + n <= self.len);
        self.pos += n;
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        if self.pos < self.len {
            Some(self.buf[self.pos])
        } else if self.refill() {
            Some(self.buf[0])
        } else {
            None
        }
    }

    #[inline]
    fn bump(&mut self) {
        if let Some(cap) = self.capture.as_mut() {
            cap.push(self.buf[self.pos]);
        }
        self.pos += 1;
    }

    pub fn error(&self, msg: impl Into<String>) -> JsonError {
        self.error_at(self.offset(), msg, false)
    }

    fn error_at(&self, offset: u64, msg: impl Into<String>, eof: bool) -> JsonError {
        // Line and column are only known exactly inside the current buffer; errors land
        // there, because they are raised at the byte just read.
        let mut line = self.lines_before + 1;
        let mut line_start = self.last_nl_before;
        let upto = offset.saturating_sub(self.base).min(self.len as u64) as usize;
        for (i, &b) in self.buf[..upto].iter().enumerate() {
            if b == b'\n' {
                line += 1;
                line_start = self.base + i as u64 + 1;
            }
        }
        let mut msg = msg.into();
        if let Some(io) = &self.io_error {
            msg = format!("{msg} (read error: {io})");
        }
        JsonError {
            offset,
            line,
            column: offset.saturating_sub(line_start) + 1,
            msg,
            eof,
        }
    }

    fn eof_error(&self, what: &str) -> JsonError {
        self.error_at(
            self.offset(),
            format!("unexpected end of input {what}"),
            true,
        )
    }

    /// Skips whitespace and returns the next byte without consuming it.
    #[inline]
    pub fn skip_ws(&mut self) -> Option<u8> {
        loop {
            while self.pos < self.len {
                let b = self.buf[self.pos];
                if !is_ws(b) {
                    return Some(b);
                }
                self.bump();
            }
            if !self.refill() {
                return None;
            }
        }
    }

    /// Detects a UTF-8 byte-order mark and skips it.
    pub fn skip_bom(&mut self) {
        if self.peek() == Some(0xEF) && self.len >= 3 && self.buf[..3] == [0xEF, 0xBB, 0xBF] {
            self.pos += 3;
        }
    }

    pub fn at_eof(&mut self) -> bool {
        self.skip_ws().is_none()
    }

    pub fn peek_kind(&mut self) -> Result<Kind> {
        match self.skip_ws() {
            None => Err(self.eof_error("where a value was expected")),
            Some(b'{') => Ok(Kind::Object),
            Some(b'[') => Ok(Kind::Array),
            Some(b'"') => Ok(Kind::Str),
            Some(b'-' | b'0'..=b'9') => Ok(Kind::Num),
            Some(b't') => Ok(Kind::True),
            Some(b'f') => Ok(Kind::False),
            Some(b'n') => Ok(Kind::Null),
            Some(b) => Err(self.error(format!("unexpected character {:?}", b as char))),
        }
    }

    fn expect_byte(&mut self, want: u8) -> Result<()> {
        match self.skip_ws() {
            Some(b) if b == want => {
                self.bump();
                Ok(())
            }
            Some(b) => Err(self.error(format!(
                "expected {:?}, found {:?}",
                want as char, b as char
            ))),
            None => Err(self.eof_error(&format!("where {:?} was expected", want as char))),
        }
    }

    pub fn begin_object(&mut self) -> Result<()> {
        self.expect_byte(b'{')
    }

    pub fn begin_array(&mut self) -> Result<()> {
        self.expect_byte(b'[')
    }

    /// Moves to the next member of an object and reads its key into `key`.
    /// `first` is true for the first call after `begin_object`. Returns false at `}`.
    pub fn next_key(&mut self, first: bool, key: &mut Vec<u8>) -> Result<bool> {
        if !self.next_item(first, b'}')? {
            return Ok(false);
        }
        match self.skip_ws() {
            Some(b'"') => {}
            Some(b) => {
                return Err(self.error(format!("expected a key string, found {:?}", b as char)))
            }
            None => return Err(self.eof_error("inside an object")),
        }
        key.clear();
        self.read_str_into(key)?;
        self.expect_byte(b':')?;
        Ok(true)
    }

    /// Moves to the next element of an array. Returns false at `]`.
    pub fn next_element(&mut self, first: bool) -> Result<bool> {
        self.next_item(first, b']')
    }

    fn next_item(&mut self, first: bool, close: u8) -> Result<bool> {
        let what = if close == b']' {
            "inside an array"
        } else {
            "inside an object"
        };
        match self.skip_ws() {
            None => return Err(self.eof_error(what)),
            Some(b) if b == close => {
                self.bump();
                return Ok(false);
            }
            Some(b',') if !first => {
                self.bump();
                // A trailing comma before the closing bracket is accepted, as Perfetto does.
                match self.skip_ws() {
                    Some(b) if b == close => {
                        self.repairs.trailing_commas += 1;
                        self.bump();
                        return Ok(false);
                    }
                    None => return Err(self.eof_error(what)),
                    _ => {}
                }
            }
            Some(b) if !first => {
                return Err(self.error(format!(
                    "expected ',' or {:?}, found {:?}",
                    close as char, b as char
                )))
            }
            Some(_) => {}
        }
        Ok(true)
    }

    /// Reads a string value (the next value must be a string) into `out` as UTF-8 bytes.
    pub fn read_str(&mut self, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        match self.skip_ws() {
            Some(b'"') => {
                self.read_str_into(out)?;
                if std::str::from_utf8(out).is_err() {
                    self.repairs.invalid_utf8 += 1;
                }
                Ok(())
            }
            Some(b) => Err(self.error(format!("expected a string, found {:?}", b as char))),
            None => Err(self.eof_error("where a string was expected")),
        }
    }

    /// Reads a string starting at its opening quote, appending the unescaped bytes.
    fn read_str_into(&mut self, out: &mut Vec<u8>) -> Result<()> {
        self.scan_str(Some(out))
    }

    /// Walks a string starting at its opening quote; with `out`, appends the unescaped
    /// bytes. Skipping (`None`) copies nothing but checks and repairs exactly as reading.
    /// Escapes decode through [`Escapes`], as the slice lexer's `unescape` does.
    fn scan_str(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<()> {
        self.bump(); // opening quote
        let mut esc = Escapes::default();
        // Where a skipped string's escapes decode to (nothing is kept).
        let mut sink = Vec::new();
        let keep = out.is_some();
        loop {
            // Fast path: find the end of the run of plain bytes with a SIMD search for the
            // quote and the backslash, then check the run for control bytes in one
            // vectorised pass (they are rare: PyTorch's python_function names).
            let start = self.pos;
            let rest = &self.buf[start..self.len];
            let mut run = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
            if rest[..run].iter().fold(false, |any, &b| any | (b < 0x20)) {
                run = rest[..run].iter().position(|&b| b < 0x20).unwrap_or(run);
            }
            self.pos = start + run;
            if run > 0 {
                if let Some(out) = out.as_deref_mut() {
                    esc.other(out);
                    out.extend_from_slice(&self.buf[start..self.pos]);
                }
                if let Some(cap) = self.capture.as_mut() {
                    cap.extend_from_slice(&self.buf[start..self.pos]);
                }
            }
            let b = match self.peek() {
                Some(b) => b,
                None => return Err(self.eof_error("inside a string")),
            };
            let dest = match out.as_deref_mut() {
                Some(out) => out,
                None => &mut sink,
            };
            match b {
                b'"' => {
                    self.bump();
                    esc.other(dest);
                    return Ok(());
                }
                b'\\' => {
                    self.bump();
                    self.read_escape(dest, &mut esc)?;
                    sink.clear();
                }
                // The fast path stopped at the end of the buffer, not at a special byte:
                // the refilled buffer starts with an ordinary byte (counting it as a
                // control character was the false warning on every large trace).
                b if b >= 0x20 => {}
                _ => {
                    // Raw control character: invalid JSON, but PyTorch writes them in
                    // python_function names; keep it and let the caller warn.
                    self.repairs.control_chars += 1;
                    esc.other(dest);
                    if keep {
                        dest.push(b);
                    }
                    if let Some(cap) = self.capture.as_mut() {
                        // Keep captured text valid JSON.
                        cap.extend_from_slice(format!("\\u{:04x}", b).as_bytes());
                    }
                    self.pos += 1;
                }
            }
        }
    }

    /// One escape, its backslash consumed, decoded into `out` through `esc`.
    fn read_escape(&mut self, out: &mut Vec<u8>, esc: &mut Escapes) -> Result<()> {
        let b = self
            .peek()
            .ok_or_else(|| self.eof_error("inside a string escape"))?;
        self.bump();
        if b == b'u' {
            let cp = self.read_hex4()?;
            esc.unit(out, cp);
            return Ok(());
        }
        match simple_escape(b) {
            Some(c) => {
                esc.other(out);
                out.push(c);
                Ok(())
            }
            None => Err(self.error_at(
                self.offset() - 1,
                format!("invalid escape '\\{}'", b as char),
                false,
            )),
        }
    }

    fn read_hex4(&mut self) -> Result<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let b = self
                .peek()
                .ok_or_else(|| self.eof_error("inside a \\u escape"))?;
            let d = hex_digit(b).ok_or_else(|| self.error("invalid \\u escape"))?;
            self.bump();
            v = v * 16 + d;
        }
        Ok(v)
    }

    /// Reads a number's text into `out` without converting it.
    pub fn read_num(&mut self, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        self.skip_ws();
        loop {
            // Copy the run of number bytes in the buffer at once.
            let start = self.pos;
            while self.pos < self.len && is_num(self.buf[self.pos]) {
                self.pos += 1;
            }
            out.extend_from_slice(&self.buf[start..self.pos]);
            if let Some(cap) = self.capture.as_mut() {
                cap.extend_from_slice(&self.buf[start..self.pos]);
            }
            if self.pos < self.len || !self.refill() {
                break;
            }
        }
        if out.is_empty() {
            return Err(self.error("expected a number"));
        }
        Ok(())
    }

    fn expect_word(&mut self, word: &[u8]) -> Result<()> {
        for &w in word {
            match self.peek() {
                Some(b) if b == w => self.bump(),
                Some(_) => return Err(self.error("invalid literal")),
                None => return Err(self.eof_error("inside a literal")),
            }
        }
        Ok(())
    }

    /// Reads a string or number as its text (a string's unescaped content). Returns the kind,
    /// or skips other values and returns their kind with `out` empty.
    pub fn read_scalar(&mut self, out: &mut Vec<u8>) -> Result<Kind> {
        let k = self.peek_kind()?;
        match k {
            Kind::Str => self.read_str(out)?,
            Kind::Num => self.read_num(out)?,
            Kind::Object | Kind::Array => {
                self.repairs.not_scalar += 1;
                out.clear();
                self.skip_value()?;
            }
            _ => {
                out.clear();
                self.skip_value()?;
            }
        }
        Ok(k)
    }

    /// Skips one value of any kind, iteratively so deep nesting cannot overflow the stack.
    /// Nothing is copied: keys and strings are scanned in place, numbers walked over, and
    /// the nesting stack is the reader's own, reused from value to value.
    pub fn skip_value(&mut self) -> Result<()> {
        let mut depth = std::mem::take(&mut self.skip_depth);
        depth.clear();
        let r = self.skip_nested(&mut depth);
        self.skip_depth = depth;
        r
    }

    fn skip_nested(&mut self, depth: &mut Vec<u8>) -> Result<()> {
        loop {
            match self.peek_kind()? {
                Kind::Object => {
                    self.bump();
                    depth.push(b'}');
                    if !self.skip_key(true)? {
                        depth.pop();
                    } else {
                        continue;
                    }
                }
                Kind::Array => {
                    self.bump();
                    depth.push(b']');
                    if !self.next_element(true)? {
                        depth.pop();
                    } else {
                        continue;
                    }
                }
                Kind::Str => self.scan_str(None)?,
                Kind::Num => self.skip_num()?,
                Kind::True => self.expect_word(b"true")?,
                Kind::False => self.expect_word(b"false")?,
                Kind::Null => self.expect_word(b"null")?,
            }
            // A value finished: close any containers that end here.
            loop {
                match depth.last() {
                    None => return Ok(()),
                    Some(&b'}') => {
                        if self.skip_key(false)? {
                            break;
                        }
                        depth.pop();
                    }
                    Some(_) => {
                        if self.next_element(false)? {
                            break;
                        }
                        depth.pop();
                    }
                }
            }
        }
    }

    /// `next_key` for a key nobody reads: the same checks, no copy.
    fn skip_key(&mut self, first: bool) -> Result<bool> {
        if !self.next_item(first, b'}')? {
            return Ok(false);
        }
        match self.skip_ws() {
            Some(b'"') => {}
            Some(b) => {
                return Err(self.error(format!("expected a key string, found {:?}", b as char)))
            }
            None => return Err(self.eof_error("inside an object")),
        }
        self.scan_str(None)?;
        self.expect_byte(b':')?;
        Ok(true)
    }

    /// `read_num` for a number nobody reads (only a captured copy, if capturing).
    fn skip_num(&mut self) -> Result<()> {
        let mut any = false;
        loop {
            let start = self.pos;
            while self.pos < self.len && is_num(self.buf[self.pos]) {
                self.pos += 1;
            }
            any |= self.pos > start;
            if let Some(cap) = self.capture.as_mut() {
                cap.extend_from_slice(&self.buf[start..self.pos]);
            }
            if self.pos < self.len || !self.refill() {
                break;
            }
        }
        if !any {
            return Err(self.error("expected a number"));
        }
        Ok(())
    }

    /// Skips one value and returns its raw JSON text (control characters escaped).
    pub fn capture_value(&mut self, out: &mut Vec<u8>) -> Result<()> {
        self.skip_ws();
        let prev = self.capture.replace(std::mem::take(out));
        let r = self.skip_value();
        *out = self.capture.take().unwrap_or_default();
        self.capture = prev;
        r
    }

    /// Starts copying every consumed byte into `out` (see `end_capture`).
    pub fn start_capture(&mut self, out: Vec<u8>) {
        self.skip_ws();
        self.capture = Some(out);
    }

    pub fn end_capture(&mut self) -> Vec<u8> {
        self.capture.take().unwrap_or_default()
    }

    pub fn read_bool_or_null(&mut self) -> Result<Option<bool>> {
        match self.peek_kind()? {
            Kind::True => self.expect_word(b"true").map(|_| Some(true)),
            Kind::False => self.expect_word(b"false").map(|_| Some(false)),
            _ => self.skip_value().map(|_| None),
        }
    }
}

#[cfg(test)]
mod tests;
