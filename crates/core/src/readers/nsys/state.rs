//! What the reader builds while it reads the tables: lanes, names, events.

use super::*;

/// Reads the tables through `Db` into `State`; the two are apart so that row callbacks
/// can fill the event table while a statement runs.
pub(super) struct TableReader {
    pub(super) db: Db,
    pub(super) s: State,
}

/// Everything the reader builds.
#[derive(Default)]
pub(super) struct State {
    pub(super) tr: ChromeTrace,
    pub(super) strings: HashMap<i64, String>,
    /// StringIds id -> interned name (None: unknown or empty).
    pub(super) names: HashMap<i64, Option<u32>>,
    /// StringIds id -> (cleaned runtime name, category).
    pub(super) runtime_names: HashMap<i64, (u32, u32)>,
    /// globalTid -> interned (pid, tid) text of a CPU lane.
    pub(super) cpu_lanes: HashMap<Option<i64>, (u32, u32)>,
    /// (device, stream) -> interned (pid, tid) text of a GPU lane.
    pub(super) gpu_lanes: HashMap<(Option<i64>, Option<i64>), (u32, u32)>,
    /// Decoded (pid, tid) of the CPU lanes in use.
    pub(super) lanes: HashSet<(i64, i64)>,
    /// The process of each event with a correlation (runtime calls, GPU activities):
    /// CUPTI correlation ids are per process.
    pub(super) corr_pid: Vec<(u32, i64)>,
    pub(super) max_end: i64,
    pub(super) unclosed: Vec<usize>,
    /// (table, why) -> rows dropped.
    pub(super) dropped: Vec<(&'static str, &'static str, u64)>,
    /// (table, placeholder) -> rows whose name column held a StringIds id the table
    /// lacks (an export with StringIds emptied or cut): shown as the placeholder.
    pub(super) dangling: Vec<(&'static str, &'static str, u64)>,
    /// Set by `name` when an id was not found; read by `name_or`.
    pub(super) dangling_seen: bool,
    pub(super) cats: HashMap<&'static str, u32>,
    pub(super) meta: Vec<(String, String)>,
    pub(super) product: Option<String>,
    pub(super) schema: Option<String>,
}

impl State {
    pub(super) fn warn(&mut self, w: String) {
        self.tr.warnings.push(w);
    }

    /// Warns about the columns that matter when a table lacks them.
    pub(super) fn warn_missing(&mut self, plan: &Plan, important: &[&str]) {
        let lost: Vec<&str> = plan
            .missing
            .iter()
            .copied()
            .filter(|c| important.contains(c))
            .collect();
        if !lost.is_empty() {
            self.warn(format!(
                "{} has no column {} (older or newer export schema); read as empty",
                plan.table,
                lost.join(", ")
            ));
        }
    }

    pub(super) fn cat(&mut self, c: &'static str) -> u32 {
        let strings = &mut self.tr.events.strings;
        *self.cats.entry(c).or_insert_with(|| strings.intern(c))
    }

    pub(super) fn intern(&mut self, s: &str) -> u32 {
        self.tr.events.strings.intern(s)
    }

    /// A name column: a StringIds id in every known schema, plain text tolerated.
    pub(super) fn name(&mut self, r: &Rec, i: usize) -> Option<u32> {
        match r.row.get_ref(i).ok()? {
            ValueRef::Integer(id) => {
                let n = match self.names.get(&id) {
                    Some(&n) => n,
                    None => {
                        let n = match self.strings.get(&id) {
                            Some(s) if !s.is_empty() => Some(self.tr.events.strings.intern(s)),
                            _ => None,
                        };
                        self.names.insert(id, n);
                        n
                    }
                };
                self.dangling_seen |= n.is_none();
                n
            }
            ValueRef::Text(t) if !t.is_empty() => Some(self.tr.events.strings.intern_bytes(t)),
            _ => None,
        }
    }

    /// The first of `cols` that names something; else `placeholder`, counting the row
    /// when a column held an id that StringIds cannot resolve (warned about at the end).
    pub(super) fn name_or(
        &mut self,
        r: &Rec,
        cols: &[usize],
        table: &'static str,
        placeholder: &'static str,
    ) -> u32 {
        self.dangling_seen = false;
        for &c in cols {
            if let Some(n) = self.name(r, c) {
                return n;
            }
        }
        if self.dangling_seen {
            self.count_dangling(table, placeholder);
        }
        self.intern(placeholder)
    }

    pub(super) fn count_dangling(&mut self, table: &'static str, placeholder: &'static str) {
        match self.dangling.iter_mut().find(|d| d.0 == table) {
            Some(d) => d.2 += 1,
            None => self.dangling.push((table, placeholder, 1)),
        }
    }

    pub(super) fn cpu_lane(&mut self, global_tid: Option<i64>) -> (u32, u32) {
        if let Some(&l) = self.cpu_lanes.get(&global_tid) {
            return l;
        }
        let l = match global_tid {
            Some(g) => {
                let (p, t) = decode_global(g);
                self.lanes.insert((p, t));
                (self.intern(&p.to_string()), self.intern(&t.to_string()))
            }
            None => (self.intern(""), self.intern("")),
        };
        self.cpu_lanes.insert(global_tid, l);
        l
    }

    pub(super) fn gpu_lane(&mut self, device: Option<i64>, stream: Option<i64>) -> (u32, u32) {
        if let Some(&l) = self.gpu_lanes.get(&(device, stream)) {
            return l;
        }
        let text = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
        let l = (self.intern(&text(device)), self.intern(&text(stream)));
        self.gpu_lanes.insert((device, stream), l);
        l
    }

    pub(super) fn drop_row(&mut self, table: &'static str, why: &'static str) {
        match self.dropped.iter_mut().find(|d| d.0 == table && d.1 == why) {
            Some(d) => d.2 += 1,
            None => self.dropped.push((table, why, 1)),
        }
    }

    /// Pushes one row; None when its times are unusable (counted per table).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push(
        &mut self,
        table: &'static str,
        name: u32,
        cat: u32,
        kind: EventKind,
        start: Option<i64>,
        end: Option<i64>,
        lane: (u32, u32),
    ) -> Option<usize> {
        let Some(start) = start else {
            self.drop_row(table, "no start");
            return None;
        };
        let dur = match end {
            Some(e) if e >= start => e - start,
            Some(_) => {
                self.drop_row(table, "end before start");
                return None;
            }
            None if kind == EventKind::Instant => 0,
            None => {
                self.drop_row(table, "no end");
                return None;
            }
        };
        self.max_end = self.max_end.max(start.saturating_add(dur));
        Some(
            self.tr
                .events
                .push(name, cat, kind, start, dur, lane.0, lane.1),
        )
    }

    /// Sets an event's correlation id and remembers its process.
    pub(super) fn correlate(&mut self, i: usize, pid: Option<i64>, corr: Option<i64>) {
        if let Some(c) = corr {
            self.tr.events.correlation[i] = c;
            if let Some(p) = pid {
                self.corr_pid.push((i as u32, p));
            }
        }
    }

    /// With several processes, correlation ids are keyed by pid ((pid << 40) | id):
    /// each process numbers its own from 1.
    pub(super) fn key_correlations(&mut self) {
        let pids: HashSet<i64> = self.corr_pid.iter().map(|x| x.1).collect();
        if pids.len() < 2 {
            return;
        }
        let ev = &mut self.tr.events;
        for &(i, p) in &self.corr_pid {
            let c = &mut ev.correlation[i as usize];
            *c = (p << 40) | (*c & ((1 << 40) - 1));
        }
        self.meta.push((
            "correlation ids".into(),
            format!(
                "keyed by process ((pid << 40) | id; args keep the original): {} processes have CUDA activity",
                pids.len()
            ),
        ));
    }

    /// Sets the GPU-lane fields shared by kernels, copies and sets.
    pub(super) fn gpu_fields(
        &mut self,
        i: usize,
        device: Option<i64>,
        stream: Option<i64>,
        args: Args,
    ) {
        let ev = &mut self.tr.events;
        ev.device[i] = device.unwrap_or(NONE_I64);
        ev.stream[i] = stream.unwrap_or(NONE_I64);
        ev.args[i] = args.done(&mut ev.arg_store);
    }
}
