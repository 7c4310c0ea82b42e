//! The columnar event table of a trace: one Vec per field, names interned, times in ns.

use super::args::{ArgStore, Args};
pub use super::coded::Coded;
use super::intern::Interner;
pub use super::sparse::Sparse;

/// What an event is, after mapping both Kineto dialects and generic Chrome traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum EventKind {
    /// A CPU-side slice: cpu_op, user_annotation, python_function, or any generic slice.
    Cpu = 0,
    /// A host runtime/driver call that may launch GPU work (cuda_runtime, cuda_driver, ...).
    Runtime = 1,
    Kernel = 2,
    Memcpy = 3,
    Memset = 4,
    /// GPU-lane rows that are not activities (gpu_user_annotation).
    GpuAnnotation = 5,
    /// cuda_sync and cuda_event rows.
    Sync = 6,
    Instant = 7,
    /// Whole-trace spans (cat `Trace`): they cover everything and would dilute percentages.
    Span = 8,
}

impl EventKind {
    pub fn is_gpu_activity(self) -> bool {
        matches!(
            self,
            EventKind::Kernel | EventKind::Memcpy | EventKind::Memset
        )
    }

    pub fn on_gpu_lane(self) -> bool {
        self.is_gpu_activity() || self == EventKind::GpuAnnotation
    }

    pub fn label(self) -> &'static str {
        match self {
            EventKind::Cpu => "cpu",
            EventKind::Runtime => "runtime",
            EventKind::Kernel => "kernel",
            EventKind::Memcpy => "memcpy",
            EventKind::Memset => "memset",
            EventKind::GpuAnnotation => "gpu_annotation",
            EventKind::Sync => "sync",
            EventKind::Instant => "instant",
            EventKind::Span => "span",
        }
    }

    /// Maps a Chrome `cat` (either Kineto dialect) to a kind; `None` means "generic slice".
    pub fn from_category(cat: &str) -> Option<EventKind> {
        // Categories may be comma-separated lists; the first recognised one wins.
        for c in cat.split(',') {
            let k = match c.trim() {
                "cpu_op" | "Operator" | "user_annotation" | "python_function" | "hpu_op" => {
                    EventKind::Cpu
                }
                "cuda_runtime"
                | "cuda_driver"
                | "Runtime"
                | "mtia_runtime"
                | "xpu_runtime"
                | "xpu_driver"
                | "privateuse1_runtime"
                | "privateuse1_driver"
                | "glow_runtime" => EventKind::Runtime,
                // MTIA's device activity (Kineto's MTIA_CCP_EVENTS): HTA 0.5.0 counts it among
                // the GPU kernels (KERNEL_CATEGORY_PATTERN, the kernel breakdown's list).
                "kernel" | "Kernel" | "mtia_ccp_events" => EventKind::Kernel,
                "gpu_memcpy" | "Memcpy" => EventKind::Memcpy,
                "gpu_memset" | "Memset" => EventKind::Memset,
                "gpu_user_annotation" => EventKind::GpuAnnotation,
                "cuda_sync" | "cuda_event" => EventKind::Sync,
                "Trace" => EventKind::Span,
                _ => continue,
            };
            return Some(k);
        }
        None
    }
}

pub const NONE_I64: i64 = i64::MIN;
pub const NONE_U32: u32 = u32::MAX;

/// Complete events (X, matched B/E, instants) in file order.
#[derive(Debug, Default)]
pub struct EventTable {
    pub strings: Interner,
    /// Columns with few distinct values are `Coded` (a u16 per row; issue 16: memory);
    /// they index like a `Vec`.
    pub name: Coded<u32>,
    pub cat: Coded<u32>,
    pub kind: Vec<EventKind>,
    pub ts: Vec<i64>,
    pub dur: Vec<i64>,
    /// Interned textual pid and tid (string and numeric forms unify: `"12"` == `12`).
    pub pid: Coded<u32>,
    pub tid: Coded<u32>,
    /// GPU device and stream for GPU-lane rows (NONE_I64 otherwise). Columns that most
    /// rows leave empty are `Sparse` (issue 16: memory); they index like a `Vec`.
    pub device: Sparse<i64>,
    pub stream: Sparse<i64>,
    /// Runtime calls and GPU activities only.
    pub correlation: Sparse<i64>,
    /// Kineto's `External id`: most rows of other formats (Perfetto, OTF2, ...) have
    /// none, and a full-width column cost 8 bytes a row for them.
    pub external_id: Sparse<i64>,
    /// `Record function id` (newer Kineto CPU ops): an execution trace's `rf_id`.
    pub record_function_id: Coded<i64>,
    /// A list in `arg_store` (the typed `args`, parsed once when read) for GPU rows,
    /// NONE_U32 otherwise.
    pub args: Sparse<u32>,
    pub arg_store: ArgStore,
    /// Position of the event's start in the file: the tie-break among equal slices
    /// (a B/E pair is pushed when its E arrives, but orders by its B). Read with
    /// `seq.get(i)`: stored as its difference from the row (`SeqCol`).
    pub seq: SeqCol,
    /// True for slices made from a B/E pair: they keep file order at equal timestamps.
    /// A bit a row (`Bits`).
    pub begin_end: Bits,
    /// Filled when the CCT is built: each event's node in the loaded CCT, and for GPU
    /// activities the runtime event that launched them (NONE_U32 when not in the file).
    pub node: Vec<u32>,
    pub launch: Sparse<u32>,
    /// Low-memory mode (`gpu::lod`): the rows above are gone (only `strings` is kept)
    /// and this summary stands in for them.
    pub lod: Option<Box<super::lod::Lod>>,
    /// An ensemble's events (`ensemble::events`): each row's member, and the members'
    /// labels; both empty for one profile.
    pub member: Vec<u16>,
    pub members: Vec<String>,
}

impl EventTable {
    pub fn len(&self) -> usize {
        self.name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        name: u32,
        cat: u32,
        kind: EventKind,
        ts: i64,
        dur: i64,
        pid: u32,
        tid: u32,
    ) -> usize {
        self.push_row(&Row {
            seq: self.len() as u32,
            ..Row::new(name, cat, kind, ts, dur, pid, tid)
        })
    }

    /// Appends a row with every field given: each column is written once (setting a
    /// field after `push` writes it twice, and a sparse or coded column's last row
    /// goes through its slower setter).
    pub fn push_row(&mut self, r: &Row) -> usize {
        self.name.push(r.name);
        self.cat.push(r.cat);
        self.kind.push(r.kind);
        self.ts.push(r.ts);
        self.dur.push(r.dur);
        self.pid.push(r.pid);
        self.tid.push(r.tid);
        self.device.push(r.device);
        self.stream.push(r.stream);
        self.correlation.push(r.correlation);
        self.external_id.push(r.external_id);
        self.record_function_id.push(r.record_function_id);
        self.args.push(r.args);
        self.seq.push(r.seq);
        self.begin_end.push(r.begin_end);
        self.len() - 1
    }

    /// The optional columns (device, stream, correlation, external_id,
    /// record_function_id, args) brought to the table's length: a reader that pushes a
    /// row's own columns alone (a Perfetto row mostly has none of the optional ones:
    /// six column pushes a row fewer) gives the rows that have a value theirs
    /// (`Sparse::resize_none` to the row, then `push`) and calls this before the table
    /// is read. Every row not given a value has none.
    pub fn fill_optional(&mut self) {
        let n = self.len();
        for c in [
            &mut self.device,
            &mut self.stream,
            &mut self.correlation,
            &mut self.external_id,
        ] {
            if c.len() < n {
                c.resize_none(n);
            }
        }
        if self.args.len() < n {
            self.args.resize_none(n);
        }
        self.record_function_id.resize_with_value(n, NONE_I64);
    }

    /// The member of an ensemble row `i` came from (0 for one profile).
    pub fn member_of(&self, i: usize) -> u16 {
        self.member.get(i).copied().unwrap_or(0)
    }

    pub fn name_of(&self, i: usize) -> &str {
        self.strings.resolve(self.name[i])
    }

    pub fn args_of(&self, i: usize) -> Option<Args<'_>> {
        match self.args[i] {
            NONE_U32 => None,
            a => Some(self.arg_store.list(a)),
        }
    }

    /// Gives back the columns' spare capacity (up to half of each, grown by doubling
    /// while reading): the table lives on while the CCT is built, the peak of a load.
    pub fn shrink_to_fit(&mut self) {
        self.name.shrink_to_fit();
        self.cat.shrink_to_fit();
        self.kind.shrink_to_fit();
        self.ts.shrink_to_fit();
        self.dur.shrink_to_fit();
        self.pid.shrink_to_fit();
        self.tid.shrink_to_fit();
        self.device.shrink_to_fit();
        self.stream.shrink_to_fit();
        self.correlation.shrink_to_fit();
        self.external_id.shrink_to_fit();
        self.record_function_id.shrink_to_fit();
        self.args.shrink_to_fit();
        self.seq.shrink_to_fit();
        self.begin_end.shrink_to_fit();
    }

    pub fn shift_time(&mut self, by: i64) {
        for t in &mut self.ts {
            *t += by;
        }
    }
}

/// The `seq` column: each row's file position. While every row's position is its
/// row number plus one difference (a Perfetto trace, whose slices are rows from their
/// begin) no bytes a row are stored, where they were 4 (issue 29: the load's peak);
/// the first row with another difference writes every position out and the column
/// is a plain vector from then on (Chrome JSON, whose flows and metadata are events
/// that are not rows), as before.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeqCol {
    /// Rows stored as `row + diff` (while `plain` is None).
    rows: usize,
    diff: u32,
    plain: Option<Vec<u32>>,
}

impl SeqCol {
    pub fn len(&self) -> usize {
        match &self.plain {
            Some(p) => p.len(),
            None => self.rows,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline(always)]
    pub fn push(&mut self, seq: u32) {
        match &mut self.plain {
            Some(p) => p.push(seq),
            None => {
                let d = seq.wrapping_sub(self.rows as u32);
                if self.rows == 0 {
                    self.diff = d;
                }
                if d == self.diff {
                    self.rows += 1;
                } else {
                    self.make_plain().push(seq);
                }
            }
        }
    }

    /// Writes every position out: a plain vector from here on.
    #[cold]
    #[inline(never)]
    fn make_plain(&mut self) -> &mut Vec<u32> {
        if self.plain.is_none() {
            let d = self.diff;
            self.plain = Some((0..self.rows as u32).map(|r| r.wrapping_add(d)).collect());
        }
        self.plain.as_mut().expect("plain was just set")
    }

    /// Row `i`'s file position (panics past the end, as a `Vec` does).
    #[inline(always)]
    pub fn get(&self, i: usize) -> u32 {
        match &self.plain {
            Some(p) => p[i],
            None => {
                assert!(
                    i < self.rows,
                    "index out of bounds: the len is {} but the index is {i}",
                    self.rows
                );
                (i as u32).wrapping_add(self.diff)
            }
        }
    }

    /// Sets row `i`'s position (the column goes plain unless it keeps the difference).
    pub fn set(&mut self, i: usize, seq: u32) {
        if self.plain.is_none() && seq.wrapping_sub(i as u32) == self.diff && i < self.rows {
            return;
        }
        self.make_plain()[i] = seq;
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// Keeps the rows marked in `keep`: their positions, at their new rows.
    pub fn retain_rows(&mut self, keep: &[bool]) {
        let kept: Vec<u32> = self
            .iter()
            .zip(keep)
            .filter(|(_, &k)| k)
            .map(|(s, _)| s)
            .collect();
        *self = kept.into_iter().collect();
        self.shrink_to_fit();
    }

    pub fn shrink_to_fit(&mut self) {
        if let Some(p) = &mut self.plain {
            p.shrink_to_fit();
        }
    }
}

impl FromIterator<u32> for SeqCol {
    fn from_iter<I: IntoIterator<Item = u32>>(it: I) -> Self {
        let mut c = SeqCol::default();
        for s in it {
            c.push(s);
        }
        c
    }
}

/// A column of flags, a bit a row (a `Vec<bool>` took a byte: issue 29, the load's
/// peak). `col[i]` reads like the vector's; rows are only pushed, never set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    pub fn push(&mut self, b: bool) {
        let (w, bit) = (self.len / 64, self.len % 64);
        if bit == 0 {
            self.words.push(0);
        }
        if b {
            self.words[w] |= 1 << bit;
        }
        self.len += 1;
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = bool> + '_ {
        (0..self.len).map(move |i| self[i])
    }

    /// Keeps the rows marked in `keep`.
    pub fn retain_rows(&mut self, keep: &[bool]) {
        let kept: Bits = self
            .iter()
            .zip(keep)
            .filter(|(_, &k)| k)
            .map(|(b, _)| b)
            .collect();
        *self = kept;
        self.shrink_to_fit();
    }

    pub fn shrink_to_fit(&mut self) {
        self.words.shrink_to_fit();
    }
}

impl std::ops::Index<usize> for Bits {
    type Output = bool;
    #[inline(always)]
    fn index(&self, i: usize) -> &bool {
        assert!(
            i < self.len,
            "index out of bounds: the len is {} but the index is {i}",
            self.len
        );
        // The two values live in statics: a bit has no place of its own to lend.
        if self.words[i / 64] >> (i % 64) & 1 == 1 {
            &true
        } else {
            &false
        }
    }
}

impl FromIterator<bool> for Bits {
    fn from_iter<I: IntoIterator<Item = bool>>(it: I) -> Self {
        let mut c = Bits::default();
        for b in it {
            c.push(b);
        }
        c
    }
}

/// One event table row (see [`EventTable::push_row`]); `Row::new` leaves the optional
/// fields empty and `seq` 0.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub name: u32,
    pub cat: u32,
    pub kind: EventKind,
    pub ts: i64,
    pub dur: i64,
    pub pid: u32,
    pub tid: u32,
    pub device: i64,
    pub stream: i64,
    pub correlation: i64,
    pub external_id: i64,
    pub record_function_id: i64,
    pub args: u32,
    pub seq: u32,
    pub begin_end: bool,
}

impl Row {
    #[allow(clippy::too_many_arguments)]
    pub fn new(name: u32, cat: u32, kind: EventKind, ts: i64, dur: i64, pid: u32, tid: u32) -> Row {
        Row {
            name,
            cat,
            kind,
            ts,
            dur,
            pid,
            tid,
            device: NONE_I64,
            stream: NONE_I64,
            correlation: NONE_I64,
            external_id: NONE_I64,
            record_function_id: NONE_I64,
            args: NONE_U32,
            seq: 0,
            begin_end: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_and_bits_read_like_vectors() {
        // In file order: one difference, no bytes a row.
        let mut s = SeqCol::default();
        let want: Vec<u32> = (0..300u32).map(|i| if i == 299 { 7 } else { i }).collect();
        for &x in &want[..299] {
            s.push(x);
        }
        assert!(s.plain.is_none() && s.get(298) == 298);
        s.push(want[299]);
        assert!(s.plain.is_some());
        assert!(s.iter().eq(want.iter().copied()));
        s.set(10, 1000);
        let keep: Vec<bool> = (0..300).map(|i| i % 3 != 0).collect();
        let mut w2 = want.clone();
        w2[10] = 1000;
        assert_eq!(s.get(10), 1000);
        s.retain_rows(&keep);
        let kept: Vec<u32> = w2
            .iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(&x, _)| x)
            .collect();
        assert!(s.iter().eq(kept.iter().copied()));
        let flags: Vec<bool> = (0..200).map(|i| i % 7 == 0 || i == 64).collect();
        let mut b: Bits = flags.iter().copied().collect();
        assert!(b.len() == 200 && b.iter().eq(flags.iter().copied()));
        assert!(b[0] && !b[1] && b[64] && b[196] && !b[199]);
        let keep: Vec<bool> = (0..200).map(|i| i % 2 == 0).collect();
        b.retain_rows(&keep);
        assert!(b.iter().eq(flags.iter().step_by(2).copied()));
    }
}

/// Counter samples (`ph: C`): each args key is one series.
#[derive(Debug, Default)]
pub struct CounterTable {
    pub name: Vec<u32>,
    pub series: Vec<u32>,
    pub pid: Vec<u32>,
    pub ts: Vec<i64>,
    pub value: Vec<f64>,
}

impl CounterTable {
    /// Gives back the columns' spare capacity (see `EventTable::shrink_to_fit`).
    pub fn shrink_to_fit(&mut self) {
        self.name.shrink_to_fit();
        self.series.shrink_to_fit();
        self.pid.shrink_to_fit();
        self.ts.shrink_to_fit();
        self.value.shrink_to_fit();
    }
}
