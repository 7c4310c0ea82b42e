//! Counter tracks (Chrome/Kineto `ph: C` samples: HTA's queue length and memory
//! bandwidth series, a process's memory): one track per (process, counter, series),
//! its samples in time order, drawn as a sparkline lane under the timeline's lanes.
//! A column shows the largest sample in it, or the value the counter holds there (the
//! last sample before it); maxima of blocks of samples are kept, so a column costs a
//! binary search and at most two part-blocks, whatever the number of samples.

use crate::model::events::CounterTable;
use crate::model::intern::Interner;

/// Samples per block whose maximum is kept.
const BLOCK: usize = 64;

#[derive(Debug, Clone, Default)]
pub struct Track {
    /// `counter.series` (the series alone when it repeats the counter's name), and
    /// the process.
    pub label: String,
    /// The process the samples came with (interned), and the stream a series names
    /// (`stream 7`): where the track's lane goes (`place`).
    pub pid: u32,
    pub stream: Option<i64>,
    pub ts: Vec<i64>,
    pub value: Vec<f64>,
    block_max: Vec<f64>,
    pub min: f64,
    pub max: f64,
}

/// The tracks of a counter table, in order of first sample.
pub fn tracks(c: &CounterTable, strings: &Interner) -> Vec<Track> {
    let mut at: std::collections::HashMap<(u32, u32, u32), usize> = Default::default();
    let mut out: Vec<Track> = Vec::new();
    for k in 0..c.ts.len() {
        let key = (c.pid[k], c.name[k], c.series[k]);
        let t = *at.entry(key).or_insert_with(|| {
            let (name, series) = (strings.resolve(key.1), strings.resolve(key.2));
            let label = if name == series {
                name.to_string()
            } else {
                format!("{name}.{series}")
            };
            let stream = series
                .strip_prefix("stream")
                .and_then(|n| n.trim().parse().ok());
            out.push(Track {
                label,
                pid: key.0,
                stream,
                ..Default::default()
            });
            out.len() - 1
        });
        out[t].ts.push(c.ts[k]);
        out[t].value.push(c.value[k]);
    }
    for t in &mut out {
        let mut order: Vec<usize> = (0..t.ts.len()).collect();
        order.sort_by_key(|&k| t.ts[k]);
        t.ts = order.iter().map(|&k| t.ts[k]).collect();
        t.value = order.iter().map(|&k| t.value[k]).collect();
        let finite = t.value.iter().copied().filter(|v| v.is_finite());
        t.min = finite.clone().fold(f64::INFINITY, f64::min);
        t.max = finite.fold(f64::NEG_INFINITY, f64::max);
        t.block_max = t
            .value
            .chunks(BLOCK)
            .map(|b| b.iter().copied().fold(f64::NEG_INFINITY, f64::max))
            .collect();
    }
    out
}

/// Where each track's lane goes: after the lane of its process and stream, else after
/// its process's last lane (`lanes`: each lane's process and, for a GPU stream, its
/// stream); `None` (at the end) when no lane shown is its process's.
pub fn place(tracks: &[Track], lanes: &[(u32, Option<i64>)]) -> Vec<Option<usize>> {
    tracks
        .iter()
        .map(|t| {
            let stream = lanes
                .iter()
                .position(|&(p, s)| p == t.pid && s.is_some() && s == t.stream);
            stream.or_else(|| lanes.iter().rposition(|&(p, _)| p == t.pid))
        })
        .collect()
}

impl Track {
    /// The largest value among samples `lo..hi`: whole blocks from their maxima.
    fn max_of(&self, lo: usize, hi: usize) -> f64 {
        let mut m = f64::NEG_INFINITY;
        let mut k = lo;
        while k < hi {
            if k.is_multiple_of(BLOCK) && k + BLOCK <= hi {
                m = m.max(self.block_max[k / BLOCK]);
                k += BLOCK;
            } else {
                m = m.max(self.value[k]);
                k += 1;
            }
        }
        m
    }

    /// What each of `cols` columns over `[a, b)` shows: the largest sample in it, else
    /// the value held from the last sample before it; `None` before the first sample.
    pub fn columns(&self, a: i64, b: i64, cols: usize) -> Vec<Option<f64>> {
        let mut out = vec![None; cols];
        if cols == 0 || b <= a || self.ts.is_empty() {
            return out;
        }
        let cw = (b - a) as f64 / cols as f64;
        let mut lo = self.ts.partition_point(|&t| t < a);
        for (c, cell) in out.iter_mut().enumerate() {
            let end = a + ((c + 1) as f64 * cw).ceil() as i64;
            let hi = lo + self.ts[lo..].partition_point(|&t| t < end);
            *cell = if hi > lo {
                Some(self.max_of(lo, hi))
            } else {
                lo.checked_sub(1).map(|k| self.value[k])
            };
            lo = hi;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_hold_and_take_the_column_maximum() {
        let mut strings = Interner::default();
        let (q, len, pid) = (
            strings.intern("queue"),
            strings.intern("length"),
            strings.intern("1"),
        );
        let mut c = CounterTable::default();
        // 1000 samples every 10 ns rising 0..999, then one late sample of 5.
        for (t, v) in (0..1000).map(|k| (k * 10, k as f64)).chain([(20_000, 5.0)]) {
            c.name.push(q);
            c.series.push(len);
            c.pid.push(pid);
            c.ts.push(t);
            c.value.push(v);
        }
        let t = &tracks(&c, &strings)[0];
        assert_eq!(t.label, "queue.length");
        assert_eq!((t.min, t.max), (0.0, 999.0));
        let cols = t.columns(0, 20_000, 4);
        assert_eq!(
            cols,
            vec![Some(499.0), Some(999.0), Some(999.0), Some(999.0)]
        );
        // Before the first sample nothing; between samples the value held.
        let cols = t.columns(-100, 20, 6);
        assert_eq!(cols[0], None);
        assert_eq!(t.columns(15_000, 16_000, 2), vec![Some(999.0), Some(999.0)]);
    }

    #[test]
    fn tracks_go_under_their_stream_else_their_process() {
        let t = |pid, stream| Track {
            pid,
            stream,
            ..Default::default()
        };
        let lanes = [(0, Some(7)), (0, Some(9)), (1, None), (1, None)];
        let at = place(&[t(0, Some(7)), t(0, None), t(1, None), t(5, None)], &lanes);
        assert_eq!(at, vec![Some(0), Some(1), Some(3), None]);
    }
}
