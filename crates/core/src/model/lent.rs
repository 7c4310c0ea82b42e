//! Columns that may lie outside the heap: in a read-only mapping of a cache entry
//! (issue 30). A warm open of a 1 GB trace reads its tree's pre-order (45 MB for 2.5M
//! nodes) from the entry instead of sorting the tree again; mapped, only the pages the
//! rows on screen read are ever brought in. `Col` reads like a slice either way.

use std::marker::PhantomData;
use std::sync::Arc;

/// Bytes that stay put for as long as a holder keeps the `Arc`: a read-only file
/// mapping (`summary::mapped::Mapping`).
pub trait Backing: Send + Sync + std::fmt::Debug {
    fn bytes(&self) -> &[u8];
}

/// Plain little-endian numbers that any bit pattern is a valid value of.
pub trait Plain: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {}
impl Plain for u16 {}
impl Plain for u32 {}

/// A column of `T`: a vector, or `n` values at byte `at` of a backing.
pub enum Col<T: Plain> {
    Heap(Vec<T>),
    Lent {
        back: Arc<dyn Backing>,
        at: usize,
        n: usize,
        _t: PhantomData<T>,
    },
}

impl<T: Plain> Col<T> {
    /// `n` values at byte `at` of `back`; None unless they lie inside it, aligned for
    /// `T`, on a little-endian machine (the files' order).
    pub fn lent(back: Arc<dyn Backing>, at: usize, n: usize) -> Option<Col<T>> {
        let size = std::mem::size_of::<T>();
        let bytes = back.bytes();
        let end = n.checked_mul(size)?.checked_add(at)?;
        let aligned = (bytes.as_ptr() as usize)
            .wrapping_add(at)
            .is_multiple_of(std::mem::align_of::<T>());
        if !cfg!(target_endian = "little") || end > bytes.len() || !aligned {
            return None;
        }
        Some(Col::Lent {
            back,
            at,
            n,
            _t: PhantomData,
        })
    }

    pub fn is_lent(&self) -> bool {
        matches!(self, Col::Lent { .. })
    }
}

impl<T: Plain> std::ops::Deref for Col<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Col::Heap(v) => v,
            Col::Lent { back, at, n, .. } => {
                let b = &back.bytes()[*at..*at + *n * std::mem::size_of::<T>()];
                // SAFETY: `lent` checked that the bytes lie inside the backing, which
                // lives as long as `back` and never changes, that they are aligned for
                // T, and that the machine is little-endian; every bit pattern is a T.
                unsafe { std::slice::from_raw_parts(b.as_ptr() as *const T, *n) }
            }
        }
    }
}

impl<T: Plain> Default for Col<T> {
    fn default() -> Self {
        Col::Heap(Vec::new())
    }
}

impl<T: Plain> Clone for Col<T> {
    fn clone(&self) -> Self {
        match self {
            Col::Heap(v) => Col::Heap(v.clone()),
            Col::Lent { back, at, n, .. } => Col::Lent {
                back: back.clone(),
                at: *at,
                n: *n,
                _t: PhantomData,
            },
        }
    }
}

impl<T: Plain> std::fmt::Debug for Col<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Col::Heap(v) => write!(f, "Heap({} values)", v.len()),
            Col::Lent { at, n, .. } => write!(f, "Lent({n} values at {at})"),
        }
    }
}

impl<T: Plain> PartialEq for Col<T> {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl<T: Plain> PartialEq<Vec<T>> for Col<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self[..] == other[..]
    }
}

impl<T: Plain> From<Vec<T>> for Col<T> {
    fn from(v: Vec<T>) -> Self {
        Col::Heap(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Bytes(Vec<u8>);
    impl Backing for Bytes {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
    }

    #[test]
    fn a_lent_column_reads_its_bytes_and_refuses_what_does_not_fit() {
        let mut b = vec![0u8; 4];
        for v in [7u32, 9, 11] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let back: Arc<dyn Backing> = Arc::new(Bytes(b));
        let c: Col<u32> = Col::lent(back.clone(), 4, 3).expect("fits");
        assert_eq!(&c[..], &[7, 9, 11]);
        assert_eq!(&c.clone()[1..], &[9, 11]);
        assert!(
            Col::<u32>::lent(back.clone(), 4, 4).is_none(),
            "past the end"
        );
        assert!(Col::<u32>::lent(back.clone(), 2, 1).is_none(), "misaligned");
        assert!(Col::<u32>::lent(back, usize::MAX, 2).is_none(), "overflow");
    }
}
