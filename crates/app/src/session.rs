//! Session files: JSON Lines, a versioned header and then one line per command that
//! changed the view, written and flushed as each takes effect (a killed process loses
//! nothing). docs/session.md is the specification.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub const FORMAT: &str = "grove-session";
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Input {
    pub path: String,
    pub size: u64,
    /// `fnv64w:<16 hex digits>` of the file's bytes (see `content_hash`); for a
    /// directory (an HPCToolkit database), of its files' names and hashes.
    pub hash: String,
    /// The profile's label when the session compared several inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Term {
    pub cols: u16,
    pub rows: u16,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub tool_version: String,
    pub created: String,
    pub inputs: Vec<Input>,
    pub term: Term,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub seq: u64,
    pub t_ms: u64,
    pub cmd: String,
}

/// 64-bit FNV-1a over little-endian 8-byte words (then the tail bytes): a content hash
/// that reads at memory speed, so fingerprinting a multi-GB trace costs little.
pub fn content_hash(path: &Path) -> std::io::Result<String> {
    // Only what a regular file holds: a device or a pipe (`/dev/zero`) never ends, and
    // opening a FIFO without a writer blocks, so its type is asked before it is opened
    // (a FIFO inside a directory input hung here).
    if !std::fs::metadata(path)?.is_file() {
        return Ok(UNHASHABLE.to_string());
    }
    let f = File::open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Ok(UNHASHABLE.to_string());
    }
    let mut f = f.take(meta.len());
    let mut h: u64 = 0xcbf29ce484222325;
    const PRIME: u64 = 0x100000001b3;
    let mut buf = vec![0u8; 1 << 20];
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let mut data: &[u8] = &buf[..n];
        let mut joined;
        if !carry.is_empty() {
            joined = std::mem::take(&mut carry);
            joined.extend_from_slice(data);
            data = &joined[..];
            let words = data.len() / 8 * 8;
            for w in data[..words].chunks_exact(8) {
                h = (h ^ u64::from_le_bytes(w.try_into().unwrap())).wrapping_mul(PRIME);
            }
            carry = data[words..].to_vec();
            continue;
        }
        let words = data.len() / 8 * 8;
        for w in data[..words].chunks_exact(8) {
            h = (h ^ u64::from_le_bytes(w.try_into().unwrap())).wrapping_mul(PRIME);
        }
        carry = data[words..].to_vec();
    }
    for &b in &carry {
        h = (h ^ b as u64).wrapping_mul(PRIME);
    }
    Ok(format!("fnv64w:{h:016x}"))
}

/// The hash recorded for an input that is not a regular file or directory.
pub const UNHASHABLE: &str = "none:not-a-regular-file";

pub fn input_of(path: &Path) -> std::io::Result<Input> {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let meta = std::fs::metadata(path)?;
    let (size, hash) = if meta.is_dir() {
        dir_hash(path)?
    } else if meta.is_file() {
        (meta.len(), content_hash(path)?)
    } else {
        (0, UNHASHABLE.to_string())
    };
    Ok(Input {
        path: abs.display().to_string(),
        size,
        hash,
        label: None,
    })
}

/// A directory's total size and a hash over its files' names and content hashes, in
/// name order (sub-directories included), so any changed, added or removed file shows.
fn dir_hash(dir: &Path) -> std::io::Result<(u64, String)> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.is_file() {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut h: u64 = 0xcbf29ce484222325;
    let mut size = 0;
    for f in &files {
        size += std::fs::metadata(f)?.len();
        let rel = f.strip_prefix(dir).unwrap_or(f).display().to_string();
        for b in rel.bytes().chain([0]).chain(content_hash(f)?.bytes()) {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
    Ok((size, format!("fnv64d:{h:016x}")))
}

/// RFC 3339 UTC time of now, without a date crate.
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

pub struct Writer {
    /// None until the first command: a run that logs nothing leaves no file.
    file: Option<File>,
    /// The header, written with the first command (taken then).
    header: Option<Header>,
    pub path: PathBuf,
    seq: u64,
    start: Instant,
}

const IN_USE: &str =
    "in use by another grove process (locked); give another --session FILE or --no-session";

impl Writer {
    /// Creates (or truncates) a session file and writes its header now.
    pub fn create(path: &Path, header: &Header) -> std::io::Result<Writer> {
        let mut w = Writer::lazy(path, header);
        w.open()?;
        Ok(w)
    }

    /// A writer that creates its file with the first command it logs (then holds the
    /// lock and flushes after every command, as `create`'s does). Nothing touches the
    /// disk before that.
    pub fn lazy(path: &Path, header: &Header) -> Writer {
        Writer {
            file: None,
            header: Some(header.clone()),
            path: path.to_path_buf(),
            seq: 0,
            start: Instant::now(),
        }
    }

    /// Whether the file exists yet (the first command creates a lazy writer's).
    pub fn is_created(&self) -> bool {
        self.file.is_some()
    }

    /// Fails when another grove holds the lock on an existing file at `path`, so an
    /// explicit `--session FILE` in use is refused at start even though the file is
    /// only written with the first command. Creates nothing.
    pub fn check_free(path: &Path) -> std::io::Result<()> {
        let Ok(file) = OpenOptions::new().write(true).open(path) else {
            return Ok(());
        };
        match file.try_lock() {
            Err(std::fs::TryLockError::WouldBlock) => Err(std::io::Error::other(IN_USE)),
            // Dropping the file releases the probe's lock.
            _ => Ok(()),
        }
    }

    /// Opens, locks and truncates the file and writes the header.
    fn open(&mut self) -> std::io::Result<&mut File> {
        if self.file.is_none() {
            let path = &self.path;
            if let Some(dir) = path.parent() {
                if !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(dir)?;
                }
            }
            // Open without truncating, lock, then truncate: a second grove on the same
            // file must not clear or interleave the first one's lines.
            #[allow(clippy::suspicious_open_options)]
            let mut file = OpenOptions::new().create(true).write(true).open(path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(std::io::Error::other(IN_USE))
                }
                // A filesystem without locks (some network mounts): write unlocked.
                Err(std::fs::TryLockError::Error(_)) => {}
            }
            file.set_len(0)?;
            if let Some(header) = &self.header {
                let mut line = serde_json::to_string(header)?;
                line.push('\n');
                file.write_all(line.as_bytes())?;
                file.flush()?;
            }
            self.header = None;
            self.file = Some(file);
        }
        Ok(self.file.as_mut().expect("opened above"))
    }

    /// Appends one command and flushes it to the OS before returning (creating the
    /// file first when this is a lazy writer's first command).
    pub fn append(&mut self, cmd: &str) -> std::io::Result<()> {
        let e = Entry {
            seq: self.seq + 1,
            t_ms: self.start.elapsed().as_millis() as u64,
            cmd: cmd.to_string(),
        };
        let mut line = serde_json::to_string(&e)?;
        line.push('\n');
        let file = self.open()?;
        file.write_all(line.as_bytes())?;
        file.flush()?;
        self.seq += 1;
        Ok(())
    }
}

/// A session or command file, read back.
#[derive(Debug, Clone, Default)]
pub struct Script {
    pub header: Option<Header>,
    /// (line number, command text)
    pub commands: Vec<(usize, String)>,
    pub warnings: Vec<String>,
}

/// Reads a `.jsonl` session, or a plain text file with one command per line (`#`
/// comments), which is what `source` and `--replay` accept.
/// The largest session or `source` file read: far above any real session (a
/// command a line, 10,000 commands are under 1 MiB), and a bound on what a wrong path
/// (`/dev/urandom`, a log file) costs.
pub const MAX_BYTES: u64 = 64 << 20;

pub fn read(path: &Path) -> Result<Script, String> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let kind = std::fs::metadata(path).map_err(|e| err(&e))?.file_type();
    if kind.is_char_device() || kind.is_block_device() {
        return Err(err(&"a device, not a session file"));
    }
    if kind.is_dir() {
        return Err(err(&"a directory, not a session file"));
    }
    // Read through a bound, so a pipe or a huge file stops at MAX_BYTES.
    let mut bytes = Vec::new();
    // A FIFO without a writer is an error after a bounded wait (`readers::open`).
    crate::readers::open::open(path)
        .map_err(|e| err(&e))?
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(&e))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(err(&format!(
            "larger than {} MiB: not a session file",
            MAX_BYTES >> 20
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| err(&"not text (invalid UTF-8)"))?;
    parse(&text).map_err(|e| err(&e))
}

pub fn parse(text: &str) -> Result<Script, String> {
    // Editors on some systems start files with a byte-order mark; it is not a command.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut script = Script::default();
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    let jsonl = first.is_some_and(|l| l.starts_with('{'));
    let ends_with_newline = text.ends_with('\n');
    let lines: Vec<&str> = text.split('\n').collect();
    let last_index = lines.iter().rposition(|l| !l.trim().is_empty());
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim_end_matches('\r').trim();
        let no = i + 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !jsonl {
            script.commands.push((no, line.to_string()));
            continue;
        }
        let value: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                // A crash mid-write leaves a truncated last line: replay up to it.
                if Some(i) == last_index && !ends_with_newline {
                    script
                        .warnings
                        .push(format!("line {no}: truncated last line ignored"));
                    break;
                }
                return Err(format!("line {no}: not a JSON object: {e}"));
            }
        };
        if value.get("format").is_some() {
            let h: Header = serde_json::from_value(value)
                .map_err(|e| format!("line {no}: bad session header: {e}"))?;
            if h.format != FORMAT {
                return Err(format!(
                    "line {no}: not a grove session (format {:?})",
                    h.format
                ));
            }
            if h.version > VERSION {
                return Err(format!(
                    "line {no}: session version {} is newer than this grove understands ({VERSION})",
                    h.version
                ));
            }
            script.header = Some(h);
            continue;
        }
        match value.get("cmd").and_then(|c| c.as_str()) {
            Some(c) => script.commands.push((no, c.to_string())),
            None => return Err(format!("line {no}: an entry needs a \"cmd\" string")),
        }
    }
    Ok(script)
}

/// `$XDG_STATE_HOME/grove/sessions` (or `~/.local/state/grove/sessions`).
pub fn default_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".local/state"),
    };
    Some(base.join("grove").join("sessions"))
}

/// A fresh default session path: `<dir>/<UTC time>-<input name>.jsonl`.
pub fn default_path(label: &str) -> Option<PathBuf> {
    let stamp: String = now_rfc3339()
        .chars()
        .map(|c| if c == ':' { '-' } else { c })
        .collect();
    let clean: String = label
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Some(default_dir()?.join(format!("{stamp}-{}-{clean}.jsonl", std::process::id())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_read() {
        let dir = std::env::temp_dir().join(format!("grove-session-{}", std::process::id()));
        let path = dir.join("s.jsonl");
        let h = Header {
            format: FORMAT.into(),
            version: VERSION,
            tool_version: "0".into(),
            created: now_rfc3339(),
            inputs: vec![],
            term: Term { cols: 80, rows: 24 },
        };
        let mut w = Writer::create(&path, &h).unwrap();
        w.append("filter time > 1ms").unwrap();
        w.append("sort name asc").unwrap();
        let s = read(&path).unwrap();
        assert_eq!(s.header.unwrap(), h);
        assert_eq!(
            s.commands,
            vec![(2, "filter time > 1ms".into()), (3, "sort name asc".into())]
        );
        // A truncated last line is a warning; a bad middle line an error with its number.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"seq\":3,\"t_ms\":1,\"cm");
        let s = parse(&text).unwrap();
        assert_eq!(s.commands.len(), 2);
        assert!(s.warnings[0].contains("line 4"));
        let bad = text.replace("{\"seq\":2", "{oops");
        assert!(parse(&bad).unwrap_err().starts_with("line 3"));
        // Plain command files.
        let s = parse("# setup\nfilter leaf\n\nsort name asc\n").unwrap();
        assert_eq!(
            s.commands,
            vec![(2, "filter leaf".into()), (4, "sort name asc".into())]
        );
    }

    #[test]
    fn lazy_file_appears_with_the_first_command_and_is_locked() {
        let dir = std::env::temp_dir().join(format!("grove-lazy-{}", std::process::id()));
        let path = dir.join("sub").join("lazy.jsonl");
        let _ = std::fs::remove_file(&path);
        let h = Header {
            format: FORMAT.into(),
            version: VERSION,
            tool_version: "0".into(),
            created: now_rfc3339(),
            inputs: vec![],
            term: Term { cols: 80, rows: 24 },
        };
        let mut w = Writer::lazy(&path, &h);
        assert!(
            !path.exists(),
            "nothing is written before the first command"
        );
        assert!(!w.is_created());
        Writer::check_free(&path).unwrap();
        w.append("sort name asc").unwrap();
        assert!(w.is_created());
        // Flushed at once: another reader sees header and command.
        let s = read(&path).unwrap();
        assert_eq!(s.header.unwrap(), h);
        assert_eq!(s.commands, vec![(2, "sort name asc".into())]);
        // Once created, the lock holds against a second writer, lazy or not.
        assert!(Writer::check_free(&path).is_err());
        assert!(Writer::create(&path, &h).is_err());
        let mut second = Writer::lazy(&path, &h);
        assert!(second.append("expand all").is_err());
        w.append("expand all").unwrap();
        assert_eq!(read(&path).unwrap().commands.len(), 2);
        drop(w);
        Writer::check_free(&path).unwrap();
    }

    #[test]
    fn hash_and_time() {
        let dir = std::env::temp_dir().join(format!("grove-hash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a");
        std::fs::write(&a, b"hello world, 123").unwrap();
        let h1 = content_hash(&a).unwrap();
        std::fs::write(&a, b"hello world, 124").unwrap();
        assert_ne!(h1, content_hash(&a).unwrap());
        assert!(h1.starts_with("fnv64w:"));
        let t = now_rfc3339();
        assert_eq!(t.len(), 20);
        assert!(t.ends_with('Z'));
    }
}
