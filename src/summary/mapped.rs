//! A file mapped read-only into memory: the cache entry's tree file (`tree_file`), whose
//! metric columns a warm open reads where they lie instead of copying them (issue 30:
//! on a 1 GB trace they are 101 MB of the 117 MB entry, and a tree on screen touches
//! one or two of them).
//!
//! Mapped pages are file pages: the kernel reads them in when touched and may drop
//! them again; `release` hands a range back at once (what was checked or copied need
//! not stay resident). grove never changes an entry in place (a store writes a new one
//! under a temporary name and renames it; the old one is unlinked, and a mapping of an
//! unlinked file stays valid), so what was checked stays what is read.

use std::fs::File;
use std::ops::Range;

/// A whole file, mapped read-only; unmapped when the last holder drops it.
pub struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and never remapped while it lives; shared reads
// from any thread are as safe as reads of an immutable slice.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapping({} bytes)", self.len)
    }
}

impl Mapping {
    /// Maps `file` (its whole length now) read-only; an empty file is an error.
    pub fn of(file: &File) -> std::io::Result<Mapping> {
        use std::os::unix::io::AsRawFd;
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| std::io::Error::other("file too large to map"))?;
        if len == 0 {
            return Err(std::io::Error::other("empty file"));
        }
        // SAFETY: a fresh private read-only mapping of an open file; the result is
        // checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping { ptr, len })
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `ptr` for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }

    /// Lets the pages of `range` go from this process's memory: read again from the
    /// file on the next touch, with the same bytes (nothing is written to them).
    pub fn release(&self, range: Range<usize>) {
        const PAGE: usize = 4096;
        let start = range.start / PAGE * PAGE;
        let end = range.end.min(self.len);
        if end <= start {
            return;
        }
        // SAFETY: the range lies inside the mapping; MADV_DONTNEED on a private
        // mapping never written only drops clean file pages, which fault back in.
        unsafe {
            libc::madvise(
                (self.ptr as *mut u8).add(start) as *mut libc::c_void,
                end - start,
                libc::MADV_DONTNEED,
            );
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `of` mapped, once; no slice of it outlives `self`.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

/// CRC-32 and length of the whole mapping, read in pieces that are let go once hashed:
/// the check does not leave the entry resident.
pub fn checksum(m: &Mapping) -> (u64, u32) {
    const PIECE: usize = 8 << 20;
    let mut h = crc32fast::Hasher::new();
    let bytes = m.bytes();
    for at in (0..bytes.len()).step_by(PIECE) {
        let end = bytes.len().min(at + PIECE);
        h.update(&bytes[at..end]);
        m.release(at..end);
    }
    (bytes.len() as u64, h.finalize())
}
