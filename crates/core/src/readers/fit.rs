//! Loading what fits: a Chrome/Kineto trace whose whole load would not fit in the
//! memory grove may use (`memory::shortfall`) loads its longest leading range of
//! ProfilerSteps that fits (a leading time window when it has no steps), instead of
//! being refused, and says so: a warning on every profile it gives (stderr, the status
//! line, `--strict`).
//!
//! The part is chosen from a first pass over the file that keeps only the
//! `ProfilerStep` slices and the trace's span (`select::Stream::Scan`), and costs
//! nothing like a full load. What a part needs is estimated from the time it covers:
//! a fixed share of the whole estimate plus its share of the trace's span (measured:
//! [`FIXED`], [`PER_SHARE`]), within [`HEADROOM`] of the limit. Training
//! steps are alike, so the time a step covers is a fair measure of the events (and
//! bytes) it holds. The part is then loaded exactly as `--steps A-B` / `--window`
//! load it (`select`), so its numbers are those of that flag.

use std::path::Path;

use super::select::{self, Part};
use crate::memory::Shortfall;
use crate::model::events::EventKind;

/// What a part needs, in units of the whole load's estimate: `FIXED` whatever the
/// part (the passes over the whole file, the correlation ids of every host slice, the
/// names), plus `PER_SHARE` times its share of the span. Measured with `grove tree`
/// on a 1 GB generated trace (estimate 716 MiB; VmHWM of the whole 982 MB, of
/// `--steps 2-100` (5% of the span) 188 MB, of `--steps 2-611` (34%) 408 MB), with
/// some margin.
pub const FIXED: f64 = 0.25;
pub const PER_SHARE: f64 = 1.25;
/// The share of the limit a part may need: an address-space limit (`ulimit -v`)
/// counts what the allocator reserves too (VmPeak ran 10-20% above VmHWM).
pub const HEADROOM: f64 = 0.9;

/// The share of a whole load's real need (`shortfall`) that stays on the heap when its
/// big blocks are spilled (`memory::spill`), and the least it is: on the generated
/// 1 GB and 10 GB traces (needs of 500 MiB and 4.9 GiB) the heap's part peaked at
/// 13-32 MiB, `info` to the TUI (docs/performance.md, "A trace larger than memory,
/// whole"); a trace with more small blocks (long names, many threads) keeps more, so
/// the margin is wide.
pub const ANON_SHARE: f64 = 0.1;
pub const MIN_ANON: u64 = 64 << 20;

thread_local! {
    /// Set while a load that does not fit loads whole on this thread, its big arrays
    /// spilled (another thread's load is asked as usual).
    static WHOLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the load running now on this thread was let through whole by [`spill`].
pub fn loading_whole() -> bool {
    WHOLE.with(|w| w.get())
}

/// Runs `f` (the load) whole, spilled: the shortfall is not asked again.
pub fn whole<T>(f: impl FnOnce() -> T) -> T {
    let was = WHOLE.with(|w| w.replace(true));
    let out = f();
    WHOLE.with(|w| w.set(was));
    out
}

/// Whether a JSON trace that does not fit can load whole with its big arrays in mapped
/// files (`memory::spill`), and if so spill mode on, into the directory returned. Err
/// says why not: an empty string when spilling would not help at all (not a JSON
/// trace, or the part that stays on the heap does not fit either), else a clause for
/// the leading-steps warning. Spilling cannot help under an address-space limit
/// (`ulimit -v`): mapped files count there as memory does.
pub fn spill(short: &Shortfall) -> Result<std::path::PathBuf, String> {
    use crate::memory::spill;
    spill_helps(short, crate::memory::address_space_budget())?;
    let dir = spill::choose_dir(short.need)
        .map_err(|why| format!("no local disk to spill its arrays to: {why}"))?;
    spill::enable(&dir, spill::DEFAULT_THRESHOLD)
        .map_err(|e| format!("not spilled to disk: {e}"))?;
    Ok(dir)
}

/// `spill`'s rule before it looks for a directory, given what an address-space limit
/// leaves (None: no such limit).
fn spill_helps(short: &Shortfall, address_space: Option<u64>) -> Result<(), String> {
    if short.what != "JSON trace" {
        return Err(String::new());
    }
    let anon = ((short.need as f64 * ANON_SHARE) as u64).max(MIN_ANON);
    if anon as f64 > short.limit as f64 * HEADROOM {
        return Err(String::new());
    }
    match address_space {
        Some(b) if short.need as f64 > b as f64 * HEADROOM => Err(
            "not spilled to disk: mapped files count against the address-space limit (ulimit -v) as memory does".into(),
        ),
        _ => Ok(()),
    }
}

/// The warning of a load that `spill` let through whole.
pub fn spilled_note(short: &Shortfall, dir: &Path) -> String {
    let (now, _) = crate::memory::spill::bytes();
    format!(
        "loaded whole with {} of its arrays in mapped files under {} (the memory limit is {}, {}: the whole trace needs ~{}); --steps, --window or --low-memory load less",
        crate::memory::human(now),
        dir.display(),
        crate::memory::human(short.limit),
        short.source,
        crate::memory::human(short.need),
    )
}

/// `GROVE_SPILL=SIZE` (tests): spill mode on for every load, every block of SIZE
/// bytes or more (at least a page) in a mapped file, when a directory is usable;
/// nothing said either way, so the outputs stay those of a load in memory.
pub fn forced_spill() {
    use crate::memory::spill;
    if spill::is_on() {
        return;
    }
    let Some(size) = std::env::var("GROVE_SPILL")
        .ok()
        .and_then(|v| crate::memory::parse_size(&v))
    else {
        return;
    };
    if let Ok(dir) = spill::choose_dir(0) {
        let _ = spill::enable(&dir, size as usize);
    }
}

/// What a load that does not fit does instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The part to load in place of the whole trace.
    pub part: Part,
    /// The warning every profile of the load carries.
    pub note: String,
}

/// Whether a load of this input must be cut (a Chrome trace: `choose` a part) or
/// refused (another format, `memory::shortfall`); None when it fits. For a JSON trace
/// the whole load is taken at what it really needs (`FIXED + PER_SHARE` times the
/// lower-bound estimate) within [`HEADROOM`] of the limit, as a part is: a trace the
/// lower bound lets through can still run out of memory (the 1 GB trace under
/// `prlimit --as=800M`), and cutting it costs nothing that loads today.
pub fn shortfall(path: &Path, size: u64, head: &[u8]) -> Option<Shortfall> {
    let (need, what) = crate::memory::estimate(path, size, head)?;
    if what != "JSON trace" {
        return crate::memory::shortfall(path, size, head);
    }
    let (limit, source) = crate::memory::limit();
    let need = (need as f64 * (FIXED + PER_SHARE)) as u64;
    (need as f64 > limit as f64 * HEADROOM).then_some(Shortfall {
        need,
        size,
        what,
        limit,
        source,
    })
}

/// Whether the whole of the regular file `path` loads as it is (true when it cannot
/// be told): not cut to a part, not refused.
pub fn fits(path: &Path) -> bool {
    use std::io::Read;
    let Ok(meta) = std::fs::metadata(path) else {
        return true;
    };
    // Only a regular file is measured in advance: the head of a FIFO or a pipe
    // (`/dev/stdin`, `<(cmd)`) read here would be gone for the load.
    if !meta.is_file() {
        return true;
    }
    let mut head = vec![0u8; 4096];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    head.truncate(n);
    shortfall(path, meta.len(), &head).is_none()
}

/// The trace's span and steps from the first pass, in the event table's time (ns).
struct Steps {
    origin: i64,
    last: i64,
    /// `(N, start, end)` of every `ProfilerStep#N` slice on a host thread, by start.
    steps: Vec<(u64, i64, i64)>,
}

/// The part of `path` to load in place of a whole that needs more than `short.limit`;
/// the refusal (one line) when no part can be chosen: not a Chrome trace that can be
/// read twice, or not even one step fits.
pub fn choose(path: &Path, short: &Shortfall) -> Result<Fitted, String> {
    let found = if short.what == "JSON trace" {
        scan(path)
    } else {
        None
    };
    let Some(s) = found else {
        return Err(short.refusal());
    };
    let span = (s.last - s.origin).max(1) as f64;
    // `short.need` is the whole load's real need (`shortfall`); back to the estimate.
    let whole = short.need as f64 / (FIXED + PER_SHARE);
    // What a part covering `[lo, hi)` needs ([`FIXED`], [`PER_SHARE`]).
    let need = |lo: i64, hi: i64| whole * (FIXED + PER_SHARE * ((hi - lo).max(0) as f64 / span));
    // The whole-load estimate is a lower bound (it must never refuse what loads); a
    // part must fit with room to spare. A 1 GB trace under a 400 MiB address-space
    // limit ran out of memory with a part estimated in plain proportion to its span.
    let limit = short.limit as f64 * HEADROOM;
    let why = short.explain();
    if let Some(&(first, lo, _)) = s.steps.first() {
        let mut fit: Option<(u64, i64)> = None;
        for &(n, _, end) in &s.steps {
            // A leading range: steps are numbered in time order.
            if need(lo, end) > limit {
                break;
            }
            fit = Some((n, end));
        }
        let Some((last_step, _)) = fit else {
            return Err(format!(
                "needs at least {} of memory to load (a {} {}), but grove may use {} ({}), and not even ProfilerStep#{first} fits; load a smaller part (--window START-END) or raise the limit (--max-memory SIZE)",
                crate::memory::human(short.need),
                crate::memory::human(short.size),
                short.what,
                crate::memory::human(short.limit),
                short.source
            ));
        };
        let part = Part::Steps(first, last_step);
        let (a, b) = (first, s.steps.last().map(|x| x.0).unwrap_or(first));
        let note = format!(
            "loaded {} of {} (ProfilerStep#{a} to #{b}): {why}; --steps, --window or --low-memory choose another part",
            part.describe(),
            s.steps.len()
        );
        return Ok(Fitted { part, note });
    }
    // No steps: the leading window that fits, in whole microseconds (the unit of
    // the trace's own times).
    let share = ((limit / whole - FIXED) / PER_SHARE).clamp(0.0, 1.0);
    let w = ((span * share) as i64 / 1_000) * 1_000;
    if w <= 0 {
        return Err(short.refusal());
    }
    let part = Part::Window(0, w);
    let note = format!(
        "loaded the {} of a trace lasting {}: {why}; --steps, --window or --low-memory choose another part",
        part.describe(),
        secs(s.last - s.origin)
    );
    Ok(Fitted { part, note })
}

fn secs(ns: i64) -> String {
    format!("{:.3}s", ns as f64 / 1e9)
}

/// The first pass: the span and the steps; None when the file cannot be read as a
/// Chrome trace or has no events.
fn scan(path: &Path) -> Option<Steps> {
    let select::FirstPass {
        tr, origin, last, ..
    } = select::first_pass(path)?;
    let ev = &tr.events;
    if last <= origin {
        return None;
    }
    let mut steps: Vec<(u64, i64, i64)> = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Cpu)
        .filter_map(|i| {
            let n = ev.name_of(i).strip_prefix("ProfilerStep#")?.parse().ok()?;
            Some((n, ev.ts[i], ev.ts[i].saturating_add(ev.dur[i])))
        })
        .collect();
    // The same step on several threads (or a B/E pair and an X): its widest span.
    steps.sort_unstable();
    steps.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 = a.1.min(b.1);
            a.2 = a.2.max(b.2);
            true
        } else {
            false
        }
    });
    Some(Steps {
        origin,
        last,
        steps,
    })
}

/// Loads with `part` selected for this one load (the run's `--steps`/`--window` are
/// none, or no part would be chosen), then selects nothing again.
pub fn with_part<T>(part: Part, f: impl FnOnce() -> T) -> T {
    select::set(Some(part));
    let out = f();
    select::set(None);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short(need: u64, limit: u64, what: &'static str) -> Shortfall {
        Shortfall {
            need,
            size: need * 2,
            what,
            limit,
            source: "the cgroup memory limit",
        }
    }

    #[test]
    fn spilling_is_chosen_only_where_it_helps() {
        const G: u64 = 1 << 30;
        // The 10 GB trace under 2 GiB: the heap's part (0.1 x 5 GiB) fits.
        assert_eq!(
            spill_helps(&short(5 * G, 2 * G, "JSON trace"), None),
            Ok(())
        );
        // A limit not far above what grove holds before it loads: the leading steps.
        assert_eq!(
            spill_helps(&short(300 << 10, 180 << 10, "JSON trace"), None),
            Err(String::new())
        );
        // The heap's part alone is past the limit.
        assert_eq!(
            spill_helps(&short(20 * G, 2 * G, "JSON trace"), None),
            Err(String::new())
        );
        // Other formats are refused as before.
        assert_eq!(
            spill_helps(&short(5 * G, 2 * G, "Hatchet literal"), None),
            Err(String::new())
        );
        // Under an address-space limit the mappings count: said in the warning.
        let e = spill_helps(&short(5 * G, 2 * G, "JSON trace"), Some(3 * G)).unwrap_err();
        assert!(e.contains("ulimit -v"), "{e}");
        // One that holds the whole load does not stop it (the cgroup is the limit).
        assert_eq!(
            spill_helps(&short(5 * G, 2 * G, "JSON trace"), Some(8 * G)),
            Ok(())
        );
    }
}
