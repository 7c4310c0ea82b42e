//! A file mapped read-only into memory: the cache entry's tree file (`tree_file`), whose
//! metric columns a warm open reads where they lie instead of copying them (issue 30:
//! on a 1 GB trace they are 101 MB of the 117 MB entry, and a tree on screen reads one
//! or two of them). Mapped pages are file pages: the kernel reads in only those that
//! something reads.
//!
//! Everything else of the file (its checksum, strings, slots and links, a column's
//! copy) is read through `read` calls on the same open file: pages that a process
//! touches through a mapping stay resident in it, and letting them go piece by piece
//! (`MADV_DONTNEED`) left 12 of 20 MB mapped (the file's large page-cache pages are
//! mapped whole when one of their pages is touched).
//!
//! grove never changes an entry in place (a store writes a new one under a temporary
//! name and renames it over; the old file is unlinked, and a mapping of an unlinked
//! file stays valid), so what was checked stays what is read.

use std::fs::File;

/// A whole file, mapped read-only; unmapped (and closed) when the last holder drops it.
/// The file stays open beside the mapping, so a copy can be read through `read` calls
/// (`read_at`) instead of the mapping's pages.
pub struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
    file: File,
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
    pub fn of(file: File) -> std::io::Result<Mapping> {
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
        Ok(Mapping { ptr, len, file })
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `ptr` for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl crate::model::lent::Backing for Mapping {
    fn bytes(&self) -> &[u8] {
        Mapping::bytes(self)
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

/// File systems whose files are not mapped (`local`): network and user-space ones.
const REMOTE: [u32; 12] = [
    0x6969,      // NFS
    0x0BD0_0BD0, // Lustre
    0x4750_4653, // GPFS
    0xFF53_4D42, // CIFS
    0xFE53_4D42, // SMB2
    0x517B,      // SMB
    0x00C3_6400, // Ceph
    0x1983_0326, // BeeGFS
    0x6573_5546, // FUSE (sshfs and the like)
    0x6B41_4653, // AFS
    0x5346_414F, // OpenAFS
    0x0102_1997, // 9P
];

/// Whether `file` lies on a local file system, where a mapping is safe to keep. On a
/// network one (an NFS home directory, Lustre, GPFS) another client may replace the
/// entry while this grove reads it, and a page not read in yet then faults (SIGBUS)
/// instead of reading: there the caller copies instead. Unknown (fstatfs failed): not.
pub fn local(file: &File) -> bool {
    use std::os::unix::io::AsRawFd;
    // SAFETY: fstatfs writes into the zeroed struct given; the descriptor is open.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut s) } != 0 {
        return false;
    }
    !REMOTE.contains(&(s.f_type as u64 as u32))
}

/// Length and CRC-32 of `file`, read from its start in 1 MiB pieces through the page
/// cache: the check leaves nothing of the entry resident in the process.
pub fn checksum(file: &File) -> Result<(u64, u32), String> {
    use std::os::unix::fs::FileExt;
    let mut h = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        match file.read_at(&mut buf, n) {
            Ok(0) => break,
            Ok(k) => {
                h.update(&buf[..k]);
                n += k as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok((n, h.finalize()))
}
