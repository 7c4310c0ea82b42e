//! The starts and ends of a timeline lane's slices, in start order, packed: 8 bytes a
//! slice instead of 24 (an i64 start, an i64 end and an i64 running maximum of ends).
//! Every lane of every CPU thread and GPU stream is indexed behind the TUI's first
//! frame, so on a 1 GB trace (2.7 million slices) the copies were ~65 MB of the TUI's
//! peak (docs/performance.md, "The lane indexes' memory").
//!
//! A start is a u32 offset from the first start of its block of `BLOCK` slices (starts
//! are sorted, so a block spans little time); a duration is a u32. Either too large
//! for 32 bits (a block spanning more than ~4.3 s, a slice longer than that, a negative
//! duration) is marked `u32::MAX` and kept exactly in a short sorted list of
//! exceptions. The running maximum of ends is kept once per block: the first slice
//! still running at a time is the first block whose maximum passes it, then a scan of
//! at most `BLOCK` slices.

/// Slices per block: one base start and one running end maximum per block.
const BLOCK: usize = 64;
/// Marks a value kept in the exceptions.
const FAR: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub struct Spans {
    /// Per block: the first start of the block.
    base: Vec<i64>,
    /// Per block: the largest end up to the block's last slice.
    max_end: Vec<i64>,
    /// Per slice: its start minus its block's base, or `FAR`.
    off: Vec<u32>,
    /// Per slice: its end minus its start, or `FAR`.
    dur: Vec<u32>,
    /// (slice, start) of the starts marked `FAR`, by slice.
    far_starts: Vec<(u32, i64)>,
    /// (slice, end - start) of the durations marked `FAR`, by slice.
    far_durs: Vec<(u32, i64)>,
}

impl Spans {
    /// Packs `n` slices whose start and end `at(k)` gives, in start order.
    pub fn new(n: usize, at: impl Fn(usize) -> (i64, i64)) -> Spans {
        let blocks = n.div_ceil(BLOCK);
        let mut s = Spans {
            base: Vec::with_capacity(blocks),
            max_end: Vec::with_capacity(blocks),
            off: Vec::with_capacity(n),
            dur: Vec::with_capacity(n),
            ..Spans::default()
        };
        let mut m = i64::MIN;
        for k in 0..n {
            let (start, end) = at(k);
            if k % BLOCK == 0 {
                s.base.push(start);
            }
            // Wrapping: the difference is undone exactly by `start`'s wrapping add.
            let o = start.wrapping_sub(s.base[k / BLOCK]);
            if (0..FAR as i64).contains(&o) {
                s.off.push(o as u32);
            } else {
                s.off.push(FAR);
                s.far_starts.push((k as u32, start));
            }
            let d = end.wrapping_sub(start);
            if (0..FAR as i64).contains(&d) {
                s.dur.push(d as u32);
            } else {
                s.dur.push(FAR);
                s.far_durs.push((k as u32, d));
            }
            m = m.max(end);
            if k % BLOCK == BLOCK - 1 || k + 1 == n {
                s.max_end.push(m);
            }
        }
        s.far_starts.shrink_to_fit();
        s.far_durs.shrink_to_fit();
        s
    }

    pub fn len(&self) -> usize {
        self.off.len()
    }

    pub fn is_empty(&self) -> bool {
        self.off.is_empty()
    }

    #[inline]
    pub fn start(&self, k: usize) -> i64 {
        match self.off[k] {
            FAR => far(&self.far_starts, k),
            o => self.base[k / BLOCK] + o as i64,
        }
    }

    /// End minus start (negative for a slice whose end precedes its start).
    #[inline]
    pub fn dur(&self, k: usize) -> i64 {
        match self.dur[k] {
            FAR => far(&self.far_durs, k),
            d => d as i64,
        }
    }

    #[inline]
    pub fn end(&self, k: usize) -> i64 {
        self.start(k).wrapping_add(self.dur(k))
    }

    /// First start and largest end.
    pub fn span(&self) -> Option<(i64, i64)> {
        Some((*self.base.first()?, *self.max_end.last()?))
    }

    /// The number of slices starting before `t` (`inclusive`: at or before `t`).
    pub fn starting_before(&self, t: i64, inclusive: bool) -> usize {
        let before = |s: i64| if inclusive { s <= t } else { s < t };
        // The block bases are starts too: the block, then the slice in it.
        let b = self.base.partition_point(|&s| before(s));
        if b == 0 {
            return 0;
        }
        let lo = (b - 1) * BLOCK;
        let hi = (b * BLOCK).min(self.len());
        lo + partition(hi - lo, |j| before(self.start(lo + j)))
    }

    /// The first slice whose end passes `t`, in start order: no slice before it is
    /// still running after `t`.
    pub fn first_ending_after(&self, t: i64) -> usize {
        let b = self.max_end.partition_point(|&m| m <= t);
        let lo = b * BLOCK;
        let hi = ((b + 1) * BLOCK).min(self.len());
        // Every slice before block `b` ends by `t`; the block has one that does not.
        (lo..hi).find(|&k| self.end(k) > t).unwrap_or(hi)
    }

    /// Bytes on the heap.
    pub fn heap_bytes(&self) -> usize {
        (self.base.capacity() + self.max_end.capacity()) * 8
            + (self.off.capacity() + self.dur.capacity()) * 4
            + (self.far_starts.capacity() + self.far_durs.capacity()) * 16
    }
}

/// The exception kept for slice `k`.
fn far(list: &[(u32, i64)], k: usize) -> i64 {
    let j = list.partition_point(|&(p, _)| (p as usize) < k);
    list[j].1
}

/// The first `j` in `0..n` for which `pred` is false (`pred` true on a prefix).
pub fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(spans: &[(i64, i64)]) {
        let s = Spans::new(spans.len(), |k| spans[k]);
        assert_eq!(s.len(), spans.len());
        let mut m = i64::MIN;
        let mut max_end = Vec::new();
        for (k, &(a, b)) in spans.iter().enumerate() {
            assert_eq!((s.start(k), s.end(k)), (a, b), "slice {k}");
            assert_eq!(s.dur(k), b.wrapping_sub(a));
            m = m.max(b);
            max_end.push(m);
        }
        let starts: Vec<i64> = spans.iter().map(|x| x.0).collect();
        let mut probes: Vec<i64> = spans
            .iter()
            .flat_map(|&(a, b)| [a.saturating_sub(1), a, b, b.saturating_add(1)])
            .collect();
        probes.extend([i64::MIN + 1, 0, i64::MAX - 1]);
        for t in probes {
            assert_eq!(
                s.starting_before(t, false),
                starts.partition_point(|&x| x < t)
            );
            assert_eq!(
                s.starting_before(t, true),
                starts.partition_point(|&x| x <= t)
            );
            assert_eq!(
                s.first_ending_after(t),
                max_end.partition_point(|&x| x <= t),
                "t {t}"
            );
        }
        assert_eq!(
            s.span(),
            spans.first().map(|f| (f.0, *max_end.last().unwrap()))
        );
    }

    #[test]
    fn packed_times_read_back_exactly() {
        check(&[]);
        check(&[(5, 5)]);
        // Many blocks, nested and overlapping slices, repeated starts.
        let v: Vec<(i64, i64)> = (0..1000)
            .map(|i| (i / 3 * 7, i / 3 * 7 + (i * 37) % 101))
            .collect();
        check(&v);
        // Epoch nanoseconds, a slice longer than u32 ns, a negative duration, a gap of
        // more than u32 ns inside a block, and the extremes.
        let base = 1_731_227_668_258_969_029i64;
        let mut v: Vec<(i64, i64)> = (0..200)
            .map(|i| (base + i * 10, base + i * 10 + 5))
            .collect();
        v[3].1 = base + 10_000_000_000;
        v[4].1 = v[4].0 - 7;
        for x in &mut v[70..] {
            x.0 += 5_000_000_000;
            x.1 += 5_000_000_000;
        }
        v.push((i64::MAX - 1, i64::MAX));
        check(&v);
        check(&[(i64::MIN, i64::MAX), (-3, i64::MIN), (0, 0)]);
    }
}
