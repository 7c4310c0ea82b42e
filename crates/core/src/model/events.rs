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
    /// (a B/E pair is pushed when its E arrives, but orders by its B).
    pub seq: Vec<u32>,
    /// True for slices made from a B/E pair: they keep file order at equal timestamps.
    pub begin_end: Vec<bool>,
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
