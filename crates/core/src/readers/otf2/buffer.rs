//! OTF2's buffer encoding: the one-byte chunk/file header that declares the byte order,
//! compressed integers (a length byte, then that many low-order bytes in the declared
//! order; 0xff is "undefined", the all-ones value), fixed-size 8-byte timestamps and
//! doubles, NUL-terminated strings, and record lengths (one byte, or 0xff and eight).
//!
//! Every read is bounds-checked and fails with the offset it failed at: files are
//! untrusted, and a damaged one must end in a one-line error, never a panic.

/// Buffer record ids below 10 that OTF2 reserves for its own use.
pub const END_OF_CHUNK: u8 = 0;
pub const END_OF_FILE: u8 = 2;
pub const CHUNK_HEADER: u8 = 3;
pub const TIMESTAMP: u8 = 5;
pub const ATTRIBUTE_LIST: u8 = 6;

/// The endianness bytes of a chunk header.
pub const BIG_ENDIAN: u8 = 0x23;
pub const LITTLE_ENDIAN: u8 = 0x42;

/// A read position in one chunk (or one unchunked file).
pub struct Buf<'a> {
    pub data: &'a [u8],
    pub pos: usize,
    pub big_endian: bool,
    /// Offset of `data` in its file, so errors name the file offset.
    pub base: u64,
}

/// A decoding error: what was expected and the file offset.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    pub offset: u64,
    pub what: String,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

pub type Res<T> = Result<T, DecodeError>;

impl<'a> Buf<'a> {
    pub fn new(data: &'a [u8], base: u64) -> Buf<'a> {
        Buf {
            data,
            pos: 0,
            big_endian: false,
            base,
        }
    }

    pub fn err<T>(&self, what: impl Into<String>) -> Res<T> {
        Err(DecodeError {
            offset: self.base + self.pos as u64,
            what: what.into(),
        })
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    pub fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    pub fn u8(&mut self) -> Res<u8> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => self.err("unexpected end of data"),
        }
    }

    fn take(&mut self, n: usize) -> Res<&'a [u8]> {
        if self.remaining() < n {
            return self.err(format!("unexpected end of data (needed {n} bytes)"));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A fixed-size unsigned integer of `n` bytes in the buffer's byte order.
    fn fixed(&mut self, n: usize) -> Res<u64> {
        let b = self.take(n)?;
        let mut v = 0u64;
        if self.big_endian {
            for &x in b {
                v = (v << 8) | x as u64;
            }
        } else {
            for &x in b.iter().rev() {
                v = (v << 8) | x as u64;
            }
        }
        Ok(v)
    }

    pub fn u64_full(&mut self) -> Res<u64> {
        self.fixed(8)
    }

    pub fn u32_full(&mut self) -> Res<u32> {
        self.fixed(4).map(|v| v as u32)
    }

    pub fn f64_full(&mut self) -> Res<f64> {
        self.u64_full().map(f64::from_bits)
    }

    /// A compressed integer of at most `max` payload bytes.
    fn compressed(&mut self, max: u8) -> Res<u64> {
        let n = self.u8()?;
        match n {
            0 => Ok(0),
            0xff => Ok(if max == 4 { u32::MAX as u64 } else { u64::MAX }),
            n if n > max => {
                self.pos -= 1;
                self.err(format!("invalid compressed integer length {n}"))
            }
            n => self.fixed(n as usize),
        }
    }

    pub fn u32c(&mut self) -> Res<u32> {
        self.compressed(4).map(|v| v as u32)
    }

    pub fn u64c(&mut self) -> Res<u64> {
        self.compressed(8)
    }

    pub fn i64c(&mut self) -> Res<i64> {
        self.compressed(8).map(|v| v as i64)
    }

    /// Skips one compressed integer (singleton records have no length byte).
    pub fn skip_compressed(&mut self) -> Res<()> {
        self.compressed(8).map(|_| ())
    }

    /// A NUL-terminated string, decoded lossily.
    pub fn cstr(&mut self) -> Res<String> {
        let rest = &self.data[self.pos.min(self.data.len())..];
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                let s = String::from_utf8_lossy(&rest[..n]).into_owned();
                self.pos += n + 1;
                Ok(s)
            }
            None => self.err("string without its terminating NUL byte"),
        }
    }

    /// A record's length: one byte, or 0xff and eight bytes. Returns the record's end,
    /// checked against the data.
    pub fn record_end(&mut self) -> Res<usize> {
        let mut len = self.u8()? as u64;
        if len == 0xff {
            len = self.u64_full()?;
        }
        if len > self.remaining() as u64 {
            return self.err(format!(
                "record of {len} bytes runs past the end of its chunk"
            ));
        }
        Ok(self.pos + len as usize)
    }

    /// The header of a chunk or unchunked file: 0x03 and the byte order; chunked files
    /// then give the numbers of the chunk's first and last event.
    pub fn header(&mut self, chunked: bool) -> Res<()> {
        if self.u8()? != CHUNK_HEADER {
            self.pos -= 1;
            return self.err("not an OTF2 chunk header");
        }
        match self.u8()? {
            BIG_ENDIAN => self.big_endian = true,
            LITTLE_ENDIAN => self.big_endian = false,
            b => {
                self.pos -= 1;
                return self.err(format!("invalid byte-order mark 0x{b:02x}"));
            }
        }
        if chunked {
            self.take(16)?;
        }
        Ok(())
    }
}

/// Calls `each` with every chunk of a chunked file: `chunk_size` bytes each, the last
/// possibly shorter. A file is read one chunk at a time, so memory stays at one chunk.
pub fn for_each_chunk(
    path: &std::path::Path,
    chunk_size: u64,
    mut each: impl FnMut(Buf<'_>) -> Res<()>,
) -> Result<(), String> {
    use std::io::Read;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut f = std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?;
    let size = chunk_size.clamp(256, 1 << 30) as usize;
    let mut data = vec![0u8; size];
    let mut base = 0u64;
    loop {
        let mut n = 0;
        while n < size {
            match f.read(&mut data[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("{name}: {e}")),
            }
        }
        if n == 0 {
            if base == 0 {
                return Err(format!("{name}: the file is empty"));
            }
            return Ok(());
        }
        each(Buf::new(&data[..n], base)).map_err(|e| format!("{name}: {e}"))?;
        base += n as u64;
        if n < size {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_integers_in_both_byte_orders() {
        let le = [0u8, 1, 0x94, 2, 0x00, 0x40, 0xff, 3, 1, 2, 3];
        let mut b = Buf::new(&le, 0);
        assert_eq!(b.u32c().unwrap(), 0);
        assert_eq!(b.u32c().unwrap(), 0x94);
        assert_eq!(b.u64c().unwrap(), 0x4000);
        assert_eq!(b.u32c().unwrap(), u32::MAX);
        assert_eq!(b.u32c().unwrap(), 0x030201);
        let be = [2u8, 0x40, 0x00, 8, 0, 0, 0, 0, 0, 0, 0, 9];
        let mut b = Buf::new(&be, 0);
        b.big_endian = true;
        assert_eq!(b.u32c().unwrap(), 0x4000);
        assert_eq!(b.u64_full().unwrap(), 0x0800_0000_0000_0000);
    }

    #[test]
    fn bad_data_names_the_offset() {
        let mut b = Buf::new(&[9u8, 1, 2], 100);
        let e = b.u32c().unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid compressed integer length 9 at byte 100"
        );
        let mut b = Buf::new(&[2u8, 1], 0);
        assert!(b.u32c().is_err());
        let mut b = Buf::new(b"abc", 0);
        assert!(b.cstr().is_err());
        let mut b = Buf::new(&[200u8, 1, 2], 0);
        assert!(b.record_end().is_err());
        let mut b = Buf::new(&[3u8, 0x42, 1], 0);
        assert!(b.header(true).is_err());
        let mut b = Buf::new(&[3u8, 0x42], 0);
        assert!(b.header(false).is_ok());
    }
}
