//! The GPU side of the build that needs no tree: the runtime call that launched each
//! GPU activity (same `correlation`, else the ac2g flow) and the launch configuration
//! its node shows as attrs. Nothing here depends on the CPU lanes, so it runs on a
//! second core while they are swept, and the GPU pass after the sweep is left with
//! the nodes alone.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::args::ArgValue;
use crate::model::events::{EventKind, EventTable, Sparse, NONE_I64, NONE_U32};
use crate::model::intern::FxBuild;
use crate::model::Attrs;
use crate::readers::chrome::ChromeTrace;

pub struct GpuRows {
    /// The GPU activity rows, in file order.
    pub rows: Vec<u32>,
    /// Per activity: the runtime row that launched it (the first with its
    /// correlation, else the one its ac2g flow starts at), NONE_U32 if none.
    pub launch: Vec<u32>,
    /// The same per event (the table's `launch_of_event`).
    pub launch_of_event: Sparse<u32>,
    /// Activities with no launch (NONE_U32 in `launch`).
    pub unlinked: usize,
    /// The activities' attrs lists, made when asked (`AttrLists::of`): only a node's
    /// first activity gives the node its attrs, and a list per activity (a rocprofv3
    /// trace's `corr_id` makes every one different) cost seconds and hundreds of MB.
    pub lists: AttrLists,
    /// The lists of the first activities, made ahead (`make_lists_ahead`): index k is
    /// `rows[k]`'s list; the activities past its end are left to `lists.of`.
    pub made: Vec<u32>,
    /// Activities on more than one device (their unattributed roots name the GPU).
    pub multi_device: bool,
}

impl GpuRows {
    /// Makes the activities' lists in row order, on a second core while the CPU lanes
    /// are swept, so that the GPU pass after the sweep (serial) only looks them up: on
    /// the 1 GB Kineto trace every kernel makes a node, and its list was ~75 ms of that
    /// pass. A list per activity can be costly (see `lists`), so this stops where lists
    /// stop repeating: past 4096 of them and an eighth of the activities seen, the rest
    /// are made by the pass, for first instances only, as on one core.
    pub fn make_lists_ahead(&mut self, ev: &EventTable) {
        let mut made = Vec::with_capacity(self.rows.len());
        for (k, &i) in self.rows.iter().enumerate() {
            made.push(self.lists.of(ev, i as usize));
            if self.lists.count() > 4096 && self.lists.count() > k / 8 {
                // The room left for the rest is not kept (nor counted under a limit).
                made.shrink_to_fit();
                break;
            }
        }
        self.made = made;
    }
}

/// Args that are ids of one launch, not its configuration.
fn per_launch(key: &str) -> bool {
    matches!(
        key,
        "device" | "stream" | "correlation" | "External id" | "external id" | "context"
    )
}

pub fn gpu_rows(tr: &ChromeTrace) -> GpuRows {
    let ev = &tr.events;
    // Runtime rows are all CPU-tree rows, so every one of them is placed in the tree.
    let mut runtime: Vec<(i64, u32)> = Vec::new();
    let mut rows = Vec::new();
    let mut first_device = None;
    let mut multi_device = false;
    for (i, &k) in ev.kind.iter().enumerate() {
        if k == EventKind::Runtime {
            let c = ev.correlation[i];
            if c != NONE_I64 {
                runtime.push((c, i as u32));
            }
        } else if k.is_gpu_activity() {
            rows.push(i as u32);
            let d = ev.device[i];
            match first_device {
                None => first_device = Some(d),
                Some(f) => multi_device |= f != d,
            }
        }
    }
    let by_corr = ByCorrelation::new(&runtime);
    drop(runtime);
    let mut launch = Vec::with_capacity(rows.len());
    // Flows are the fallback (Kineto traces link every activity by correlation): the
    // flow start of each activity without a launch, and the runtime rows looked up
    // for those starts alone. An index of every runtime row, made here beside the
    // lanes' sort, raised the load's peak.
    let mut pending: Vec<(usize, (u32, u32, i64))> = Vec::new();
    for &i in &rows {
        let i = i as usize;
        let l = match ev.correlation[i] {
            NONE_I64 => NONE_U32,
            c => by_corr.get(c),
        };
        if l == NONE_U32 {
            let start = tr.flows.start_of((ev.pid[i], ev.tid[i], ev.ts[i]));
            if let Some(start) = start {
                pending.push((launch.len(), start));
            }
        }
        launch.push(l);
    }
    if !pending.is_empty() {
        // The first runtime row at each start.
        let mut at_start: HashMap<(u32, u32, i64), u32, FxBuild> = pending
            .iter()
            .map(|&(_, start)| (start, NONE_U32))
            .collect();
        for r in (0..ev.len()).filter(|&r| ev.kind[r] == EventKind::Runtime) {
            if let Some(slot) = at_start.get_mut(&(ev.pid[r], ev.tid[r], ev.ts[r])) {
                if *slot == NONE_U32 {
                    *slot = r as u32;
                }
            }
        }
        for (k, start) in pending {
            launch[k] = at_start[&start];
        }
    }
    let mut unlinked = 0;
    // Filled in row order, so the sparse column only ever appends.
    let mut launch_of_event: Sparse<u32> = Sparse::new();
    for (&l, &i) in launch.iter().zip(&rows) {
        if l == NONE_U32 {
            unlinked += 1;
        } else {
            launch_of_event.resize_none(i as usize);
            launch_of_event.push(l);
        }
    }
    launch_of_event.resize_none(ev.len());
    launch_of_event.shrink_to_fit();
    GpuRows {
        rows,
        launch,
        launch_of_event,
        unlinked,
        lists: AttrLists::default(),
        made: Vec::new(),
        multi_device,
    }
}

/// Correlation -> the first runtime row with it. Profilers number launches in
/// sequence, so the ids are nearly always a dense range: a table indexed by id takes
/// no hashing and reads in order; sparse ids go to a map.
enum ByCorrelation {
    Dense { min: i64, row: Vec<u32> },
    Sparse(HashMap<i64, u32, FxBuild>),
}

impl ByCorrelation {
    /// `runtime`: (correlation, row) in row order.
    fn new(runtime: &[(i64, u32)]) -> ByCorrelation {
        let min = runtime.iter().map(|r| r.0).min().unwrap_or(0);
        let max = runtime.iter().map(|r| r.0).max().unwrap_or(0);
        // At most a few slots per runtime row: the table is no bigger than the map.
        let dense = max
            .checked_sub(min)
            .is_some_and(|span| span < 4 * runtime.len() as i64 + 1024);
        if dense {
            let mut row = vec![NONE_U32; (max - min) as usize + 1];
            for &(c, r) in runtime {
                let slot = &mut row[(c - min) as usize];
                if *slot == NONE_U32 {
                    *slot = r;
                }
            }
            ByCorrelation::Dense { min, row }
        } else {
            let mut m = HashMap::with_capacity_and_hasher(runtime.len(), FxBuild::default());
            for &(c, r) in runtime {
                m.entry(c).or_insert(r);
            }
            ByCorrelation::Sparse(m)
        }
    }

    fn get(&self, c: i64) -> u32 {
        match self {
            ByCorrelation::Dense { min, row } => c
                .checked_sub(*min)
                .and_then(|at| usize::try_from(at).ok())
                .and_then(|at| row.get(at))
                .copied()
                .unwrap_or(NONE_U32),
            ByCorrelation::Sparse(m) => m.get(&c).copied().unwrap_or(NONE_U32),
        }
    }
}

/// The attrs lists of GPU activities, each made once.
#[derive(Default)]
pub struct AttrLists {
    /// An activity's configuration as words, to find its list without making text:
    /// device, stream, then per arg its key by address (the arg store interns keys, so
    /// one text is one address) and its value's tag and payload. Different words can
    /// still make equal text (`5` and `"5"`), so this leads to `by_text`, which decides.
    by_content: HashMap<Box<[u64]>, u32, FxBuild>,
    words: Vec<u64>,
    /// Kernel attribute keys and values repeat across nodes (`registers per thread`,
    /// `[128, 1, 1]`): one shared string each (by id) instead of two allocations per
    /// attribute.
    attr_ids: HashMap<Box<str>, u32, FxBuild>,
    attr_text: Vec<Arc<str>>,
    /// Lists by their (key, value) text ids.
    by_text: HashMap<Vec<(u32, u32)>, u32, FxBuild>,
    lists: Vec<Attrs>,
}

/// An arg value as (tag, payload): equal words, equal value.
fn value_words(v: ArgValue) -> (u64, u64) {
    match v {
        ArgValue::Null => (0, 0),
        ArgValue::Bool(b) => (1, b as u64),
        ArgValue::Int(i) => (2, i as u64),
        ArgValue::UInt(u) => (3, u),
        ArgValue::Float(f) => (4, f.to_bits()),
        ArgValue::Str(s) => (5, s as u64),
        ArgValue::Json(s) => (6, s as u64),
    }
}

impl AttrLists {
    /// The list made with the index `of` gave.
    pub fn get(&self, list: u32) -> &Attrs {
        &self.lists[list as usize]
    }

    /// Lists made so far.
    pub fn count(&self) -> usize {
        self.lists.len()
    }

    /// The list of activity `i`: an index; equal lists (by text) have one index.
    pub fn of(&mut self, ev: &EventTable, i: usize) -> u32 {
        self.words.clear();
        self.words.push(ev.device[i] as u64);
        self.words.push(ev.stream[i] as u64);
        let args = ev.args_of(i);
        if let Some(a) = &args {
            for (k, v) in a.iter() {
                if per_launch(k) {
                    continue;
                }
                let (tag, payload) = value_words(v);
                self.words.push(k.as_ptr() as u64);
                self.words.push(tag);
                self.words.push(payload);
            }
        }
        if let Some(&l) = self.by_content.get(&self.words[..]) {
            return l;
        }
        let l = self.by_text(ev, i);
        self.by_content
            .insert(self.words.clone().into_boxed_slice(), l);
        l
    }

    fn attr_id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.attr_ids.get(s) {
            return id;
        }
        let id = self.attr_text.len() as u32;
        self.attr_text.push(Arc::from(s));
        self.attr_ids.insert(s.into(), id);
        id
    }

    /// The launch configuration as text, in arg order after the device and stream;
    /// every key once.
    fn by_text(&mut self, ev: &EventTable, i: usize) -> u32 {
        let mut attrs: Vec<(u32, u32)> = Vec::new();
        let mut set = |this: &mut Self, k: &str, v: &str| {
            let k = this.attr_id(k);
            let v = this.attr_id(v);
            match attrs.iter_mut().find(|(key, _)| *key == k) {
                Some((_, old)) => *old = v,
                None => attrs.push((k, v)),
            }
        };
        if ev.device[i] != NONE_I64 {
            set(self, "device", &ev.device[i].to_string());
        }
        if ev.stream[i] != NONE_I64 {
            set(self, "stream", &ev.stream[i].to_string());
        }
        if let Some(args) = ev.args_of(i) {
            for (k, v) in args.iter() {
                if per_launch(k) {
                    continue;
                }
                set(self, k, &args.text(v));
            }
        }
        if let Some(&l) = self.by_text.get(&attrs) {
            return l;
        }
        let text = &self.attr_text;
        let a = Attrs::from(
            attrs
                .iter()
                .map(|&(k, v)| (text[k as usize].clone(), text[v as usize].clone()))
                .collect::<Vec<_>>(),
        );
        let l = self.lists.len() as u32;
        self.lists.push(a);
        self.by_text.insert(attrs, l);
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_runtime_row_per_correlation_dense_or_sparse() {
        let rows = [(7, 0), (5, 1), (7, 2), (9, 3)];
        let dense = ByCorrelation::new(&rows);
        assert!(matches!(dense, ByCorrelation::Dense { .. }));
        let far = [(7, 0), (5, 1), (7, 2), (i64::MAX, 3), (i64::MIN + 1, 4)];
        let sparse = ByCorrelation::new(&far);
        assert!(matches!(sparse, ByCorrelation::Sparse(_)));
        for t in [&dense, &sparse] {
            assert_eq!((t.get(7), t.get(5)), (0, 1));
            assert_eq!(
                (t.get(6), t.get(4), t.get(1000)),
                (NONE_U32, NONE_U32, NONE_U32)
            );
            assert_eq!(t.get(i64::MIN), NONE_U32);
        }
        assert_eq!((dense.get(9), sparse.get(i64::MAX)), (3, 3));
        assert_eq!(ByCorrelation::new(&[]).get(0), NONE_U32);
    }
}
