//! The stack chart's rows: each lane's slices placed in rows once, when the lane is
//! indexed, so a frame only reads them. A CPU thread's slices nest, so a slice goes in
//! the first row free at its start, which is its depth under its enclosing slices (the
//! tree's nesting); a GPU stream's kernels go in the first row free too, so kernels
//! that overlap on one stream (programmatic dependent launch) take extra rows.
//!
//! Slices in one row never overlap, so both their starts and their ends are sorted:
//! the slices of a window are found with a binary search, and a run of slices narrower
//! than a cell is merged into one shaded cell with a second one and the row's running
//! sum of durations, kept every `BLOCK` slices (the rest of a sum is read from the
//! slices themselves). A frame costs O(cells on screen × (log slices + BLOCK)),
//! whatever the trace; the rows cost 4.5 bytes a slice. The slices' times are the
//! lane's (`gpu::spans`), passed in.

use super::spans::{partition, Spans};

/// The running sum of a row's durations is kept at every this many slices.
const BLOCK: usize = 16;

/// A slice at least this many cells wide is a box with its name; narrower ones shade.
pub const MIN_BOX: f64 = 3.0;

#[derive(Debug, Clone, Default)]
pub struct StackRows {
    /// Per row: lane positions (indices into the lane's start-ordered slices).
    pub rows: Vec<Vec<u32>>,
    /// Per row: the running sum of its slices' durations before every `BLOCK`-th
    /// slice (entry j: the slices before `j * BLOCK`).
    cum: Vec<Vec<i64>>,
}

/// What one row shows over a window: boxes and shaded cells, left to right.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Piece {
    /// A slice `MIN_BOX` cells wide or more, over columns `c0..c1`.
    Box { pos: u32, c0: usize, c1: usize },
    /// One column with slices narrower than a cell: the share of the column they are
    /// busy, and the first of them (its colour).
    Shade { pos: u32, col: usize, busy: f32 },
}

impl StackRows {
    /// Places the slices `start(p)..end(p)` (sorted by start, the enclosing slice
    /// first among equal starts) in rows: each in the first row whose last slice has
    /// ended by its start.
    pub fn assign(times: &Spans) -> StackRows {
        let mut rows: Vec<Vec<u32>> = Vec::new();
        let mut cum: Vec<Vec<i64>> = Vec::new();
        let mut sum: Vec<i64> = Vec::new();
        let mut row_end: Vec<i64> = Vec::new();
        for p in 0..times.len() {
            let s = times.start(p);
            let e = times.end(p).max(s);
            let r = match row_end.iter().position(|&x| x <= s) {
                Some(r) => r,
                None => {
                    rows.push(Vec::new());
                    cum.push(Vec::new());
                    sum.push(0);
                    row_end.push(i64::MIN);
                    rows.len() - 1
                }
            };
            if rows[r].len().is_multiple_of(BLOCK) {
                cum[r].push(sum[r]);
            }
            rows[r].push(p as u32);
            sum[r] += e - s;
            row_end[r] = e;
        }
        for r in &mut rows {
            r.shrink_to_fit();
        }
        for c in &mut cum {
            c.shrink_to_fit();
        }
        StackRows { rows, cum }
    }

    pub fn depth(&self) -> usize {
        self.rows.len()
    }

    /// The row holding lane position `pos` (a binary search per row: rows are sorted
    /// by position as they are by start).
    pub fn row_of(&self, pos: u32) -> Option<usize> {
        self.rows.iter().position(|r| r.binary_search(&pos).is_ok())
    }

    /// The sum of the durations of row `r`'s first `x` slices: a kept running sum and
    /// at most `BLOCK - 1` slices after it.
    fn prefix(&self, r: usize, x: usize, times: &Spans) -> i64 {
        let (row, cum) = (&self.rows[r], &self.cum[r]);
        // The row's end (a multiple of BLOCK) has no entry of its own.
        let b = (x / BLOCK).min(cum.len().saturating_sub(1));
        let mut s = cum.get(b).copied().unwrap_or(0);
        for &p in &row[b * BLOCK..x] {
            s += times.dur(p as usize).max(0);
        }
        s
    }

    /// Index within row `r` of the first slice still running after `t`.
    fn first_after(&self, r: usize, times: &Spans, t: i64) -> usize {
        self.rows[r].partition_point(|&p| times.end(p as usize) <= t)
    }

    /// The slice of row `r` under time `t`, else the nearest one in time.
    pub fn at_or_near(&self, r: usize, times: &Spans, t: i64) -> Option<u32> {
        let row = self.rows.get(r)?;
        let k = self.first_after(r, times, t);
        let after = row.get(k).copied();
        if let Some(p) = after {
            if times.start(p as usize) <= t {
                return Some(p);
            }
        }
        let before = k.checked_sub(1).map(|k| row[k]);
        match (before, after) {
            (Some(b), Some(a)) => {
                let db = t - times.end(b as usize);
                let da = times.start(a as usize) - t;
                Some(if db <= da { b } else { a })
            }
            (b, a) => b.or(a),
        }
    }

    /// The next (or previous) slice of row `r` starting after (before) `t`.
    pub fn step(&self, r: usize, times: &Spans, t: i64, forward: bool) -> Option<u32> {
        let row = self.rows.get(r)?;
        if forward {
            let k = row.partition_point(|&p| times.start(p as usize) <= t);
            row.get(k).copied()
        } else {
            let k = row.partition_point(|&p| times.start(p as usize) < t);
            k.checked_sub(1).map(|k| row[k])
        }
    }

    /// Row `r` over `[a, b)` in `cols` columns.
    pub fn pieces(&self, r: usize, times: &Spans, (a, b): (i64, i64), cols: usize) -> Vec<Piece> {
        let mut out = Vec::new();
        let Some(row) = self.rows.get(r) else {
            return out;
        };
        if cols == 0 || b <= a {
            return out;
        }
        // Times relative to `a` before they become f64: epoch ns do not fit exactly.
        let cw = (b - a) as f64 / cols as f64;
        let col_of = |t: i64| (t - a) as f64 / cw;
        let mut k = self.first_after(r, times, a);
        let mut next_col = 0usize;
        while k < row.len() && next_col < cols {
            let p = row[k] as usize;
            let s = times.start(p);
            let e = times.end(p).max(s);
            if s >= b {
                break;
            }
            let (cs, ce) = (col_of(s), col_of(e));
            if ce - cs >= MIN_BOX {
                let c0 = (cs.max(0.0).round() as usize).max(next_col);
                let c1 = (ce.min(cols as f64).round() as usize).min(cols);
                if c1 > c0 {
                    out.push(Piece::Box {
                        pos: p as u32,
                        c0,
                        c1,
                    });
                    next_col = c1;
                }
                k += 1;
                continue;
            }
            // Narrow: every slice starting before this column's end shades it.
            let col = (cs.max(0.0).floor() as usize).max(next_col);
            if col >= cols {
                break;
            }
            let t0 = a + (col as f64 * cw).floor() as i64;
            let t1 = (a + ((col + 1) as f64 * cw).ceil() as i64).max(t0 + 1);
            let hi = seek(row, times, k, t1);
            let last = row[hi - 1] as usize;
            let mut busy = self.prefix(r, hi, times) - self.prefix(r, k, times);
            busy -= (t0 - s).clamp(0, e - s);
            let ls = times.start(last);
            let le = times.end(last).max(ls);
            busy -= (le - t1).clamp(0, le - ls);
            out.push(Piece::Shade {
                pos: p as u32,
                col,
                busy: (busy as f64 / (t1 - t0) as f64).clamp(0.0, 1.0) as f32,
            });
            next_col = col + 1;
            // The last slice may go on into the next column.
            k = if le > t1 { hi - 1 } else { hi };
        }
        out
    }
}

/// Index in `row` of its first slice starting at `t` or later, searched in `row[lo..]`:
/// a guess by interpolation between `lo` and the row's end, then a galloping search
/// around the guess. Zoomed out, each shaded column looks for its end this way: on a
/// row of ~10^6 slices a plain binary search took about 20 steps of two dependent
/// cache misses each (a position, then its start) per column; on evenly spread slices
/// the guess is a few slices off.
fn seek(row: &[u32], times: &Spans, lo: usize, t: i64) -> usize {
    let n = row.len();
    let st = |i: usize| times.start(row[i] as usize);
    if lo >= n || st(lo) >= t {
        return lo;
    }
    if st(n - 1) < t {
        return n;
    }
    // st(lo) < t <= st(n - 1): the answer is in (lo, n - 1].
    let (s0, s1) = (st(lo), st(n - 1));
    let frac = (t - s0) as f64 / (s1 - s0) as f64;
    let g = (lo + (frac * (n - 1 - lo) as f64) as usize).clamp(lo + 1, n - 1);
    // A bracket a < b with st(a) < t <= st(b), widened from the guess.
    let (mut a, mut b) = (g - 1, g);
    let mut step = 1;
    if st(g) >= t {
        while st(a) >= t {
            b = a;
            step *= 2;
            a = g.saturating_sub(step).max(lo);
        }
    } else {
        a = g;
        b = (g + 1).min(n - 1);
        while st(b) < t {
            a = b;
            step *= 2;
            b = (g + step).min(n - 1);
        }
    }
    a + 1 + partition(b - a - 1, |j| st(a + 1 + j) < t)
}

/// Bytes the rows take: the stack chart's cost in memory beside the event table.
impl StackRows {
    pub fn heap_bytes(&self) -> usize {
        self.rows.iter().map(|r| r.capacity() * 4).sum::<usize>()
            + self.cum.iter().map(|c| c.capacity() * 8).sum::<usize>()
            + self.rows.capacity() * 48
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(spans: &[(i64, i64)]) -> (Spans, StackRows) {
        let t = Spans::new(spans.len(), |k| (spans[k].0, spans[k].0 + spans[k].1));
        let r = StackRows::assign(&t);
        (t, r)
    }

    #[test]
    fn nested_slices_take_their_depth() {
        // main [0,100) > a [0,40) > b [10,20); main > c [50,90); d [100,110) after main.
        let (_, r) = rows(&[(0, 100), (0, 40), (10, 10), (50, 40), (100, 10)]);
        assert_eq!(r.rows, vec![vec![0, 4], vec![1, 3], vec![2]]);
        assert_eq!(r.row_of(3), Some(1));
        assert_eq!(r.row_of(2), Some(2));
    }

    #[test]
    fn overlapping_kernels_take_extra_rows() {
        let (_, r) = rows(&[(0, 10), (5, 10), (8, 10), (20, 5), (22, 1)]);
        assert_eq!(r.rows, vec![vec![0, 3], vec![1, 4], vec![2]]);
    }

    #[test]
    fn wide_slices_are_boxes_narrow_ones_shade() {
        // Two wide slices and a burst of 1 ns slices in one cell of 10 ns.
        let mut spans = vec![(0, 40), (40, 30)];
        spans.extend((0..5).map(|i| (80 + i * 2, 1)));
        let (t, r) = rows(&spans);
        let p = r.pieces(0, &t, (0, 100), 10);
        assert_eq!(
            p,
            vec![
                Piece::Box {
                    pos: 0,
                    c0: 0,
                    c1: 4
                },
                Piece::Box {
                    pos: 1,
                    c0: 4,
                    c1: 7
                },
                Piece::Shade {
                    pos: 2,
                    col: 8,
                    busy: 0.5
                },
            ]
        );
    }

    #[test]
    fn a_frame_reads_cells_not_slices() {
        // A million 1 ns slices every 10 ns: 100 columns give 100 shaded cells.
        let spans: Vec<(i64, i64)> = (0..1_000_000).map(|i| (i * 10, 1)).collect();
        let (t, r) = rows(&spans);
        let p = r.pieces(0, &t, (0, 10_000_000), 100);
        assert_eq!(p.len(), 100);
        for x in &p {
            let Piece::Shade { busy, .. } = x else {
                panic!("{x:?}")
            };
            assert!((busy - 0.1).abs() < 0.01, "{busy}");
        }
        // Zoomed in on a window starting mid-trace.
        let p = r.pieces(0, &t, (5_000_000, 5_000_100), 100);
        assert_eq!(p.len(), 10);
        assert!(matches!(p[3], Piece::Shade { col: 30, .. }), "{p:?}");
    }

    #[test]
    fn running_sums_from_blocks_match_the_slices() {
        // 100 slices of 1..=100 ns, every 200 ns: one row.
        let spans: Vec<(i64, i64)> = (0..100).map(|i| (i * 200, i + 1)).collect();
        let (t, r) = rows(&spans);
        assert_eq!(r.cum[0].len(), 100usize.div_ceil(BLOCK));
        for x in [0, 1, 15, 16, 17, 32, 99, 100] {
            let want: i64 = (1..=x as i64).sum();
            assert_eq!(r.prefix(0, x, &t), want, "{x}");
        }
        // A row of exactly BLOCK slices sums to its end.
        let spans: Vec<(i64, i64)> = (0..BLOCK as i64).map(|i| (i * 10, 2)).collect();
        let (t, r) = rows(&spans);
        assert_eq!(r.prefix(0, BLOCK, &t), 2 * BLOCK as i64);
    }

    #[test]
    fn seek_finds_what_a_binary_search_finds() {
        // Uneven starts: bursts, repeats and gaps (a small LCG, so the test is fixed).
        let mut x = 12345u64;
        let mut t = 0i64;
        let starts: Vec<i64> = (0..5000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                t += match x >> 60 {
                    0 => 100_000,
                    1..=3 => 0,
                    _ => (x >> 50) as i64 % 50,
                };
                t
            })
            .collect();
        // One row of every other slice.
        let row: Vec<u32> = (0..5000).step_by(2).collect();
        let times = Spans::new(starts.len(), |k| (starts[k], starts[k]));
        let last = *starts.last().unwrap();
        for lo in [0, 1, 7, 600, 2499, 2500] {
            for q in (-5..last + 10)
                .step_by(997)
                .chain([starts[0], last, last + 1])
            {
                let want = lo.min(row.len())
                    + row[lo.min(row.len())..].partition_point(|&p| starts[p as usize] < q);
                assert_eq!(seek(&row, &times, lo, q), want, "lo {lo} t {q}");
            }
        }
    }

    #[test]
    fn navigation_in_a_row() {
        let (t, r) = rows(&[(0, 10), (20, 10), (40, 10)]);
        assert_eq!(r.at_or_near(0, &t, 25), Some(1));
        assert_eq!(r.at_or_near(0, &t, 33), Some(1));
        assert_eq!(r.at_or_near(0, &t, 38), Some(2));
        assert_eq!(r.step(0, &t, 20, true), Some(2));
        assert_eq!(r.step(0, &t, 20, false), Some(0));
        assert_eq!(r.step(0, &t, 40, true), None);
    }
}
