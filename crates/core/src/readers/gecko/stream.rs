//! The profile read once through grove's pull reader (`crate::json`), never as a whole
//! document: a 100 MB samply recording is mostly a few long arrays of numbers (the
//! sample table's stack, time and CPU-delta columns), which are walked in the reader's
//! buffer by a loop of their own and kept as compact columns (`Col`), only those the
//! tree needs; every other value is skipped without being built. Small parts (`meta`,
//! a thread's name and ids, a raw table's `schema`) become `serde_json::Value`s.

use std::collections::HashMap;
use std::io::Read;

use serde_json::Value;

use crate::json::lexer::{self, is_num, Fail};
use crate::json::number::{is_strict, to_f64};
use crate::json::{JsonError, JsonReader, Kind};

/// No index (null, not a number, or out of range) in an `Idx` column.
pub const NO: u32 = u32::MAX;

/// One column of numbers. Indices (non-negative integers, the most common content by
/// far) take 4 bytes each; a column that holds anything else becomes f64s (NaN: null
/// or not a number). `Count` keeps only how many values there were.
#[derive(Debug, Clone)]
pub enum Col {
    Idx(Vec<u32>),
    Num(Vec<f64>),
    Count(usize),
}

impl Default for Col {
    fn default() -> Self {
        Col::Idx(Vec::new())
    }
}

impl Col {
    #[inline]
    fn push(&mut self, v: f64) {
        match self {
            Col::Idx(x) => {
                if v >= 0.0 && v < f64::from(NO) && v.fract() == 0.0 {
                    x.push(v as u32);
                } else if v.is_nan() {
                    x.push(NO);
                } else {
                    let mut n: Vec<f64> = x
                        .iter()
                        .map(|&i| if i == NO { f64::NAN } else { f64::from(i) })
                        .collect();
                    n.push(v);
                    *self = Col::Num(n);
                }
            }
            Col::Num(x) => x.push(v),
            Col::Count(n) => *n += 1,
        }
    }

    #[inline]
    fn push_int(&mut self, v: u64) {
        match self {
            Col::Idx(x) if v < u64::from(NO) => x.push(v as u32),
            _ => self.push(v as f64),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Col::Idx(x) => x.len(),
            Col::Num(x) => x.len(),
            Col::Count(n) => *n,
        }
    }

    fn pad(&mut self, len: usize) {
        while self.len() < len {
            self.push(f64::NAN);
        }
    }

    /// The value at `i` as an index: a non-negative integer.
    #[inline]
    pub fn idx(&self, i: usize) -> Option<usize> {
        match self {
            Col::Idx(x) => x.get(i).filter(|&&v| v != NO).map(|&v| v as usize),
            Col::Num(x) => x
                .get(i)
                .filter(|v| **v >= 0.0 && v.fract() == 0.0 && **v < 1e15)
                .map(|&v| v as usize),
            Col::Count(_) => None,
        }
    }

    /// The value at `i` as a finite number.
    #[inline]
    pub fn num(&self, i: usize) -> Option<f64> {
        match self {
            Col::Idx(x) => x.get(i).filter(|&&v| v != NO).map(|&v| f64::from(v)),
            Col::Num(x) => x.get(i).copied().filter(|v| v.is_finite()),
            Col::Count(_) => None,
        }
    }

    /// The value at `i` as an integer (negative ones included).
    pub fn int(&self, i: usize) -> Option<i64> {
        self.num(i)
            .filter(|v| v.fract() == 0.0 && v.abs() < 9e15)
            .map(|v| v as i64)
    }
}

/// A table of either dialect: the raw format's `schema` and `data` rows (kept by
/// position, then named by the schema), or the processed format's named columns.
#[derive(Debug, Default, Clone)]
pub struct Table {
    schema: Option<HashMap<String, usize>>,
    /// Raw rows by position; None: a column the schema (read first) does not want.
    by_pos: Vec<Option<Col>>,
    rows: usize,
    named: HashMap<String, Col>,
    pub length: Option<usize>,
    pub weight_type: Option<String>,
}

impl Table {
    pub fn is_raw(&self) -> bool {
        self.schema.is_some()
    }

    /// Whether the table has the column (in its schema, or as an array).
    pub fn has(&self, name: &str) -> bool {
        self.named.contains_key(name) || self.schema.as_ref().is_some_and(|s| s.contains_key(name))
    }

    /// The raw rows read (`data`'s length), schema or not.
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn col(&self, name: &str) -> Option<&Col> {
        if let Some(c) = self.named.get(name) {
            return Some(c);
        }
        let pos = *self.schema.as_ref()?.get(name)?;
        self.by_pos.get(pos)?.as_ref()
    }

    /// Rows: a raw table's row count; a processed one's longest column among `cols`,
    /// or its `length` when that is shorter. A `length` beyond every column is not
    /// trusted (rows there hold nothing, and a damaged `length` of 4e9 would make the
    /// tables that size: the fuzzer's find).
    pub fn len(&self, cols: &[&str]) -> usize {
        if self.schema.is_some() {
            return self.rows;
        }
        let longest = cols
            .iter()
            .filter_map(|c| self.named.get(*c).map(Col::len))
            .max()
            .unwrap_or(0);
        self.length.map_or(longest, |n| n.min(longest))
    }
}

/// The columns kept of each table a thread (or `shared`) may hold; others are skipped.
/// `time`/`timeDeltas` are only counted (a processed sample table's length).
fn wanted(table: &str) -> Option<&'static [&'static str]> {
    Some(match table {
        "samples" => &["stack", "weight", "threadCPUDelta", "time", "timeDeltas"],
        "stackTable" => &["prefix", "frame"],
        "frameTable" => &["location", "func"],
        "funcTable" => &["name", "resource", "fileName", "lineNumber"],
        "resourceTable" => &["name"],
        "markers" => &["name", "startTime", "endTime", "phase", "category"],
        _ => return None,
    })
}

fn counted_only(col: &str) -> bool {
    matches!(col, "time" | "timeDeltas")
}

/// One thread as read: its scalar fields, strings and tables.
#[derive(Debug, Default)]
pub struct RawThread {
    pub info: HashMap<String, Value>,
    pub strings: Option<Vec<String>>,
    pub tables: HashMap<&'static str, Table>,
}

/// A whole profile (or a raw sub-profile of `processes`).
#[derive(Debug, Default)]
pub struct Doc {
    pub meta: Option<Value>,
    pub threads: Vec<RawThread>,
    pub shared: RawThread,
    pub processes: Vec<Doc>,
    /// Threads written as JSON strings that are not JSON, sub-profiles too deep.
    pub warnings: Vec<String>,
}

type R<'a> = JsonReader<&'a mut dyn Read>;

/// Reads the profile. Errors are the JSON reader's (with their position).
pub fn read(input: &mut dyn Read) -> Result<(Doc, Vec<String>), String> {
    let mut r: R = JsonReader::new(input);
    r.skip_bom();
    let doc = doc(&mut r, 0).map_err(|e| format!("not valid JSON: {e}"))?;
    if !r.at_eof() {
        return Err(format!(
            "not valid JSON: {}",
            r.error("trailing characters after the profile")
        ));
    }
    Ok((doc, r.repairs.warnings()))
}

fn doc(r: &mut R, depth: usize) -> Result<Doc, JsonError> {
    let mut d = Doc::default();
    if r.peek_kind()? != Kind::Object {
        return Err(r.error("the profile is not a JSON object"));
    }
    r.begin_object()?;
    let (mut key, mut first) = (Vec::new(), true);
    while r.next_key(first, &mut key)? {
        first = false;
        match key.as_slice() {
            b"meta" => d.meta = Some(r.read_value()?),
            b"threads" => threads(r, &mut d)?,
            b"shared" => d.shared = thread(r)?,
            b"processes" if depth >= 32 => {
                if skip_array_any(r)? {
                    d.warnings
                        .push("sub-profiles nested deeper than 32 levels were skipped".into());
                }
            }
            b"processes" => {
                if r.peek_kind()? != Kind::Array {
                    r.skip_value()?;
                    continue;
                }
                r.begin_array()?;
                let mut first = true;
                while r.next_element(first)? {
                    first = false;
                    if r.peek_kind()? == Kind::Object {
                        d.processes.push(doc(r, depth + 1)?);
                    } else {
                        r.skip_value()?;
                    }
                }
            }
            _ => skip(r)?,
        }
    }
    Ok(d)
}

/// Skips a value nobody reads: in the reader's buffer by the slice lexer when the
/// buffer holds it whole (up to 4 MiB; a skipped column of a large profile is tens of
/// thousands of values), else by the reader itself. The lexer takes only strict JSON
/// and checks it as the reader does; a repair, an error or a longer value is the
/// reader's, which repairs (and counts) or reports it as before.
fn skip(r: &mut R) -> Result<(), JsonError> {
    r.peek_kind()?;
    let mut min = 1 << 16;
    loop {
        let (w, eof) = r.window(min);
        match lexer::skip_value(w, 0) {
            Ok(end) => {
                r.advance(end);
                return Ok(());
            }
            Err(Fail::Short) if !eof && min < 1 << 22 => min *= 4,
            Err(_) => return r.skip_value(),
        }
    }
}

/// Skips an array (or any value); true when it was an array with elements.
fn skip_array_any(r: &mut R) -> Result<bool, JsonError> {
    if r.peek_kind()? != Kind::Array {
        r.skip_value()?;
        return Ok(false);
    }
    r.begin_array()?;
    let mut any = false;
    while r.next_element(!any)? {
        any = true;
        r.skip_value()?;
    }
    Ok(any)
}

fn threads(r: &mut R, d: &mut Doc) -> Result<(), JsonError> {
    if r.peek_kind()? != Kind::Array {
        return r.skip_value();
    }
    r.begin_array()?;
    let (mut first, mut text) = (true, Vec::new());
    while r.next_element(first)? {
        first = false;
        match r.peek_kind()? {
            // Old Gecko versions wrote each thread as a JSON string.
            Kind::Str => {
                r.read_str(&mut text)?;
                let mut bytes: &[u8] = &text;
                let input: &mut dyn Read = &mut bytes;
                let mut inner: R = JsonReader::new(input);
                let t = thread(&mut inner).and_then(|t| match inner.at_eof() {
                    true => Ok(t),
                    false => Err(inner.error("trailing characters")),
                });
                match t {
                    Ok(t) => d.threads.push(t),
                    Err(e) => d.warnings.push(format!(
                        "a thread written as a string is not JSON ({e}); skipped"
                    )),
                }
            }
            _ => d.threads.push(thread(r)?),
        }
    }
    Ok(())
}

/// A thread object (or `shared`); anything else is skipped as an empty thread.
fn thread(r: &mut R) -> Result<RawThread, JsonError> {
    let mut t = RawThread::default();
    if r.peek_kind()? != Kind::Object {
        r.skip_value()?;
        return Ok(t);
    }
    r.begin_object()?;
    let (mut key, mut first) = (Vec::new(), true);
    while r.next_key(first, &mut key)? {
        first = false;
        let k = std::str::from_utf8(&key).unwrap_or("");
        match k {
            "name" | "processName" | "pid" | "tid" => {
                let v = r.read_value()?;
                t.info.insert(k.to_string(), v);
            }
            "stringTable" | "stringArray" => match r.peek_kind()? {
                Kind::Array => {
                    let s = strings(r)?;
                    // The thread's own `stringArray` wins over an old `stringTable`.
                    if k == "stringArray" || t.strings.is_none() {
                        t.strings = Some(s);
                    }
                }
                _ => r.skip_value()?,
            },
            _ => match wanted(k) {
                Some(cols) => {
                    let name = TABLES.iter().find(|n| **n == k).copied().unwrap_or("");
                    let tb = table(r, cols)?;
                    t.tables.insert(name, tb);
                }
                None => skip(r)?,
            },
        }
    }
    Ok(t)
}

const TABLES: &[&str] = &[
    "samples",
    "stackTable",
    "frameTable",
    "funcTable",
    "resourceTable",
    "markers",
];

fn strings(r: &mut R) -> Result<Vec<String>, JsonError> {
    r.begin_array()?;
    let (mut out, mut buf, mut first) = (Vec::new(), Vec::new(), true);
    while r.next_element(first)? {
        first = false;
        if r.peek_kind()? == Kind::Str {
            r.read_str(&mut buf)?;
            out.push(String::from_utf8_lossy(&buf).into_owned());
        } else {
            r.skip_value()?;
            out.push(String::new());
        }
    }
    Ok(out)
}

fn table(r: &mut R, cols: &[&str]) -> Result<Table, JsonError> {
    let mut t = Table::default();
    if r.peek_kind()? != Kind::Object {
        r.skip_value()?;
        return Ok(t);
    }
    r.begin_object()?;
    let (mut key, mut first) = (Vec::new(), true);
    while r.next_key(first, &mut key)? {
        first = false;
        let k = std::str::from_utf8(&key).unwrap_or("");
        match k {
            "schema" => {
                let v = r.read_value()?;
                let map = v.as_object().map(|o| {
                    o.iter()
                        .filter_map(|(k, v)| Some((k.clone(), usize::try_from(v.as_u64()?).ok()?)))
                        .collect()
                });
                // A schema that is not an object leaves the table unread, as before.
                if let Some(m) = map {
                    t.schema = Some(m);
                }
            }
            "data" => rows(r, &mut t, cols)?,
            "length" => {
                t.length = r
                    .read_value()?
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
            }
            "weightType" => t.weight_type = r.read_value()?.as_str().map(str::to_string),
            _ if cols.contains(&k) => {
                let mut c = if counted_only(k) {
                    Col::Count(0)
                } else {
                    Col::default()
                };
                if numbers(r, &mut c)? {
                    t.named.insert(k.to_string(), c);
                }
            }
            _ => skip(r)?,
        }
    }
    // Rows read before their schema: give back the columns it does not name.
    if let Some(s) = &t.schema {
        for (pos, c) in t.by_pos.iter_mut().enumerate() {
            if !s
                .iter()
                .any(|(n, &p)| p == pos && cols.contains(&n.as_str()))
            {
                *c = None;
            }
        }
    }
    Ok(t)
}

/// A raw table's `data`: rows of cells, kept by position. A row that is not an array
/// counts as a row of nulls (the tree builder then finds no stack in it).
fn rows(r: &mut R, t: &mut Table, cols: &[&str]) -> Result<(), JsonError> {
    if r.peek_kind()? != Kind::Array {
        return r.skip_value();
    }
    r.begin_array()?;
    let keep: Option<Vec<bool>> = t.schema.as_ref().map(|s| {
        let n = s.values().copied().max().map_or(0, |m| m + 1).min(1 << 16);
        (0..n)
            .map(|p| s.iter().any(|(k, &q)| q == p && cols.contains(&k.as_str())))
            .collect()
    });
    let (mut first, mut num) = (true, Vec::new());
    while r.next_element(first)? {
        first = false;
        if r.peek_kind()? == Kind::Array {
            r.begin_array()?;
            let mut pos = 0;
            while r.next_element(pos == 0)? {
                let kept = keep.as_ref().is_none_or(|k| k.get(pos) == Some(&true));
                if kept && pos < 1 << 16 {
                    let v = cell(r, &mut num)?;
                    while t.by_pos.len() <= pos {
                        let mut c = Col::default();
                        c.pad(t.rows);
                        t.by_pos.push(Some(c));
                    }
                    if let Some(c) = &mut t.by_pos[pos] {
                        c.push(v);
                    }
                } else {
                    skip(r)?;
                }
                pos += 1;
            }
        } else {
            r.skip_value()?;
        }
        t.rows += 1;
        for c in t.by_pos.iter_mut().flatten() {
            c.pad(t.rows);
        }
    }
    Ok(())
}

/// One cell of a raw row: a number, else NaN (null, strings, objects: skipped).
fn cell(r: &mut R, num: &mut Vec<u8>) -> Result<f64, JsonError> {
    if r.peek_kind()? == Kind::Num {
        r.read_num(num)?;
        return to_f64(num).ok_or_else(|| r.error("invalid number"));
    }
    r.skip_value()?;
    Ok(f64::NAN)
}

/// A column: an array walked in the reader's buffer, numbers and nulls by a loop of
/// their own (the bulk of a large profile), anything else through the reader (kept as
/// NaN). Not an array: skipped, and false.
fn numbers(r: &mut R, col: &mut Col) -> Result<bool, JsonError> {
    if r.peek_kind()? != Kind::Array {
        return r.skip_value().map(|_| false);
    }
    r.begin_array()?;
    // `sep`: a value was read and a ',' or ']' must come next.
    let (mut sep, mut min) = (false, 1 << 16);
    let counting = matches!(col, Col::Count(_));
    loop {
        let (w, eof) = r.window(min);
        let mut i = 0;
        let mut done = false;
        let mut other = false;
        while i < w.len() {
            // The common runs first (plain indices, nulls; a counted column's
            // numbers), by loops of their own; whatever they leave is one token for
            // the general step below, which then hands back to them.
            match col {
                Col::Idx(v) => (i, sep) = run_idx(w, i, sep, v),
                Col::Count(n) => (i, sep) = run_count(w, i, sep, n),
                Col::Num(_) => {}
            }
            if i >= w.len() {
                break;
            }
            let b = w[i];
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => i += 1,
                b']' => {
                    i += 1;
                    done = true;
                    break;
                }
                b',' if sep => {
                    sep = false;
                    i += 1;
                }
                b'n' if !sep => {
                    if w.len() - i < 4 && !eof {
                        break;
                    }
                    if w.get(i..i + 4) != Some(b"null") {
                        other = true;
                        break;
                    }
                    col.push(f64::NAN);
                    i += 4;
                    sep = true;
                }
                b'0'..=b'9' | b'-' if !sep => {
                    let mut j = i;
                    let mut int = 0u64;
                    let mut plain = true;
                    while j < w.len() && is_num(w[j]) {
                        let d = w[j];
                        if d.is_ascii_digit() && plain && j - i < 15 {
                            int = int * 10 + u64::from(d - b'0');
                        } else {
                            plain = false;
                        }
                        j += 1;
                    }
                    if j == w.len() && !eof {
                        break; // the number may go on in the next window
                    }
                    if plain {
                        col.push_int(int);
                    } else if counting {
                        // A column only counted (a sample's time): checked, not converted.
                        if !is_strict(&w[i..j]) {
                            r.advance(i);
                            return Err(r.error("invalid number"));
                        }
                        col.push(0.0);
                    } else {
                        match to_f64(&w[i..j]) {
                            Some(v) => col.push(v),
                            None => {
                                let at = i;
                                r.advance(at);
                                return Err(r.error("invalid number"));
                            }
                        }
                    }
                    i = j;
                    sep = true;
                }
                _ => {
                    other = true;
                    break;
                }
            }
        }
        let at_end = i == w.len();
        r.advance(i);
        if done {
            return Ok(true);
        }
        if other {
            // A string, object, literal or misplaced byte: the reader's own path (which
            // also reports what is wrong).
            if sep {
                if !r.next_element(false)? {
                    return Ok(true);
                }
            } else if r.peek_kind()? == Kind::Num {
                return Err(r.error("invalid number"));
            }
            r.skip_value()?;
            col.push(f64::NAN);
            sep = true;
            continue;
        }
        if eof && at_end {
            // The reader reports the end of input (or a read error) itself.
            r.next_element(false)?;
            return Err(r.error("unexpected end of input inside an array"));
        }
        // Nothing taken from a full window: a token longer than it; a larger one.
        min = if i == 0 {
            min.saturating_mul(2)
        } else {
            1 << 16
        };
    }
}

/// Past whitespace from `i`.
#[inline(always)]
fn skip_ws(w: &[u8], mut i: usize) -> usize {
    while i < w.len() && lexer::is_ws(w[i]) {
        i += 1;
    }
    i
}

/// After a value of a run: past the ',' (and the whitespace before it) to the next
/// value, or None when something else comes (the general step takes it).
#[inline(always)]
fn past_comma(w: &[u8], i: usize) -> Option<usize> {
    if w.get(i) == Some(&b',') {
        return Some(i + 1);
    }
    let i = skip_ws(w, i);
    (w.get(i) == Some(&b',')).then_some(i + 1)
}

/// An index column's run of `int,int,null,...` from `i` (`sep`: a value was just read).
/// Takes exactly what the general step would take alike: digit-only numbers of at most
/// 15 digits below `NO` whose next byte is in the window and ends the number, and
/// `null`s; stops (at the start of the token, `sep` as there) at anything else.
#[inline(never)]
fn run_idx(w: &[u8], mut i: usize, sep: bool, v: &mut Vec<u32>) -> (usize, bool) {
    let n = w.len();
    if sep {
        match past_comma(w, i) {
            Some(j) => i = j,
            None => return (i, true),
        }
    }
    loop {
        // The common case: up to 7 digits and their ',' in the next 8 bytes.
        if let Some(x) = word(w, i) {
            let len = digit_run(x);
            if len > 0 && len < 8 && w[i + len] == b',' {
                v.push(digits_value(x, len) as u32);
                i += len + 1;
                continue;
            }
        }
        i = skip_ws(w, i);
        let start = i;
        let x = match word(w, i) {
            Some(x) => {
                let len = digit_run(x);
                i += len;
                if len == 8 {
                    more_digits(w, &mut i, digits_value(x, 8))
                } else {
                    digits_value(x, len)
                }
            }
            None => more_digits(w, &mut i, 0),
        };
        let len = i - start;
        if len == 0 {
            if w.get(i..i + 4) == Some(b"null") && i + 4 < n {
                v.push(NO);
                i += 4;
            } else {
                return (start, false);
            }
        } else if len > 15 || i == n || is_num(w[i]) || x >= u64::from(NO) {
            return (start, false);
        } else {
            v.push(x as u32);
        }
        match past_comma(w, i) {
            Some(j) => i = j,
            None => return (i, true),
        }
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;

/// The 8 bytes at `i` as a little-endian word (the first byte lowest).
#[inline(always)]
fn word(w: &[u8], i: usize) -> Option<u64> {
    let b: [u8; 8] = w.get(i..i + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

/// How many of the word's bytes, from its first, are ASCII digits (0 to 8). A byte is
/// a digit when its high nibble is 3 and stays 3 with 6 added; a carry out of a byte
/// of 0xFA or more (never in a number array outside strings) can only end the run
/// early, and an early end leaves the token to the general step.
#[inline(always)]
fn digit_run(x: u64) -> usize {
    (not_digits(x).trailing_zeros() / 8) as usize
}

/// A byte that is not zero where the word's byte is not an ASCII digit (its high
/// nibble is not 3, or is not 3 with 6 added: `digit_run`'s note on carries).
#[inline(always)]
fn not_digits(x: u64) -> u64 {
    let hi = 0xF0 * ONES;
    ((x & hi) ^ (0x30 * ONES)) | ((x.wrapping_add(0x06 * ONES) & hi) ^ (0x30 * ONES))
}

/// The value of the word's first `len` digits (`digit_run` of it, 0 to 8).
#[inline(always)]
fn digits_value(x: u64, len: usize) -> u64 {
    if len == 0 {
        return 0;
    }
    // The run's digits moved to the word's top (zeros below are leading zeros), then
    // combined pairwise: 8 digits in three multiplications.
    let mut v = (x.wrapping_sub(0x30 * ONES)) << (8 * (8 - len));
    v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let m = 0x0000_00FF_0000_00FF;
    ((v & m).wrapping_mul(0x000F_4240_0000_0064))
        .wrapping_add(((v >> 16) & m).wrapping_mul(0x0000_2710_0000_0001))
        >> 32
}

/// Digits from `i` one at a time, onto `x` (wrapping: runs over 15 digits are left to
/// the general step anyway).
#[inline(always)]
fn more_digits(w: &[u8], i: &mut usize, mut x: u64) -> u64 {
    while *i < w.len() {
        let d = w[*i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        x = x.wrapping_mul(10).wrapping_add(u64::from(d));
        *i += 1;
    }
    x
}

/// Digits from `i`: the first byte past them (8 bytes at a time while it can).
#[inline(always)]
fn digits(w: &[u8], mut i: usize) -> usize {
    while let Some(x) = word(w, i) {
        let len = digit_run(x);
        i += len;
        if len < 8 {
            return i;
        }
    }
    while i < w.len() && w[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// Where each of the word's bytes is not an ASCII digit: 8 bits, the first byte lowest.
#[inline(always)]
fn non_digits(x: u64) -> u32 {
    let m = not_digits(x);
    // Each byte to one bit (set when the byte is not zero), gathered into the top byte.
    let t = (m | (m >> 4)) & (0x0F * ONES);
    let b = ((t + 0x0F * ONES) >> 4) & ONES;
    (b.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
}

/// The common number of a time column, `digits` or `digits.digits` followed by a ','
/// within the 16 bytes at `i`: the position of that ','. None: anything else (the
/// general check takes it).
#[inline(always)]
fn short_decimal(w: &[u8], i: usize) -> Option<usize> {
    let (a, b) = (word(w, i)?, word(w, i + 8)?);
    let mask = non_digits(a) | (non_digits(b) << 8);
    let k1 = mask.trailing_zeros() as usize;
    if k1 == 0 || k1 >= 16 {
        return None;
    }
    match w[i + k1] {
        b',' => Some(i + k1),
        b'.' => {
            let k2 = (mask & (mask - 1)).trailing_zeros() as usize;
            (k2 > k1 + 1 && k2 < 16 && w[i + k2] == b',').then_some(i + k2)
        }
        _ => None,
    }
}

/// The end of the JSON number at `i` as `is_strict` reads it, when it is one and the
/// window holds the byte after it (which must end it). None: anything else.
#[inline(always)]
fn strict_end(w: &[u8], i: usize) -> Option<usize> {
    let mut j = i + usize::from(w.get(i) == Some(&b'-'));
    let int = digits(w, j);
    if int == j {
        return None;
    }
    j = int;
    if w.get(j) == Some(&b'.') {
        let f = digits(w, j + 1);
        if f == j + 1 {
            return None;
        }
        j = f;
    }
    if matches!(w.get(j), Some(b'e' | b'E')) {
        let mut e = j + 1;
        if matches!(w.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        let d = digits(w, e);
        if d == e {
            return None;
        }
        j = d;
    }
    (j < w.len() && !is_num(w[j])).then_some(j)
}

/// A counted column's run (a sample's `time`): numbers checked as the general step
/// checks them (the longest run of number bytes, JSON's grammar: `is_strict`) and
/// nulls, counted; stops at the start of anything else or of a number the window may
/// cut.
#[inline(never)]
fn run_count(w: &[u8], mut i: usize, sep: bool, count: &mut usize) -> (usize, bool) {
    let n = w.len();
    if sep {
        match past_comma(w, i) {
            Some(j) => i = j,
            None => return (i, true),
        }
    }
    loop {
        if let Some(j) = short_decimal(w, i) {
            // The common case: the number and its ','.
            *count += 1;
            i = j + 1;
            continue;
        }
        i = skip_ws(w, i);
        if let Some(j) = strict_end(w, i) {
            i = j;
        } else if w.get(i..i + 4) == Some(b"null") && i + 4 < n {
            i += 4;
        } else {
            return (i, false);
        }
        *count += 1;
        match past_comma(w, i) {
            Some(j) => i = j,
            None => return (i, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(text: &str, size: usize) -> Result<Vec<f64>, String> {
        let mut bytes = text.as_bytes();
        let input: &mut dyn Read = &mut bytes;
        let mut r: R = JsonReader::with_buffer_size(input, size);
        let mut c = Col::default();
        numbers(&mut r, &mut c).map_err(|e| e.to_string())?;
        Ok((0..c.len()).map(|i| c.num(i).unwrap_or(-1.0)).collect())
    }

    #[test]
    fn digit_words_read_as_the_byte_loop_reads_them() {
        let cases: &[&[u8]] = &[
            b"12345678,",
            b"1,2,3,4,5",
            b"0,000000",
            b"98765432",
            b"1234567x",
            b"-1234567",
            b"12.45678",
            b"00000001",
            b"9\xfa9999999",
            b"\xff12345678",
            b"4294967295",
        ];
        for c in cases {
            let mut j = 0;
            more_digits(c, &mut j, 0);
            if let Some(x) = word(c, 0) {
                let len = digit_run(x);
                let v = digits_value(x, len);
                assert_eq!(len, j.min(8), "{c:?}");
                let mut k = 0;
                let want = more_digits(&c[..len], &mut k, 0);
                assert_eq!(v, want, "{c:?}");
            }
            assert_eq!(digits(c, 0), j, "{c:?}");
        }
        for t in [
            "14351069.188525,1",
            "1,2",
            "12.5,xxxxxxxxxxxxx",
            "1.2.3,xxxxxxxxxxx",
            ".5,xxxxxxxxxxxxxx",
            "5.,xxxxxxxxxxxxxx",
            "123456789012345,1",
            "1234567890123456,",
            "1e5,xxxxxxxxxxxxx",
            "-1.5,xxxxxxxxxxxx",
            "7]xxxxxxxxxxxxxxx",
            "12.34 ,xxxxxxxxxxx",
            "1.5",
        ] {
            let b = t.as_bytes();
            let slow = strict_end(b, 0).filter(|&j| b[j] == b',' && j < 16);
            // The fast check reads 16 bytes, and leaves signs and exponents to the other.
            let slow = slow.filter(|_| b.len() >= 16 && b[0] != b'-' && !b[..16].contains(&b'e'));
            assert_eq!(short_decimal(b, 0), slow, "{t}");
        }
        for x in [
            0u64,
            7,
            10,
            99,
            12345,
            99_999_999,
            4_294_967_295,
            123_456_789_012_345,
        ] {
            let t = format!("{x}]        ");
            let mut v = Vec::new();
            let (end, sep) = run_idx(t.as_bytes(), 0, false, &mut v);
            let small = x < u64::from(NO);
            assert_eq!(v, if small { vec![x as u32] } else { vec![] }, "{x}");
            assert_eq!(sep, small, "{x}");
            let len = x.to_string().len();
            assert_eq!(end, if small { len } else { 0 }, "{x}");
        }
    }

    #[test]
    fn number_columns_read_alike_at_every_buffer_size() {
        let text = r#"[1, 22,null , 3.5,-4,1e2,"x",{"a":[1]},18446744073709551616 ]"#;
        let want = vec![
            1.0,
            22.0,
            -1.0,
            3.5,
            -4.0,
            100.0,
            -1.0,
            -1.0,
            1.8446744073709552e19,
        ];
        for size in 1..80 {
            assert_eq!(col(text, size).unwrap(), want, "buffer {size}");
        }
        assert_eq!(col("[]", 4).unwrap(), Vec::<f64>::new());
        for ok in ["0", "-1.5", "1e5", "2.5E-3", "14351069.249197"] {
            assert!(is_strict(ok.as_bytes()), "{ok}");
        }
        for bad in ["", "-", "1.", ".5", "1e", "1e+", "--1", "1-2", "+1"] {
            assert!(!is_strict(bad.as_bytes()), "{bad}");
        }
        for bad in ["[1 2]", "[1,,2]", "[1", "[1,", "[--1]", "[nul]", "[+1]"] {
            assert!(col(bad, 3).is_err(), "{bad}");
            assert!(col(bad, 64).is_err(), "{bad}");
        }
    }
}
