//! A streaming JSON pull reader.
//!
//! Traces are too big for a DOM, and real ones break strict JSON in ways the reference
//! tools accept (Perfetto's tokenizer is the model): trailing commas, an array that ends
//! without `]`, raw control characters inside strings. This reader walks the bytes once
//! through a fixed buffer, keeps numbers as their decimal text so timestamps convert to
//! integer nanoseconds exactly, and reports errors with byte offset, line and column.

use std::fmt;
use std::io::Read;

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

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
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
    fn scan_str(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<()> {
        self.bump(); // opening quote
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
            match b {
                b'"' => {
                    self.bump();
                    return Ok(());
                }
                b'\\' => {
                    self.bump();
                    match out.as_deref_mut() {
                        Some(out) => self.read_escape(out)?,
                        None => self.read_escape(&mut Vec::new())?,
                    }
                }
                // The fast path stopped at the end of the buffer, not at a special byte:
                // the refilled buffer starts with an ordinary byte (counting it as a
                // control character was the false warning on every large trace).
                b if b >= 0x20 => {}
                _ => {
                    // Raw control character: invalid JSON, but PyTorch writes them in
                    // python_function names; keep it and let the caller warn.
                    self.repairs.control_chars += 1;
                    if let Some(out) = out.as_deref_mut() {
                        out.push(b);
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

    fn read_escape(&mut self, out: &mut Vec<u8>) -> Result<()> {
        let b = self
            .peek()
            .ok_or_else(|| self.eof_error("inside a string escape"))?;
        self.bump();
        let c = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                // A high surrogate joins the low one that follows it; a lone one is
                // U+FFFD and whatever follows it is read as it is (`"\uD800\n"` is
                // U+FFFD and a newline, `"\uD800\uD83D\uDE00"` U+FFFD and an emoji).
                let mut cp = self.read_hex4()?;
                loop {
                    if !(0xD800..0xDC00).contains(&cp) {
                        if (0xDC00..0xE000).contains(&cp) {
                            cp = 0xFFFD;
                        }
                        push_char(out, cp);
                        return Ok(());
                    }
                    if self.peek() != Some(b'\\') {
                        push_char(out, 0xFFFD);
                        return Ok(());
                    }
                    self.bump();
                    if self.peek() != Some(b'u') {
                        push_char(out, 0xFFFD);
                        return self.read_escape(out);
                    }
                    self.bump();
                    let lo = self.read_hex4()?;
                    if (0xDC00..0xE000).contains(&lo) {
                        push_char(out, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
                        return Ok(());
                    }
                    push_char(out, 0xFFFD);
                    cp = lo;
                }
            }
            other => {
                return Err(self.error_at(
                    self.offset() - 1,
                    format!("invalid escape '\\{}'", other as char),
                    false,
                ))
            }
        };
        out.push(c);
        Ok(())
    }

    fn read_hex4(&mut self) -> Result<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let b = self
                .peek()
                .ok_or_else(|| self.eof_error("inside a \\u escape"))?;
            let d = (b as char)
                .to_digit(16)
                .ok_or_else(|| self.error("invalid \\u escape"))?;
            self.bump();
            v = v * 16 + d;
        }
        Ok(v)
    }

    /// Reads a number's text into `out` without converting it.
    pub fn read_num(&mut self, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        self.skip_ws();
        let is_num = |b: u8| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E');
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
        let is_num = |b: u8| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E');
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

    /// Reads a value into a serde_json::Value; only for small, bounded parts (metadata).
    pub fn read_value(&mut self) -> Result<serde_json::Value> {
        let mut raw = Vec::new();
        self.capture_value(&mut raw)?;
        serde_json::from_slice(&raw).map_err(|e| self.error(format!("invalid value: {e}")))
    }

    pub fn read_bool_or_null(&mut self) -> Result<Option<bool>> {
        match self.peek_kind()? {
            Kind::True => self.expect_word(b"true").map(|_| Some(true)),
            Kind::False => self.expect_word(b"false").map(|_| Some(false)),
            _ => self.skip_value().map(|_| None),
        }
    }
}

/// Parses decimal text (`123`, `-4.5`, `1.25e3`) as a value scaled by 10^scale, rounded
/// half away from zero, exactly — without going through f64. Returns None for text that
/// is not a complete number (Perfetto drops such events: `"100a"`).
pub fn parse_decimal_scaled(text: &[u8], scale: u32) -> Option<i64> {
    if let Some(v) = plain_decimal_scaled(text, scale) {
        return Some(v);
    }
    let text = trim_ascii(text);
    let (neg, rest) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mant, exp) = match rest.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => {
            let e = std::str::from_utf8(&rest[i + 1..])
                .ok()?
                .parse::<i32>()
                .ok()?;
            (&rest[..i], e)
        }
        None => (rest, 0),
    };
    let (int_part, frac_part) = match mant.iter().position(|&b| b == b'.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, &mant[..0]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    // Called several times per event: the digits are walked in place, never collected.
    if !int_part.iter().chain(frac_part).all(u8::is_ascii_digit) {
        return None;
    }
    let n_digits = int_part.len() + frac_part.len();
    let digit = |k: usize| -> u8 {
        if k < int_part.len() {
            int_part[k] - b'0'
        } else {
            frac_part[k - int_part.len()] - b'0'
        }
    };
    // value = digits * 10^(exp - frac_len); we want value * 10^scale
    let shift = exp as i64 + scale as i64 - frac_part.len() as i64;
    let mut acc: i128 = 0;
    let keep = if shift >= 0 {
        n_digits
    } else {
        (n_digits as i64 + shift).max(0) as usize
    };
    for k in 0..keep {
        acc = acc.checked_mul(10)?.checked_add(digit(k) as i128)?;
        if acc > i64::MAX as i128 * 10 {
            return None;
        }
    }
    if shift > 0 {
        for _ in 0..shift {
            acc = acc.checked_mul(10)?;
            if acc > i64::MAX as i128 {
                return None;
            }
        }
    } else if keep < n_digits && digit(keep) >= 5 {
        acc += 1;
    }
    let v = if neg { -acc } else { acc };
    i64::try_from(v).ok()
}

/// The common case of `parse_decimal_scaled` in one pass: optional `-`, at most 18
/// digits with at most one `.`, no exponent, no padding, and no digit dropped by the
/// scale (so no rounding). Anything else returns None and takes the general path.
fn plain_decimal_scaled(text: &[u8], scale: u32) -> Option<i64> {
    let (neg, digits) = match text.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut acc: u64 = 0;
    let mut n = 0u32;
    let mut frac: Option<u32> = None;
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                acc = acc * 10 + (b - b'0') as u64;
                n += 1;
                if let Some(f) = frac.as_mut() {
                    *f += 1;
                }
            }
            b'.' if frac.is_none() => frac = Some(0),
            _ => return None,
        }
    }
    let frac = frac.unwrap_or(0);
    if n == 0 || n > 18 || frac > scale {
        return None;
    }
    // n <= 18 digits and n + (scale - frac) <= 18 keeps the value below 10^18 < i64::MAX.
    let up = scale - frac;
    if n + up > 18 {
        return None;
    }
    let v = (acc * 10u64.pow(up)) as i64;
    Some(if neg { -v } else { v })
}

fn trim_ascii(mut t: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = t {
        if first.is_ascii_whitespace() {
            t = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = t {
        if last.is_ascii_whitespace() {
            t = rest;
        } else {
            break;
        }
    }
    t
}

/// Appends code point `cp` as UTF-8 (U+FFFD where it is not a scalar value).
fn push_char(out: &mut Vec<u8>, cp: u32) {
    let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
    out.extend_from_slice(ch.encode_utf8(&mut [0u8; 4]).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_exact() {
        assert_eq!(
            parse_decimal_scaled(b"1712195495519689.123", 3),
            Some(1712195495519689123)
        );
        assert_eq!(parse_decimal_scaled(b"12.5", 3), Some(12500));
        assert_eq!(parse_decimal_scaled(b"-0.0005", 3), Some(-1));
        assert_eq!(parse_decimal_scaled(b"1e3", 3), Some(1_000_000));
        assert_eq!(parse_decimal_scaled(b"1.5e-3", 3), Some(2));
        assert_eq!(parse_decimal_scaled(b"100a", 3), None);
        assert_eq!(parse_decimal_scaled(b"", 3), None);
        assert_eq!(parse_decimal_scaled(b"7", 0), Some(7));
    }

    /// Edges of the in-place digit walk: rounding at the first dropped digit, digits
    /// far beyond i64, exponents that shift left and right.
    #[test]
    fn decimal_edges() {
        assert_eq!(parse_decimal_scaled(b"0.0004999", 3), Some(0));
        assert_eq!(parse_decimal_scaled(b"0.0005", 3), Some(1));
        assert_eq!(
            parse_decimal_scaled(b"1.23456789012345678901234", 3),
            Some(1235)
        );
        assert_eq!(parse_decimal_scaled(b"-2.5e-1", 3), Some(-250));
        assert_eq!(parse_decimal_scaled(b" 42 ", 3), Some(42_000));
        assert_eq!(
            parse_decimal_scaled(b"9223372036854775807", 0),
            Some(i64::MAX)
        );
        assert_eq!(parse_decimal_scaled(b"9223372036854775807", 3), None);
        assert_eq!(parse_decimal_scaled(b"12345678901234567890123", 0), None);
        assert_eq!(parse_decimal_scaled(b"1.2.3", 3), None);
        assert_eq!(parse_decimal_scaled(b".", 3), None);
        assert_eq!(parse_decimal_scaled(b"1e", 3), None);
        assert_eq!(parse_decimal_scaled(b".5", 0), Some(1));
    }

    /// Skipping scans strings and keys in place: the same repairs are counted, the same
    /// errors raised, and captured text is unchanged, as when they were copied.
    #[test]
    fn skip_counts_and_captures_like_reading() {
        let text = "{\"k\\u0041\": [\"a\u{1}b\", 1.5e3, {\"x\": \"\\n\"}], \"z\": true}";
        let mut r = JsonReader::with_buffer_size(text.as_bytes(), 3);
        let mut raw = Vec::new();
        r.capture_value(&mut raw).unwrap();
        assert_eq!(r.repairs.control_chars, 1);
        let expected = text.replace('\u{1}', "\\u0001");
        assert_eq!(String::from_utf8(raw).unwrap(), expected);
        let mut r = JsonReader::new(&b"[\"a\\q\"]"[..]);
        let e = r.skip_value().unwrap_err();
        assert!(e.msg.contains("invalid escape"), "{e}");
    }

    fn events(text: &str) -> (Vec<String>, Result<()>, Repairs) {
        let mut r = JsonReader::new(text.as_bytes());
        let mut names = Vec::new();
        let mut key = Vec::new();
        let mut val = Vec::new();
        let res = (|| {
            r.begin_array()?;
            let mut first = true;
            while r.next_element(first)? {
                first = false;
                r.begin_object()?;
                let mut f = true;
                while r.next_key(f, &mut key)? {
                    f = false;
                    if key == b"name" {
                        r.read_str(&mut val)?;
                        names.push(String::from_utf8_lossy(&val).into_owned());
                    } else {
                        r.skip_value()?;
                    }
                }
            }
            Ok(())
        })();
        (names, res, r.repairs)
    }

    #[test]
    fn lenient_forms() {
        let (n, res, rep) = events(r#"[{"name":"a","args":{"x":[1,{"y":null}]}},{"name":"b"},]"#);
        assert_eq!(n, ["a", "b"]);
        assert!(res.is_ok());
        assert_eq!(rep.trailing_commas, 1);

        let (n, res, _) = events("[{\"name\":\"a\"},\n{\"name\":\"b\"}");
        assert_eq!(n, ["a", "b"]);
        let e = res.unwrap_err();
        assert!(e.eof);
        assert_eq!(e.line, 2);

        let (n, res, rep) = events("[{\"name\":\"a\u{1}\tb\"}]");
        assert!(res.is_ok());
        assert_eq!(n, ["a\u{1}\tb"]);
        assert_eq!(rep.control_chars, 2);
    }

    #[test]
    fn error_position() {
        let (_, res, _) = events("[\n  {\"name\": x}]");
        let e = res.unwrap_err();
        assert_eq!((e.line, e.column), (2, 12));
        assert!(!e.eof);
    }

    #[test]
    fn capture_keeps_text() {
        let mut r = JsonReader::new(&br#"{"a": {"b": [1, 2.50, "x\"y"]}, "c": 1}"#[..]);
        let mut key = Vec::new();
        r.begin_object().unwrap();
        assert!(r.next_key(true, &mut key).unwrap());
        let mut raw = Vec::new();
        r.capture_value(&mut raw).unwrap();
        assert_eq!(raw, br#"{"b": [1, 2.50, "x\"y"]}"#);
        let v: serde_json::Value = serde_json::from_slice(&raw).unwrap();
        assert_eq!(v["b"][2], "x\"y");
    }

    #[test]
    fn escapes_and_unicode() {
        let mut r = JsonReader::new(&br#""\u00e9\ud83d\ude00\n""#[..]);
        let mut out = Vec::new();
        r.read_str(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "é😀\n");
    }

    /// A lone surrogate is U+FFFD and the escape after it is kept, at any buffer size
    /// (a refill may fall between the two escapes); the chrome scanner agrees.
    #[test]
    fn lone_surrogates_keep_what_follows() {
        let cases: [(&[u8], &str); 6] = [
            (br#""\uD800\n""#, "\u{FFFD}\n"),
            (br#""\uD800\"x""#, "\u{FFFD}\"x"),
            (br#""\uD800\uD83D\uDE00\u0041""#, "\u{FFFD}😀A"),
            (br#""\uD800\uD800""#, "\u{FFFD}\u{FFFD}"),
            (br#""\uDC00x""#, "\u{FFFD}x"),
            (br#""a\uD83Dz""#, "a\u{FFFD}z"),
        ];
        for (text, want) in cases {
            for size in [1, 2, 3, 7, 64] {
                let mut r = JsonReader::with_buffer_size(text, size);
                let mut out = Vec::new();
                r.read_str(&mut out).unwrap();
                assert_eq!(String::from_utf8(out).unwrap(), want, "buffer {size}");
            }
        }
    }
}
