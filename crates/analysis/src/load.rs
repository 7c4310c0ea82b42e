//! From the paths a user gives to profiles: expanding directories and quoted globs,
//! loading each input with the reader that claims it (`crate::readers`), and assembling
//! several profiles into one ensemble (`crate::ensemble`). This is the layer above the
//! readers; readers never reach up here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::ensemble::{labels, unify};
use crate::model::{Format, Profile};
use crate::readers::{self, hpctoolkit, LoadError};

/// What `grove FILES...` opens: no input is the demo, one input its profile (the
/// union of the profiles it holds), several inputs (after expanding directories and
/// globs) an ensemble labelled by `given` (file stem or position -> label).
pub fn load_inputs(
    files: &[PathBuf],
    given: &HashMap<String, String>,
) -> Result<Profile, LoadError> {
    if let Some(p) = load_summaries(files, given).map_err(|msg| LoadError {
        path: files
            .first()
            .map(|f| f.display().to_string())
            .unwrap_or_default(),
        msg,
    })? {
        return Ok(p);
    }
    let (expanded, skipped) = expand_inputs_noting(files)?;
    let mut p = if expanded.len() == 1 && given.is_empty() {
        load_path(&expanded[0])?
    } else if expanded.is_empty() {
        return Ok(readers::load_demo());
    } else {
        load_ensemble(&expanded, given)?
    };
    // Files of a directory passed over are said, never silently dropped.
    p.warnings.extend(skipped);
    Ok(p)
}

/// A profile opened through grove's cache (`summary::cache`).
pub struct Cached {
    pub profile: Profile,
    /// The tree came from the cache: the event table is not loaded (load `path` for it).
    pub warm: Option<PathBuf>,
    /// Writing the cache failed (a warning for the user, never an error).
    pub cache_warning: Option<String>,
    /// A cold load whose cache entry is still to be written (`defer_cache_store`):
    /// the caller writes it once the tree is on screen (`store_later`).
    pub store: Option<PathBuf>,
}

/// The TUI writes a cold load's cache entry after its first frame (it costs seconds
/// on a large trace); headless commands write it before they print.
static DEFER_STORE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `load_inputs_cached` leaves a miss's cache write to its caller (`Cached::store`).
pub fn defer_cache_store(on: bool) {
    DEFER_STORE.store(on, Ordering::SeqCst);
}

/// The cache write of a cold load left for later: a copy of the tree (not the
/// events) to write on another thread; the job gives the warning when it fails.
pub fn store_later(path: PathBuf, p: &Profile) -> impl FnOnce() -> Option<String> + Send {
    let tree = Profile {
        call_graph: None,
        source: p.source.clone(),
        dialect: p.dialect.clone(),
        cct: p.cct.clone(),
        metrics: p.metrics.clone(),
        events: None,
        counters: None,
        meta: p.meta.clone(),
        warnings: p.warnings.clone(),
        default_metric: p.default_metric.clone(),
    };
    move || crate::summary::cache::store(&path, &tree).err()
}

/// `load_inputs` through the cache: one large regular trace file, unlabelled, opens
/// from an up-to-date cache entry without its events; on a miss it loads cold and
/// keeps the tree in the cache. Anything else (several inputs, directories, small
/// files, `use_cache` off) is `load_inputs`.
pub fn load_inputs_cached(
    files: &[PathBuf],
    given: &HashMap<String, String>,
    et: Option<&Path>,
    use_cache: bool,
) -> Result<Cached, LoadError> {
    // An execution trace attaches through the trace's events, which a cached tree
    // lacks, and the cache's stamp does not cover it: such inputs always load cold.
    // A part of a trace (`--steps`, `--window`) is neither what the cache holds nor
    // what it should keep.
    // Neither is a trace too big for memory: it loads a part of itself (`readers::fit`).
    let use_cache = use_cache
        && readers::select::current().is_none()
        && files.iter().all(|f| readers::fit::fits(f));
    let single = match files {
        [f] if use_cache
            && et.is_none()
            && et_file_beside(f).is_none()
            && given.is_empty()
            && crate::summary::cache::applies(f)
            && crate::summary::read::find(files).is_none() =>
        {
            Some(f)
        }
        _ => None,
    };
    let Some(f) = single else {
        return Ok(Cached {
            profile: load_inputs_et(files, given, et)?,
            warm: None,
            cache_warning: None,
            store: None,
        });
    };
    if let Some(profile) = crate::summary::cache::lookup(f) {
        return Ok(Cached {
            profile,
            warm: Some(f.clone()),
            cache_warning: None,
            store: None,
        });
    }
    let profile = load_path(f)?;
    // The cache keeps the tree, not a call graph: a profile with one (whose tree is
    // estimated from it, which the header must say) is not kept.
    if profile.call_graph.is_some() {
        return Ok(Cached {
            profile,
            warm: None,
            cache_warning: None,
            store: None,
        });
    }
    if DEFER_STORE.load(Ordering::SeqCst) {
        return Ok(Cached {
            profile,
            warm: None,
            cache_warning: None,
            store: Some(f.clone()),
        });
    }
    let cache_warning = crate::summary::cache::store(f, &profile).err();
    Ok(Cached {
        profile,
        warm: None,
        cache_warning,
        store: None,
    })
}

/// Loads one profile: the input's only one, or the union of the several it holds
/// (ranks, threads), with one metric column per profile. An HPCToolkit database gets
/// its trace.db timeline on the tree shown.
pub fn load_path(path: &Path) -> Result<Profile, LoadError> {
    let mut p = load_path_alone(path)?;
    if let Some(et) = et_beside(path, &p) {
        // Found by name, not asked for: a bad one is a warning, the trace still opens.
        if let Err(e) = attach_et(&mut p, &et) {
            p.warnings
                .push(format!("execution trace not attached: {e}"));
        }
    }
    reduce(&mut p);
    Ok(p)
}

/// Low-memory mode (`memory::low_memory`): once the tree, its metrics and anything
/// attached through the events are done, the event rows give way to their
/// level-of-detail summary (`gpu::lod`); `grove info` says so under metadata.
pub fn reduce(p: &mut Profile) {
    if crate::memory::low_memory() {
        to_low_memory(p);
    }
}

/// Reduces a trace's events to their level-of-detail summary, whatever the mode.
pub fn to_low_memory(p: &mut Profile) {
    let Some(ev) = p.events.as_mut().filter(|ev| ev.lod.is_none()) else {
        return;
    };
    let rows = ev.len();
    crate::gpu::lod::reduce(ev, &crate::gpu::classify::Categories::builtin());
    // Counter samples are rows too; the timeline's counter tracks go with them.
    p.counters = None;
    // glibc keeps freed memory in its arenas; hand the rows' pages back to the system,
    // or the process stays as large as the full load.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's arenas.
    unsafe {
        libc::malloc_trim(0);
    }
    let lanes = ev.lod.as_ref().map(|l| l.lanes.len()).unwrap_or(0);
    p.meta.push((
        "low-memory".into(),
        format!(
            "level of detail: {rows} event rows reduced to {lanes} GPU lane(s) of {} buckets and every GPU activity's duration",
            crate::model::lod::BUCKETS
        ),
    ));
}

/// `grove FILES --et ET`: the inputs as `load_inputs` opens them, with the execution
/// trace `et` attached to the one trace (an error when it cannot be).
pub fn load_inputs_et(
    files: &[PathBuf],
    given: &HashMap<String, String>,
    et: Option<&Path>,
) -> Result<Profile, LoadError> {
    let Some(et) = et else {
        return load_inputs(files, given);
    };
    let (expanded, skipped) = expand_inputs_noting(files)?;
    if expanded.len() != 1 {
        return Err(LoadError {
            path: et.display().to_string(),
            msg: "--et attaches to one trace; give one input".into(),
        });
    }
    let mut p = load_path_alone(&expanded[0])?;
    p.warnings.extend(skipped);
    attach_et(&mut p, et)?;
    reduce(&mut p);
    Ok(p)
}

/// Reads the execution trace at `et` and attaches it to the trace `p`
/// (`readers::et::attach`); the correlation summary goes to `p`'s metadata.
pub fn attach_et(p: &mut Profile, et: &Path) -> Result<readers::et::attach::Report, LoadError> {
    let err = |msg: String| LoadError {
        path: et.display().to_string(),
        msg,
    };
    let file = std::fs::File::open(et).map_err(|e| err(e.to_string()))?;
    let (mut input, _) = readers::decompressed(file).map_err(err)?;
    let parsed = readers::et::parse(&mut input).map_err(err)?;
    let label = et
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| et.display().to_string());
    readers::et::attach::attach(p, &parsed, &label).map_err(err)
}

/// The execution trace saved beside a Kineto trace under the same name: for
/// `NAME_trace.json[.gz]`, `NAME.pt.trace.json[.gz]` or `NAME.json[.gz]`, the first of
/// `NAME_et.json.gz`, `NAME_et.json`, `NAME.et.json.gz`, `NAME.et.json` that exists.
pub fn et_beside(path: &Path, p: &Profile) -> Option<PathBuf> {
    if p.source.format != Format::ChromeTrace || p.events.is_none() {
        return None;
    }
    et_file_beside(path)
}

/// The file `et_beside` would attach, by name alone.
fn et_file_beside(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let base = name.strip_suffix(".gz").unwrap_or(name);
    let base = base.strip_suffix(".json")?;
    // `NAME.kineto.json` (the PyTorch profiler's own name) pairs with `NAME.et.json`.
    let stem = [".pt.trace", "_trace", ".trace", ".kineto", "_kineto"]
        .iter()
        .find_map(|s| base.strip_suffix(s))
        .unwrap_or(base);
    let dir = path.parent().unwrap_or(Path::new(""));
    ["_et.json.gz", "_et.json", ".et.json.gz", ".et.json"]
        .iter()
        .map(|suffix| dir.join(format!("{stem}{suffix}")))
        .find(|c| c.is_file())
}

/// One input as its reader gives it, without an execution trace found beside it.
fn load_path_alone(path: &Path) -> Result<Profile, LoadError> {
    let mut all = readers::load_all(path)?;
    let mut p = if all.len() == 1 {
        all.remove(0)
    } else {
        let labels = labels(&all, &Default::default());
        unify(&all, &labels)
    };
    if p.source.format == Format::HpcToolkit && p.events.is_none() {
        let dir = if path.is_dir() {
            path
        } else {
            path.parent().unwrap_or(Path::new("."))
        };
        let profiles = if all.is_empty() {
            std::slice::from_ref(&p)
        } else {
            &all[..]
        };
        // The profiles stand without their traces: a bad trace.db is a warning.
        match hpctoolkit::timeline::trace_events(dir, profiles, &p.cct) {
            Ok(ev) => p.events = ev,
            Err(e) => p.warnings.push(format!("timeline not loaded: {e}")),
        }
    }
    if all.is_empty() {
        return Ok(p);
    }
    p.source.path = Some(path.to_path_buf());
    p.source.label = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok(p)
}

/// How many levels of sub-directories below a directory given as input are searched
/// for profiles: Thicket's RAJAPerf layout (`<machine>/<config>/<opt>/<run>/<file>.cali`)
/// is four deep.
pub const DIR_DEPTH: usize = 4;

/// Files to open: directories (other than those a reader claims, HPCToolkit databases) give their files,
/// sorted; hidden files, READMEs and licences are skipped. Sub-directories are searched
/// too, down to [`DIR_DEPTH`] levels: there a database is one input. At every level only
/// files a reader claims are taken: sources, logs and notes beside the runs (`mod_a.py`
/// beside pstats files, a `.stderr.txt` beside callgrind outputs) are passed over, and
/// `expand_inputs_noting` says which. A quoted glob (`'runs/rank-*/trace.json'`: shells
/// on some clusters cap the length of an expanded command line) gives its matches,
/// sorted, every one of them an input.
pub fn expand_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    expand_inputs_noting(paths).map(|(found, _)| found)
}

/// `expand_inputs`, with a note per directory whose files were passed over (for the
/// profile's warnings: what was skipped is never silent).
pub fn expand_inputs_noting(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<String>), LoadError> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut globbed = Vec::new();
    for p in paths {
        let text = p.to_string_lossy();
        if !p.exists() && text.contains(['*', '?', '[']) {
            let err = |msg: String| LoadError {
                path: text.to_string(),
                msg,
            };
            let mut hits: Vec<PathBuf> = glob::glob(&text)
                .map_err(|e| err(format!("bad pattern at column {}: {}", e.pos + 1, e.msg)))?
                .filter_map(Result::ok)
                .filter(|x| !is_aside(x))
                .collect();
            hits.sort_by(|a, b| crate::present::format::natural_path_cmp(a, b));
            if hits.is_empty() {
                return Err(err("no file matches the pattern".into()));
            }
            globbed.extend(hits);
        } else {
            globbed.push(p.clone());
        }
    }
    for p in &globbed {
        if p.is_dir() && !readers::claims_dir(p) {
            // A directory that is one input in a format grove does not read (OTF2,
            // Projections, TAU, hpcrun measurements) is refused whole, not read file
            // by file into a made-up ensemble.
            if let Some(what) = readers::describe::describe(&readers::Probe::dir(p)) {
                return Err(LoadError {
                    path: p.display().to_string(),
                    msg: format!("{what}, which grove does not read"),
                });
            }
            let mut walk = Walk::default();
            walk.dir(p, 0).map_err(|e| LoadError {
                path: p.display().to_string(),
                msg: e.to_string(),
            })?;
            if walk.found.is_empty() {
                return Err(LoadError {
                    path: p.display().to_string(),
                    msg: walk.nothing_found(p),
                });
            }
            notes.extend(walk.skipped_note(p));
            out.extend(walk.found);
        } else {
            out.push(p.clone());
        }
    }
    Ok((out, notes))
}

/// A directory searched for profiles: what was taken, and what was passed over (for
/// the message when nothing was taken).
#[derive(Default)]
struct Walk {
    found: Vec<PathBuf>,
    /// Files passed over, by extension, with the depth below the directory given at
    /// which the first of them sat (for the glob the error suggests).
    skipped: std::collections::BTreeMap<String, (usize, usize)>,
    /// The files passed over, relative to the directory given, in walk order.
    skipped_files: Vec<PathBuf>,
    dirs: usize,
    /// Sub-directories below the depth searched.
    too_deep: usize,
}

impl Walk {
    fn dir(&mut self, dir: &Path, depth: usize) -> std::io::Result<()> {
        self.dir_below(dir, dir, depth)
    }

    fn dir_below(&mut self, top: &Path, dir: &Path, depth: usize) -> std::io::Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|x| !is_aside(x))
            .collect();
        entries.sort_by(|a, b| crate::present::format::natural_path_cmp(a, b));
        let (files, dirs): (Vec<PathBuf>, Vec<PathBuf>) =
            entries.into_iter().partition(|x| !x.is_dir());
        for f in files.into_iter().filter(|f| f.is_file()) {
            // Only profiles, at every level: a run's directory holds its sources and
            // logs too, and one of them used to fail the whole directory.
            if readers::claims_file(&f) {
                self.found.push(f);
            } else {
                let ext = f
                    .extension()
                    .map(|e| format!("*.{}", e.to_string_lossy()))
                    .unwrap_or_else(|| "no extension".into());
                self.skipped.entry(ext).or_insert((0, depth)).0 += 1;
                self.skipped_files
                    .push(f.strip_prefix(top).unwrap_or(&f).to_path_buf());
            }
        }
        for d in dirs {
            if readers::claims_dir(&d) {
                self.found.push(d);
            } else if depth < DIR_DEPTH {
                self.dirs += 1;
                self.dir_below(top, &d, depth + 1)?;
            } else {
                self.too_deep += 1;
            }
        }
        Ok(())
    }

    /// The error for a directory where no profile was found: what it holds, and a
    /// glob to name the files with.
    fn nothing_found(&self, dir: &Path) -> String {
        if self.dirs == 0 && self.too_deep == 0 && self.skipped.is_empty() {
            return "the directory holds no files".into();
        }
        let mut what: Vec<String> = self
            .skipped
            .iter()
            .map(|(ext, (n, _))| format!("{n} {ext}"))
            .collect();
        if what.is_empty() {
            what.push("no files".into());
        }
        let mut msg = format!(
            "no profile found in it or in {} sub-director{} down to {DIR_DEPTH} levels ({} no reader claims)",
            self.dirs,
            if self.dirs == 1 { "y" } else { "ies" },
            what.join(", ")
        );
        if self.too_deep > 0 {
            msg.push_str(&format!(
                "; {} director{} deeper were not searched",
                self.too_deep,
                if self.too_deep == 1 { "y" } else { "ies" }
            ));
        }
        // The glob reaches the files where they are: `DIR/*.py` for files in the
        // directory itself, `DIR/*/*/*.cali` two levels down.
        let (ext, depth) = self
            .skipped
            .iter()
            .find(|(e, _)| e.starts_with("*."))
            .map(|(e, &(_, d))| (e.as_str(), d))
            .unwrap_or((
                "*",
                self.skipped.values().map(|&(_, d)| d).min().unwrap_or(1),
            ));
        msg.push_str(&format!(
            "; name the files with a quoted glob, e.g. '{}/{}{ext}'",
            dir.display(),
            "*/".repeat(depth)
        ));
        msg
    }

    /// The note for files passed over in a directory where profiles were found.
    fn skipped_note(&self, dir: &Path) -> Option<String> {
        const SHOWN: usize = 5;
        let n = self.skipped_files.len();
        if n == 0 {
            return None;
        }
        let mut names: Vec<String> = self
            .skipped_files
            .iter()
            .take(SHOWN)
            .map(|f| f.display().to_string())
            .collect();
        if n > SHOWN {
            names.push(format!("and {} more", n - SHOWN));
        }
        Some(format!(
            "{}: skipped {n} file{} no reader claims ({}); name a file to see why it is not read",
            dir.display(),
            if n == 1 { "" } else { "s" },
            names.join(", ")
        ))
    }
}

/// Files that travel with profiles but are not one: dot files, READMEs, licences.
fn is_aside(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.starts_with('.')
        || name.ends_with(".md")
        || name.ends_with(".txt") && (name.starts_with("readme") || name.starts_with("license"))
        || matches!(
            name.as_str(),
            "readme" | "license" | "licence" | "copying" | "manifest"
        )
}

/// One file's result, filled by whichever worker loaded it.
type Slot = Mutex<Option<Result<Vec<Profile>, LoadError>>>;

/// Loads files in parallel (a few workers, so memory stays bounded: each profile drops
/// its event table once its tree is built) and merges them.
pub fn load_ensemble(
    files: &[PathBuf],
    given: &HashMap<String, String>,
) -> Result<Profile, LoadError> {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 8);
    let next = AtomicUsize::new(0);
    let slots: Vec<Slot> = files.iter().map(|_| Mutex::new(None)).collect();
    // The workers count into the caller's progress (the loading screen's bar).
    let progress = readers::progress::current();
    let keep = keep_events(files);
    let dropped = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..workers.min(files.len()) {
            let progress = progress.clone();
            let (next, slots, dropped) = (&next, &slots, &dropped);
            s.spawn(move || {
                let _attached = progress.map(readers::progress::attach);
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(f) = files.get(i) else { break };
                    let r = readers::load_all(f).map(|ps| {
                        ps.into_iter()
                            .map(|mut p| {
                                // Past `keep_events`' budget the ensemble shows trees
                                // and metrics only: per-event tables would hold every
                                // rank's trace in memory at once.
                                if !keep && p.events.take().is_some() {
                                    dropped.store(true, Ordering::Relaxed);
                                }
                                if !keep {
                                    p.counters = None;
                                }
                                p
                            })
                            .collect()
                    });
                    *slots[i].lock().unwrap() = Some(r);
                }
            });
        }
    });
    let mut profiles = Vec::new();
    for slot in slots {
        let ps = slot.into_inner().unwrap().expect("every file was loaded")?;
        profiles.extend(ps);
    }
    let mut labels = labels(&profiles, given);
    if given.is_empty() {
        thread_labels(&profiles, &mut labels);
    }
    let mut e = with_events(profiles.as_mut_slice(), &labels);
    e.warnings.extend(mixed_kinds(&profiles));
    if dropped.load(Ordering::Relaxed) {
        e.warnings.push(format!(
            "the ensemble's traces are over {} MiB together: their events are not kept, \
             so there is no timeline (open fewer at once for it)",
            ENSEMBLE_EVENTS_BYTES >> 20
        ));
    }
    Ok(e)
}

/// Inputs up to this size together keep their events in an ensemble (its timeline).
const ENSEMBLE_EVENTS_BYTES: u64 = 1 << 30;

fn keep_events(files: &[PathBuf]) -> bool {
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    bytes <= ENSEMBLE_EVENTS_BYTES
}

/// The union of `profiles`; when every member has events, theirs merged for the
/// timeline (`ensemble::events`), each member's lanes under its label.
fn with_events(profiles: &mut [Profile], labels: &[String]) -> Profile {
    let all = profiles
        .iter()
        .all(|p| p.events.as_ref().is_some_and(|e| e.lod.is_none()));
    let mut u = crate::ensemble::Union::default();
    let mut members = Vec::new();
    for (p, label) in profiles.iter_mut().zip(labels) {
        let nodes = u.add(p);
        let (events, counters) = (p.events.take(), p.counters.take());
        if let (true, Some(events)) = (all, events) {
            members.push(crate::ensemble::events::Member {
                label: label.clone(),
                events,
                counters,
                nodes,
            });
        }
    }
    let mut e = u.finish(labels);
    if !members.is_empty() {
        let (ev, counters, note) = crate::ensemble::events::merge(members);
        e.events = Some(ev);
        e.counters = Some(counters);
        e.warnings.extend(note);
    }
    e
}

/// The warning for an ensemble whose members are of different kinds: formats, or
/// dialects of one format that measure different things (cachegrind's cache events
/// beside callgrind's calls). They still open as one ensemble (the user may mean to put
/// them side by side), but a column one kind lacks is empty for the other's members,
/// and their statistics mix unlike runs: that is said, with the count of each kind.
pub fn mixed_kinds(profiles: &[Profile]) -> Option<String> {
    let kind = |p: &Profile| {
        if p.dialect.is_empty() {
            p.source.format.label().to_string()
        } else {
            p.dialect.clone()
        }
    };
    let mut kinds: Vec<(String, usize, Vec<String>, Format)> = Vec::new();
    for p in profiles {
        let k = kind(p);
        match kinds.iter_mut().find(|x| x.0 == k) {
            Some(x) => x.1 += 1,
            None => kinds.push((k, 1, p.metrics.names(), p.source.format)),
        }
    }
    let formats_differ = kinds.iter().any(|k| k.3 != kinds[0].3);
    // Dialects of one format with the same metrics (two versions of one profiler's
    // trace) are alike enough to compare.
    let metrics_differ = kinds.iter().any(|k| {
        let mut a = k.2.clone();
        let mut b = kinds[0].2.clone();
        a.sort();
        b.sort();
        a != b
    });
    if kinds.len() < 2 || !(formats_differ || metrics_differ) {
        return None;
    }
    let counts: Vec<String> = kinds
        .iter()
        .map(|(k, n, _, _)| format!("{n} {k}"))
        .collect();
    Some(format!(
        "the inputs are of {} kinds ({}), opened as one ensemble: a metric one kind lacks \
         is empty for its members; give one kind (a quoted glob such as 'DIR/cachegrind.*') \
         to compare like with like",
        kinds.len(),
        counts.join(", ")
    ))
}

fn run_pid(p: &Profile) -> Option<&str> {
    p.meta_value("pid").map(str::trim)
}

/// callgrind's `--separate-threads` writes one file per thread of a run
/// (`callgrind.out.PID-01`, `-02`, ...), each with `pid:` and `thread:` headers. Given
/// together (or as their directory) they are one ensemble with a member per thread,
/// labelled `thread1`, `thread2`, ... rather than by their shared file stem.
fn thread_labels(profiles: &[Profile], labels: &mut [String]) {
    let thread = |p: &Profile| {
        (p.source.format == Format::Callgrind)
            .then(|| p.meta_value("thread")?.trim().parse::<u64>().ok())
            .flatten()
    };
    let Some(first) = profiles.first() else {
        return;
    };
    let one_run = profiles.len() > 1
        && profiles
            .iter()
            .all(|p| thread(p).is_some() && run_pid(p) == run_pid(first));
    let mut threads: Vec<u64> = profiles.iter().filter_map(thread).collect();
    threads.sort_unstable();
    threads.dedup();
    if !one_run || threads.len() != profiles.len() {
        return;
    }
    for (l, p) in labels.iter_mut().zip(profiles) {
        if let Some(t) = thread(p) {
            *l = format!("thread{t}");
        }
    }
}

/// Summaries (`grove summarize`; files `NAME.cct.parquet` or directories of them) as
/// one ensemble, read in parallel, without touching the traces; None when the inputs
/// are not all summaries.
pub fn load_summaries(
    files: &[PathBuf],
    given: &HashMap<String, String>,
) -> Result<Option<Profile>, String> {
    let Some(found) = crate::summary::read::find(files) else {
        return Ok(None);
    };
    if found.len() == 1 && given.is_empty() {
        return crate::summary::read::read(&found[0]).map(Some);
    }
    // Read on every core, merged in input order as they arrive (the union is then the
    // one `unify` builds from all of them), each member dropped once merged: holding
    // 10,000 whole summaries until the union was built took gigabytes.
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 8);
    let next = AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    let mut union = crate::ensemble::Union::default();
    let merged: Result<(), String> = std::thread::scope(|s| {
        let (tx, rx) =
            std::sync::mpsc::sync_channel::<(usize, Result<Profile, String>)>(4 * workers);
        for _ in 0..workers.min(found.len()) {
            let tx = tx.clone();
            let (next, failed, found) = (&next, &failed, &found);
            s.spawn(move || {
                let mut strings = crate::summary::read::Strings::serial();
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(f) = found.get(i) else { break };
                    let r = crate::summary::read::read_with(f, &mut strings);
                    if tx.send((i, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Out-of-order arrivals wait here for their turn (a few: workers take files in
        // order).
        let mut waiting: std::collections::BTreeMap<usize, Result<Profile, String>> =
            Default::default();
        let mut turn = 0;
        for (i, r) in rx {
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&turn) {
                match r {
                    Ok(p) => {
                        union.add(&p);
                    }
                    Err(e) => {
                        // The first bad summary in input order is the error reported.
                        failed.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
                turn += 1;
            }
        }
        if turn < found.len() {
            return Err("a summary reader failed".into());
        }
        Ok(())
    });
    merged?;
    let labels = labels(union.members(), given);
    Ok(Some(union.finish(&labels)))
}
