//! The few parts of tar that a `.cubex` archive uses: 512-byte ustar (or old-style)
//! headers, each followed by its file's bytes padded to 512, ended by zero blocks or
//! the end of the data. GNU long names (`L`) and pax `path=` records are honoured;
//! other entry kinds (directories, links) carry no file and are passed over.
//!
//! Hand-written rather than the `tar` crate: the walk is 80 lines over a byte slice,
//! needs no I/O abstraction, and must tolerate what cubelib's writer produces (pycubexr
//! keeps a tar class that skips the header checksum because some archives fail it).

/// One regular file of the archive.
#[derive(Debug)]
pub struct Entry<'a> {
    pub name: String,
    pub data: &'a [u8],
}

/// What the walk found: the files, and how many headers failed their checksum.
#[derive(Debug)]
pub struct Archive<'a> {
    pub entries: Vec<Entry<'a>>,
    pub bad_checksums: usize,
}

const BLOCK: usize = 512;

/// Whether `head` starts with a tar header (the `ustar` magic, or a valid checksum for
/// old-style headers).
pub fn is_tar(head: &[u8]) -> bool {
    head.len() >= BLOCK
        && (head[257..262] == *b"ustar" || checksum_ok(&head[..BLOCK]) && head[0] != 0)
}

/// The name of the first member, for detection.
pub fn first_name(head: &[u8]) -> Option<String> {
    is_tar(head).then(|| cstr(&head[..100]))
}

fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// An octal field (spaces and NULs around it), or GNU's base-256 form (high bit set).
fn number(b: &[u8]) -> Option<u64> {
    if b.first().is_some_and(|&c| c & 0x80 != 0) {
        let mut v: u64 = (b[0] & 0x7f) as u64;
        for &c in &b[1..] {
            v = v.checked_mul(256)?.checked_add(c as u64)?;
        }
        return Some(v);
    }
    let s = cstr(b);
    let s = s.trim_matches(|c: char| c == ' ' || c == '\0');
    if s.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(s, 8).ok()
}

fn checksum_ok(h: &[u8]) -> bool {
    let Some(want) = number(&h[148..156]) else {
        return false;
    };
    let sum: u64 = h
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            if (148..156).contains(&i) {
                32
            } else {
                c as u64
            }
        })
        .sum();
    sum == want
}

/// The value of a pax record `path=…` in an extended header's data.
fn pax_path(data: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(data);
    text.lines().find_map(|l| {
        let (_, kv) = l.split_once(' ')?;
        kv.strip_prefix("path=").map(str::to_string)
    })
}

/// Walks the archive. An error only when no header at all can be read or a file runs
/// past the end of the data.
pub fn walk(data: &[u8]) -> Result<Archive<'_>, String> {
    let mut out = Archive {
        entries: Vec::new(),
        bad_checksums: 0,
    };
    let mut pos = 0;
    let mut long_name: Option<String> = None;
    while pos + BLOCK <= data.len() {
        let h = &data[pos..pos + BLOCK];
        if h.iter().all(|&c| c == 0) {
            break;
        }
        if !checksum_ok(h) {
            out.bad_checksums += 1;
        }
        let size = number(&h[124..136])
            .ok_or_else(|| format!("tar: header at byte {pos} has no readable size"))?;
        let start = pos + BLOCK;
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| start.checked_add(s))
            .filter(|&e| e <= data.len())
            .ok_or_else(|| {
                format!("tar: the file at byte {pos} ({size} bytes) runs past the archive's end")
            })?;
        let body = &data[start..end];
        match h[156] {
            b'L' => long_name = Some(cstr(body)),
            b'x' => long_name = pax_path(body).or(long_name),
            b'0' | 0 | b'7' => {
                let mut name = cstr(&h[..100]);
                if h[257..262] == *b"ustar" && h[345] != 0 {
                    name = format!("{}/{name}", cstr(&h[345..500]));
                }
                out.entries.push(Entry {
                    name: long_name.take().unwrap_or(name),
                    data: body,
                });
            }
            _ => long_name = None,
        }
        pos = start + size.div_ceil(BLOCK as u64) as usize * BLOCK;
    }
    if out.entries.is_empty() {
        return Err("tar: the archive holds no file".into());
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) fn build(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in files {
        let mut h = [0u8; BLOCK];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        let size = format!("{:011o}", data.len());
        h[124..135].copy_from_slice(size.as_bytes());
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        let sum: u32 = h
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                if (148..156).contains(&i) {
                    32
                } else {
                    c as u32
                }
            })
            .sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
    }
    out.resize(out.len() + 2 * BLOCK, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_what_it_builds() {
        let t = build(&[("anchor.xml", b"<cube/>"), ("0.index", &[1u8; 600])]);
        assert!(is_tar(&t));
        assert_eq!(first_name(&t).as_deref(), Some("anchor.xml"));
        let a = walk(&t).unwrap();
        assert_eq!(a.bad_checksums, 0);
        assert_eq!(a.entries.len(), 2);
        assert_eq!(a.entries[1].name, "0.index");
        assert_eq!(a.entries[1].data.len(), 600);
    }

    #[test]
    fn cut_archives_are_errors() {
        let t = build(&[("0.data", &[7u8; 2000])]);
        assert!(walk(&t[..1024])
            .unwrap_err()
            .contains("past the archive's end"));
        assert!(walk(&[0u8; 1024]).is_err());
        assert!(walk(&[]).is_err());
    }
}
