//! Bytewise, bounds-checked access to one v4 file.

use super::*;

#[derive(Clone, Copy)]
pub(super) struct Bytes<'a> {
    pub(super) name: &'static str,
    pub(super) d: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub(super) fn err(&self, off: u64, msg: impl Display) -> String {
        format!("{}: at byte {off}: {msg}", self.name)
    }

    pub(super) fn len(&self) -> u64 {
        self.d.len() as u64
    }

    pub(super) fn bytes(&self, off: u64, n: u64) -> Result<&'a [u8], String> {
        match off.checked_add(n) {
            Some(end) if end <= self.len() => Ok(&self.d[off as usize..end as usize]),
            _ => Err(self.err(
                off,
                format!(
                    "{n} bytes needed but the file ends at byte {} (truncated or corrupt)",
                    self.len()
                ),
            )),
        }
    }

    pub(super) fn arr<const N: usize>(&self, off: u64) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(off, N as u64)?);
        Ok(a)
    }

    pub(super) fn u8(&self, off: u64) -> Result<u8, String> {
        Ok(self.arr::<1>(off)?[0])
    }

    pub(super) fn u16(&self, off: u64) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.arr(off)?))
    }

    pub(super) fn u32(&self, off: u64) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.arr(off)?))
    }

    pub(super) fn u64(&self, off: u64) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.arr(off)?))
    }

    pub(super) fn f64(&self, off: u64) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.arr(off)?))
    }

    /// A NUL-terminated UTF-8 string (invalid bytes replaced).
    pub(super) fn cstr(&self, off: u64) -> Result<String, String> {
        if off >= self.len() {
            return Err(self.err(off, "string pointer past the end of the file"));
        }
        let rest = &self.d[off as usize..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.err(off, "string without a terminating NUL"))?;
        Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
    }

    /// Checks that `count` elements of `size` bytes from `off` lie inside [lo, hi).
    pub(super) fn check_array(
        &self,
        off: u64,
        count: u64,
        size: u64,
        lo: u64,
        hi: u64,
        what: &str,
    ) -> Result<(), String> {
        let end = count.checked_mul(size).and_then(|n| n.checked_add(off));
        match end {
            Some(end) if off >= lo && end <= hi && hi <= self.len() => Ok(()),
            _ => Err(self.err(
                off,
                format!("{what} ({count} × {size} bytes) lies outside its section [{lo}, {hi})"),
            )),
        }
    }
}

/// A section: {size, pointer} from the file header.
#[derive(Clone, Copy, Debug)]
pub(super) struct Section {
    pub(super) p: u64,
    pub(super) sz: u64,
}

impl Section {
    pub(super) fn end(&self) -> u64 {
        self.p + self.sz
    }
}

/// Checks magic, format, major version and footer; returns the minor version and the
/// first `n` sections.
pub(super) fn header(
    b: &Bytes,
    format: &[u8; 4],
    footer: &[u8; 8],
    names: &[&str],
) -> Result<(u8, Vec<Section>), String> {
    if b.len() < 16 || &b.d[..10] != MAGIC {
        return Err(b.err(0, "not an HPCToolkit v4 file (no HPCTOOLKIT magic)"));
    }
    if &b.d[10..14] != format {
        return Err(b.err(
            10,
            format!(
                "format is {:?}, expected {:?}",
                String::from_utf8_lossy(&b.d[10..14]),
                String::from_utf8_lossy(format)
            ),
        ));
    }
    let major = b.d[14];
    if major != 4 {
        return Err(b.err(
            14,
            format!("major version {major} is not supported (only 4 is)"),
        ));
    }
    let minor = b.d[15];
    if b.len() < 24 || &b.d[b.d.len() - 8..] != footer {
        return Err(b.err(
            b.len().saturating_sub(8),
            format!(
                "missing the {:?} footer (truncated file?)",
                String::from_utf8_lossy(footer)
            ),
        ));
    }
    let mut secs = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let at = 0x10 + 16 * i as u64;
        let sz = b.u64(at)?;
        let p = b.u64(at + 8)?;
        if p.checked_add(sz).is_none_or(|e| e > b.len()) {
            return Err(b.err(
                at,
                format!("section {name} [{p}, +{sz}) lies outside the file"),
            ));
        }
        secs.push(Section { p, sz });
    }
    Ok((minor, secs))
}

/// Checks that a section is big enough for the header fields this reader uses.
pub(super) fn need(b: &Bytes, s: Section, n: u64, what: &str) -> Result<(), String> {
    if s.sz < n {
        return Err(b.err(
            s.p,
            format!("the {what} section is {} bytes, at least {n} needed", s.sz),
        ));
    }
    Ok(())
}

pub(super) fn need_size(b: &Bytes, at: u64, size: u64, min: u64, what: &str) -> Result<(), String> {
    if size < min {
        return Err(b.err(at, format!("{what} size is {size}, at least {min} needed")));
    }
    Ok(())
}
