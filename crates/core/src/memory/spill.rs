//! Spill mode (issue 30): while it is on, every allocation of at least [`threshold`]
//! bytes is served from a `MAP_SHARED` mapping of its own unlinked file on local disk,
//! so its pages are file pages the kernel can write back and drop under a cgroup
//! limit, where anonymous pages without swap cannot leave memory at all. A trace
//! larger than the memory grove may use then loads whole: its big arrays (the event
//! table's columns, the tree's arrays, the indexes) live in those files, the rest on
//! the heap.
//!
//! Everything here runs inside the global allocator, so nothing here allocates: libc
//! calls only, the directory's path in a fixed buffer, and a fixed table of the
//! spilled blocks (address, mapped length, descriptor) that tells `dealloc` and
//! `realloc` which blocks are spilled. Any call that fails (no descriptor left, the
//! disk full, the table full) gives the heap's answer instead: spilling is only ever a
//! place to put bytes, never a new way to fail. The growth of a file is reserved with
//! `posix_fallocate` before it is mapped, so a full disk is a failed allocation
//! (served by the heap), never a SIGBUS on a mapped page.
//!
//! The filled part of a growing block is handed to writeback when it grows (a vector
//! grows when it is full). Under a cgroup v1 limit that is all it takes: the kernel's
//! reclaim wakes the flusher threads and waits for pages under writeback, and a 1 GB
//! trace under a 120 MiB group or the 10 GB one under 1 GiB loaded with no OOM kill
//! and no slower without more (docs/performance.md). Under `--max-memory` no cgroup
//! presses on the written pages, so a flusher thread starts the writeback of every
//! spilled file every [`FLUSH_MS`] and pages the clean pages out once the process nears
//! the cap.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};

/// How many spilled blocks may live at once (a block past it stays on the heap).
const SLOTS: usize = 16384;
/// How far from its hash a block's slot may lie: a lookup reads at most this many.
const PROBE: usize = 64;
const PAGE: usize = 4096;
/// The flusher's period.
pub const FLUSH_MS: u64 = 200;
/// The default threshold: the growing columns and arrays of a big load, not the
/// thousands of small buffers whose pages would be mostly one file's overhead.
pub const DEFAULT_THRESHOLD: usize = 1 << 20;

struct Slot {
    addr: AtomicUsize,
    len: AtomicUsize,
    fd: AtomicI32,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    addr: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    fd: AtomicI32::new(-1),
};
static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];

static ON: AtomicBool = AtomicBool::new(false);
static THRESHOLD: AtomicUsize = AtomicUsize::new(DEFAULT_THRESHOLD);
/// Live spilled blocks and their mapped bytes, and the most bytes spilled at once.
static COUNT: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
/// Files made, for the names of those made without `O_TMPFILE`.
static SERIAL: AtomicU64 = AtomicU64::new(0);

/// The directory, NUL-terminated, written once by `enable` before `ON` is set.
const DIR_MAX: usize = 512;
struct DirBuf(std::cell::UnsafeCell<[u8; DIR_MAX]>);
// SAFETY: written only by `enable` under `ENABLE` before `ON` is stored (SeqCst), read
// only after `ON` is seen; never written again once set.
unsafe impl Sync for DirBuf {}
static DIR: DirBuf = DirBuf(std::cell::UnsafeCell::new([0; DIR_MAX]));
static DIR_LEN: AtomicUsize = AtomicUsize::new(0);
static ENABLE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether spill mode is on.
pub fn is_on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The smallest allocation spilled.
pub fn threshold() -> usize {
    THRESHOLD.load(Ordering::Relaxed)
}

/// Bytes in spilled blocks now, and the most at once.
pub fn bytes() -> (u64, u64) {
    (BYTES.load(Ordering::Relaxed), PEAK.load(Ordering::Relaxed))
}

/// The directory spilled files go to (None while spill mode is off).
pub fn dir() -> Option<PathBuf> {
    if !is_on() {
        return None;
    }
    use std::os::unix::ffi::OsStrExt;
    let n = DIR_LEN.load(Ordering::SeqCst);
    // SAFETY: set once before ON; see DirBuf.
    let b = unsafe { &(&*DIR.0.get())[..n] };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(b)))
}

/// Turns spill mode on, into `dir`, for the rest of the process (the arrays of a load
/// outlive it: the tree and indexes built after it must spill too). `threshold` is
/// the smallest allocation spilled (at least a page). A second call keeps the first
/// directory.
pub fn enable(dir: &Path, threshold: usize) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let _g = ENABLE.lock().unwrap_or_else(|e| e.into_inner());
    if is_on() {
        return Ok(());
    }
    let b = dir.as_os_str().as_bytes();
    if b.is_empty() || b.len() + 64 > DIR_MAX || b.contains(&0) {
        return Err(format!("{}: not a usable directory path", dir.display()));
    }
    let mut path = [0u8; DIR_MAX];
    path[..b.len()].copy_from_slice(b);
    // Probe once that a file can be made, reserved, mapped and released there.
    // SAFETY: a fresh block of our own, unmapped and closed at once.
    unsafe {
        match create(&path[..=b.len()], PAGE) {
            Some((p, fd)) => {
                libc::munmap(p.cast(), PAGE);
                libc::close(fd);
            }
            None => {
                let e = std::io::Error::last_os_error();
                return Err(format!("{}: cannot map a file there ({e})", dir.display()));
            }
        }
    }
    // SAFETY: ON is still false, so no allocator call reads DIR; ENABLE serialises
    // writers.
    unsafe {
        *DIR.0.get() = path;
    }
    DIR_LEN.store(b.len(), Ordering::SeqCst);
    THRESHOLD.store(threshold.max(PAGE), Ordering::SeqCst);
    ON.store(true, Ordering::SeqCst);
    raise_fd_limit();
    // Under a cgroup the kernel's own writeback kept up (module doc); under
    // `--max-memory` nothing else drops the written pages. `GROVE_SPILL_FLUSH=1|0`
    // (hidden) forces the flusher on or off, to measure it.
    let flush = match std::env::var("GROVE_SPILL_FLUSH").as_deref().map(str::trim) {
        Ok("1") => true,
        Ok("0") => false,
        _ => super::HARD_CAP.load(Ordering::Relaxed) > 0,
    };
    if !flush {
        return Ok(());
    }
    let _ = std::thread::Builder::new()
        .name("grove-spill-flush".into())
        .stack_size(64 << 10)
        .spawn(flusher);
    Ok(())
}

/// Each spilled block holds a descriptor: the soft limit is raised to the hard one
/// (a block past it stays on the heap).
fn raise_fd_limit() {
    // SAFETY: get/setrlimit on a zeroed struct.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max.min(1 << 20);
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// Starts the writeback of every spilled file's dirty pages, forever (module doc).
/// Under `--max-memory` nothing else would drop the written pages (no cgroup presses
/// on them), so once the process's resident size nears the cap they are paged out
/// (`MADV_PAGEOUT`: clean file pages are dropped, to be read again when touched).
fn flusher() {
    loop {
        std::thread::sleep(std::time::Duration::from_millis(FLUSH_MS));
        if COUNT.load(Ordering::Relaxed) == 0 {
            continue;
        }
        let cap = super::HARD_CAP.load(Ordering::Relaxed);
        let over = cap > 0 && super::resident_now().is_some_and(|(r, _)| r > cap / 10 * 8);
        for s in TABLE.iter() {
            let addr = s.addr.load(Ordering::Acquire);
            if addr == 0 {
                continue;
            }
            let fd = s.fd.load(Ordering::Acquire);
            // A block freed meanwhile may leave a descriptor reused by another file, or
            // its range mapped again: starting a writeback, or paging out what can be
            // read again, is harmless there (anonymous pages without swap stay).
            // SAFETY: both only start work the kernel may skip; neither changes
            // contents; a bad descriptor or range is an error return.
            unsafe {
                if fd > 2 {
                    libc::sync_file_range(fd, 0, 0, libc::SYNC_FILE_RANGE_WRITE);
                }
                if over {
                    let len = s.len.load(Ordering::Relaxed);
                    libc::madvise(addr as *mut libc::c_void, len, libc::MADV_PAGEOUT);
                }
            }
        }
    }
}

/// Where spilled files may go, for a load that will spill about `need` bytes: the
/// first of `$TMPDIR` (else /tmp) and grove's cache directory that is a directory on a
/// disk (not tmpfs or ramfs, whose pages are memory) with `need` bytes free and room
/// to spare; else why none is (one clause for the warning).
pub fn choose_dir(need: u64) -> Result<PathBuf, String> {
    let tmp = std::env::var_os("TMPDIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    let cache = match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) if !d.is_empty() => Some(PathBuf::from(d).join("grove")),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("grove")),
    };
    let mut why = Vec::new();
    for (i, d) in std::iter::once(tmp).chain(cache).enumerate() {
        if i > 0 {
            let _ = std::fs::create_dir_all(&d);
        }
        match usable(&d, need) {
            Ok(()) => return Ok(d),
            Err(e) => why.push(format!("{} {e}", d.display())),
        }
    }
    Err(why.join(", "))
}

/// Whether spilled files of `need` bytes fit in `dir` (a clause saying why not).
fn usable(dir: &Path, need: u64) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let mut c = dir.as_os_str().as_bytes().to_vec();
    c.push(0);
    // SAFETY: statfs/statvfs fill zeroed structs from a NUL-terminated path.
    let (kind, free) = unsafe {
        let mut f: libc::statfs = std::mem::zeroed();
        let mut v: libc::statvfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr().cast(), &mut f) != 0
            || libc::statvfs(c.as_ptr().cast(), &mut v) != 0
        {
            return Err(format!(
                "cannot be read ({})",
                std::io::Error::last_os_error()
            ));
        }
        (f.f_type as i64, v.f_bavail as u64 * v.f_frsize as u64)
    };
    const TMPFS: i64 = 0x0102_1994;
    const RAMFS: i64 = 0x8584_58f6;
    if kind == TMPFS || kind == RAMFS {
        return Err("is in memory (tmpfs)".into());
    }
    // Room for the files and a margin for whatever else writes there.
    let want = need + need / 4 + (1 << 30);
    if free < want {
        return Err(format!(
            "has {} free, {} wanted",
            super::human(free),
            super::human(want)
        ));
    }
    if !dir.is_dir() {
        return Err("is not a directory".into());
    }
    Ok(())
}

fn round(n: usize) -> Option<usize> {
    n.checked_add(PAGE - 1).map(|v| v / PAGE * PAGE)
}

fn home(addr: usize) -> usize {
    ((addr / PAGE).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % SLOTS
}

/// Records a spilled block; false when its neighbourhood of the table is full.
fn insert(addr: usize, len: usize, fd: i32) -> bool {
    let h = home(addr);
    for i in 0..PROBE {
        let s = &TABLE[(h + i) % SLOTS];
        if s.addr.load(Ordering::Relaxed) == 0
            && s.addr
                .compare_exchange(0, addr, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            s.len.store(len, Ordering::Relaxed);
            s.fd.store(fd, Ordering::Release);
            COUNT.fetch_add(1, Ordering::Relaxed);
            let now = BYTES.fetch_add(len as u64, Ordering::Relaxed) + len as u64;
            PEAK.fetch_max(now, Ordering::Relaxed);
            return true;
        }
    }
    false
}

/// The slot of a spilled block at `addr`, if it is one.
fn find(addr: usize) -> Option<&'static Slot> {
    if !addr.is_multiple_of(PAGE) || COUNT.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let h = home(addr);
    (0..PROBE)
        .map(|i| &TABLE[(h + i) % SLOTS])
        .find(|s| s.addr.load(Ordering::Acquire) == addr)
}

/// Forgets a slot, giving back its mapping's length and descriptor.
fn remove(s: &Slot) -> (usize, i32) {
    let len = s.len.load(Ordering::Relaxed);
    let fd = s.fd.swap(-1, Ordering::AcqRel);
    s.addr.store(0, Ordering::Release);
    COUNT.fetch_sub(1, Ordering::Relaxed);
    BYTES.fetch_sub(len as u64, Ordering::Relaxed);
    (len, fd)
}

/// A new file of `len` bytes (a multiple of the page) in the directory `dir`, its blocks
/// reserved, mapped shared; None (errno set) when any step fails.
unsafe fn create(dir: &[u8], len: usize) -> Option<(*mut u8, i32)> {
    // `dir` ends with its NUL.
    let mut fd = libc::open(
        dir.as_ptr().cast(),
        libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC,
        0o600,
    );
    if fd < 0 {
        fd = open_named(dir);
        if fd < 0 {
            return None;
        }
    }
    if !grow(fd, 0, len) {
        libc::close(fd);
        return None;
    }
    let p = libc::mmap(
        std::ptr::null_mut(),
        len,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_SHARED,
        fd,
        0,
    );
    if p == libc::MAP_FAILED {
        libc::close(fd);
        return None;
    }
    Some((p.cast(), fd))
}

/// Where `O_TMPFILE` is not supported: a named file in `dir` (its path and a NUL),
/// unlinked at once; its descriptor, or -1.
unsafe fn open_named(dir: &[u8]) -> i32 {
    let n = dir.len() - 1;
    let mut name = [0u8; DIR_MAX];
    name[..n].copy_from_slice(&dir[..n]);
    let prefix = b"/.grove-spill-";
    name[n..n + prefix.len()].copy_from_slice(prefix);
    let mut at = put_num(&mut name, n + prefix.len(), libc::getpid() as u64);
    name[at] = b'-';
    at = put_num(&mut name, at + 1, SERIAL.fetch_add(1, Ordering::Relaxed));
    name[at] = 0;
    let fd = libc::open(
        name.as_ptr().cast(),
        libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
        0o600,
    );
    if fd >= 0 {
        libc::unlink(name.as_ptr().cast());
    }
    fd
}

/// Sets the file's size to `new` and reserves its blocks from `old` on, so a page of
/// the mapping never lacks disk (a full disk fails here, not as a SIGBUS later).
unsafe fn grow(fd: i32, old: usize, new: usize) -> bool {
    if libc::ftruncate(fd, new as libc::off_t) != 0 {
        return false;
    }
    new <= old || libc::posix_fallocate(fd, old as libc::off_t, (new - old) as libc::off_t) == 0
}

/// Writes `v` in decimal at `at`; returns the end.
fn put_num(buf: &mut [u8], at: usize, v: u64) -> usize {
    let mut digits = [0u8; 20];
    let mut n = 0;
    let mut v = v;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..n {
        buf[at + i] = digits[n - 1 - i];
    }
    at + n
}

/// Whether an allocation of `size` bytes aligned to `align` is to be spilled.
#[inline]
pub(super) fn wants(size: usize, align: usize) -> bool {
    is_on() && size >= threshold() && align <= 16
}

/// A spilled block of `size` bytes (zeroed: a new file reads as zeros); null when it
/// cannot be made (the caller takes the heap).
///
/// # Safety
/// Only the global allocator calls it.
pub(super) unsafe fn alloc(size: usize) -> *mut u8 {
    let n = DIR_LEN.load(Ordering::Relaxed);
    alloc_in(&(&*DIR.0.get())[..=n], size)
}

/// `alloc` into the directory `dir` (its path and a NUL).
unsafe fn alloc_in(dir: &[u8], size: usize) -> *mut u8 {
    let Some(len) = round(size) else {
        return std::ptr::null_mut();
    };
    let Some((p, fd)) = create(dir, len) else {
        return std::ptr::null_mut();
    };
    if !insert(p as usize, len, fd) {
        libc::munmap(p.cast(), len);
        libc::close(fd);
        return std::ptr::null_mut();
    }
    p
}

/// Whether `ptr` is a spilled block.
pub(super) fn owns(ptr: *mut u8) -> bool {
    find(ptr as usize).is_some()
}

/// Frees `ptr` if it is a spilled block (false: it is not, the heap's to free).
///
/// # Safety
/// Only the global allocator calls it, with a block it gave out.
pub(super) unsafe fn dealloc(ptr: *mut u8) -> bool {
    let Some(s) = find(ptr as usize) else {
        return false;
    };
    let (len, fd) = remove(s);
    libc::munmap(ptr.cast(), len);
    if fd >= 0 {
        libc::close(fd);
    }
    true
}

/// Resizes the spilled block `ptr` (of `old` bytes) in place or by `mremap`, its
/// contents kept; null when that fails (the block is then unchanged, the caller moves
/// it). A size below the threshold is not asked here: the caller moves it to the heap.
///
/// When the moved block finds no slot it goes to the heap (`malloc`, which the
/// system allocator frees for an alignment up to 16) and `on_heap` is set.
///
/// # Safety
/// Only the global allocator calls it, with a spilled block (`owns`) aligned to at
/// most 16 bytes.
pub(super) unsafe fn resize(ptr: *mut u8, new: usize, on_heap: &mut bool) -> *mut u8 {
    let Some(s) = find(ptr as usize) else {
        return std::ptr::null_mut();
    };
    let Some(new_len) = round(new) else {
        return std::ptr::null_mut();
    };
    let len = s.len.load(Ordering::Relaxed);
    let fd = s.fd.load(Ordering::Relaxed);
    if new_len == len {
        return ptr;
    }
    if new_len > len {
        // The filled part (a vector grows when it is full) can be written back now.
        libc::sync_file_range(fd, 0, len as libc::off_t, libc::SYNC_FILE_RANGE_WRITE);
        if !grow(fd, len, new_len) {
            libc::ftruncate(fd, len as libc::off_t);
            return std::ptr::null_mut();
        }
    }
    let q = libc::mremap(ptr.cast(), len, new_len, libc::MREMAP_MAYMOVE);
    if q == libc::MAP_FAILED {
        if new_len > len {
            libc::ftruncate(fd, len as libc::off_t);
        }
        return std::ptr::null_mut();
    }
    if new_len < len {
        libc::ftruncate(fd, new_len as libc::off_t);
    }
    let q = q as *mut u8;
    let (_, fd) = remove(s);
    if insert(q as usize, new_len, fd) {
        return q;
    }
    // No slot near the new address (the table holds 4x what a big load needs, so
    // this is rare): the block moves to the heap, or is leaked if even that fails.
    let h = libc::malloc(new);
    if h.is_null() {
        return q;
    }
    std::ptr::copy_nonoverlapping(q, h.cast::<u8>(), new);
    libc::munmap(q.cast(), new_len);
    libc::close(fd);
    *on_heap = true;
    h.cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_rounding() {
        let mut b = [0u8; 32];
        let end = put_num(&mut b, 2, 40961);
        assert_eq!(&b[2..end], b"40961");
        assert_eq!(put_num(&mut b, 0, 0), 1);
        assert_eq!(round(1), Some(PAGE));
        assert_eq!(round(PAGE), Some(PAGE));
        assert_eq!(round(usize::MAX), None);
    }
}

#[cfg(test)]
mod block_tests {
    use super::*;

    /// The test directory's path and a NUL (tests never turn spill mode on: they call
    /// the block functions themselves).
    fn test_dir() -> Vec<u8> {
        use std::os::unix::ffi::OsStrExt;
        let mut d = std::env::temp_dir().as_os_str().as_bytes().to_vec();
        d.push(0);
        d
    }

    fn fill(p: *mut u8, n: usize, seed: u8) {
        for i in 0..n {
            // SAFETY: the block holds at least n bytes.
            unsafe { *p.add(i) = (i as u8).wrapping_mul(31).wrapping_add(seed) };
        }
    }

    fn holds(p: *mut u8, n: usize, seed: u8) -> bool {
        // SAFETY: the block holds at least n bytes.
        (0..n).all(|i| unsafe { *p.add(i) } == (i as u8).wrapping_mul(31).wrapping_add(seed))
    }

    #[test]
    fn a_block_is_zeroed_grows_and_shrinks_with_its_contents_and_is_freed() {
        let d = test_dir();
        // SAFETY: blocks of our own, used within their sizes.
        unsafe {
            let p = alloc_in(&d, 3 * PAGE + 5);
            assert!(!p.is_null());
            assert!(owns(p));
            assert!(
                (0..3 * PAGE + 5).all(|i| *p.add(i) == 0),
                "a new file reads as zeros"
            );
            fill(p, 3 * PAGE + 5, 7);
            let mut heap = false;
            let q = resize(p, 300 * PAGE + 1, &mut heap);
            assert!(!q.is_null() && !heap && owns(q));
            assert!(holds(q, 3 * PAGE + 5, 7), "growing keeps the contents");
            assert!(
                (3 * PAGE + 5..300 * PAGE + 1).all(|i| *q.add(i) == 0),
                "the growth reads as zeros"
            );
            fill(q, 300 * PAGE + 1, 9);
            let r = resize(q, 2 * PAGE, &mut heap);
            assert!(!r.is_null() && !heap && owns(r));
            assert!(holds(r, 2 * PAGE, 9), "shrinking keeps what is left");
            assert!(dealloc(r));
            assert!(!owns(r));
            assert!(!dealloc(r), "a freed block is no longer spilled");
        }
    }

    #[test]
    fn a_named_file_is_unlinked_at_once() {
        let d = std::env::temp_dir().join(format!("grove-spill-named-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let mut c = d.to_str().unwrap().as_bytes().to_vec();
        c.push(0);
        // SAFETY: a descriptor of our own, closed at once.
        unsafe {
            let fd = open_named(&c);
            assert!(fd >= 0);
            libc::close(fd);
        }
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        std::fs::remove_dir(&d).unwrap();
    }

    #[test]
    fn heap_blocks_are_not_taken_for_spilled_ones() {
        let v = vec![1u8; 2 << 20];
        assert!(!owns(v.as_ptr() as *mut u8));
        let x = 5u64;
        assert!(!owns(&x as *const u64 as *mut u8));
    }

    #[test]
    fn an_unusable_directory_gives_no_block_and_is_refused() {
        // SAFETY: a failed allocation returns null and holds nothing.
        unsafe {
            assert!(alloc_in(b"/nonexistent/grove-spill\0", 4 * PAGE).is_null());
        }
        assert!(enable(Path::new("/nonexistent/grove-spill"), PAGE).is_err());
        let file = std::env::temp_dir().join(format!("grove-spill-file-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        assert!(enable(&file, PAGE).is_err(), "a file is not a directory");
        std::fs::remove_file(&file).unwrap();
        assert!(!is_on());
    }
}
