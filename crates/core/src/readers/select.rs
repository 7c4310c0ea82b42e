//! Loading a part of a trace: `--steps A-B` (a range of PyTorch `ProfilerStep#N`) or
//! `--window A-B` (a time range from the trace's first event). Set once from the
//! command line ([`configure`]) and applied by the Chrome/Kineto reader to its event
//! table before the tree is built ([`apply`]), so the tree, the event table, the GPU
//! views and every metric describe the part only.
//!
//! What the part holds (docs/guide.md, "Loading a part of a trace"):
//! - the window `[lo, hi)`: for a window, `lo` and `hi` are its bounds after the
//!   earliest event's start; for steps, `lo` is the start of the first of the steps
//!   the trace holds and `hi` the end of the last;
//! - host slices (CPU ops, annotations, runtime calls, instants) that start in it,
//!   and those open at `lo` (the ancestors of what starts there, kept whole so the tree
//!   keeps its shape);
//! - device activity (kernels, copies, sets) launched by a host slice that starts in
//!   the window (same correlation id), wherever it runs; activity without a launch in the file is
//!   kept when it starts in the window;
//! - counter samples taken in it.

use std::collections::HashSet;
use std::sync::Mutex;

use crate::model::events::{CounterTable, EventKind, EventTable, NONE_I64};
use crate::model::intern::FxBuild;

/// The part of a trace to load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Part {
    /// `ProfilerStep#A` to `ProfilerStep#B`, both included.
    Steps(u64, u64),
    /// Nanoseconds after the trace's earliest event: `[from, to)`.
    Window(i64, i64),
}

impl Part {
    /// How the part is named in messages and the profile's label (`steps 5-7`).
    pub fn describe(&self) -> String {
        match *self {
            Part::Steps(a, b) if a == b => format!("step {a}"),
            Part::Steps(a, b) => format!("steps {a}-{b}"),
            Part::Window(a, b) => format!("window {}-{}", secs(a), secs(b)),
        }
    }
}

fn secs(ns: i64) -> String {
    let s = format!("{:.9}", ns as f64 / 1e9);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}s")
}

/// The part every load of this run selects (None: the whole trace).
static PART: Mutex<Option<Part>> = Mutex::new(None);

/// Applies `--steps` and `--window` (at most one of them); errors are one line.
pub fn configure(steps: Option<&str>, window: Option<&str>) -> Result<(), String> {
    let part = match (steps, window) {
        (Some(_), Some(_)) => {
            return Err("--steps and --window select a part each; give one".into())
        }
        (Some(s), None) => Some(parse_steps(s)?),
        (None, Some(w)) => Some(parse_window(w)?),
        (None, None) => None,
    };
    *PART.lock().unwrap_or_else(|e| e.into_inner()) = part;
    Ok(())
}

/// Selects `part` from here on (`fit`: a load that does not fit loads a part).
pub fn set(part: Option<Part>) {
    *PART.lock().unwrap_or_else(|e| e.into_inner()) = part;
}

/// The part this run loads.
pub fn current() -> Option<Part> {
    *PART.lock().unwrap_or_else(|e| e.into_inner())
}

/// `5-7` or `5`.
pub fn parse_steps(s: &str) -> Result<Part, String> {
    let bad =
        || format!("--steps {s:?}: expected A-B such as 5-7 (ProfilerStep numbers), or one step");
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b: u64 = b.trim().parse().map_err(|_| bad())?;
    if b < a {
        return Err(format!("--steps {s:?}: the range ends before it starts"));
    }
    Ok(Part::Steps(a, b))
}

/// `2.1s-2.4s`, `100ms-250ms`, `0-1.5s` (a side without a unit takes the other's);
/// units ns, us (µs), ms, s.
pub fn parse_window(s: &str) -> Result<Part, String> {
    let bad = || {
        format!("--window {s:?}: expected START-END with units ns, us, ms or s, such as 2.1s-2.4s")
    };
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    let (a, ua) = split_unit(a.trim()).ok_or_else(bad)?;
    let (b, ub) = split_unit(b.trim()).ok_or_else(bad)?;
    let (ua, ub) = match (ua, ub) {
        (None, None) => return Err(bad()),
        (Some(x), None) | (None, Some(x)) => (x, x),
        (Some(x), Some(y)) => (x, y),
    };
    let (a, b) = ((a * ua).round(), (b * ub).round());
    if !(a.is_finite() && b.is_finite()) || a > 1e18 || b > 1e18 {
        return Err(bad());
    }
    if b <= a {
        return Err(format!("--window {s:?}: the window ends before it starts"));
    }
    Ok(Part::Window(a as i64, b as i64))
}

/// `2.5ms` -> (2.5, Some(1e6)); `2.5` -> (2.5, None).
fn split_unit(t: &str) -> Option<(f64, Option<f64>)> {
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let v: f64 = t[..split].parse().ok()?;
    let unit = match t[split..].trim() {
        "" => None,
        "ns" => Some(1.0),
        "us" | "µs" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        _ => return None,
    };
    Some((v, unit))
}

/// What [`apply`] kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    /// The window in the table's own time (ns).
    pub lo: i64,
    pub hi: i64,
    /// The earliest event's start (what a window counts from).
    pub origin: i64,
    pub events: usize,
    pub of: usize,
}

/// Restricts a trace's events and counters to `part` (module doc); an error (one line)
/// when the part is not in the trace.
pub fn apply(ev: &mut EventTable, counters: &mut CounterTable, part: Part) -> Result<Kept, String> {
    let origin = ev.ts.iter().copied().min().unwrap_or(0);
    let last = (0..ev.len())
        .map(|i| ev.ts[i].saturating_add(ev.dur[i]))
        .max()
        .unwrap_or(origin);
    let (lo, hi) = bounds(ev, part, origin, last)?;
    let n = ev.len();
    Ok(apply_bounds(ev, counters, (lo, hi), origin, n, None))
}

/// Restricts the events and counters to the window `[lo, hi)` (module doc); `of` is
/// the number of events in the whole file, `host` the correlation ids of its host
/// slices (None: those of `ev`, which holds the whole file).
fn apply_bounds(
    ev: &mut EventTable,
    counters: &mut CounterTable,
    (lo, hi): (i64, i64),
    origin: i64,
    of: usize,
    host: Option<&IdSet>,
) -> Kept {
    let n = ev.len();
    let mut keep = vec![false; n];
    let mut launched = IdSet::default();
    for (i, k) in keep.iter_mut().enumerate() {
        if ev.kind[i].on_gpu_lane() {
            continue;
        }
        let (ts, end) = (ev.ts[i], ev.ts[i].saturating_add(ev.dur[i]));
        if (lo..hi).contains(&ts) || (ts < lo && end > lo) {
            *k = true;
            // Only a launch that starts in the window brings its device work: that
            // work then starts at or after `lo`, which lets the streaming pass drop
            // every device row before `lo` unseen.
            if ev.correlation[i] != NONE_I64 && ts >= lo {
                launched.insert(ev.correlation[i]);
            }
        }
    }
    // Correlation ids of every host slice: device activity whose launch is in the file
    // goes with its launch, the rest by its own start.
    let own: IdSet;
    let host = match host {
        Some(h) => h,
        None => {
            own = (0..n)
                .filter(|&i| !ev.kind[i].on_gpu_lane() && ev.correlation[i] != NONE_I64)
                .map(|i| ev.correlation[i])
                .collect();
            &own
        }
    };
    for (i, k) in keep.iter_mut().enumerate() {
        if !ev.kind[i].on_gpu_lane() {
            continue;
        }
        let c = ev.correlation[i];
        *k = if c != NONE_I64 && host.contains(c) {
            launched.contains(c)
        } else {
            (lo..hi).contains(&ev.ts[i])
        };
    }
    retain_events(ev, &keep);
    let ckeep: Vec<bool> = counters.ts.iter().map(|t| (lo..hi).contains(t)).collect();
    retain(&mut counters.name, &ckeep);
    retain(&mut counters.series, &ckeep);
    retain(&mut counters.pid, &ckeep);
    retain(&mut counters.ts, &ckeep);
    retain(&mut counters.value, &ckeep);
    Kept {
        lo,
        hi,
        origin,
        events: ev.len(),
        of,
    }
}

/// The window `[lo, hi)` of `part` in the table's time, for a trace whose events
/// span `origin..last` (`ev` holds at least its ProfilerStep slices).
fn bounds(ev: &EventTable, part: Part, origin: i64, last: i64) -> Result<(i64, i64), String> {
    match part {
        Part::Window(a, b) => {
            // No slice at all (a trace of CPU samples alone): nothing spans any time.
            if last < origin {
                return Err(format!(
                    "the trace has no slices to take the {} from",
                    part.describe()
                ));
            }
            if origin.saturating_add(a) >= last {
                return Err(format!(
                    "the {} starts after the trace ends (it lasts {})",
                    part.describe(),
                    secs(last.saturating_sub(origin))
                ));
            }
            Ok((origin.saturating_add(a), origin.saturating_add(b)))
        }
        Part::Steps(a, b) => {
            let mut lo = i64::MAX;
            let mut hi = i64::MIN;
            let mut seen: Option<(u64, u64)> = None;
            for i in 0..ev.len() {
                if ev.kind[i] != EventKind::Cpu {
                    continue;
                }
                let Some(k) = ev
                    .name_of(i)
                    .strip_prefix("ProfilerStep#")
                    .and_then(|k| k.parse::<u64>().ok())
                else {
                    continue;
                };
                seen = Some(seen.map_or((k, k), |(x, y)| (x.min(k), y.max(k))));
                if (a..=b).contains(&k) {
                    lo = lo.min(ev.ts[i]);
                    hi = hi.max(ev.ts[i].saturating_add(ev.dur[i]));
                }
            }
            if lo > hi {
                return Err(match seen {
                    Some((x, y)) => format!(
                        "no ProfilerStep in {} (the trace has steps {x}-{y})",
                        part.describe()
                    ),
                    None => {
                        "--steps: the trace has no ProfilerStep#N slices; select a --window instead"
                            .to_string()
                    }
                });
            }
            // A step of no duration still holds what starts at its start.
            Ok((lo, hi.max(lo + 1)))
        }
    }
}

/// A set of correlation ids. Tracers number launches densely from a small start, so
/// ids go to a bitmap while it stays within 16 bits per id held (a 10 GB trace's 6.3
/// million launch ids: 0.8 MB, where a hash set took 75 MB and twice that while it
/// grew); any other id goes to a hash set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IdSet {
    bits: Vec<u64>,
    len: usize,
    other: HashSet<i64, FxBuild>,
}

impl IdSet {
    /// Adds `id`; true when it was not there.
    pub fn insert(&mut self, id: i64) -> bool {
        let w = (id >> 6) as usize;
        if id >= 0 && (w < self.bits.len() || w < 1024.max(self.len / 4)) {
            if w >= self.bits.len() {
                self.bits.resize((w + 1).next_power_of_two(), 0);
            }
            let bit = 1u64 << (id & 63);
            if self.bits[w] & bit != 0 || (!self.other.is_empty() && self.other.contains(&id)) {
                return false;
            }
            self.bits[w] |= bit;
            self.len += 1;
            return true;
        }
        let new = self.other.insert(id);
        self.len += usize::from(new);
        new
    }

    pub fn contains(&self, id: i64) -> bool {
        let w = (id >> 6) as usize;
        if id >= 0 && w < self.bits.len() && self.bits[w] >> (id & 63) & 1 == 1 {
            return true;
        }
        self.other.contains(&id)
    }
}

impl FromIterator<i64> for IdSet {
    fn from_iter<I: IntoIterator<Item = i64>>(it: I) -> IdSet {
        let mut s = IdSet::default();
        for id in it {
            s.insert(id);
        }
        s
    }
}

/// Which events the Chrome reader keeps while it streams (`chrome::parse_filtered`).
#[derive(Debug, Clone, PartialEq)]
pub enum Stream {
    /// The first pass: only ProfilerStep slices are kept; the span of every slice and
    /// the number of slices are noted.
    Scan {
        origin: i64,
        last: i64,
        seen: usize,
        kept: usize,
    },
    /// The second pass: a superset of the part of the window `[lo, hi)` (in the
    /// file's own time), made exact by [`apply`]'s rules once the table is read: host
    /// slices that start in it or are open at `lo`; device activity whose launch was
    /// already read goes with it (kept when the launch starts in the window), the rest
    /// from `lo` on (a launch read later decides).
    Keep {
        lo: i64,
        hi: i64,
        /// The correlation ids of every host slice in the file, kept or not: whether
        /// a device activity's launch is in the file at all.
        host: IdSet,
        /// The correlation ids of the host slices read so far that start in the
        /// window: the launches whose device activity the part holds.
        launched: IdSet,
        /// Launches in the window whose correlation id an earlier host slice outside
        /// it had: device activity of that id read in between was dropped, which
        /// [`apply`] alone would have kept (one id naming two launches).
        reused: usize,
    },
}

impl Stream {
    /// The second pass of the part of the window `[lo, hi)` (the file's own time).
    pub(crate) fn keep(lo: i64, hi: i64) -> Stream {
        Stream::Keep {
            lo,
            hi,
            host: IdSet::default(),
            launched: IdSet::default(),
            reused: 0,
        }
    }

    pub(crate) fn scan() -> Stream {
        Stream::Scan {
            origin: i64::MAX,
            last: i64::MIN,
            seen: 0,
            kept: 0,
        }
    }

    /// Whether to keep a slice (`device`: on a GPU lane).
    #[inline]
    pub fn slice(
        &mut self,
        device: bool,
        name: &[u8],
        ts: i64,
        dur: i64,
        correlation: Option<i64>,
    ) -> bool {
        match self {
            Stream::Scan {
                origin,
                last,
                seen,
                kept,
            } => {
                *origin = (*origin).min(ts);
                *last = (*last).max(ts.saturating_add(dur));
                *seen += 1;
                let step = !device && name.starts_with(b"ProfilerStep#");
                *kept += usize::from(step);
                step
            }
            Stream::Keep {
                lo,
                hi,
                host,
                launched,
                reused,
            } => {
                if device {
                    // A leading part of a big trace drops nearly all its device rows
                    // here: their launches (read first in Kineto's files) lie after it.
                    return match correlation {
                        Some(c) if host.contains(c) => launched.contains(c),
                        _ => ts >= *lo,
                    };
                }
                let starts_in = (*lo..*hi).contains(&ts);
                if let Some(c) = correlation {
                    let first = host.insert(c);
                    if starts_in && launched.insert(c) && !first {
                        *reused += 1;
                    }
                }
                starts_in || (ts < *lo && ts.saturating_add(dur) > *lo)
            }
        }
    }

    /// Whether to keep a launch flow's start (`start`) or end at `ts`. The first pass
    /// needs none; a part, the starts before its end (a launch it keeps starts there)
    /// and the ends from its start on (where the device activity it keeps runs).
    pub fn flow(&self, start: bool, ts: i64) -> bool {
        match self {
            Stream::Scan { .. } => false,
            Stream::Keep { lo, hi, .. } => {
                if start {
                    ts < *hi
                } else {
                    ts >= *lo
                }
            }
        }
    }

    /// Whether to keep a counter sample.
    pub fn counter(&self, ts: i64) -> bool {
        match self {
            Stream::Scan { .. } => false,
            Stream::Keep { lo, hi, .. } => (*lo..*hi).contains(&ts),
        }
    }
}

/// The part's window found by the first pass: in the table's time (`lo`, `hi`,
/// `origin`), the file's time lags it by `shift` (Kineto's `baseTimeNanoseconds`).
struct Found {
    lo: i64,
    hi: i64,
    origin: i64,
    shift: i64,
    of: usize,
}

/// What the first pass over a Chrome trace found: the ProfilerStep slices (in `tr`),
/// the span of every slice in the event table's time, and how many slices it saw.
pub(crate) struct FirstPass {
    pub tr: super::chrome::ChromeTrace,
    pub origin: i64,
    pub last: i64,
    /// `baseTimeNanoseconds`: Kineto's times count from it, and the table adds it.
    pub shift: i64,
    /// Host slices in the file that the pass did not keep, plus those it kept.
    pub of: usize,
}

/// The first pass over a regular file: only ProfilerStep slices kept, the span of
/// everything. None when the file cannot be read again as a Chrome trace (or is not a
/// regular file: a pipe cannot be read twice).
pub(crate) fn first_pass(path: &std::path::Path) -> Option<FirstPass> {
    // Checked before opening: opening a FIFO again waits for a writer that is gone.
    if !super::open::is_regular(path) {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let src: Box<dyn std::io::Read> = match super::progress::current() {
        Some(p) => {
            // The file is read once more: the bar covers both passes.
            p.add_total(meta.len());
            Box::new(super::progress::Counting::new(file, p))
        }
        None => Box::new(file),
    };
    let (input, _) = super::decompressed(src).ok()?;
    // Its events are counted by the load itself (the bytes, above, by both passes).
    let quiet = super::progress::attach(super::progress::Progress::new());
    let (tr, f) = super::chrome::parse_filtered(input, Some(Stream::scan())).ok()?;
    drop(quiet);
    let Some(Stream::Scan {
        origin,
        last,
        seen,
        kept,
    }) = f
    else {
        return None;
    };
    let shift = tr
        .meta
        .iter()
        .find(|(k, _)| k == "baseTimeNanoseconds")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0i64);
    let ev = &tr.events;
    // Slices closed at the end of the trace (a B without its E) skip the filter.
    let origin = ev
        .ts
        .iter()
        .copied()
        .fold(origin.saturating_add(shift), i64::min);
    // ... and their ends (the trace's end) bound its span too.
    let last = (0..ev.len())
        .map(|i| ev.ts[i].saturating_add(ev.dur[i]))
        .fold(last.saturating_add(shift), i64::max);
    let of = seen + ev.len().saturating_sub(kept);
    Some(FirstPass {
        tr,
        origin,
        last,
        shift,
        of,
    })
}

/// The first pass over a file: where the part lies. None when the file cannot be
/// read again as a Chrome trace (then the part is cut from a full read).
fn scan(path: &std::path::Path, part: Part) -> Option<Result<Found, String>> {
    let FirstPass {
        tr,
        origin,
        last,
        shift,
        of,
    } = first_pass(path)?;
    Some(
        bounds(&tr.events, part, origin, last).map(|(lo, hi)| Found {
            lo,
            hi,
            origin,
            shift,
            of,
        }),
    )
}

/// Reads the part of a Chrome trace: a first pass over the file finds the part's
/// window, the second keeps (about) only what lies in it, and [`apply`]'s rules make
/// it exact. Standard input and pipes, which cannot be read twice, are read whole
/// and cut. An error (one line) when the part is not in the trace.
pub fn read_part(
    input: Box<dyn std::io::BufRead>,
    source: &crate::model::Source,
    part: Part,
) -> Result<(super::chrome::ChromeTrace, Option<(Part, Kept)>), String> {
    let found = source
        .path
        .as_deref()
        .filter(|p| p.is_file())
        .and_then(|p| scan(p, part));
    let Some(found) = found else {
        let mut tr = super::chrome::parse(input).map_err(|e| e.to_string())?;
        let kept = apply(&mut tr.events, &mut tr.counters, part)?;
        return Ok((tr, Some((part, kept))));
    };
    let w = found?;
    let keep = Stream::keep(w.lo - w.shift, w.hi - w.shift);
    let (mut tr, f) =
        super::chrome::parse_filtered(input, Some(keep)).map_err(|e| e.to_string())?;
    let host = match f {
        Some(Stream::Keep { host, reused, .. }) => {
            if reused > 0 {
                tr.warnings.push(format!(
                    "{reused} launches in the {} reuse a correlation id that a host slice before them had: device activity of those ids read between the two may be missing from the part",
                    part.describe()
                ));
            }
            host
        }
        _ => IdSet::default(),
    };
    let (ev, counters) = (&mut tr.events, &mut tr.counters);
    let kept = apply_bounds(ev, counters, (w.lo, w.hi), w.origin, w.of, Some(&host));
    Ok((tr, Some((part, kept))))
}

/// Names the part on the profile: its label (`trace.json [steps 5-7]`) and a `part`
/// metadata line that `grove info` lists.
pub fn mark(p: &mut crate::model::Profile, part: Part, kept: &Kept) {
    p.source.label = format!("{} [{}]", p.source.label, part.describe());
    p.meta.push((
        "part".into(),
        format!(
            "{}: {} of {} events, {} from the trace's start",
            part.describe(),
            kept.events,
            kept.of,
            secs(kept.lo - kept.origin)
        ),
    ));
}

/// A part asked for but not cut (only the Chrome reader cuts one): a warning, so the
/// whole profile is never taken for the part.
pub fn unapplied(p: &mut crate::model::Profile) {
    if let Some(part) = current() {
        if !p.meta.iter().any(|(k, _)| k == "part") {
            p.warnings.push(format!(
                "--steps and --window apply to Chrome/Kineto traces; the whole {} was loaded, not the {}",
                p.source.format.label(),
                part.describe()
            ));
        }
    }
}

fn retain<T: Copy>(v: &mut Vec<T>, keep: &[bool]) {
    let mut k = keep.iter();
    v.retain(|_| *k.next().unwrap_or(&false));
    v.shrink_to_fit();
}

/// Keeps the rows of `ev` marked in `keep` (its per-row columns; the string and
/// argument stores stay as they are, their ids still valid).
fn retain_events(ev: &mut EventTable, keep: &[bool]) {
    ev.name.retain_rows(keep);
    ev.cat.retain_rows(keep);
    retain(&mut ev.kind, keep);
    retain(&mut ev.ts, keep);
    retain(&mut ev.dur, keep);
    ev.pid.retain_rows(keep);
    ev.tid.retain_rows(keep);
    ev.device.retain_rows(keep);
    ev.stream.retain_rows(keep);
    ev.correlation.retain_rows(keep);
    ev.external_id.retain_rows(keep);
    ev.record_function_id.retain_rows(keep);
    ev.args.retain_rows(keep);
    ev.seq.retain_rows(keep);
    ev.begin_end.retain_rows(keep);
    // Filled only once the tree is built, after the selection.
    if ev.node.len() == keep.len() {
        retain(&mut ev.node, keep);
    }
    if ev.launch.len() == keep.len() {
        ev.launch.retain_rows(keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_bad_ones_say_why() {
        assert_eq!(parse_steps("5-7"), Ok(Part::Steps(5, 7)));
        assert_eq!(parse_steps("3"), Ok(Part::Steps(3, 3)));
        assert!(parse_steps("7-5")
            .unwrap_err()
            .contains("ends before it starts"));
        assert!(parse_steps("a-b").unwrap_err().contains("expected A-B"));
        assert_eq!(
            parse_window("2.1s-2.4s"),
            Ok(Part::Window(2_100_000_000, 2_400_000_000))
        );
        assert_eq!(parse_window("0-1.5ms"), Ok(Part::Window(0, 1_500_000)));
        assert_eq!(
            parse_window("100us-2ms"),
            Ok(Part::Window(100_000, 2_000_000))
        );
        assert!(parse_window("1-2").unwrap_err().contains("units"));
        assert!(parse_window("2s-1s").unwrap_err().contains("ends before"));
        assert!(parse_window("2x-3s").is_err());
        assert!(configure(Some("1"), Some("0-1s")).is_err());
        assert_eq!(
            Part::Window(2_100_000_000, 2_400_000_000).describe(),
            "window 2.1s-2.4s"
        );
        for e in [parse_steps("x").unwrap_err(), parse_window("").unwrap_err()] {
            assert!(!e.contains('\n'));
        }
    }

    fn table() -> EventTable {
        let mut t = EventTable::default();
        let s = |t: &mut EventTable, x: &str| t.strings.intern(x);
        // thread: outer [0,100) > step1 [10,40) > op [12,20) launching kernel (corr 1)
        //         step2 [40,70) > op [45,50) launching kernel (corr 2) that runs at 75
        let rows = [
            ("outer", EventKind::Cpu, 0, 100, NONE_I64),
            ("ProfilerStep#1", EventKind::Cpu, 10, 30, NONE_I64),
            ("op1", EventKind::Cpu, 12, 8, 1),
            ("ProfilerStep#2", EventKind::Cpu, 40, 30, NONE_I64),
            ("op2", EventKind::Cpu, 45, 5, 2),
            ("k1", EventKind::Kernel, 22, 5, 1),
            ("k2", EventKind::Kernel, 75, 5, 2),
            ("k0", EventKind::Kernel, 50, 5, NONE_I64),
        ];
        for (name, kind, ts, dur, corr) in rows {
            let (n, c) = (s(&mut t, name), s(&mut t, "cat"));
            let i = t.push(n, c, kind, ts, dur, 0, 0);
            t.correlation[i] = corr;
        }
        t
    }

    #[test]
    fn the_stream_drops_device_rows_whose_launch_it_read_outside_the_part() {
        let mut f = Stream::keep(40, 70);
        // (device, ts, dur, correlation, kept)
        let rows = [
            (false, 12, 8, Some(1), false), // a launch before the part
            (true, 22, 5, Some(1), false),  // its kernel: dropped on sight
            (true, 80, 5, Some(1), false),  // even after the part's start
            (false, 45, 5, Some(2), true),  // a launch in the part
            (true, 75, 5, Some(2), true),   // its kernel, after the part's end
            (true, 90, 5, Some(3), true),   // launch not read yet: kept for now
            (true, 30, 5, Some(4), false),  // ... unless it starts before the part
            (false, 35, 10, None, true),    // open at the part's start
            (true, 50, 5, None, true),      // no launch: by its own start
        ];
        for (device, ts, dur, c, want) in rows {
            assert_eq!(f.slice(device, b"x", ts, dur, c), want, "{ts} {c:?}");
        }
        let Stream::Keep { reused, .. } = f else {
            unreachable!()
        };
        assert_eq!(reused, 0);
        // Flows: starts before the part's end, ends from its start on.
        let f = Stream::keep(40, 70);
        assert!(f.flow(true, 45) && f.flow(true, 10) && !f.flow(true, 70));
        assert!(f.flow(false, 40) && f.flow(false, 95) && !f.flow(false, 39));
        assert!(!Stream::scan().flow(true, 45) && !Stream::scan().flow(false, 45));
    }

    #[test]
    fn id_sets_hold_dense_and_scattered_ids() {
        let mut s = IdSet::default();
        let ids: Vec<i64> = (1..200_000)
            .chain([-5, i64::MIN, i64::MAX, 1 << 40, 70_000_000, 3])
            .collect();
        let mut want = HashSet::new();
        for &id in &ids {
            assert_eq!(s.insert(id), want.insert(id), "{id}");
        }
        for id in (-10..210_000).chain([i64::MIN, i64::MAX, 1 << 40, 70_000_000, 69_999_999]) {
            assert_eq!(s.contains(id), want.contains(&id), "{id}");
        }
        // Dense ids are bits: 200,000 of them in a few tens of kilobytes.
        assert!(s.bits.len() * 8 <= 64 << 10 && s.other.len() <= 8);
        // An id first held in the hash set (the bitmap too small then) is found once.
        let mut s = IdSet::default();
        assert!(s.insert(100_000) && !s.insert(100_000));
        for id in 0..100_000 {
            s.insert(id);
        }
        assert!(!s.insert(100_000) && s.contains(100_000));
    }

    #[test]
    fn a_correlation_id_reused_inside_the_part_is_counted() {
        let mut f = Stream::keep(40, 70);
        assert!(!f.slice(false, b"launch", 12, 3, Some(7)));
        assert!(!f.slice(true, b"k", 41, 3, Some(7)));
        // The same id names a launch in the part: the kernel above was its own or not.
        assert!(f.slice(false, b"launch", 50, 3, Some(7)));
        assert!(f.slice(false, b"launch", 55, 3, Some(8)));
        assert!(f.slice(false, b"launch", 60, 3, Some(8)));
        let Stream::Keep { reused, .. } = f else {
            unreachable!()
        };
        assert_eq!(reused, 1);
    }

    #[test]
    fn a_window_of_a_trace_without_slices_says_so() {
        // The first pass's span of a trace of CPU samples alone: nothing seen.
        let e = bounds(
            &EventTable::default(),
            Part::Window(0, 5),
            i64::MAX,
            i64::MIN,
        );
        assert_eq!(
            e.unwrap_err(),
            "the trace has no slices to take the window 0s-0.000000005s from"
        );
    }

    fn names(t: &EventTable) -> Vec<&str> {
        (0..t.len()).map(|i| t.name_of(i)).collect()
    }

    #[test]
    fn steps_keep_their_slices_ancestors_and_launched_kernels() {
        let mut t = table();
        let mut c = CounterTable::default();
        let k = apply(&mut t, &mut c, Part::Steps(2, 2)).unwrap();
        assert_eq!((k.lo, k.hi, k.events, k.of), (40, 70, 5, 8));
        // k2 runs after the step ends but goes with its launch; k0 has no launch and
        // starts inside; k1 was launched in step 1.
        assert_eq!(names(&t), ["outer", "ProfilerStep#2", "op2", "k2", "k0"]);
        let e = apply(&mut table(), &mut c, Part::Steps(5, 6)).unwrap_err();
        assert_eq!(e, "no ProfilerStep in steps 5-6 (the trace has steps 1-2)");
    }

    #[test]
    fn a_window_counts_from_the_first_event() {
        let mut t = table();
        let mut c = CounterTable {
            ts: vec![5, 15],
            name: vec![0, 0],
            series: vec![0, 0],
            pid: vec![0, 0],
            value: vec![1.0, 2.0],
        };
        apply(&mut t, &mut c, Part::Window(10, 21)).unwrap();
        assert_eq!(names(&t), ["outer", "ProfilerStep#1", "op1", "k1"]);
        assert_eq!(c.value, vec![2.0]);
        let e = apply(&mut table(), &mut c, Part::Window(200, 300)).unwrap_err();
        assert!(e.contains("starts after the trace ends"), "{e}");
    }
}
