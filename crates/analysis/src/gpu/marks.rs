//! The tree's selection on the timeline (`timeline mark`): every slice of one node,
//! found once when the mark is set (one pass over the lanes' slices), kept per lane and
//! stack row as lane positions. Slices in one row never overlap, so their starts and
//! ends are both sorted: a frame finds the marks of a window with binary searches, at
//! most one per column, whatever the number of instances.

use super::timeline::LaneIndex;

/// The marked slices of one lane: per stack row, lane positions in start order.
#[derive(Debug, Clone, Default)]
pub struct LaneMarks {
    pub rows: Vec<Vec<u32>>,
}

/// The instances of one node of the tree, on every lane.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// The node's path in the loaded tree (what `timeline mark` logs).
    pub path: String,
    /// Its node in the loaded tree (`EventTable::node`).
    pub node: u32,
    /// Per lane, in `GpuState` order (GPU streams, then CPU threads).
    pub lanes: Vec<LaneMarks>,
    pub count: usize,
}

impl Marks {
    /// The slices `hit` accepts on each lane.
    pub fn find<'a>(
        path: String,
        node: u32,
        lanes: impl Iterator<Item = &'a LaneIndex>,
        hit: impl Fn(u32) -> bool,
    ) -> Marks {
        let lanes: Vec<LaneMarks> = lanes
            .map(|ix| LaneMarks {
                rows: ix
                    .stack
                    .rows
                    .iter()
                    .map(|row| {
                        row.iter()
                            .copied()
                            .filter(|&p| hit(ix.events[p as usize]))
                            .collect()
                    })
                    .collect(),
            })
            .collect();
        let count = lanes
            .iter()
            .flat_map(|l| &l.rows)
            .map(|r: &Vec<u32>| r.len())
            .sum();
        Marks {
            path,
            node,
            lanes,
            count,
        }
    }
}

impl LaneMarks {
    pub fn contains(&self, row: usize, pos: u32) -> bool {
        self.rows
            .get(row)
            .is_some_and(|r| r.binary_search(&pos).is_ok())
    }

    /// The columns of `cols` over `[a, b)` that a marked slice of stack row `r`
    /// covers, each once with the first such slice: O(columns × log marks).
    pub fn columns(
        &self,
        r: usize,
        ix: &LaneIndex,
        (a, b): (i64, i64),
        cols: usize,
    ) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        let Some(row) = self.rows.get(r) else {
            return out;
        };
        if cols == 0 || b <= a || row.is_empty() {
            return out;
        }
        let times = &ix.times;
        // Slices over by `t` (a zero-length one at `t` is not): a prefix of the row.
        let over = |q: u32, t: i64| times.end(q as usize) <= t && times.start(q as usize) < t;
        let cw = (b - a) as f64 / cols as f64;
        let mut k = row.partition_point(|&q| over(q, a));
        while k < row.len() {
            let p = row[k];
            let s = times.start(p as usize);
            if s >= b {
                break;
            }
            let e = times.end(p as usize).max(s);
            // Relative to `a` before f64: epoch ns do not fit exactly.
            let c0 = ((s - a) as f64 / cw).floor().max(0.0) as usize;
            if c0 >= cols {
                break;
            }
            let c1 = (((e - a) as f64 / cw).ceil() as usize).clamp(c0 + 1, cols);
            let from = out.last().map_or(0, |&(c, _)| c + 1);
            out.extend((c0.max(from)..c1).map(|c| (c, p)));
            // The next mark reaching past the last column marked.
            let t = a + (c1 as f64 * cw).ceil() as i64;
            k += 1 + row[k + 1..].partition_point(|&q| over(q, t));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventKind, EventTable};

    #[test]
    fn marks_are_found_per_row_and_read_per_column() {
        let mut ev = EventTable::default();
        let n = ev.strings.intern("k");
        // Ten slices of 10 ns every 100 ns, and one of 500 ns from 1000.
        let mut idx: Vec<u32> = (0..10)
            .map(|k| ev.push(n, n, EventKind::Cpu, k * 100, 10, 0, 0) as u32)
            .collect();
        idx.push(ev.push(n, n, EventKind::Cpu, 1000, 500, 0, 0) as u32);
        let ix = LaneIndex::new(&ev, &idx);
        // Even events and the long one are marked.
        let m = Marks::find("a".into(), 0, [&ix].into_iter(), |i| i % 2 == 0 || i == 10);
        assert_eq!(m.count, 6);
        let l = &m.lanes[0];
        assert!(l.contains(0, 2) && !l.contains(0, 3));
        // 10 columns of 100 ns: the even slices' columns, then the long one's five.
        let cols: Vec<usize> = l
            .columns(0, &ix, (0, 1000), 10)
            .iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(cols, vec![0, 2, 4, 6, 8]);
        let cols: Vec<usize> = l
            .columns(0, &ix, (900, 1900), 10)
            .iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(cols, vec![1, 2, 3, 4, 5]);
        // Two columns over 1000 ns: each slice in one of them, each column once.
        let cols = l.columns(0, &ix, (0, 1000), 2);
        assert_eq!(cols, vec![(0, 0), (1, 6)]);
    }
}
