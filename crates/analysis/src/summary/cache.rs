//! grove's cache of opened traces: a trace's tree, metrics, metadata and warnings (one
//! `summary::tree_file`, flat arrays, not the summaries' Parquet) kept in the XDG cache
//! directory, so that reopening a big trace shows its tree at once while the events
//! load behind it.
//!
//! An entry is used only when it provably stands for the file as it is now and its own
//! content checks out: the same device and inode, size, modification time and status
//! change time (which `touch -r` cannot restore after an edit in place), the same hash
//! of the file's first and last 64 KiB, the same summary schema and grove version; and
//! every file of the entry a regular file of the size and CRC-32 its stamp records.
//! Anything else (corrupt, foreign, oversized, a device or FIFO, unreadable, a reader
//! that panics under a memory cap) is a miss: a cold load, the entry rewritten, never
//! an error, a hang or a different tree. The cache lives in
//! `$XDG_CACHE_HOME/grove` (else `~/.cache/grove`), never next to the trace, which may
//! be on a read-only or shared file system. Writing it may fail (quota, read-only
//! home): that is a warning, never an error. `--no-cache` bypasses it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::{tree_file, SCHEMA_VERSION};
use crate::model::{Format, Profile, Source};

/// Inputs smaller than this load faster than a cache lookup pays for; they are never
/// cached. `GROVE_CACHE_MIN_BYTES` overrides it (the tests cache small files).
const MIN_BYTES: u64 = 32 << 20;

/// Bytes hashed at each end of the file.
const ENDS: u64 = 64 << 10;

/// The entry's tree file (`summary::tree_file`), beside `stamp.json`.
const TREE: &str = "trace.tree";

/// `$XDG_CACHE_HOME/grove`, else `~/.cache/grove`.
pub fn root() -> Option<PathBuf> {
    match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) if !d.is_empty() => Some(PathBuf::from(d).join("grove")),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("grove")),
    }
}

fn min_bytes() -> u64 {
    std::env::var("GROVE_CACHE_MIN_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MIN_BYTES)
}

/// What identifies one state of one file.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Stamp {
    schema: u32,
    grove: String,
    path: String,
    size: u64,
    mtime_ns: u128,
    /// Device, inode and status change time: an edit in place changes the last even
    /// when the modification time is put back.
    #[serde(default)]
    dev: u64,
    #[serde(default)]
    ino: u64,
    #[serde(default)]
    ctime_ns: i128,
    ends: String,
    /// Each file of the entry: (name, size, CRC-32), checked before it is read.
    #[serde(default)]
    files: Vec<(String, u64, u32)>,
    /// The cold load's source and dialect, so a warm open reads the same.
    format: String,
    gzip: bool,
    label: String,
    dialect: String,
}

fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    h
}

const FNV_START: u64 = 0xcbf29ce484222325;

/// Hash of the first and last `ENDS` bytes: cheap, and catches a rewrite that kept the
/// size and the modification time.
fn ends_hash(path: &Path, size: u64) -> std::io::Result<String> {
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; ENDS.min(size) as usize];
    f.read_exact(&mut buf)?;
    let mut h = fnv(&buf, FNV_START);
    if size > ENDS {
        let tail = ENDS.min(size - ENDS);
        f.seek(SeekFrom::Start(size - tail))?;
        buf.resize(tail as usize, 0);
        f.read_exact(&mut buf)?;
        h = fnv(&buf, h);
    }
    Ok(format!("fnv64:{h:016x}"))
}

/// The stamp of the file as it is now; None for what is not a cacheable regular file.
fn stamp_now(path: &Path) -> Option<(PathBuf, Stamp)> {
    stamp_sized(path, min_bytes())
}

fn stamp_sized(path: &Path, min: u64) -> Option<(PathBuf, Stamp)> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() < min {
        return None;
    }
    let abs = std::fs::canonicalize(path).ok()?;
    let mtime_ns = meta
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let ends = ends_hash(path, meta.len()).ok()?;
    use std::os::unix::fs::MetadataExt;
    let stamp = Stamp {
        schema: SCHEMA_VERSION,
        grove: crate::VERSION.to_string(),
        path: abs.display().to_string(),
        size: meta.len(),
        mtime_ns,
        dev: meta.dev(),
        ino: meta.ino(),
        ctime_ns: meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128,
        ends,
        files: Vec::new(),
        format: String::new(),
        gzip: false,
        label: String::new(),
        dialect: String::new(),
    };
    let dir = root()?.join(format!("{:016x}", fnv(stamp.path.as_bytes(), FNV_START)));
    Some((dir, stamp))
}

fn same_file(a: &Stamp, b: &Stamp) -> bool {
    (a.schema, &a.grove, &a.path, a.size, a.mtime_ns, &a.ends)
        == (b.schema, &b.grove, &b.path, b.size, b.mtime_ns, &b.ends)
        && (a.dev, a.ino, a.ctime_ns) == (b.dev, b.ino, b.ctime_ns)
}

/// A stamp is a few hundred bytes; anything much larger is not one.
const STAMP_MAX: u64 = 1 << 20;

/// The bytes of `path` when it is a regular file (links followed) of at most `max`
/// bytes: never opens a FIFO or a device, never reads more than `max`.
fn read_small(path: &Path, max: u64) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    File::open(path)
        .ok()?
        .take(max + 1)
        .read_to_end(&mut buf)
        .ok()?;
    (buf.len() as u64 <= max).then_some(buf)
}

/// Size and CRC-32 of a regular file (links followed), read in 1 MiB pieces; None for
/// anything else.
fn checksum(path: &Path) -> Option<(u64, u32)> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut f = File::open(path).ok()?;
    let mut h = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => {
                h.update(&buf[..k]);
                n += k as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some((n, h.finalize()))
}

/// Whether every file the stamp lists is there, a regular file, with its size and sum;
/// the tree file's sum is left to its reader, which checks it on the open file it then
/// maps and reads (`tree_file::read`). Returns the tree file's size and sum.
fn entry_intact(dir: &Path, kept: &Stamp) -> Option<(u64, u32)> {
    let intact = kept.files.iter().all(|(name, size, sum)| {
        !name.contains('/')
            && std::fs::metadata(dir.join(name)).is_ok_and(|m| m.is_file() && m.len() == *size)
            && (name == TREE || checksum(&dir.join(name)) == Some((*size, *sum)))
    });
    let tree = kept.files.iter().find(|(name, ..)| name == TREE)?;
    intact.then_some((tree.1, tree.2))
}

pub(crate) use crate::memory::quietly;

/// Whether `path` is an input the cache would hold (a large enough regular file).
pub fn applies(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= min_bytes())
}

/// The tree of `path` from the cache, when an up-to-date entry exists: the profile a
/// cold load gives, without its event table.
pub fn lookup(path: &Path) -> Option<Profile> {
    let (dir, now) = stamp_now(path)?;
    lookup_at(&dir, path, &now)
}

/// `lookup` of `path` against the entry in `dir`, whatever the cache's root and size
/// floor: the fuzz harness's way in (tests/fuzz.rs, `fuzz_cache_entry`).
#[doc(hidden)]
pub fn lookup_in(dir: &Path, path: &Path) -> Option<Profile> {
    let (_, now) = stamp_sized(path, 0)?;
    lookup_at(dir, path, &now)
}

/// `store` of `p` into the entry `dir` (its parent must exist): the fuzz harness's
/// way to make an entry to damage.
#[doc(hidden)]
pub fn store_in(dir: &Path, path: &Path, p: &Profile) -> Result<(), String> {
    let (_, stamp) = stamp_sized(path, 0).ok_or("not a regular file")?;
    store_at(dir.to_path_buf(), stamp, p)
}

fn lookup_at(dir: &Path, path: &Path, now: &Stamp) -> Option<Profile> {
    let text = read_small(&dir.join("stamp.json"), STAMP_MAX)?;
    let kept: Stamp = serde_json::from_slice(&text).ok()?;
    if !same_file(&kept, now) {
        return None;
    }
    let sum = entry_intact(dir, &kept)?;
    let format = Format::from_label(&kept.format)?;
    // An entry an older grove kept of a call-graph format lacks the graph.
    if matches!(
        format,
        Format::Callgrind | Format::CProfile | Format::Gprof2Dot | Format::Gprof
    ) {
        return None;
    }
    let t = quietly(|| tree_file::read(&dir.join(TREE), Some(sum)).ok())?;
    Some(Profile {
        source: Source {
            path: Some(path.to_path_buf()),
            format,
            size: kept.size,
            gzip: kept.gzip,
            label: kept.label,
        },
        dialect: kept.dialect,
        // As the summaries' reader does: a default metric the table lacks is its first.
        default_metric: match t.default_metric {
            m if t.metrics.has(&m) => m,
            _ => t.metrics.names().into_iter().next().unwrap_or_default(),
        },
        cct: t.cct,
        metrics: t.metrics,
        events: None,
        counters: None,
        meta: t.meta,
        warnings: t.warnings,
        call_graph: None,
    })
}

/// Keeps `p`, the cold load of `path`, in the cache. Written under a temporary name and
/// renamed, so a concurrent reader sees the old entry or the new one, never half.
pub fn store(path: &Path, p: &Profile) -> Result<(), String> {
    let Some((dir, stamp)) = stamp_now(path) else {
        return Ok(());
    };
    store_at(dir, stamp, p)
}

fn store_at(dir: PathBuf, mut stamp: Stamp, p: &Profile) -> Result<(), String> {
    stamp.format = p.source.format.label().to_string();
    stamp.gzip = p.source.gzip;
    stamp.label = p.source.label.clone();
    stamp.dialect = p.dialect.clone();
    let err = |e: &dyn std::fmt::Display| format!("cache {}: {e}", dir.display());
    tree_file::fits_in_memory(p).map_err(|e| err(&e))?;
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| err(&e))?;
    sweep_stale(parent);
    let tmp = parent.join(format!(
        ".tmp-{}-{:x}",
        std::process::id(),
        fnv(stamp.path.as_bytes(), FNV_START)
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| err(&e))?;
    let result = (|| {
        tree_file::write(p, &tmp.join(TREE)).map_err(|e| err(&e))?;
        let mut files: Vec<String> = std::fs::read_dir(&tmp)
            .map_err(|e| err(&e))?
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        files.sort();
        for name in files {
            let (size, sum) =
                checksum(&tmp.join(&name)).ok_or_else(|| err(&format!("{name}: unreadable")))?;
            stamp.files.push((name, size, sum));
        }
        let json = serde_json::to_string(&stamp).map_err(|e| err(&e))?;
        std::fs::write(tmp.join("stamp.json"), json).map_err(|e| err(&e))?;
        let _ = std::fs::remove_dir_all(&dir);
        match std::fs::rename(&tmp, &dir) {
            // Another grove wrote the entry between the removal and the rename: its
            // entry stands for the same file (a lookup checks it), ours goes.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTEMPTY | libc::EEXIST)) => Ok(()),
            r => r.map_err(|e| err(&e)),
        }
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    // The Parquet writer reports a full disk as a broken thrift transport.
    result.map_err(|e| match full(parent) {
        true => format!(
            "cache {}: the disk is full (no space left on device)",
            dir.display()
        ),
        false => e,
    })
}

/// Whether the file system holding `dir` has no room left for an unprivileged write.
fn full(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statvfs writes into the zeroed struct given; the path is a C string.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return false;
    }
    (s.f_bavail as u64).saturating_mul(s.f_frsize as u64) < 64 << 10
}

/// Removes the temporary entries (`.tmp-PID-…`) of groves that are gone: one killed
/// while it wrote (SIGHUP, SIGKILL) left its directory behind.
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(".tmp-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_with_the_same_size_and_time_changes_the_stamp() {
        let dir = std::env::temp_dir().join(format!("grove-cache-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.json");
        std::fs::write(&f, b"[1,2,3]").unwrap();
        let a = ends_hash(&f, 7).unwrap();
        std::fs::write(&f, b"[1,2,4]").unwrap();
        let b = ends_hash(&f, 7).unwrap();
        assert_ne!(a, b);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
