//! Inputs: paths from the command line to one `Profile` (a file, a directory or glob
//! of an ensemble, or the embedded demo). The shell's only loading glue, so that it
//! can be pointed at the loading layer in one place.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use grove::model::Profile;
use grove::readers;

/// `--strict`: a load warning is an error.
static STRICT: AtomicBool = AtomicBool::new(false);
/// A headless command: load warnings go to stderr (the TUI shows them itself).
static HEADLESS: AtomicBool = AtomicBool::new(false);

/// How load warnings are reported, for the whole run (set once from the command line).
pub fn set_warnings(strict: bool, headless: bool) {
    STRICT.store(strict, Ordering::Relaxed);
    HEADLESS.store(headless, Ordering::Relaxed);
}

/// At most this many warning lines on stderr; the rest is counted.
const MAX_WARNING_LINES: usize = 10;

/// Every loaded profile passes here: under `--strict` a warning is the error (exit code
/// 2); in a headless command each warning is one stderr line, capped with a count.
fn checked(p: Profile) -> Result<Profile, String> {
    let w = &p.warnings;
    if w.is_empty() {
        return Ok(p);
    }
    let label = p.source.label.clone();
    if STRICT.load(Ordering::Relaxed) {
        // The warning that hides the most data is the one to name (its share is in
        // its text); otherwise the first.
        let first = p.serious_warnings().first().copied().unwrap_or(&w[0]);
        let more = match w.len() {
            1 => String::new(),
            n => format!(" (and {} more warning(s))", n - 1),
        };
        return Err(format!("{label}: {first} (--strict){more}"));
    }
    if HEADLESS.load(Ordering::Relaxed) {
        for line in warning_lines(&label, w) {
            eprintln!("{line}");
        }
    }
    Ok(p)
}

/// The stderr lines for `warnings`: those that hide more than 10% of the data first,
/// marked, then the others in load order; one each, up to the cap (never cutting a
/// serious one), then a count.
fn warning_lines(label: &str, warnings: &[String]) -> Vec<String> {
    let (serious, rest): (Vec<&String>, Vec<&String>) = warnings
        .iter()
        .partition(|w| grove::model::hidden::is_serious(w));
    let mut out: Vec<String> = serious
        .iter()
        .map(|w| format!("grove: warning: {label}: data hidden: {w}"))
        .collect();
    out.extend(
        rest.iter()
            .take(MAX_WARNING_LINES.saturating_sub(out.len()))
            .map(|w| format!("grove: warning: {label}: {w}")),
    );
    if warnings.len() > out.len() {
        out.push(format!(
            "grove: warning: {label}: … and {} more warning(s) (`grove info` lists them all)",
            warnings.len() - out.len()
        ));
    }
    out
}

/// One file, or the embedded demo without one.
pub fn load(path: Option<&Path>) -> Result<Profile, String> {
    match path {
        Some(p) => checked(
            headless_progress(&p.display().to_string(), || grove::load::load_path(p))
                .map_err(|e| e.to_string())?,
        ),
        None => Ok(readers::load_demo()),
    }
}

/// Several files, or a directory of them, as one ensemble (`timeline`), the load's
/// warnings on stderr as `load_warning` gives them.
pub fn load_warning_all(files: &[PathBuf]) -> Result<Profile, String> {
    let prof = load_inputs(files, None)?;
    if !HEADLESS.load(Ordering::Relaxed) {
        for line in warning_lines(&prof.source.label, &prof.warnings) {
            eprintln!("{line}");
        }
    }
    Ok(prof)
}

/// One file for `kernels` and `summary`, whose reports have no place for the load's
/// warnings: they go to stderr, so damage that still loads, or device activity grove
/// could not place, does not pass unnoticed. (`info` lists them in its report; a
/// replay's stderr is kept for the replay's own warnings.)
pub fn load_warning(path: &Path) -> Result<Profile, String> {
    let prof = load(Some(path))?;
    // A headless load has printed them already (`checked`): once is enough.
    if !HEADLESS.load(Ordering::Relaxed) {
        for line in warning_lines(&prof.source.label, &prof.warnings) {
            eprintln!("{line}");
        }
    }
    Ok(prof)
}

/// A headless command's load shows its progress on stderr (`shell::progress`); the
/// TUI draws its own loading screen.
fn headless_progress<T>(label: &str, f: impl FnOnce() -> T) -> T {
    if HEADLESS.load(Ordering::Relaxed) {
        super::progress::headless(label, f)
    } else {
        f()
    }
}

/// `a=gcc,b=llvm` -> {a: gcc, b: llvm}.
/// The labels of several profiles as an ensemble of them gets (`ensemble::labels`),
/// `labels` the `--label` option.
pub fn labels_of(profiles: &[Profile], labels: Option<&str>) -> Result<Vec<String>, String> {
    Ok(grove::ensemble::labels(profiles, &parse_labels(labels)?))
}

fn parse_labels(spec: Option<&str>) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for part in spec
        .unwrap_or("")
        .split(',')
        .filter(|p| !p.trim().is_empty())
    {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("--label {part:?}: write STEM=LABEL"))?;
        out.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(out)
}

/// The files that directories and quoted globs stand for (`grove::load::expand_inputs`),
/// for the commands that read each file on its own (`kernels`, `summary`,
/// `summarize`): what a directory held besides profiles is said on stderr.
pub fn expand(files: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let (found, skipped) = grove::load::expand_inputs_noting(files).map_err(|e| e.to_string())?;
    for note in skipped {
        eprintln!("grove: warning: {note}");
    }
    Ok(found)
}

/// One file, or an ensemble of several, loaded cold (no cache, no `--et`).
pub fn load_inputs(files: &[PathBuf], labels: Option<&str>) -> Result<Profile, String> {
    Ok(load_inputs_cached(files, labels, None, false)?.profile)
}

/// One file, or an ensemble of several (files, or the files of a directory), with an
/// execution trace attached when `et` is given (`--et`), through grove's cache (`grove::load::load_inputs_cached`): a large
/// trace may open from its cached tree, without its events (`warm`). A cache that
/// could not be written is a warning on stderr in a headless command (the TUI shows
/// it on its status line), never an error and never a `--strict` finding: it says
/// nothing about the input.
pub fn load_inputs_cached(
    files: &[PathBuf],
    labels: Option<&str>,
    et: Option<&Path>,
    use_cache: bool,
) -> Result<grove::load::Cached, String> {
    let given = parse_labels(labels)?;
    let label = match files {
        [f] => f.display().to_string(),
        _ => format!("{} inputs", files.len()),
    };
    let mut c = headless_progress(&label, || {
        grove::load::load_inputs_cached(files, &given, et, use_cache)
    })
    .map_err(|e| e.to_string())?;
    c.profile = checked(c.profile)?;
    if let Some(w) = &c.cache_warning {
        if HEADLESS.load(Ordering::Relaxed) {
            eprintln!("grove: warning: {w}");
        }
    }
    Ok(c)
}

/// Each input alone, `visit`ed whole (events included), then their ensemble and its
/// number of inputs when there are several, read once per file (for `grove info`): each
/// profile's event table is dropped after its visit, as the ensemble loader does.
/// Summaries are not visited one by one: they give their ensemble only.
pub fn load_each_then_ensemble(
    files: &[PathBuf],
    labels: Option<&str>,
    mut visit: impl FnMut(&Profile),
) -> Result<Option<(Profile, usize)>, String> {
    let given = parse_labels(labels)?;
    if let Some(found) = grove::summary::read::find(files) {
        let n = found.len();
        return Ok(grove::load::load_summaries(files, &given)?.map(|p| (p, n)));
    }
    let (expanded, mut skipped) =
        grove::load::expand_inputs_noting(files).map_err(|e| e.to_string())?;
    let mut profiles = Vec::new();
    for f in &expanded {
        // As `grove FILE` opens it (a database's trace.db included).
        let mut p = load(Some(f))?;
        if expanded.len() == 1 {
            // What the directory held besides it is said with the one input.
            p.warnings.append(&mut skipped);
        }
        visit(&p);
        if expanded.len() == 1 {
            // `grove info` exits once this input is shown: freeing its tree and event
            // columns (millions of rows in a big trace) would cost time for nothing, as
            // the process hands its memory back at exit. The profile holds no file,
            // cache or output to finish, and the caller flushes what it prints.
            std::mem::forget(p);
            return Ok(None);
        }
        p.events = None;
        p.counters = None;
        profiles.push(p);
    }
    if profiles.len() < 2 {
        return Ok(None);
    }
    let labels = grove::ensemble::labels(&profiles, &given);
    let n = profiles.len();
    let mut e = grove::ensemble::unify(&profiles, &labels);
    e.warnings.extend(skipped);
    e.warnings.extend(grove::load::mixed_kinds(&profiles));
    Ok(Some((e, n)))
}

/// Several files as one ensemble, labelled by `given` (by stem or position).
pub fn load_ensemble(
    files: &[PathBuf],
    given: &HashMap<String, String>,
) -> Result<Profile, String> {
    checked(grove::load::load_ensemble(files, given).map_err(|e| e.to_string())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warning_lines_are_capped_with_a_count() {
        let w: Vec<String> = (0..13).map(|i| format!("w{i}")).collect();
        let lines = warning_lines("t.json", &w);
        assert_eq!(lines.len(), MAX_WARNING_LINES + 1);
        assert_eq!(lines[0], "grove: warning: t.json: w0");
        assert!(lines[10].contains("3 more warning(s)"), "{}", lines[10]);
        assert_eq!(warning_lines("t", &w[..2]).len(), 2);
    }

    #[test]
    fn warnings_that_hide_data_come_first_and_are_never_cut() {
        let mut w: Vec<String> = (0..12).map(|i| format!("w{i}")).collect();
        w.push(grove::model::hidden::hidden_warning("rows skipped", 0.5));
        w.push(grove::model::hidden::hidden_warning("a few skipped", 0.01));
        let lines = warning_lines("t.json", &w);
        assert_eq!(
            lines[0],
            "grove: warning: t.json: data hidden: rows skipped [hides 50.0% of the data]"
        );
        assert_eq!(lines[1], "grove: warning: t.json: w0");
        assert_eq!(lines.len(), MAX_WARNING_LINES + 1);
        assert!(lines[10].contains("4 more warning(s)"), "{}", lines[10]);
    }
}
