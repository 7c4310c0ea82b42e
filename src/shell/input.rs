//! Inputs: paths from the command line to one `Profile` (a file, a directory or glob
//! of an ensemble, or the embedded demo). The shell's only loading glue, so that it
//! can be pointed at the loading layer in one place.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use grove::model::Profile;
use grove::readers;

/// One file, or the embedded demo without one.
pub fn load(path: Option<&Path>) -> Result<Profile, String> {
    match path {
        Some(p) => grove::load::load_path(p).map_err(|e| e.to_string()),
        None => Ok(readers::load_demo()),
    }
}

/// One file for `kernels` and `summary`, whose reports have no place for the load's
/// warnings: they go to stderr, so damage that still loads, or device activity grove
/// could not place, does not pass unnoticed. (`info` lists them in its report; a
/// replay's stderr is kept for the replay's own warnings.)
pub fn load_warning(path: &Path) -> Result<Profile, String> {
    let prof = load(Some(path))?;
    for w in &prof.warnings {
        eprintln!("grove: warning: {}: {w}", path.display());
    }
    Ok(prof)
}

/// `a=gcc,b=llvm` -> {a: gcc, b: llvm}.
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

/// One file, or an ensemble of several (files, or the files of a directory).
pub fn load_inputs(files: &[PathBuf], labels: Option<&str>) -> Result<Profile, String> {
    let given = parse_labels(labels)?;
    grove::load::load_inputs(files, &given).map_err(|e| e.to_string())
}

/// Several files as one ensemble, labelled by `given` (by stem or position).
pub fn load_ensemble(
    files: &[PathBuf],
    given: &HashMap<String, String>,
) -> Result<Profile, String> {
    grove::load::load_ensemble(files, given).map_err(|e| e.to_string())
}
