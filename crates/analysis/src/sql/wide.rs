//! The wide trace tables, `events` and `kernels`, built column by column: a query
//! builds only the columns it names ([`super::need::Need`]), names are string views
//! into one copy of each distinct name (the model interns them: 16 bytes a row, not a
//! copy of the text per row), and `start`/`duration` of `events` are the event
//! table's own columns lent to polars for the query (`Lent`), not copies.

use std::cell::OnceCell;
use std::collections::HashMap;

use polars::prelude::*;

use super::args;
use super::events::{lanes_of, step_of_events, step_slices, Lane};
use super::need::Need;
use super::{Member, SqlError};
use crate::gpu::classify::Categories;
use crate::model::events::{NONE_I64, NONE_U32};
use crate::model::intern::Interner;
use crate::model::{EventKind, EventTable};

/// The fixed columns of `events`, in order (then the args columns, `args.KEY`).
pub const EVENTS: [&str; 16] = [
    "id",
    "kind",
    "name",
    "category",
    "start",
    "duration",
    "end",
    "process",
    "thread",
    "lane",
    "device",
    "stream",
    "correlation",
    "launch",
    "node",
    "step",
];

/// The fixed columns of `kernels` (`category` is grove's kernel category).
pub const KERNELS: [&str; 15] = [
    "id",
    "name",
    "category",
    "start",
    "duration",
    "end",
    "process",
    "thread",
    "lane",
    "device",
    "stream",
    "correlation",
    "launch",
    "node",
    "step",
];

/// A string column: each row a view into one copy of its distinct strings (gathering
/// from a column of the distinct strings shares their bytes; only the views are new).
pub fn dict_strings<'a>(
    name: &str,
    codes: impl Iterator<Item = Option<u32>>,
    resolve: impl Fn(u32) -> &'a str,
) -> PolarsResult<Column> {
    let mut slot: HashMap<u32, IdxSize> = HashMap::new();
    let mut dict: Vec<&str> = Vec::new();
    let idx: IdxCa = codes
        .map(|c| {
            c.map(|c| {
                *slot.entry(c).or_insert_with(|| {
                    dict.push(resolve(c));
                    (dict.len() - 1) as IdxSize
                })
            })
        })
        .collect();
    let d = StringChunked::from_iter_values(name.into(), dict.into_iter());
    Ok(d.take(&idx)?.into_column())
}

/// The rows of one member's `events` (every event, in file order) or `kernels`
/// (kernel instances in start order), and what their columns need worked out once.
pub struct Rows<'a> {
    pub ev: &'a EventTable,
    /// None: every event in file order.
    pub ids: Option<Vec<u32>>,
    kernels: Option<&'a Categories>,
    lanes: OnceCell<(Vec<u32>, Vec<Lane>)>,
    steps: OnceCell<Vec<Option<i64>>>,
}

impl<'a> Rows<'a> {
    pub fn events(ev: &'a EventTable) -> Rows<'a> {
        Rows {
            ev,
            ids: None,
            kernels: None,
            lanes: OnceCell::new(),
            steps: OnceCell::new(),
        }
    }

    pub fn kernels(ev: &'a EventTable, cats: &'a Categories) -> Rows<'a> {
        let mut ids: Vec<u32> = (0..ev.len() as u32)
            .filter(|&i| ev.kind[i as usize] == EventKind::Kernel)
            .collect();
        ids.sort_by_key(|&i| (ev.ts[i as usize], i));
        Rows {
            ev,
            ids: Some(ids),
            kernels: Some(cats),
            lanes: OnceCell::new(),
            steps: OnceCell::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.ids.as_ref().map_or(self.ev.len(), Vec::len)
    }

    /// The event index of each row.
    fn each(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match &self.ids {
            None => Box::new(0..self.ev.len()),
            Some(ids) => Box::new(ids.iter().map(|&i| i as usize)),
        }
    }

    /// The table's column names: the fixed ones, then `args.KEY` for every arg key of
    /// its rows when `with_args` (finding them walks the rows' args).
    pub fn names(&self, with_args: bool) -> Vec<String> {
        let fixed: &[&str] = if self.kernels.is_some() {
            &KERNELS
        } else {
            &EVENTS
        };
        let mut v: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
        if with_args {
            v.extend(args::keys(self.ev, self.each()).map(|k| format!("{}{k}", args::PREFIX)));
        }
        v
    }

    fn strs(&self, name: &str, f: impl Fn(usize) -> u32) -> PolarsResult<Column> {
        let s: &Interner = &self.ev.strings;
        dict_strings(name, self.each().map(|i| Some(f(i))), |c| s.resolve(c))
    }

    fn i64s(&self, name: &str, f: impl Fn(usize) -> Option<i64>) -> Column {
        let ca: Int64Chunked = self.each().map(f).collect();
        ca.with_name(name.into()).into_column()
    }

    fn u32s(&self, name: &str, f: impl Fn(usize) -> Option<u32>) -> Column {
        let ca: UInt32Chunked = self.each().map(f).collect();
        ca.with_name(name.into()).into_column()
    }

    /// One column, or None when the table has no column of that name.
    pub fn column(&self, name: &str) -> PolarsResult<Option<Column>> {
        let ev = self.ev;
        let some = |v: i64| (v != NONE_I64).then_some(v);
        let some32 = |v: u32| (v != NONE_U32).then_some(v);
        let node_ok = ev.node.len() == ev.len();
        let launch_ok = ev.launch.len() == ev.len();
        let c = match name {
            "id" => match &self.ids {
                Some(ids) => Column::new(name.into(), ids),
                None => Column::new(name.into(), (0..ev.len() as u32).collect::<Vec<_>>()),
            },
            "kind" if self.kernels.is_none() => {
                let labels: Vec<&str> = (0..9u8).map(kind_label).collect();
                dict_strings(name, self.each().map(|i| Some(ev.kind[i] as u32)), |k| {
                    labels[k as usize]
                })?
            }
            "name" => self.strs(name, |i| ev.name[i])?,
            "category" => match self.kernels {
                None => self.strs(name, |i| ev.cat[i])?,
                Some(cats) => self.kernel_categories(cats)?,
            },
            "start" => self.i64s(name, |i| Some(ev.ts[i])),
            "duration" => self.i64s(name, |i| Some(ev.dur[i])),
            "end" => self.i64s(name, |i| Some(ev.ts[i] + ev.dur[i])),
            "process" => self.strs(name, |i| ev.pid[i])?,
            "thread" => self.strs(name, |i| ev.tid[i])?,
            "lane" => {
                let (of, lanes) = self.lanes.get_or_init(|| lanes_of(ev));
                dict_strings(name, self.each().map(|i| some32(of[i])), |l| {
                    lanes[l as usize].label.as_str()
                })?
            }
            "device" => self.i64s(name, |i| some(ev.device[i])),
            "stream" => self.i64s(name, |i| some(ev.stream[i])),
            "correlation" => self.i64s(name, |i| some(ev.correlation[i])),
            "launch" => self.u32s(name, |i| launch_ok.then(|| some32(ev.launch[i])).flatten()),
            "node" => self.u32s(name, |i| node_ok.then(|| some32(ev.node[i])).flatten()),
            "step" => {
                let step = self
                    .steps
                    .get_or_init(|| step_of_events(ev, &step_slices(ev)));
                self.i64s(name, |i| step[i])
            }
            _ => match name.strip_prefix(args::PREFIX) {
                Some(key) => args::column(ev, self.each(), key, name)?,
                None => return Ok(None),
            },
        };
        Ok(Some(c))
    }

    /// grove's kernel category of each kernel (the kernels panel's, `--categories`
    /// rules first), classified once per name.
    fn kernel_categories(&self, cats: &Categories) -> PolarsResult<Column> {
        let ev = self.ev;
        let mut by_name: HashMap<u32, u32> = HashMap::new();
        let codes: Vec<u32> = self
            .each()
            .map(|i| {
                let name = ev.name[i];
                *by_name.entry(name).or_insert_with(|| {
                    cats.classify(ev.strings.resolve(name), EventKind::Kernel) as u32
                })
            })
            .collect();
        dict_strings("category", codes.into_iter().map(Some), |c| {
            cats.rules
                .get(c as usize)
                .map_or("other", |r| r.name.as_str())
        })
    }
}

fn kind_label(k: u8) -> &'static str {
    const KINDS: [EventKind; 9] = [
        EventKind::Cpu,
        EventKind::Runtime,
        EventKind::Kernel,
        EventKind::Memcpy,
        EventKind::Memset,
        EventKind::GpuAnnotation,
        EventKind::Sync,
        EventKind::Instant,
        EventKind::Span,
    ];
    KINDS[k as usize].label()
}

/// The columns of `events` that are lent rather than copied.
pub fn lend_names() -> [&'static str; 2] {
    ["start", "duration"]
}

/// A column's place in a wide table: `profile`, the fixed columns, then the args.
pub fn place(name: &str) -> usize {
    match name {
        "profile" => 0,
        n => EVENTS
            .iter()
            .position(|x| *x == n)
            .map_or(usize::MAX, |p| p + 1),
    }
}

/// `start` or `duration` of every event: the event table's own column, lent to polars
/// without a copy.
///
/// # Safety
/// The column (and any column polars makes from it) must not outlive `ev`: the caller
/// holds the returned handle, drops every other holder, and checks with [`lent_alone`]
/// that no answer kept it before `ev`'s borrow ends.
pub unsafe fn lend(ev: &EventTable, name: &str) -> Option<Int64Chunked> {
    let values: &[i64] = match name {
        "start" => &ev.ts,
        "duration" => &ev.dur,
        _ => return None,
    };
    Some(unsafe { Int64Chunked::mmap_slice(name.into(), values) })
}

/// Whether `handle` is the last holder of its lent memory (no answer shares it).
pub fn lent_alone(handle: &Int64Chunked) -> bool {
    handle
        .downcast_iter()
        .all(|a| a.values().storage_refcount() == 1)
}

/// Each member's rows of a wide table.
pub fn rows<'a>(
    table: &str,
    members: &[Member<'a>],
    cats: &'a Categories,
) -> Result<Vec<Rows<'a>>, SqlError> {
    members
        .iter()
        .map(|m| {
            let ev = super::events::events_of(m.profile)
                .map_err(|e| SqlError::plain(format!("{table} of {}: {e}", m.label)))?
                .unwrap_or(&EMPTY);
            Ok(match table {
                "kernels" => Rows::kernels(ev, cats),
                _ => Rows::events(ev),
            })
        })
        .collect()
}

static EMPTY: std::sync::LazyLock<crate::model::EventTable> =
    std::sync::LazyLock::new(Default::default);

/// Whether the table's `start` and `duration` are lent (one member's `events`).
pub fn lends(table: &str, members: &[Member<'_>]) -> bool {
    table == "events" && members.len() == 1
}

/// A wide table's column names: `profile` first over several members, the fixed
/// columns, then the args columns when the query may name one.
pub fn names(rows: &[Rows<'_>], many: bool, need: &Need) -> Vec<String> {
    let with_args = match need {
        Need::All => true,
        Need::Named(w) => w.iter().any(|w| w.starts_with(args::PREFIX)),
    };
    let mut names: Vec<String> = many.then(|| "profile".to_string()).into_iter().collect();
    for r in rows {
        for n in r.names(with_args) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}

/// One column of a wide table over every member (None when no member has it):
/// members that lack it get nulls, members whose types differ meet at f64 (numbers)
/// or str.
pub fn column(
    rows: &[Rows<'_>],
    members: &[Member<'_>],
    name: &str,
) -> PolarsResult<Option<Column>> {
    if name == "profile" {
        let codes = rows
            .iter()
            .enumerate()
            .flat_map(|(m, r)| std::iter::repeat_n(Some(m as u32), r.len()));
        return Ok(Some(dict_strings(name, codes, |m| {
            members[m as usize].label.as_str()
        })?));
    }
    let parts: Vec<Option<Column>> = rows
        .iter()
        .map(|r| r.column(name))
        .collect::<PolarsResult<_>>()?;
    let mut types = parts.iter().flatten().map(|c| c.dtype().clone());
    let Some(first) = types.next() else {
        return Ok(None);
    };
    let ty = types.fold(first, |a, b| match (a, b) {
        (a, b) if a == b => a,
        (a, b) if a.is_primitive_numeric() && b.is_primitive_numeric() => DataType::Float64,
        _ => DataType::String,
    });
    let mut out: Option<Column> = None;
    for (r, part) in rows.iter().zip(parts) {
        let c = match part {
            Some(c) => c.cast(&ty)?,
            None => Column::full_null(name.into(), r.len(), &ty),
        };
        match &mut out {
            None => out = Some(c),
            Some(o) => {
                o.append(&c)?;
            }
        }
    }
    Ok(out.map(|c| c.rechunk()))
}
