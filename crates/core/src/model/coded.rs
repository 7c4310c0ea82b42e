//! An event column with few distinct values (pid, tid, category, name, a record
//! function id that is always 0): a code per row into a table of the values, instead
//! of the value itself. The code is a byte while the column has at most 256 distinct
//! values (pids, tids, categories: issue 29, the load's peak), a u16 after.
//!
//! It reads like the `Vec` it replaced: `col[i]` lends the value. The last row is kept
//! apart until the next push, so `col[last] = v` (readers fill a row right after
//! pushing it) can lend a slot of its own; setting an earlier row, or a 65,537th
//! distinct value, turns the column into a plain vector of values for good.

use std::collections::HashMap;
use std::hash::Hash;
use std::ops::{Index, IndexMut};

use super::intern::FxBuild;

pub trait Code: Copy + Eq + Hash + std::fmt::Debug {
    /// The value as a small table index, for values that are (string) ids: their codes
    /// are then looked up in a plain table, not hashed (a name changes on almost every
    /// row, so the lookup runs once per row).
    fn index(self) -> Option<usize> {
        None
    }
}

impl Code for u32 {
    #[inline]
    fn index(self) -> Option<usize> {
        // Ids past this bound are not string ids; a table that big would cost memory.
        (self < DENSE_BOUND).then_some(self as usize)
    }
}

impl Code for i64 {}

/// Values below this (as an index) take the table; the others the hash map.
const DENSE_BOUND: u32 = 1 << 22;

/// "No code yet" in the table of codes by index.
const NO_CODE: u32 = u32::MAX;

/// Where a coded column's codes are stored: nowhere yet (no row, or `uniform` rows of
/// the first value), `narrow` (not empty) or `codes` (not empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Start,
    Narrow,
    Wide,
}

#[derive(Debug, Clone)]
pub struct Coded<T: Code> {
    values: Vec<T>,
    /// Code of each value without a table index.
    ids: HashMap<T, u16, FxBuild>,
    /// Code of each value with a table index (`Code::index`), NO_CODE where none.
    by_index: Vec<u32>,
    /// Each row's code: one byte while every code fits (`narrow`), else `codes`; at
    /// most one of the two holds rows.
    narrow: Vec<u8>,
    codes: Vec<u16>,
    /// Which of the two holds the rows (`Mode`): one load tells a row's push where its
    /// code goes, where three tests of the vectors did.
    mode: Mode,
    /// Rows coded 0 that `codes` does not hold: while every row has the first value (a
    /// record function id no row has, one process), no code is stored; the first row
    /// with another value writes them out. Zero once `codes` holds any.
    uniform: usize,
    /// The last row's value, not yet coded.
    tail: Option<T>,
    /// Set once the column gave up coding: every row's value.
    plain: Option<Vec<T>>,
}

impl<T: Code> Default for Coded<T> {
    fn default() -> Self {
        Coded {
            values: Vec::new(),
            ids: HashMap::default(),
            by_index: Vec::new(),
            narrow: Vec::new(),
            codes: Vec::new(),
            mode: Mode::Start,
            uniform: 0,
            tail: None,
            plain: None,
        }
    }
}

impl<T: Code> Coded<T> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        match &self.plain {
            Some(p) => p.len(),
            None => self.coded() + self.tail.is_some() as usize,
        }
    }

    /// Rows coded (all but the tail).
    #[inline]
    fn coded(&self) -> usize {
        self.narrow.len() + self.codes.len() + self.uniform
    }

    /// Stores a row's code.
    #[inline(always)]
    fn push_code(&mut self, c: u16) {
        match self.mode {
            Mode::Narrow if c <= u16::from(u8::MAX) => self.narrow.push(c as u8),
            Mode::Wide => self.codes.push(c),
            Mode::Start if c == 0 => self.uniform += 1,
            _ => self.write_out(c),
        }
    }

    /// The first row with a code other than 0 (the rows before it are written out), or
    /// the first code past a byte (the codes are widened).
    #[cold]
    #[inline(never)]
    fn write_out(&mut self, c: u16) {
        if self.narrow.is_empty() {
            self.narrow = vec![0; self.uniform];
            self.uniform = 0;
        }
        if c <= u16::from(u8::MAX) {
            self.narrow.push(c as u8);
            self.mode = Mode::Narrow;
            return;
        }
        let mut wide = Vec::with_capacity(self.narrow.len() + 1);
        wide.extend(self.narrow.iter().map(|&b| u16::from(b)));
        self.narrow = Vec::new();
        wide.push(c);
        self.codes = wide;
        self.mode = Mode::Wide;
    }

    /// The code of row `i` (below `coded()`).
    #[inline]
    fn code(&self, i: usize) -> Option<u16> {
        if i < self.uniform {
            return Some(0);
        }
        match self.narrow.get(i) {
            Some(&b) => Some(u16::from(b)),
            None => self.codes.get(i).copied(),
        }
    }

    /// The last coded row's code (None while no code is stored).
    #[inline(always)]
    fn last_code(&self) -> Option<u16> {
        match self.narrow.last() {
            Some(&b) => Some(u16::from(b)),
            None => self.codes.last().copied(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Codes the tail row; false when the value table is full.
    #[inline]
    fn commit_tail(&mut self) -> bool {
        let Some(v) = self.tail else { return true };
        // Neighbouring rows mostly agree (one thread, one category): no hashing then.
        if let Some(c) = self.last_code() {
            if self.values[c as usize] == v {
                self.push_code(c);
                self.tail = None;
                return true;
            }
        } else if self.uniform > 0 && self.values[0] == v {
            self.uniform += 1;
            self.tail = None;
            return true;
        }
        let known = match v.index() {
            Some(i) => match self.by_index.get(i) {
                Some(&c) if c != NO_CODE => Some(c as u16),
                _ => None,
            },
            None => self.ids.get(&v).copied(),
        };
        let code = match known {
            Some(c) => c,
            None => match self.new_code(v) {
                Some(c) => c,
                None => return false,
            },
        };
        self.push_code(code);
        self.tail = None;
        true
    }

    /// A value's first row: its code, None when the value table is full. Out of line:
    /// the row loop above runs for every row, this once per distinct value.
    #[inline(never)]
    fn new_code(&mut self, v: T) -> Option<u16> {
        if self.values.len() > u16::MAX as usize {
            return None;
        }
        let c = self.values.len() as u16;
        self.values.push(v);
        self.index_code(v, c);
        Some(c)
    }

    /// Makes `v` found as code `c` (by its index when it has one, else by the map).
    fn index_code(&mut self, v: T, c: u16) {
        match v.index() {
            Some(i) => {
                if i >= self.by_index.len() {
                    self.by_index.resize(i + 1, NO_CODE);
                }
                self.by_index[i] = c as u32;
            }
            None => {
                self.ids.insert(v, c);
            }
        }
    }

    /// Gives up coding: every value in a plain vector from here on.
    fn make_plain(&mut self) -> &mut Vec<T> {
        if self.plain.is_none() {
            let mut p: Vec<T> = (0..self.coded())
                .map(|i| self.values[self.code(i).unwrap_or(0) as usize])
                .collect();
            p.extend(self.tail);
            *self = Coded {
                plain: Some(p),
                ..Self::default()
            };
        }
        self.plain.as_mut().expect("plain was just set")
    }

    /// The row loop's common case inlined (the tail row's value has a code: the last
    /// row's, or one found by index), the rest out of line.
    #[inline(always)]
    pub fn push(&mut self, v: T) {
        if let Some(p) = &mut self.plain {
            p.push(v);
            return;
        }
        {
            if let Some(t) = self.tail {
                if let Some(c) = self.known_code(t) {
                    self.push_code(c);
                    self.tail = Some(v);
                    return;
                }
            }
        }
        self.push_any(v);
    }

    /// `push` for a reader that never sets a row after pushing it: the value is coded
    /// at once (no tail kept apart), its code found without hashing when it is the
    /// last row's or has an index; the rest out of line. A later `col[last] = v` makes
    /// the column plain.
    #[inline(always)]
    pub fn push_final(&mut self, v: T) {
        // A plain column has no values (`make_plain`): no code is known there, so its
        // rows take the slow path without a test of their own.
        if self.tail.is_none() {
            if let Some(c) = self.known_code(v) {
                self.push_code(c);
                return;
            }
        }
        self.push_final_slow(v);
    }

    #[inline(never)]
    fn push_final_slow(&mut self, v: T) {
        self.push_any(v);
        if self.plain.is_none() && !self.commit_tail() {
            self.make_plain();
        }
    }

    /// A value's code without hashing: by its index when it has one (one load, as
    /// cheap as the last row's check, which for a name column failed on most rows),
    /// else the last row's.
    #[inline(always)]
    fn known_code(&self, t: T) -> Option<u16> {
        if let Some(i) = t.index() {
            return match self.by_index.get(i) {
                Some(&c) if c != NO_CODE => Some(c as u16),
                _ => None,
            };
        }
        let last = self.last_code().unwrap_or(0);
        (self.values.get(last as usize) == Some(&t)).then_some(last)
    }

    #[inline(never)]
    fn push_any(&mut self, v: T) {
        if let Some(p) = &mut self.plain {
            p.push(v);
            return;
        }
        if !self.commit_tail() {
            self.make_plain().push(v);
            return;
        }
        self.tail = Some(v);
    }

    /// Replaces every row's value `v` by `f(v)`, calling `f` once per distinct value
    /// while the column is coded (a reader that wrote placeholders, such as a track's
    /// index for its lane, names them at the end without a pass over the rows). Values
    /// that `f` makes equal keep their own codes; lookups find the first.
    pub fn map_values(&mut self, mut f: impl FnMut(T) -> T) {
        if let Some(p) = &mut self.plain {
            for v in p.iter_mut() {
                *v = f(*v);
            }
            return;
        }
        for v in &mut self.values {
            *v = f(*v);
        }
        if let Some(t) = &mut self.tail {
            *t = f(*t);
        }
        self.ids.clear();
        self.by_index.clear();
        for c in (0..self.values.len()).rev() {
            self.index_code(self.values[c], c as u16);
        }
    }

    /// Grows the column to `len` rows, each new one `v`: a count while every row is `v`
    /// (no code stored), pushed one by one otherwise.
    pub fn resize_with_value(&mut self, len: usize, v: T) {
        while self.len() < len {
            let uniform = self.plain.is_none()
                && self.narrow.is_empty()
                && self.codes.is_empty()
                && self.tail == Some(v)
                && self.values.first() == Some(&v);
            if uniform {
                // The tail stays the last row: the rows added before it are all `v`.
                self.uniform += len - self.len();
                return;
            }
            self.push(v);
        }
    }

    /// The codes of the first rows, a byte each, and the values they stand for, when
    /// the column holds its rows so (none plain, more than one value seen): every row
    /// but the last when it is kept apart (`push`), else every row. Two codes may stand
    /// for equal values (`map_values`). Read through [`BytePairs`].
    fn byte_codes(&self) -> Option<(&[u8], &[T])> {
        let bytes = self.plain.is_none() && self.uniform == 0 && self.codes.is_empty();
        bytes.then_some((&self.narrow[..], &self.values[..]))
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len()).then(|| &self[i])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &T> + '_ {
        (0..self.len()).map(move |i| &self[i])
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Keeps the rows marked in `keep` (one flag per row).
    pub fn retain_rows(&mut self, keep: &[bool]) {
        let mut out = Self::default();
        for (i, _) in keep.iter().enumerate().filter(|(_, &k)| k) {
            out.push(self[i]);
        }
        out.shrink_to_fit();
        *self = out;
    }

    pub fn shrink_to_fit(&mut self) {
        self.narrow.shrink_to_fit();
        self.codes.shrink_to_fit();
        self.values.shrink_to_fit();
        if let Some(p) = &mut self.plain {
            p.shrink_to_fit();
        }
    }
}

/// The rows of two coded columns (a trace's pid and tid) as one number per pair of
/// their codes, below [`slots`](BytePairs::slots): a pass over millions of rows marks
/// each row's pair in a table of that size, a byte a column a row with no checks of
/// the columns' state, and reads each pair's values once ([`values`](BytePairs::values);
/// two pairs may stand for equal values). It covers the first [`len`](BytePairs::len)
/// rows, those both columns hold as byte codes; None when either holds none so.
pub struct BytePairs<'a, T> {
    a: &'a [u8],
    a_values: &'a [T],
    b: &'a [u8],
    b_values: &'a [T],
    width: usize,
}

impl<'a, T: Code> BytePairs<'a, T> {
    pub fn new(a: &'a Coded<T>, b: &'a Coded<T>) -> Option<Self> {
        let (a, a_values) = a.byte_codes()?;
        let (b, b_values) = b.byte_codes()?;
        let rows = a.len().min(b.len());
        Some(BytePairs {
            a: &a[..rows],
            a_values,
            b: &b[..rows],
            b_values,
            width: b_values.len().max(1),
        })
    }

    /// Rows covered: the first ones of both columns.
    pub fn len(&self) -> usize {
        self.a.len()
    }

    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// The size of a table with a place for every pair.
    pub fn slots(&self) -> usize {
        self.a_values.len().max(1) * self.width
    }

    /// Each covered row's two codes, in row order: [`pair`](BytePairs::pair) makes
    /// their pair. (A map to the pair inside the iterator cost the tree's lanes 40
    /// instructions a row more: the zip with the rows' other columns lost its indexed
    /// loop.)
    pub fn codes(&self) -> std::iter::Zip<std::slice::Iter<'a, u8>, std::slice::Iter<'a, u8>> {
        self.a.iter().zip(self.b)
    }

    #[inline(always)]
    pub fn pair(&self, a: u8, b: u8) -> usize {
        usize::from(a) * self.width + usize::from(b)
    }

    /// Row `i`'s pair (None past the covered rows).
    #[inline]
    pub fn at(&self, i: usize) -> Option<usize> {
        Some(self.pair(*self.a.get(i)?, *self.b.get(i)?))
    }

    /// The values a pair stands for.
    pub fn values(&self, pair: usize) -> Option<(T, T)> {
        let a = self.a_values.get(pair / self.width)?;
        let b = self.b_values.get(pair % self.width)?;
        Some((*a, *b))
    }
}

impl<T: Code> Coded<T> {
    /// `Index` past the coded rows: a plain column, the tail, or out of bounds.
    #[inline(never)]
    fn index_rest(&self, i: usize) -> &T {
        if let Some(p) = &self.plain {
            return &p[i];
        }
        match self.code(i) {
            Some(c) => &self.values[c as usize],
            None => match &self.tail {
                Some(t) if i == self.coded() => t,
                _ => panic!(
                    "index out of bounds: the len is {} but the index is {i}",
                    self.len()
                ),
            },
        }
    }
}

impl<T: Code> Index<usize> for Coded<T> {
    type Output = T;
    // Inlined: the tree reads names, categories, pids and tids of every row.
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        match &self.plain {
            None => {
                if let Some(&c) = self.narrow.get(i) {
                    return &self.values[c as usize];
                }
                if let Some(&c) = self.codes.get(i) {
                    return &self.values[c as usize];
                }
                if i < self.uniform {
                    return &self.values[0];
                }
            }
            // A plain column (`seq` of a trace with many events that are not rows)
            // is read in sorts: no call.
            Some(p) => return &p[i],
        }
        self.index_rest(i)
    }
}

impl<T: Code> IndexMut<usize> for Coded<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        if self.plain.is_none() && i == self.coded() && self.tail.is_some() {
            return match &mut self.tail {
                Some(t) => t,
                None => unreachable!("the tail was just checked"),
            };
        }
        &mut self.make_plain()[i]
    }
}

super::vec_like!(Coded, Code);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_like_a_vec() {
        let mut want: Vec<i64> = Vec::new();
        let mut c: Coded<i64> = Coded::new();
        for i in 0..1000i64 {
            want.push(i % 5);
            c.push(i % 5);
            if i % 3 == 0 {
                *want.last_mut().unwrap() = 7;
                c[i as usize] = 7;
            }
        }
        assert!(c.plain.is_none() && c.values.len() == 6);
        // One value throughout: no code stored until a second value comes.
        let mut u: Coded<i64> = Coded::new();
        for _ in 0..100 {
            u.push(-1);
        }
        assert!(u.narrow.is_empty() && u.uniform == 99 && u[98] == -1 && u[99] == -1);
        u[99] = 4;
        u.push(-1);
        assert!(u.uniform == 0 && u.narrow.len() == 100 && u.len() == 101);
        assert_eq!((u[0], u[99], u[100]), (-1, 4, -1));
        let want_u: Vec<i64> = (0..101).map(|i| if i == 99 { 4 } else { -1 }).collect();
        assert!(u.iter().copied().eq(want_u.iter().copied()));
        assert!(c.iter().copied().eq(want.iter().copied()));
        assert_eq!((c.get(999), c.get(1000)), (Some(&want[999]), None));
        // An earlier row: the column goes plain and stays right.
        want[10] = -1;
        c[10] = -1;
        c.push(3);
        want.push(3);
        assert!(c.plain.is_some());
        assert!(c.iter().copied().eq(want.iter().copied()));
        let keep: Vec<bool> = (0..want.len()).map(|i| i % 2 == 0).collect();
        c.retain_rows(&keep);
        let kept: Vec<i64> = want.iter().step_by(2).copied().collect();
        assert_eq!(c, kept.iter().copied().collect::<Coded<i64>>());
        assert_eq!(c, Coded::from(kept));
        // Placeholders named at the end: values mapped, two made equal, pushes after.
        let mut m: Coded<u32> = [5u32, 6, 5, 7, 6].into_iter().collect();
        m.map_values(|v| if v == 7 { 60 } else { v * 10 });
        m.push(60);
        m.push(50);
        m.push(8);
        let got: Vec<u32> = m.iter().copied().collect();
        assert_eq!(got, vec![50, 60, 50, 60, 60, 60, 50, 8]);
        // Ids past the table's bound take the hash map; both kinds mix.
        let mixed: Vec<u32> = (0..300u32)
            .map(|i| {
                if i % 3 == 0 {
                    DENSE_BOUND + i % 7
                } else {
                    i % 11
                }
            })
            .collect();
        let m = Coded::from(mixed.clone());
        assert!(m.plain.is_none() && m.values.len() == 7 + 11);
        assert!(m.iter().copied().eq(mixed.iter().copied()));
        // Byte codes up to 256 distinct values, then widened; the rows stay right.
        let wide: Vec<u32> = (0..2000u32).map(|i| (i * 7) % 300).collect();
        let m = Coded::from(wide[..200].to_vec());
        assert!(m.codes.is_empty() && m.narrow.len() + 1 == 200);
        assert!(m.iter().copied().eq(wide[..200].iter().copied()));
        let m = Coded::from(wide.clone());
        assert!(m.narrow.is_empty() && m.codes.len() + 1 == 2000);
        assert!(m.iter().copied().eq(wide.iter().copied()));
        // Coded at once: the same rows as `push` gives.
        let vals: Vec<u32> = (0..3000u32).map(|i| (i / 7) % 300).collect();
        let mut f: Coded<u32> = Coded::new();
        for &v in &vals {
            f.push_final(v);
        }
        assert!(f.tail.is_none() && f.plain.is_none() && f.len() == 3000);
        assert!(f.iter().copied().eq(vals.iter().copied()));
        let mut f: Coded<i64> = Coded::new();
        (0..70_000i64).for_each(|v| f.push_final(v % 69_000));
        assert!(f.plain.is_some() && f.iter().copied().eq((0..70_000i64).map(|v| v % 69_000)));
        // Grown by one value: a count, then pushes once another value is there.
        let mut r: Coded<i64> = Coded::new();
        r.resize_with_value(1000, -1);
        assert!(r.narrow.is_empty() && r.len() == 1000 && r[0] == -1 && r[999] == -1);
        r.push(5);
        r.resize_with_value(1003, -1);
        let got: Vec<i64> = r.iter().copied().collect();
        assert_eq!(
            (got.len(), got[1000], got[1001], got[1002]),
            (1003, 5, -1, -1)
        );
        // Past 65,536 distinct values.
        let many: Vec<u32> = (0..70_000).collect();
        let m = Coded::from(many.clone());
        assert!(m.plain.is_some() && m.iter().copied().eq(many.iter().copied()));
    }
}
