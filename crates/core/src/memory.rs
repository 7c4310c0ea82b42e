//! The memory grove may use, and what a load will need. Login nodes cap a user's
//! memory (cgroups, `ulimit -v`); a load that cannot fit should be refused before it
//! starts, with a message that says how much it needs, not end in an abort part-way.
//!
//! The limit is the smallest of the cgroup v2/v1 limit, RLIMIT_AS and physical
//! memory, unless `--max-memory` sets it. RLIMIT_AS (`ulimit -v`) counts address
//! space, not memory: what the process maps before it loads anything (the binary, its
//! libraries) and what each thread reserves (its stack) are taken off it, and under
//! such a limit glibc keeps one malloc arena (each other arena reserves 64 MiB of
//! address space whatever it holds). `--max-memory` is a hard cap: while it is set,
//! `ReportingAlloc` counts the heap in use, and an allocation that would take the
//! process past the cap fails as it would under `ulimit -v` (one line, exit 2). The
//! estimate is deliberately low (a lower bound measured on real loads), so no file that
//! loads today is refused; an allocation failure that still happens prints one line
//! through `ReportingAlloc`. A trace larger than the limit can load whole with its
//! big blocks in mapped files on local disk instead: `ReportingAlloc`'s spill mode
//! (`spill`), chosen by `readers::fit::spill`.

pub mod spill;

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// `--max-memory` in bytes; 0 when not given.
static OVERRIDE: AtomicU64 = AtomicU64::new(0);
/// The limit last computed, for the out-of-memory line (0: not known).
static KNOWN_LIMIT: AtomicU64 = AtomicU64::new(0);

/// Address space the process held when `configure` ran (VmSize), taken off an
/// address-space limit: the binary, its libraries, the main thread's stack.
static BASE_VM: AtomicU64 = AtomicU64::new(0);
/// File-backed pages resident when `configure` ran (the binary's code touched so far).
static BASE_FILE: AtomicU64 = AtomicU64::new(0);

/// The heap `--max-memory` leaves once the process's resident size at `configure` is
/// taken off (0: no cap), and the heap in use, counted only while a cap is set (it
/// may go below 0: blocks allocated before the count began and freed after).
static HEAP_CAP: AtomicU64 = AtomicU64::new(0);
/// `--max-memory` when it is a hard cap (0: none).
static HARD_CAP: AtomicU64 = AtomicU64::new(0);
static HEAP_USED: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

/// What each thread grove may start reserves of an address-space limit: its stack
/// (the loading thread asks for 8 MiB, others take Rust's 2 MiB) and glibc's guard.
const THREAD_VM: u64 = 8 << 20;

/// Values at or above this mean "no limit" (cgroup v1 writes 2^63 rounded to a page).
const UNLIMITED: u64 = 1 << 60;

/// Loads running now (see [`LoadAllocator`]).
static LOADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// While a load runs, glibc serves every allocation of 128 KiB or more from a mapping
/// of its own; once no load runs, only those above 32 MiB. Why the first: glibc raises
/// its threshold (up to 32 MiB) to the size of each mapped block freed, so once a load
/// has freed its first block buffers, everything below that size (growing columns,
/// per-part tables) comes from the heap, where freed pages stay with the process and
/// the next column is laid beside them: the load's peak then depends on the heap's
/// layout (node300's `info` peaked at 146 or 160 MiB for two builds of one source).
/// With 128 KiB, a freed buffer goes back at once and a growing one is moved by
/// `mremap`, not copied (issue 16: big300 86 -> 79 MiB, node300 137 -> 130 MiB, time
/// unchanged). Why the second: the commands that follow allocate and free arrays of a
/// node each (a filter of a 1M-node tree); mapped afresh each time, their pages fault
/// in again (`:sort` 6 -> 8.4 ms, a filter 36 -> 43 ms), while from the heap they are
/// reused, as glibc's own adjustment would end up doing. A user's
/// `MALLOC_MMAP_THRESHOLD_` wins over both.
pub struct LoadAllocator(());

impl LoadAllocator {
    /// Marks a load as running until the value is dropped.
    pub fn begin() -> LoadAllocator {
        if LOADS.fetch_add(1, Ordering::SeqCst) == 0 {
            set_mmap_threshold(128 << 10);
            // glibc's default: heap that commands kept (`for_commands`) is given back
            // again, so a load's peak does not count it.
            set_trim_threshold(128 << 10);
        }
        LoadAllocator(())
    }
}

impl Drop for LoadAllocator {
    fn drop(&mut self) {
        if LOADS.fetch_sub(1, Ordering::SeqCst) == 1 {
            set_mmap_threshold(32 << 20);
        }
    }
}

/// Sets the allocator up for commands on a tree (`App::new`), unless a load runs: the
/// 32 MiB threshold a load leaves, which a tree built without a load (grove's cache, a
/// benchmark) did not get, and freed heap kept up to 64 MiB, as glibc's own adjustment
/// does after freeing a 32 MiB block. A command on a 1M-node tree allocates and frees
/// arrays of 1-8 MB; mapped afresh, or given back at the top of the heap, each had its
/// pages faulted in again by the next command, and which one paid depended on what the
/// commands before had freed (`grove-bench commands 1000000`, best of 5: the first
/// filter 22-28 -> 15 ms, pop-filter under a name sort 88-91 -> 63-67 ms; a session of
/// filters on the 1M-node literal peaks 168 MiB as before). `MALLOC_*_` settings in
/// the environment win.
pub fn for_commands() {
    if LOADS.load(Ordering::SeqCst) == 0 {
        set_mmap_threshold(32 << 20);
        // Under a hard cap, freed heap kept for the next command would count against
        // it without being in use: glibc's default then.
        let keep = if HEAP_CAP.load(Ordering::Relaxed) > 0 {
            128 << 10
        } else {
            64 << 20
        };
        set_trim_threshold(keep);
    }
}

/// Asks for transparent huge pages under a vector's whole capacity (Linux, where the
/// kernel's THP mode is `madvise`): a builder that fills hundreds of MB at once (the
/// inverted tree) takes a fault per 2 MiB instead of per 4 KiB. Call it after reserving
/// and before writing; only a hint, the contents never change.
pub fn prefer_huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < 4 << 20 {
            return;
        }
        let start = (v.as_mut_ptr() as usize).div_ceil(PAGE) * PAGE;
        let end = (v.as_mut_ptr() as usize + bytes) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside the vector's own allocation, page-aligned
            // inward; MADV_HUGEPAGE only marks it, it reads and writes nothing.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// Sets how much free heap glibc keeps at its top before giving it back (a tuning, as
/// `set_mmap_threshold`).
fn set_trim_threshold(_bytes: i32) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_none() {
        // SAFETY: mallopt sets one malloc parameter under glibc's own lock.
        unsafe {
            libc::mallopt(libc::M_TRIM_THRESHOLD, _bytes);
        }
    }
}

/// Sets glibc's mmap threshold (only a tuning: two loads starting and ending at once
/// may leave either value for a moment).
fn set_mmap_threshold(_bytes: i32) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        // SAFETY: mallopt sets one malloc parameter under glibc's own lock.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, _bytes);
        }
    }
}

/// `--low-memory` (or `GROVE_LOW_MEMORY=1`): traces keep a level-of-detail summary of
/// their events instead of the rows (`gpu::lod`).
static LOW_MEMORY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Applies `--low-memory`.
pub fn set_low_memory(on: bool) {
    LOW_MEMORY.store(on, Ordering::SeqCst);
}

/// Whether loads run in low-memory mode: `--low-memory`, or `GROVE_LOW_MEMORY=1`.
pub fn low_memory() -> bool {
    LOW_MEMORY.load(Ordering::SeqCst)
        || std::env::var("GROVE_LOW_MEMORY").is_ok_and(|v| v.trim() == "1")
}

/// Applies `--max-memory SIZE` (`512M`, `2G`, `1.5GiB`, plain bytes).
pub fn configure(max_memory: Option<&str>) -> Result<(), String> {
    if let Some(s) = max_memory {
        let bytes = parse_size(s).ok_or_else(|| {
            format!("--max-memory {s:?}: expected a size such as 512M, 4G or 1.5GiB")
        })?;
        OVERRIDE.store(bytes.max(1), Ordering::SeqCst);
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    BASE_VM.store(status_kib(&status, "VmSize:") << 10, Ordering::SeqCst);
    BASE_FILE.store(status_kib(&status, "RssFile:") << 10, Ordering::SeqCst);
    if rlimit_as().is_some() {
        // One arena: every further one reserves 64 MiB of the address space.
        set_arena_max(1);
    }
    let (limit, _) = limit();
    KNOWN_LIMIT.store(limit, Ordering::SeqCst);
    let o = OVERRIDE.load(Ordering::SeqCst);
    if o > 0 {
        // The cap holds the whole process: what is resident now (the binary's pages)
        // is not heap, and glibc's bookkeeping and partly used pages take a little
        // more than the blocks asked for (measured: RSS 2-4% above the heap in use).
        let resident = status_kib(&status, "VmRSS:") << 10;
        // A cap not far above what grove holds before it loads anything cannot be
        // held by any load: it stays a budget for the estimate alone (choosing a part).
        if o > resident + (8 << 20) {
            // The first checkpoint (`room_after_all`) halfway.
            HEAP_USED.store(0, Ordering::SeqCst);
            HARD_CAP.store(o, Ordering::SeqCst);
            HEAP_CAP.store((o - resident) / 2, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// A `/proc/self/status` field in KiB (0 when absent).
fn status_kib(status: &str, key: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Caps glibc's malloc arenas (a tuning; `MALLOC_ARENA_MAX` wins).
fn set_arena_max(_n: i32) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt sets one malloc parameter under glibc's own lock.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, _n);
        }
    }
}

pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let v: f64 = s[..split].parse().ok()?;
    let unit = s[split..].trim().to_ascii_lowercase();
    let mul: f64 = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let b = v * mul;
    (b.is_finite() && b >= 1.0 && b < UNLIMITED as f64).then_some(b as u64)
}

fn read_u64(path: &str) -> Option<u64> {
    let t = std::fs::read_to_string(path).ok()?;
    t.trim().parse().ok().filter(|&v| v < UNLIMITED)
}

/// The cgroup limit of this process: v2 `memory.max`, else v1 `memory.limit_in_bytes`.
fn cgroup_limit() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut best: Option<u64> = None;
    let mut take = |v: Option<u64>| {
        if let Some(v) = v {
            best = Some(best.map_or(v, |b: u64| b.min(v)));
        }
    };
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrl, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => continue,
        };
        if ctrl.is_empty() {
            take(read_u64(&format!("/sys/fs/cgroup{path}/memory.max")));
        } else if ctrl.split(',').any(|c| c == "memory") {
            take(read_u64(&format!(
                "/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"
            )));
        }
    }
    // Inside a container the group's own files show at the root.
    take(read_u64("/sys/fs/cgroup/memory.max"));
    take(read_u64("/sys/fs/cgroup/memory/memory.limit_in_bytes"));
    best
}

/// What an address-space limit (`ulimit -v`) leaves for a load's data, if one is set.
pub fn address_space_budget() -> Option<u64> {
    rlimit_as().map(as_budget)
}

fn rlimit_as() -> Option<u64> {
    // SAFETY: getrlimit fills a zeroed struct.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_AS, &mut r) == 0 && r.rlim_cur != libc::RLIM_INFINITY {
            return Some(r.rlim_cur as u64).filter(|&v| v < UNLIMITED);
        }
    }
    None
}

/// What an address-space limit leaves for the data a load makes: the limit less what
/// the process mapped before it loaded anything and the stacks of the threads a load
/// and what follows it may start (the parse's helpers, one a core; the loading, index
/// and cache threads; polars' pool, one a core).
fn as_budget(limit: u64) -> u64 {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let threads = 2 * cores + 4;
    limit
        .saturating_sub(BASE_VM.load(Ordering::SeqCst))
        .saturating_sub(threads * THREAD_VM)
        .max(1)
}

fn physical() -> Option<u64> {
    let t = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The memory grove may use and where that number comes from.
pub fn limit() -> (u64, &'static str) {
    let o = OVERRIDE.load(Ordering::SeqCst);
    if o > 0 {
        return (o, "--max-memory");
    }
    let mut best = (u64::MAX, "no limit known");
    for (v, what) in [
        (cgroup_limit(), "the cgroup memory limit"),
        (
            rlimit_as().map(as_budget),
            "the address-space limit, ulimit -v",
        ),
        (physical(), "physical memory"),
    ] {
        if let Some(v) = v {
            if v < best.0 {
                best = (v, what);
            }
        }
    }
    best
}

/// Whether going past the limit fails (an allocation refused, the kernel's OOM
/// killer): every limit but a `--max-memory` below what grove holds before it loads.
fn hard_limit() -> bool {
    OVERRIDE.load(Ordering::SeqCst) == 0 || HEAP_CAP.load(Ordering::SeqCst) > 0
}

/// What grove may still take before it reaches its limit: the limit less what it
/// holds now (the heap counted under `--max-memory`, else the resident size); None
/// when no limit is known. Work that can be left out (the cache write) asks first.
pub fn room() -> Option<(u64, &'static str)> {
    let (limit, source) = limit();
    if limit == u64::MAX {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let held = if source == "the address-space limit, ulimit -v" {
        // The budget already left out what was mapped before the load.
        (status_kib(&status, "VmSize:") << 10).saturating_sub(BASE_VM.load(Ordering::SeqCst))
    } else {
        // Spilled pages can be written back and dropped: not held.
        let spilled = spill::bytes().0.min(status_kib(&status, "RssFile:") << 10);
        (status_kib(&status, "VmRSS:") << 10).saturating_sub(spilled)
    };
    Some((limit.saturating_sub(held), source))
}

/// A lower bound of the memory a load of this input needs, from its size and its
/// first bytes; None when grove has no measured factor for the format.
pub fn estimate(path: &Path, size: u64, head: &[u8]) -> Option<(u64, &'static str)> {
    let mut size = size;
    let mut head = head;
    let mut inflated = Vec::new();
    if head.starts_with(&[0x1f, 0x8b]) {
        // gzip's last four bytes are the uncompressed size mod 4 GiB; JSON traces
        // compress 5-20x, so take the larger of that and 4x the file.
        size = gzip_size(path).unwrap_or(0).max(size.saturating_mul(4));
        let mut d = flate2::read::GzDecoder::new(head);
        let _ = std::io::Read::read_to_end(&mut d, &mut inflated);
        head = &inflated;
    }
    let text = head.trim_ascii_start();
    // Lower bounds of `grove info` peak RSS per input byte (docs/testing.md): since
    // issue 16's second round generated Kineto traces of 300 MB and 1 GB peak at
    // 0.31x and 0.30x, a node-heavy one at 0.52x, a 1M-node Hatchet literal at 1.6x;
    // events with large skipped args can go lower. Under a hard limit (all but a
    // `--max-memory` too small to hold, which stays a budget for this estimate) a part
    // must fit what the whole command does, not the load alone: `grove tree` and the
    // TUI build the GPU index after the load (1 GB trace: `info` 359 MiB, `tree` 497
    // MiB), so a trace's factor is taken a third higher.
    let trace = if hard_limit() { 0.34 } else { 0.25 };
    let (factor, what) = match text.first() {
        Some(b'{') | Some(b'[') => {
            let frame = head.windows(7).any(|w| w == b"\"frame\"");
            if frame {
                (1.0, "Hatchet literal")
            } else {
                (trace, "JSON trace")
            }
        }
        _ => return None,
    };
    Some(((size as f64 * factor) as u64, what))
}

fn gzip_size(path: &Path) -> Option<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    f.seek(SeekFrom::End(-4)).ok()?;
    let mut b = [0u8; 4];
    f.read_exact(&mut b).ok()?;
    Some(u32::from_le_bytes(b) as u64)
}

/// Refuses a load that cannot fit, before it starts.
pub fn check_load(path: &Path, size: u64, head: &[u8]) -> Result<(), String> {
    match shortfall(path, size, head) {
        Some(s) => Err(s.refusal()),
        None => Ok(()),
    }
}

/// A load that will not fit: what it needs and what grove may use.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortfall {
    pub need: u64,
    /// The input's size (uncompressed estimate for gzip).
    pub size: u64,
    /// What the input is taken for (`JSON trace`).
    pub what: &'static str,
    pub limit: u64,
    /// Where the limit comes from (`--max-memory`, `the cgroup memory limit`).
    pub source: &'static str,
}

impl Shortfall {
    /// The one-line refusal when nothing smaller can be loaded instead.
    pub fn refusal(&self) -> String {
        refusal(self.need, self.size, self.what, self.limit, self.source)
            .err()
            .unwrap_or_default()
    }

    /// "the whole trace needs ~9.1 GiB, grove may use 8.0 GiB (--max-memory)".
    pub fn explain(&self) -> String {
        let close = if self.need <= self.limit {
            ", too close to the limit"
        } else {
            ""
        };
        format!(
            "the whole trace needs ~{}, grove may use {} ({}){close}",
            human(self.need),
            human(self.limit),
            self.source
        )
    }
}

/// Whether a load of this input will not fit in the memory grove may use (None: it
/// fits, or grove has no estimate for the format).
pub fn shortfall(path: &Path, size: u64, head: &[u8]) -> Option<Shortfall> {
    let (need, what) = estimate(path, size, head)?;
    let (limit, source) = limit();
    (need > limit).then_some(Shortfall {
        need,
        size,
        what,
        limit,
        source,
    })
}

fn refusal(need: u64, size: u64, what: &str, limit: u64, source: &str) -> Result<(), String> {
    if need <= limit {
        return Ok(());
    }
    Err(format!(
        "needs at least {} of memory to load (a {} {what}), but grove may use {} ({source}); load a part (--steps A-B or --window START-END) or raise the limit (--max-memory SIZE)",
        human(need),
        human(size),
        human(limit)
    ))
}

pub fn human(b: u64) -> String {
    let b = b as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", (b / 1024.0).ceil())
    }
}

/// The system allocator, but an allocation failure prints one line (how much, the
/// limit, what to do), restores the terminal and exits with status 2, instead of
/// Rust's abort message. Nothing here may allocate.
pub struct ReportingAlloc;

/// A fixed buffer to format the message into without the heap.
struct StackBuf {
    buf: [u8; 320],
    len: usize,
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Set by the first thread to run out of memory: the others wait for its exit, so the
/// user reads one line.
static DYING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cold]
fn out_of_memory(size: usize) -> ! {
    if DYING.swap(true, Ordering::SeqCst) {
        loop {
            // SAFETY: pause(2) waits for a signal; the first thread's _exit ends this.
            unsafe {
                libc::pause();
            }
        }
    }
    crate::terminal_guard::restore();
    let mut m = StackBuf {
        buf: [0; 320],
        len: 0,
    };
    let limit = KNOWN_LIMIT.load(Ordering::SeqCst);
    let _ = write!(
        m,
        "grove: out of memory: an allocation of {size} bytes failed"
    );
    if limit > 0 && limit < u64::MAX {
        let _ = write!(m, " (grove may use {} MiB)", limit >> 20);
    }
    let _ = writeln!(
        m,
        "; load a smaller part or raise the limit (--max-memory, ulimit -v)"
    );
    // SAFETY: write(2) of a stack buffer, then _exit without running destructors
    // (which could allocate).
    unsafe {
        let _ = libc::write(2, m.buf.as_ptr().cast(), m.len);
        libc::_exit(2);
    }
}

/// Counts `grow` more bytes of heap against `--max-memory` (nothing without a cap);
/// false when they would take the process past it (the count is then unchanged).
#[inline]
fn take(grow: usize) -> bool {
    let cap = HEAP_CAP.load(Ordering::Relaxed);
    if cap == 0 {
        return true;
    }
    let now = HEAP_USED.fetch_add(grow as i64, Ordering::Relaxed) + grow as i64;
    if now <= cap as i64 || room_after_all(now) {
        return true;
    }
    HEAP_USED.fetch_sub(grow as i64, Ordering::Relaxed);
    false
}

/// The slow path of `take`, at the heap count's checkpoint: the process's memory is
/// read again, file-backed pages (code touched since the start) as they are and the
/// rest as the larger of what is resident and what is counted (blocks reserved but not
/// yet touched will be), and the next checkpoint set halfway to the cap, so checks come
/// closer together as the cap nears. Nothing here allocates.
#[cold]
fn room_after_all(now: i64) -> bool {
    let Some((resident, file)) = resident_now() else {
        return false;
    };
    let anon = resident.saturating_sub(file);
    // Spilled pages are file pages but not the cap's (the cap is a cgroup's here): what
    // is left of the file pages, at least those resident when the count began.
    let file = if spill::is_on() {
        file.saturating_sub(spill::bytes().0)
            .max(BASE_FILE.load(Ordering::Relaxed))
    } else {
        file
    };
    // Stacks and glibc's own bookkeeping: a little more than what is counted.
    let projected = file + anon.max(now.max(0) as u64) + (1 << 20);
    let total = HARD_CAP.load(Ordering::Relaxed);
    if projected > total {
        return false;
    }
    HEAP_CAP.store(now as u64 + (total - projected) / 2, Ordering::Relaxed);
    true
}

/// The resident size and its file-backed part from `/proc/self/statm`, read without
/// the heap.
fn resident_now() -> Option<(u64, u64)> {
    let mut buf = [0u8; 160];
    // SAFETY: open/read/close of a proc file into a stack buffer; the path is
    // NUL-terminated.
    let n = unsafe {
        let fd = libc::open(
            c"/proc/self/statm".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    if n <= 0 {
        return None;
    }
    // "size resident shared ...", in pages.
    let mut fields = buf[..n as usize].split(|&b| b == b' ').skip(1).map(|f| {
        std::str::from_utf8(f)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
    });
    let (resident, shared) = (fields.next()??, fields.next()??);
    // SAFETY: sysconf reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    Some((resident * page, shared * page))
}

#[inline]
fn give(bytes: usize) {
    if HEAP_CAP.load(Ordering::Relaxed) != 0 {
        HEAP_USED.fetch_sub(bytes as i64, Ordering::Relaxed);
    }
}

// SAFETY: forwards to System, or to `spill` for a big block while spill mode is on
// (page-aligned mappings, freed only through `spill`, which knows its own blocks);
// only the null case (and a block past `--max-memory`, refused before System sees
// it) differs, and it never returns. Spilled bytes are not heap: `take`/`give` never
// count them.
unsafe impl GlobalAlloc for ReportingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if spill::wants(layout.size(), layout.align()) {
            let p = spill::alloc(layout.size());
            if !p.is_null() {
                return p;
            }
        }
        if !take(layout.size()) {
            out_of_memory(layout.size());
        }
        let p = System.alloc(layout);
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if spill::wants(layout.size(), layout.align()) {
            // A new file reads as zeros.
            let p = spill::alloc(layout.size());
            if !p.is_null() {
                return p;
            }
        }
        if !take(layout.size()) {
            out_of_memory(layout.size());
        }
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // A spilled block is never smaller than the threshold (`realloc` moves one
        // that shrinks below it to the heap), so smaller ones skip the lookup.
        if layout.size() >= spill::threshold() && spill::dealloc(ptr) {
            return;
        }
        give(layout.size());
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if old >= spill::threshold() && spill::owns(ptr) {
            return realloc_spilled(ptr, layout, new_size);
        }
        if new_size >= old && spill::wants(new_size, layout.align()) {
            // A heap block that grows past the threshold moves into a file.
            let p = spill::alloc(new_size);
            if !p.is_null() {
                std::ptr::copy_nonoverlapping(ptr, p, old);
                give(old);
                System.dealloc(ptr, layout);
                return p;
            }
        }
        if new_size > old && !take(new_size - old) {
            out_of_memory(new_size);
        }
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            out_of_memory(new_size);
        }
        if new_size < old {
            give(old - new_size);
        }
        p
    }
}

/// `realloc` of a spilled block: resized in its file while it stays at or above the
/// threshold, else (or when its file cannot grow: the disk full) moved to the heap.
#[cold]
unsafe fn realloc_spilled(ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
    if new_size >= spill::threshold() {
        let mut on_heap = false;
        let p = spill::resize(ptr, new_size, &mut on_heap);
        if !p.is_null() {
            if on_heap && !take(new_size) {
                out_of_memory(new_size);
            }
            return p;
        }
    }
    if !take(new_size) {
        out_of_memory(new_size);
    }
    let new = Layout::from_size_align_unchecked(new_size, layout.align());
    let p = System.alloc(new);
    if p.is_null() {
        out_of_memory(new_size);
    }
    std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
    spill::dealloc(ptr);
    p
}

#[global_allocator]
static GLOBAL: ReportingAlloc = ReportingAlloc;

/// Runs `f`, a panic inside it (polars' thread pool cannot start under an address-space
/// cap) being None and printing nothing: the cache is an optimisation, never a crash,
/// and a Parquet input that polars cannot open is an error, never a panic.
pub fn quietly<T>(f: impl FnOnce() -> Option<T>) -> Option<T> {
    use std::cell::Cell;
    use std::sync::Once;
    thread_local!(static QUIET: Cell<bool> = const { Cell::new(false) });
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                previous(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("1.5GiB"), Some(3 << 29));
        assert_eq!(parse_size("100"), Some(100));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("5Q"), None);
    }

    #[test]
    fn refuses_what_cannot_fit() {
        let head = br#"{"traceEvents": [{"ph": "X"}]}"#;
        let p = Path::new("/nonexistent");
        let (need, what) = estimate(p, 100 << 20, head).unwrap();
        let e = refusal(need, 100 << 20, what, 1 << 20, "--max-memory").unwrap_err();
        // No `--max-memory` in this process: physical memory is a hard limit.
        let want = if hard_limit() { "34.0 MiB" } else { "25.0 MiB" };
        assert!(e.contains(&format!("needs at least {want}")), "{e}");
        assert!(e.contains("--max-memory SIZE"), "{e}");
        assert!(refusal(need, 100 << 20, what, 1 << 30, "x").is_ok());
        assert!(estimate(p, 100, b"main;foo 1").is_none());
    }
}
