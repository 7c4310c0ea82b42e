//! OTF2 archives (Score-P's trace format), read natively: no libotf2.
//!
//! An archive is an anchor file (`traces.otf2`), the global definitions
//! (`traces.def`) and one event file per location (`traces/N.evt`) with its local
//! definitions (`traces/N.def`). The parts follow the format's seams: `buffer` (the
//! integer encoding and chunks), `anchor`, `defs` (global and local definitions),
//! `events` (the event records), and here the profile built from them.
//!
//! The model: one profile, one CCT root per location (an MPI rank's thread, or an
//! accelerator stream), under which Enter/Leave nest into call paths with exclusive and
//! inclusive time and visit counts; MPI messages and collectives add byte and message
//! counts to the node they happen in; strict synchronous PAPI counters become a metric
//! (exclusive and inclusive) per counter, and every other METRIC record (asynchronous
//! counters, memory usage) is placed on the call path open at it (`metrics`). Every region instance is also a row of the
//! event table (pid = location group, tid = location), so accelerator streams appear as
//! timeline lanes. docs/formats.md says why this is not an ensemble of ranks.

pub mod anchor;
pub mod buffer;
pub mod defs;
pub mod events;
mod metrics;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::model::events::{EventKind, EventTable};
use crate::model::intern::FxBuild;
use crate::model::{Cct, Format, Frame, MetricTable, Profile, Source};
use defs::Defs;

/// The OTF2 reader: an anchor file, or a directory holding one.
pub struct Otf2;

impl super::Reader for Otf2 {
    fn name(&self) -> &'static str {
        "OTF2 archives (Score-P)"
    }

    fn format(&self) -> Format {
        Format::Otf2
    }

    fn reads_path(&self) -> bool {
        true
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        if probe.is_dir {
            return probe.path.and_then(anchor_in).is_some();
        }
        !probe.gzip && anchor::looks_like_anchor(probe.head)
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let path = input.into_path()?;
        let anchor_path = if path.is_dir() {
            anchor_in(&path).ok_or("a directory without an OTF2 anchor file (traces.otf2)")?
        } else {
            path.clone()
        };
        read(&anchor_path, &path).map(|p| vec![p])
    }
}

/// The anchor file of an archive directory: `traces.otf2`, else the first `.otf2` file
/// that starts like an anchor.
pub fn anchor_in(dir: &Path) -> Option<PathBuf> {
    let is_anchor = |p: &Path| {
        let mut head = [0u8; 8];
        std::fs::File::open(p)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok()
            && anchor::looks_like_anchor(&head[..7])
    };
    // Score-P's name is claimed even when damaged, so the reader says what is wrong.
    let t = dir.join("traces.otf2");
    if t.is_file() {
        return Some(t);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "otf2") && p.is_file())
        .collect();
    found.sort();
    found.into_iter().find(|p| is_anchor(p))
}

/// The bytes of the anchor, refused when it is implausibly large.
fn read_small(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > 16 << 20 {
        return Err(format!(
            "an anchor file of {} bytes: not an OTF2 anchor (they are a few hundred bytes)",
            meta.len()
        ));
    }
    std::fs::read(path).map_err(|e| e.to_string())
}

/// Reads an archive into one profile. `shown` is the path the user gave (the
/// directory or the anchor file).
pub fn read(anchor_path: &Path, shown: &Path) -> Result<Profile, String> {
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let bytes = read_small(anchor_path)?;
    if bytes.is_empty() {
        return Err("the anchor file is empty".into());
    }
    let anchor = match anchor::parse(&bytes) {
        Ok(Ok(a)) => a,
        Ok(Err(refusal)) => return Err(refusal),
        Err(e) => return Err(format!("{}: {e}", name(anchor_path))),
    };
    let dir = anchor_path.parent().unwrap_or(Path::new("."));
    let stem = anchor_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "traces".into());
    let def_path = dir.join(format!("{stem}.def"));
    if !def_path.is_file() {
        return Err(format!(
            "{}: the global definitions file {stem}.def is missing",
            name(anchor_path)
        ));
    }
    let defs = defs::parse_global(&def_path, anchor.chunk_size_defs)?;
    if defs.clock_resolution == 0 {
        return Err(format!(
            "{stem}.def: no clock properties (timer resolution), so times cannot be converted"
        ));
    }
    let loc_dir = dir.join(&stem);
    let size = dir_size(anchor_path, &def_path, &loc_dir);
    let mut b = Builder::new(&defs);
    b.cpu_budget = cpu_row_budget(size);
    let mut warnings = Vec::new();
    if !defs.complete {
        warnings.push(format!(
            "{}: {stem}.def ends before its end-of-file mark (truncated?); read the {} definitions before it",
            super::PARTIAL,
            defs.records
        ));
    }
    let read = read_locations(&defs, &anchor, &loc_dir, &stem, &mut b)?;
    let counts = read.counts;
    if read.missing > 0 {
        warnings.push(format!(
            "{} location(s) with events have no event file in {stem}/ (the archive is incomplete); shown without them",
            read.missing
        ));
    }
    if read.cut > 0 {
        warnings.push(format!(
            "{}: {} event file(s) in {stem}/ end before their end-of-file mark (truncated?); read the events before it",
            super::PARTIAL,
            read.cut
        ));
    }
    warnings.extend(unknown_types(&counts));
    if defs.unknown > 0 {
        warnings.push(format!(
            "{} global definition record(s) of unknown types were skipped by their length",
            defs.unknown
        ));
    }
    if b.local_unknown > 0 {
        warnings.push(format!(
            "{} local definition record(s) other than mapping tables and clock offsets were skipped (local definitions are not unified into the global ones)",
            b.local_unknown
        ));
    }
    warnings.extend(b.warnings());
    let meta = archive_meta(&anchor, &defs, &counts);
    let label = name(shown);
    let (cct, metrics, ev) = b.finish();
    let dialect = if anchor.creator.is_empty() {
        format!(
            "OTF2 {}.{}.{}",
            anchor.version.0, anchor.version.1, anchor.version.2
        )
    } else {
        format!(
            "OTF2 {}.{}.{} ({})",
            anchor.version.0, anchor.version.1, anchor.version.2, anchor.creator
        )
    };
    Ok(Profile {
        call_graph: None,
        source: Source {
            path: Some(shown.to_path_buf()),
            format: Format::Otf2,
            size,
            gzip: false,
            label,
        },
        dialect,
        cct,
        metrics,
        events: ev,
        counters: None,
        meta,
        warnings,
        default_metric: "time (inc)".into(),
    })
}

/// What reading the locations' event files found.
struct LocationsRead {
    /// Event records by type.
    counts: [u64; 256],
    /// Locations with events but no event file.
    missing: usize,
    /// Event files that end before their end-of-file mark.
    cut: usize,
}

/// Reads every location's event file (with its local definitions) into `b`.
fn read_locations(
    defs: &Defs,
    anchor: &anchor::Anchor,
    loc_dir: &Path,
    stem: &str,
    b: &mut Builder,
) -> Result<LocationsRead, String> {
    let mut read = LocationsRead {
        counts: [0u64; 256],
        missing: 0,
        cut: 0,
    };
    for (li, loc) in defs.locations.iter().enumerate() {
        let evt = loc_dir.join(format!("{}.evt", loc.id));
        if !evt.is_file() {
            if loc.events > 0 {
                read.missing += 1;
            }
            continue;
        }
        let ldef = loc_dir.join(format!("{}.def", loc.id));
        let local = if ldef.is_file() {
            let l = defs::parse_local(&ldef, anchor.chunk_size_defs)?;
            if l.unknown > 0 {
                b.local_unknown += l.unknown;
            }
            l
        } else {
            defs::Local {
                maps: vec![None; defs::MAP_KINDS],
                ..Default::default()
            }
        };
        let clock = defs::ClockCorrection::new(&local.clock_offsets);
        let mut dec = events::Decoder::new(&local.maps, clock);
        b.start_location(li);
        b.placer.start_location();
        let res =
            buffer::for_each_chunk(&evt, anchor.chunk_size_events, |mut c| dec.chunk(&mut c, b));
        b.end_location(dec.time);
        if let Err(e) = res {
            return Err(format!("{stem}/{e}"));
        }
        if !dec.done {
            read.cut += 1;
        }
        for (i, n) in dec.counts.iter().enumerate() {
            read.counts[i] += n;
        }
    }
    Ok(read)
}

/// The warning on event records of types the reader does not know, if there were any.
fn unknown_types(counts: &[u64; 256]) -> Option<String> {
    let unknown: Vec<String> = (0..256)
        .filter(|&i| counts[i] > 0 && (i as u8 > events::LAST_KNOWN || i < 10))
        .map(|i| format!("{i} ({})", counts[i]))
        .collect();
    if unknown.is_empty() {
        return None;
    }
    let n: u64 = (0..256)
        .filter(|&i| i as u8 > events::LAST_KNOWN || i < 10)
        .map(|i| counts[i])
        .sum();
    Some(format!(
        "{n} event record(s) of types this OTF2 reader does not know were skipped by their length: type {}",
        unknown.join(", ")
    ))
}

/// The run metadata: the anchor's version, creator and properties, the definitions'
/// clock, and the event records by type.
fn archive_meta(
    anchor: &anchor::Anchor,
    defs: &Defs,
    counts: &[u64; 256],
) -> Vec<(String, String)> {
    let mut meta = vec![
        (
            "otf2.version".to_string(),
            format!(
                "{}.{}.{}",
                anchor.version.0, anchor.version.1, anchor.version.2
            ),
        ),
        ("otf2.creator".into(), anchor.creator.clone()),
        ("otf2.locations".into(), defs.locations.len().to_string()),
        (
            "otf2.timer_resolution".into(),
            defs.clock_resolution.to_string(),
        ),
        ("otf2.global_offset".into(), defs.clock_offset.to_string()),
        ("otf2.trace_length".into(), defs.trace_length.to_string()),
    ];
    if !anchor.machine.is_empty() {
        meta.push(("otf2.machine".into(), anchor.machine.clone()));
    }
    if !anchor.description.is_empty() {
        meta.push(("otf2.description".into(), anchor.description.clone()));
    }
    for (k, v) in &anchor.properties {
        meta.push((format!("otf2.property.{k}"), v.clone()));
    }
    let mut total = 0u64;
    for (i, &n) in counts.iter().enumerate() {
        if n > 0 {
            let label = events::event_name(i as u8)
                .map(String::from)
                .unwrap_or_else(|| format!("TYPE_{i}"));
            let key = format!("otf2.events.{label}");
            match meta.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => *v = (v.parse::<u64>().unwrap_or(0) + n).to_string(),
                None => meta.push((key, n.to_string())),
            }
            total += n;
        }
    }
    meta.push(("otf2.events".into(), total.to_string()));
    meta
}

/// The archive's size on disk: anchor, definitions and the location files.
fn dir_size(anchor: &Path, defs: &Path, loc_dir: &Path) -> u64 {
    let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut n = len(anchor) + len(defs);
    if let Ok(rd) = std::fs::read_dir(loc_dir) {
        for e in rd.flatten() {
            n += e.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
    n
}

/// The paradigm names of OTF2_Paradigm, for the `paradigm` attribute and the event
/// category.
fn paradigm_name(p: u8) -> &'static str {
    match p {
        1 => "user",
        2 => "compiler",
        3 => "openmp",
        4 => "mpi",
        5 => "cuda",
        6 => "measurement",
        7 => "pthread",
        8 => "hmpp",
        9 => "ompss",
        10 => "hardware",
        11 => "gaspi",
        12 => "upc",
        13 => "shmem",
        14 => "winthread",
        15 => "qtthread",
        16 => "acethread",
        17 => "tbbthread",
        18 => "openacc",
        19 => "opencl",
        20 => "mtapi",
        21 => "sampling",
        22 => "none",
        23 => "hip",
        24 => "kokkos",
        _ => "unknown",
    }
}

/// How many region instances of CPU locations are kept as event-table rows: one per
/// 256 bytes of archive, and at least 2^18. A row costs about 80 bytes where its two
/// OTF2 records cost about 25, so all of a large trace's rows would hold several times
/// the trace in memory; this keeps them under a third of it. Past the budget the CPU
/// rows are dropped at once (a warning says so; grove's timeline shows CPU threads only
/// beside GPU streams) and the tree keeps every instance; accelerator-stream rows are
/// always kept.
pub fn cpu_row_budget(archive_bytes: u64) -> usize {
    ((archive_bytes / 256) as usize).max(1 << 18)
}

/// The metric members whose values are counters read at every Enter and Leave
/// (accumulated from the start): their differences are what a region spent.
struct Counter {
    member: u32,
}

/// One open region instance.
struct Open {
    region: u32,
    node: u32,
    start: i64,
    child_ns: i64,
    /// Counter values at the Enter (empty when the location records none).
    at_enter: Vec<f64>,
    child_counters: Vec<f64>,
}

/// Builds the CCT, metrics and event table while events stream in.
struct Builder<'d> {
    defs: &'d Defs,
    cct: Cct,
    by_path: HashMap<(u32, u32), u32, FxBuild>,
    region_text: HashMap<u32, (Arc<str>, u32, u32), FxBuild>,
    time: Vec<f64>,
    inc: Vec<f64>,
    count: Vec<f64>,
    sent: Vec<f64>,
    received: Vec<f64>,
    msgs_sent: Vec<f64>,
    msgs_received: Vec<f64>,
    counter_exc: Vec<Vec<f64>>,
    counter_inc: Vec<Vec<f64>>,
    counters: Vec<Counter>,
    counter_of_member: HashMap<u32, usize>,
    ev: EventTable,
    stack: Vec<Open>,
    root: u32,
    pid: u32,
    tid: u32,
    kind: EventKind,
    /// (device, stream) of an accelerator-stream location's rows.
    lane: (i64, i64),
    /// Latest counter values on this location and when they were read.
    last_counters: Vec<f64>,
    last_counter_t: u64,
    /// The other METRIC records (synchronous, asynchronous, levels), placed on the
    /// call path open at them.
    placer: metrics::Placer,
    /// The id of the location being read.
    location: u64,
    // Damage and oddities, counted.
    unmatched_leave: u64,
    mismatched_leave: u64,
    unclosed: u64,
    unknown_region: u64,
    local_unknown: u64,
    cpu_rows: usize,
    cpu_budget: usize,
    cpu_over_budget: bool,
}

impl<'d> Builder<'d> {
    fn new(defs: &'d Defs) -> Builder<'d> {
        let mut counters = Vec::new();
        let mut counter_of_member = HashMap::new();
        let mut ids: Vec<&u32> = defs.metric_members.keys().collect();
        ids.sort();
        // Members of strict synchronous classes, read at every Enter and Leave.
        let strict: std::collections::HashSet<u32> = defs
            .metric_classes
            .values()
            .filter(|c| c.occurrence == 0)
            .flat_map(|c| c.members.iter().copied())
            .collect();
        for &id in ids {
            let m = &defs.metric_members[&id];
            // Accumulated values (mode's low nibble 0) of a strict synchronous class:
            // region differences.
            if m.mode & 0x0f == 0 && strict.contains(&id) {
                counter_of_member.insert(id, counters.len());
                counters.push(Counter { member: id });
            }
        }
        Builder {
            defs,
            cct: Cct::default(),
            by_path: HashMap::default(),
            region_text: HashMap::default(),
            time: Vec::new(),
            inc: Vec::new(),
            count: Vec::new(),
            sent: Vec::new(),
            received: Vec::new(),
            msgs_sent: Vec::new(),
            msgs_received: Vec::new(),
            counter_exc: vec![Vec::new(); counters.len()],
            counter_inc: vec![Vec::new(); counters.len()],
            last_counters: vec![f64::NAN; counters.len()],
            counters,
            counter_of_member,
            ev: EventTable::default(),
            stack: Vec::new(),
            root: 0,
            pid: 0,
            tid: 0,
            kind: EventKind::Cpu,
            lane: (0, 0),
            last_counter_t: u64::MAX,
            placer: metrics::Placer::new(defs),
            location: 0,
            unmatched_leave: 0,
            mismatched_leave: 0,
            unclosed: 0,
            unknown_region: 0,
            local_unknown: 0,
            cpu_rows: 0,
            cpu_budget: 1 << 18,
            cpu_over_budget: false,
        }
    }

    /// Ticks to ns since the global offset, kept within ±2^61 so that sums and
    /// `ts + dur` downstream cannot overflow whatever a damaged file says.
    fn ns(&self, t: u64) -> i64 {
        const LIMIT: i128 = 1 << 61;
        let d = t as i128 - self.defs.clock_offset as i128;
        (d * 1_000_000_000 / self.defs.clock_resolution as i128).clamp(-LIMIT, LIMIT) as i64
    }

    fn grow(&mut self) {
        let n = self.cct.len();
        for v in [
            &mut self.time,
            &mut self.inc,
            &mut self.count,
            &mut self.sent,
            &mut self.received,
            &mut self.msgs_sent,
            &mut self.msgs_received,
        ] {
            v.resize(n, 0.0);
        }
        for v in self
            .counter_exc
            .iter_mut()
            .chain(self.counter_inc.iter_mut())
        {
            v.resize(n, 0.0);
        }
    }

    /// Starts a location: its CCT root, named for its role (the location group, e.g.
    /// `MPI Rank 0`, plus the thread when the group has several).
    fn start_location(&mut self, li: usize) {
        let d = self.defs;
        let loc = &d.locations[li];
        let group = d.location_groups.get(&loc.group);
        let gname = group.map(|g| d.string(g.name)).unwrap_or("");
        let lname = d.string(loc.name);
        let siblings = d.locations.iter().filter(|l| l.group == loc.group).count();
        let label = if gname.is_empty() {
            if lname.is_empty() {
                format!("location {}", loc.id)
            } else {
                lname.to_string()
            }
        } else if siblings > 1 {
            format!("{gname} / {lname}")
        } else {
            gname.to_string()
        };
        let root = self.cct.child(None, &label, "thread");
        {
            let f = self.cct.frame_mut(root);
            f.set_attr("location", &loc.id.to_string());
            f.set_attr("location_name", lname);
            f.set_attr(
                "location_type",
                match loc.kind {
                    defs::LOCATION_CPU_THREAD => "cpu_thread",
                    defs::LOCATION_ACCELERATOR_STREAM => "accelerator_stream",
                    defs::LOCATION_METRIC => "metric",
                    _ => "unknown",
                },
            );
            if !gname.is_empty() {
                f.set_attr("location_group", gname);
            }
        }
        self.grow();
        self.count[root as usize] = 1.0;
        self.root = root;
        self.pid = self
            .ev
            .strings
            .intern(if gname.is_empty() { &label } else { gname });
        self.tid = self.ev.strings.intern(&format!(
            "{} ({})",
            if lname.is_empty() { "location" } else { lname },
            loc.id
        ));
        self.lane = (loc.group as i64, loc.id as i64);
        self.location = loc.id;
        self.kind = if loc.kind == defs::LOCATION_ACCELERATOR_STREAM {
            EventKind::Kernel
        } else {
            EventKind::Cpu
        };
        self.stack.clear();
        self.last_counters.iter_mut().for_each(|v| *v = f64::NAN);
        self.last_counter_t = u64::MAX;
    }

    fn end_location(&mut self, t: u64) {
        while let Some(top) = self.stack.last() {
            let r = top.region;
            self.unclosed += 1;
            self.close(t, r);
        }
    }

    fn region_info(&mut self, region: u32) -> (Arc<str>, u32, u32) {
        if let Some(x) = self.region_text.get(&region) {
            return x.clone();
        }
        let d = self.defs;
        let (name, cat) = match d.regions.get(&region) {
            Some(r) => {
                let n = d.string(r.name);
                let n = if n.is_empty() {
                    d.string(r.canonical)
                } else {
                    n
                };
                (n.to_string(), paradigm_name(r.paradigm))
            }
            None => {
                self.unknown_region += 1;
                (format!("<region {region}>"), "unknown")
            }
        };
        let name_id = self.ev.strings.intern(&name);
        let cat_id = self.ev.strings.intern(cat);
        let x: (Arc<str>, u32, u32) = (Arc::from(name.as_str()), name_id, cat_id);
        self.region_text.insert(region, x.clone());
        x
    }

    fn node(&mut self, parent: u32, region: u32) -> u32 {
        if let Some(&n) = self.by_path.get(&(parent, region)) {
            return n;
        }
        let (name, _, _) = self.region_info(region);
        let mut frame = Frame {
            name,
            kind: Arc::from("function"),
            attrs: Default::default(),
        };
        if let Some(r) = self.defs.regions.get(&region) {
            frame.set_attr("paradigm", paradigm_name(r.paradigm));
            let file = self.defs.string(r.file);
            if !file.is_empty() {
                frame.set_attr("file", file);
                if r.begin_line > 0 {
                    frame.set_attr("line", &r.begin_line.to_string());
                }
            }
            let canonical = self.defs.string(r.canonical);
            if !canonical.is_empty() && canonical != &*frame.name {
                frame.set_attr("canonical_name", canonical);
            }
        }
        let n = self.cct.add_node(Some(parent), frame);
        self.by_path.insert((parent, region), n);
        self.grow();
        n
    }

    /// Counter values current at `t` (those read at this very time, else NaN: a
    /// strict synchronous counter is read at every Enter and Leave).
    fn counters_at(&self, t: u64) -> Vec<f64> {
        if self.counters.is_empty() {
            return Vec::new();
        }
        if self.last_counter_t == t {
            self.last_counters.clone()
        } else {
            vec![f64::NAN; self.counters.len()]
        }
    }

    fn close(&mut self, t: u64, region: u32) {
        let Some(o) = self.stack.pop() else { return };
        let end = self.ns(t);
        let dur = end.saturating_sub(o.start).max(0);
        let n = o.node as usize;
        self.inc[n] += dur as f64;
        self.time[n] += dur.saturating_sub(o.child_ns).max(0) as f64;
        if !self.counters.is_empty() {
            let now = self.counters_at(t);
            for (k, (a, b)) in o.at_enter.iter().zip(&now).enumerate() {
                let delta = b - a;
                if delta.is_finite() {
                    self.counter_inc[k][n] += delta;
                    self.counter_exc[k][n] += delta - o.child_counters[k];
                    if let Some(p) = self.stack.last_mut() {
                        p.child_counters[k] += delta;
                    }
                }
            }
        }
        if let Some(p) = self.stack.last_mut() {
            p.child_ns = p.child_ns.saturating_add(dur);
        }
        if self.kind == EventKind::Cpu {
            self.cpu_rows += 1;
            if self.cpu_over_budget {
                return;
            }
            if self.cpu_rows > self.cpu_budget {
                // Drop the CPU rows now, not at the end, so they never pile up further.
                self.cpu_over_budget = true;
                drop_cpu_rows(&mut self.ev);
                return;
            }
        }
        let (_, name_id, cat_id) = self.region_info(region);
        let i = self
            .ev
            .push(name_id, cat_id, self.kind, o.start, dur, self.pid, self.tid);
        self.ev.node.push(o.node);
        if self.kind == EventKind::Kernel {
            // A GPU lane per accelerator stream: device = its location group, stream =
            // the location.
            self.ev.device[i] = self.lane.0;
            self.ev.stream[i] = self.lane.1;
        }
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.unmatched_leave > 0 {
            w.push(format!(
                "{} Leave record(s) without an open region were ignored",
                self.unmatched_leave
            ));
        }
        if self.mismatched_leave > 0 {
            w.push(format!(
                "{} Leave record(s) named a region other than the innermost open one; the regions inside it were closed there",
                self.mismatched_leave
            ));
        }
        if self.unclosed > 0 {
            w.push(format!(
                "{} region(s) were still open at the end of their location's events; closed at its last timestamp",
                self.unclosed
            ));
        }
        if self.unknown_region > 0 {
            w.push(format!(
                "{} region id(s) have no Region definition; shown as <region N>",
                self.unknown_region
            ));
        }
        if self.cpu_over_budget {
            w.push(format!(
                "{} CPU region instances are more than the event table keeps ({}): the table holds accelerator streams only, so the timeline has no CPU lanes; the tree and its metrics count every instance",
                self.cpu_rows, self.cpu_budget
            ));
        }
        w.extend(self.placer.warnings());
        w
    }

    fn finish(mut self) -> (Cct, MetricTable, Option<EventTable>) {
        self.grow();
        let n = self.cct.len();
        // A location's root spans what ran on it: the sum of its top-level regions.
        for r in self.cct.root_ids() {
            let kids: f64 = self.cct.children(r).map(|c| self.inc[c as usize]).sum();
            self.inc[r as usize] = kids;
        }
        let mut m = MetricTable::new(n);
        m.set("time", "ns", self.time);
        m.set("time (inc)", "ns", self.inc);
        m.set("count", "", self.count);
        let any = |v: &[f64]| v.iter().any(|&x| x != 0.0);
        if any(&self.sent) || any(&self.received) {
            m.set("bytes_sent", "B", self.sent);
            m.set("bytes_received", "B", self.received);
            m.set("messages_sent", "", self.msgs_sent);
            m.set("messages_received", "", self.msgs_received);
            m.derive_inclusive(
                &self.cct,
                &[
                    "bytes_sent",
                    "bytes_received",
                    "messages_sent",
                    "messages_received",
                ],
            );
        }
        let strict = self
            .counters
            .iter()
            .enumerate()
            .map(|(k, c)| metrics::Strict {
                member: c.member,
                exc: std::mem::take(&mut self.counter_exc[k]),
                inc: std::mem::take(&mut self.counter_inc[k]),
            })
            .collect();
        self.placer.finish(&self.cct, &mut m, strict);
        let len = self.ev.len();
        self.ev.launch = crate::model::events::Sparse::with_len(len);
        self.cct.finish();
        let ev = (!self.ev.is_empty()).then_some(self.ev);
        (self.cct, m, ev)
    }
}

/// Removes the CPU rows in place (the over-budget case) and gives their memory back.
fn drop_cpu_rows(ev: &mut EventTable) {
    let keep: Vec<bool> = ev.kind.iter().map(|&k| k != EventKind::Cpu).collect();
    fn retain<T>(v: &mut Vec<T>, keep: &[bool]) {
        let mut i = 0;
        v.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        v.shrink_to_fit();
    }
    ev.name.retain_rows(&keep);
    ev.cat.retain_rows(&keep);
    retain(&mut ev.kind, &keep);
    retain(&mut ev.ts, &keep);
    retain(&mut ev.dur, &keep);
    ev.pid.retain_rows(&keep);
    ev.tid.retain_rows(&keep);
    ev.device.retain_rows(&keep);
    ev.stream.retain_rows(&keep);
    ev.correlation.retain_rows(&keep);
    ev.external_id.retain_rows(&keep);
    ev.args.retain_rows(&keep);
    ev.begin_end.retain_rows(&keep);
    retain(&mut ev.node, &keep);
    ev.seq = (0..ev.name.len() as u32).collect();
}

impl events::Visit for Builder<'_> {
    fn enter(&mut self, t: u64, region: u32) {
        let parent = self.stack.last().map(|o| o.node).unwrap_or(self.root);
        let node = self.node(parent, region);
        self.count[node as usize] += 1.0;
        let at_enter = self.counters_at(t);
        let child_counters = vec![0.0; at_enter.len()];
        self.stack.push(Open {
            region,
            node,
            start: self.ns(t),
            child_ns: 0,
            at_enter,
            child_counters,
        });
    }

    fn leave(&mut self, t: u64, region: u32) {
        match self.stack.iter().rposition(|o| o.region == region) {
            None => self.unmatched_leave += 1,
            Some(at) => {
                if at + 1 != self.stack.len() {
                    self.mismatched_leave += 1;
                }
                while self.stack.len() > at + 1 {
                    let r = self.stack.last().map(|o| o.region).unwrap_or(region);
                    self.close(t, r);
                }
                self.close(t, region);
            }
        }
    }

    fn message(&mut self, _t: u64, send: bool, bytes: u64) {
        let node = self.stack.last().map(|o| o.node).unwrap_or(self.root) as usize;
        if send {
            self.sent[node] += bytes as f64;
            self.msgs_sent[node] += 1.0;
        } else {
            self.received[node] += bytes as f64;
            self.msgs_received[node] += 1.0;
        }
    }

    fn collective(&mut self, _t: u64, sent: u64, received: u64) {
        let node = self.stack.last().map(|o| o.node).unwrap_or(self.root) as usize;
        self.sent[node] += sent as f64;
        self.received[node] += received as f64;
    }

    fn metric(&mut self, t: u64, metric: u32, values: &[(u8, u64)]) {
        let Some(class) = self.defs.metric_class(metric) else {
            self.placer.undefined();
            return;
        };
        let node = self.stack.last().map(|o| o.node).unwrap_or(self.root);
        let strict = class.occurrence == 0;
        let of = &self.counter_of_member;
        self.placer.record(
            self.defs,
            metric,
            values,
            (node, self.root, self.location),
            |m| strict && of.contains_key(&m),
        );
        if !strict {
            return;
        }
        if self.last_counter_t != t {
            self.last_counters.iter_mut().for_each(|v| *v = f64::NAN);
            self.last_counter_t = t;
        }
        for (&member, &(ty, raw)) in class.members.iter().zip(values) {
            if let Some(&k) = self.counter_of_member.get(&member) {
                self.last_counters[k] = metrics::value(ty, raw);
            }
        }
    }
}

#[cfg(test)]
mod tests;
