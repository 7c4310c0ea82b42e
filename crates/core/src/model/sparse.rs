//! An event column that most rows leave empty (a GPU row's device and stream, a
//! launch's correlation): the values of the rows that have one, found by rank in a
//! bitmap, instead of a full-width slot per row.
//!
//! It reads like the `Vec` it replaced: `col[i]` gives the value or the column's "none"
//! (NONE_I64, NONE_U32), and `col[i] = v` sets it. Setting a row that had no value
//! inserts one, which is O(1) for the last row (readers fill a row right after pushing
//! it); the first time an earlier row gets a value (a pass over the finished table),
//! the column turns into a plain vector of values for good, so such passes stay linear.

use std::ops::{Index, IndexMut};

/// A column value type with a "none" that the column does not store.
pub trait Absent: Copy + PartialEq + std::fmt::Debug {
    const NONE: Self;
}

impl Absent for i64 {
    const NONE: i64 = i64::MIN;
}

impl Absent for u32 {
    const NONE: u32 = u32::MAX;
}

#[derive(Debug, Clone)]
pub struct Sparse<T> {
    /// What rows without a value read as (a field, so `Index` can lend it).
    none: T,
    len: usize,
    /// One bit per row: the row has a value. Blocks are made up to the last row with
    /// a value only (rows past them have none), so a row without one costs a count.
    bits: Vec<u64>,
    /// Rows with a value before each 64-row block.
    before: Vec<u32>,
    vals: Vec<T>,
    /// Set once the column gave up being sparse: every row's value.
    dense: Option<Vec<T>>,
}

impl<T: Absent> Default for Sparse<T> {
    fn default() -> Self {
        Sparse {
            none: T::NONE,
            len: 0,
            bits: Vec::new(),
            before: Vec::new(),
            vals: Vec::new(),
            dense: None,
        }
    }
}

impl<T: Absent> Sparse<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// `len` rows without a value.
    pub fn with_len(len: usize) -> Self {
        let mut s = Self::default();
        s.resize_none(len);
        s
    }

    pub fn len(&self) -> usize {
        match &self.dense {
            Some(d) => d.len(),
            None => self.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows that have a value.
    pub fn count(&self) -> usize {
        match &self.dense {
            Some(d) => d.iter().filter(|&&v| v != self.none).count(),
            None => self.vals.len(),
        }
    }

    /// Gives up being sparse: every row's value in a plain vector from here on.
    fn make_dense(&mut self) -> &mut Vec<T> {
        if self.dense.is_none() {
            let d: Vec<T> = (0..self.len).map(|i| self[i]).collect();
            *self = Sparse {
                none: self.none,
                dense: Some(d),
                ..Self::default()
            };
        }
        self.dense.as_mut().expect("dense was just set")
    }

    /// Grows the column to `len` rows, the new ones without a value.
    pub fn resize_none(&mut self, len: usize) {
        assert!(len >= self.len(), "resize_none only grows the column");
        let none = self.none;
        if let Some(d) = &mut self.dense {
            d.resize(len, none);
            return;
        }
        self.len = len;
    }

    /// Makes the bitmap's blocks up to row `i`'s.
    fn blocks_to(&mut self, i: usize) {
        let blocks = i / 64 + 1;
        if self.bits.len() < blocks {
            let total = self.vals.len() as u32;
            self.bits.resize(blocks, 0);
            self.before.resize(blocks, total);
        }
    }

    // Runs once per event and column, inlined: a row without a value is a count, one
    // with a value a bit and the value while its block exists; the rest out of line.
    #[inline(always)]
    pub fn push(&mut self, v: T) {
        if self.dense.is_none() {
            let i = self.len;
            if v == self.none {
                self.len = i + 1;
                return;
            }
            if let Some(w) = self.bits.get_mut(i / 64) {
                *w |= 1 << (i % 64);
                self.vals.push(v);
                self.len = i + 1;
                return;
            }
        }
        self.push_value(v);
    }

    #[inline(never)]
    fn push_value(&mut self, v: T) {
        if let Some(d) = &mut self.dense {
            d.push(v);
            return;
        }
        let i = self.len;
        self.len = i + 1;
        if v != self.none {
            self.blocks_to(i);
            self.bits[i / 64] |= 1 << (i % 64);
            self.vals.push(v);
        }
    }

    /// Where row `i`'s value is (or would go) in `vals`, and whether it has one.
    #[inline]
    fn rank(&self, i: usize) -> (usize, bool) {
        assert!(
            i < self.len,
            "index out of bounds: the len is {} but the index is {i}",
            self.len
        );
        let (b, bit) = (i / 64, i % 64);
        let Some(&w) = self.bits.get(b) else {
            return (self.vals.len(), false);
        };
        let r = self.before[b] as usize + (w & ((1u64 << bit) - 1)).count_ones() as usize;
        (r, w >> bit & 1 == 1)
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len()).then(|| &self[i])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &T> + '_ {
        (0..self.len()).map(move |i| &self[i])
    }

    pub fn clear(&mut self) {
        *self = Sparse {
            none: self.none,
            ..Self::default()
        };
    }

    /// Keeps the rows marked in `keep` (one flag per row).
    pub fn retain_rows(&mut self, keep: &[bool]) {
        let mut out = Sparse {
            none: self.none,
            ..Self::default()
        };
        for (i, _) in keep.iter().enumerate().filter(|(_, &k)| k) {
            out.push(self[i]);
        }
        out.shrink_to_fit();
        *self = out;
    }

    pub fn shrink_to_fit(&mut self) {
        self.bits.shrink_to_fit();
        self.before.shrink_to_fit();
        self.vals.shrink_to_fit();
        if let Some(d) = &mut self.dense {
            d.shrink_to_fit();
        }
    }
}

impl<T: Absent> Index<usize> for Sparse<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        if let Some(d) = &self.dense {
            return &d[i];
        }
        match self.rank(i) {
            (r, true) => &self.vals[r],
            _ => &self.none,
        }
    }
}

impl<T: Absent> IndexMut<usize> for Sparse<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        if self.dense.is_some() {
            return &mut self.make_dense()[i];
        }
        let (r, has) = self.rank(i);
        if !has && i + 1 < self.len {
            // An earlier row: inserting would shift every later block.
            return &mut self.make_dense()[i];
        }
        if !has {
            self.blocks_to(i);
            self.vals.insert(r, self.none);
            self.bits[i / 64] |= 1 << (i % 64);
            for b in &mut self.before[i / 64 + 1..] {
                *b += 1;
            }
        }
        &mut self.vals[r]
    }
}

super::vec_like!(Sparse, Absent);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_like_a_vec() {
        let mut want: Vec<i64> = Vec::new();
        let mut s: Sparse<i64> = Sparse::new();
        for i in 0..300i64 {
            let v = if i % 7 == 0 { i * 10 } else { i64::NONE };
            want.push(v);
            s.push(v);
            // Set the row just pushed, as readers do.
            if i % 11 == 0 {
                want[i as usize] = -i;
                s[i as usize] = -i;
            }
        }
        assert!(s.dense.is_none() && s.count() == want.iter().filter(|&&v| v != i64::NONE).count());
        // Earlier rows with a value stay sparse; one without turns the column dense.
        s[7] = 70;
        want[7] = 70;
        assert!(s.dense.is_none());
        for i in [3usize, 70, 128, 129, 200, 299] {
            want[i] = 5;
            s[i] = 5;
        }
        assert!(s.dense.is_some());
        s.push(9);
        want.push(9);
        s.resize_none(302);
        want.push(i64::NONE);
        assert_eq!(s.len(), want.len());
        assert!(s.iter().copied().eq(want.iter().copied()));
        assert_eq!(s.get(302), None);
        assert_eq!(s.get(1), Some(&i64::NONE));
        let keep: Vec<bool> = (0..302).map(|i| i % 3 != 0).collect();
        let kept: Vec<i64> = want
            .iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(v, _)| *v)
            .collect();
        s.retain_rows(&keep);
        assert!(s.iter().copied().eq(kept.iter().copied()));
        assert_eq!(Sparse::from(kept.clone()), s);
        assert_eq!(kept.iter().copied().collect::<Sparse<i64>>(), s);
        let l: Sparse<u32> = Sparse::with_len(5);
        assert_eq!((l.len(), l[4], l.count()), (5, u32::MAX, 0));
    }
}
