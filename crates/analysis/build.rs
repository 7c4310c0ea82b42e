//! Puts the commit and the build date into `grove --version`.
//!
//! The commit comes from `git` when the sources are a clone with git installed, else from
//! `GROVE_COMMIT` (for builds from a tarball), else "unknown"; the date is
//! `SOURCE_DATE_EPOCH` when set (reproducible builds), else today, in UTC. Nothing here
//! may fail the build: every failure falls back to "unknown".

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=GROVE_COMMIT");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let commit = std::env::var("GROVE_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=GROVE_COMMIT={commit}");
    println!("cargo:rustc-env=GROVE_BUILD_DATE={}", build_date());
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// The short commit hash. Rebuilds when HEAD moves
/// (HEAD itself, the branch it points at, packed refs); a worktree's HEAD lives in its
/// own git dir and its branches in the common one.
fn git_commit() -> Option<String> {
    // Only grove's own clone: sources unpacked inside some other repository are not it.
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    // This crate sits two levels below the workspace root (crates/analysis).
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").ok()?).join("../..");
    if top.canonicalize().ok()? != here.canonicalize().ok()? {
        return None;
    }
    let hash = git(&["rev-parse", "--short=12", "HEAD"])?;
    let git_dir = PathBuf::from(git(&["rev-parse", "--git-dir"])?);
    let common = git(&["rev-parse", "--git-common-dir"])
        .map(PathBuf::from)
        .unwrap_or_else(|| git_dir.clone());
    watch(&git_dir.join("HEAD"));
    watch(&common.join("packed-refs"));
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(&common.join(branch));
    }
    // No "dirty" mark: it would have to watch the index, which every `git status`
    // rewrites, and rebuild grove each time.
    Some(hash)
}

fn watch(p: &Path) {
    if p.exists() {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

/// YYYY-MM-DD (UTC) of SOURCE_DATE_EPOCH or now.
fn build_date() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs() as i64)
        });
    let Some(secs) = secs else {
        return "unknown".to_string();
    };
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm,
/// written out from its description: eras of 400 years, March-based years).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}
