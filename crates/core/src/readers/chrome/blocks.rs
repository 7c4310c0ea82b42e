//! The event array read block by block: a block of the file (a few MB, never the
//! whole file) is split at event boundaries into parts (two per thread), the parts are
//! scanned as slices at the same time (`scan`), and their events are then handled in
//! file order, so B/E matching, flows, `--steps` and every later step see exactly what
//! a serial read sees. The handling of one block runs while the next is read and
//! scanned, one thread per core in all.
//!
//! Where a part starts is a guess (the next `},{` after its share of the block, which
//! could lie inside a string); the part before it proves or refutes it: that part is
//! scanned from a known boundary and must stop exactly there. A refuted part and
//! everything after it are dropped and read again from where the proof ended, so a
//! wrong guess costs time, never correctness. Whatever the fast path leaves (the end of
//! the array, repairs, errors) goes through the streaming reader one element at a time.

use std::cell::Cell;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use super::crew::{Board, Crew};
use super::scan::{Part, SliceArgs, Stop, Why};
use super::Parser;
use crate::json::{JsonError, JsonReader};

/// Bytes per part: big enough that a part's events outweigh handing it to a thread,
/// small enough that the block (a few parts per thread) stays in the caches while it
/// is read and scanned, and the buffer stays a few MB.
const PART_BYTES: usize = 512 << 10;

/// Bytes per part when several threads scan. Each block costs a fixed handoff (the
/// helpers woken and waited for; a thread spawned and joined before `crew`); with
/// parts twice as big (blocks of 4 MiB on 2 threads) the loading thread's share of
/// the CPU on node300 fell from 0.40 to 0.29-0.33 s of 0.51-0.58 s (the helper scans
/// more while the loading thread reads), the peak of `info` unchanged (122 MiB
/// node300, 82 MiB big300); 2 MiB parts gained no more and raised the peak.
const PART_BYTES_THREADS: usize = 1 << 20;

/// Parts per block and thread when several threads scan: a thread that is free while
/// the others still scan waits at most one part for the block's end (`scan_block`).
/// One thread scans a block of two threads' size in one part.
const PARTS_PER_THREAD: usize = 2;

/// The most threads used by default (more rarely pays: the handling in file order that
/// follows the scan is serial).
const MAX_DEFAULT_THREADS: usize = 8;

thread_local! {
    /// Test hook: (bytes per part, threads) for loads on this thread.
    static OVERRIDE: Cell<(Option<usize>, Option<usize>)> = const { Cell::new((None, None)) };
}

/// Makes Chrome loads on this thread use parts of `part_bytes` (0: the streaming reader
/// alone) and `threads` threads (None: the defaults). Tests use tiny parts so that
/// splits land everywhere.
#[doc(hidden)]
pub fn set_thread_override(part_bytes: Option<usize>, threads: Option<usize>) {
    OVERRIDE.with(|c| c.set((part_bytes, threads)));
}

/// Threads a Chrome load uses: the test override, else `GROVE_THREADS`, else the
/// available cores (at most 8).
pub fn threads() -> usize {
    if let Some(n) = OVERRIDE.with(|c| c.get().1) {
        return n.max(1);
    }
    if let Some(n) = std::env::var("GROVE_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return n.max(1);
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(MAX_DEFAULT_THREADS)
}

/// Bytes per part: the test override, else `GROVE_PART_BYTES` (for tests that run the
/// binary: tiny parts split everywhere; 0 reads with the streaming reader alone, the
/// reference the fast path is compared with), else 512 KiB for one thread and 1 MiB
/// for several. None: streaming only.
fn part_bytes(threads: usize) -> Option<usize> {
    let n = OVERRIDE.with(|c| c.get().0).or_else(|| {
        std::env::var("GROVE_PART_BYTES")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
    });
    match n {
        Some(0) => None,
        Some(n) => Some(n),
        None if threads > 1 => Some(PART_BYTES_THREADS),
        None => Some(PART_BYTES),
    }
}

/// The separator position (just after an element's `}`) of the first `}` `,` `{`
/// (whitespace allowed between) that starts at or after `from`; None when there is none.
fn boundary_after(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(k) = memchr::memchr(b'{', b.get(i..)?) {
        let open = i + k;
        let mut j = open;
        let back = |j: &mut usize| {
            while *j > 0 && matches!(b[*j - 1], b' ' | b'\t' | b'\n' | b'\r') {
                *j -= 1;
            }
        };
        back(&mut j);
        if j > 0 && b[j - 1] == b',' {
            j -= 1;
            back(&mut j);
            if j > from && b[j - 1] == b'}' {
                return Some(j);
            }
        }
        i = open + 1;
    }
    None
}

/// Where the parts of `win` start: the first at 0, the others at a guessed boundary
/// after their share (fewer parts when no boundary is found). The shares shrink
/// towards the block's end (4:3:2:1 for four parts): the threads start at different
/// times (one reads the block, another handles the block before), and small last
/// parts let them finish together instead of one waiting for the other's big part.
fn split(win: &[u8], parts: usize) -> Vec<usize> {
    let n = win.len();
    // Share of part j: parts - j; the shares before part k add up to `before(k)`.
    let total = parts * (parts + 1) / 2;
    let before = |k: usize| k * parts - k * k.saturating_sub(1) / 2;
    let mut starts = vec![0usize];
    for k in 1..parts {
        let from = (before(k) * n / total).max(starts[k - 1] + 1);
        match boundary_after(win, from) {
            Some(s) if s < n => starts.push(s),
            _ => break,
        }
    }
    starts
}

/// A block being scanned: its bytes, where its parts start, and the parts (each with
/// its stop slot) not taken yet, in file order.
struct Job<'a> {
    win: &'a [u8],
    starts: Vec<usize>,
    queue: Mutex<Parts<'a>>,
}

type Parts<'a> = std::iter::Enumerate<
    std::iter::Take<std::iter::Zip<std::slice::IterMut<'a, Part>, std::slice::IterMut<'a, Stop>>>,
>;

/// Tells helper threads still waiting for a block that none comes (this thread
/// unwinds before it published one), so the scope can end.
struct Abandon<'a> {
    flag: &'a AtomicBool,
    helpers: &'a [std::thread::Thread],
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        self.flag.store(true, Ordering::Release);
        for h in self.helpers {
            h.unpark();
        }
    }
}

/// Reads a block (`read`, on this thread) and scans it in up to `parts.len()` parts on
/// the crew's threads and this one, while `meanwhile` (the handling of the block
/// before) runs on one of the helpers: the read, the handling and the scan overlap,
/// and as many threads as cores are busy, never one more. Parts go to whichever
/// thread is free next: the read, the handling and a part take different times, and a
/// fixed share per thread would leave a core idle at the end of every block. Returns
/// the window's length, how many parts (from the first) hold proven events, and where
/// the last of them stopped. No crew (one thread): everything on this thread.
fn scan_block<'w>(
    parts: &mut [Part],
    crew: Option<&Crew<'_>>,
    read: impl FnOnce() -> &'w [u8],
    meanwhile: impl FnOnce() + Send,
) -> (usize, usize, Stop) {
    let mut stops = vec![
        Stop {
            pos: 0,
            why: Why::Odd
        };
        parts.len()
    ];
    let (n, starts) = match crew {
        Some(crew) if parts.len() > 1 => {
            let job = OnceLock::new();
            let abandoned = AtomicBool::new(false);
            let work = |job: &Job<'_>| loop {
                let next = job.queue.lock().map(|mut q| q.next());
                let Ok(Some((k, (part, stop)))) = next else {
                    return;
                };
                let end = job.starts.get(k + 1).copied().unwrap_or(job.win.len());
                *stop = part.scan(job.win, job.starts[k], end);
            };
            let meanwhile = Mutex::new(Some(meanwhile));
            let task = || {
                let first = meanwhile.lock().ok().and_then(|mut m| m.take());
                if let Some(f) = first {
                    f();
                }
                // Wait for the block the loading thread reads meanwhile.
                loop {
                    if let Some(j) = job.get() {
                        break work(j);
                    }
                    if abandoned.load(Ordering::Acquire) {
                        return;
                    }
                    std::thread::park();
                }
            };
            crew.run(&task, || {
                // Releases the helpers waiting for the block also when `read` or the
                // split unwinds, so that `run` can wait for them.
                let abandon = Abandon {
                    flag: &abandoned,
                    helpers: crew.threads(),
                };
                let win = read();
                let starts = split(win, parts.len());
                let count = starts.len();
                let queue = Mutex::new(
                    parts
                        .iter_mut()
                        .zip(stops.iter_mut())
                        .take(count)
                        .enumerate(),
                );
                let j = job.get_or_init(|| Job { win, starts, queue });
                // Published: wake the helpers (the flag is not read once a job is there).
                drop(abandon);
                work(j);
            });
            let job = job.into_inner().expect("the block was published");
            (job.win.len(), job.starts)
        }
        _ => {
            meanwhile();
            let win = read();
            let starts = split(win, parts.len());
            for (k, part) in parts[..starts.len()].iter_mut().enumerate() {
                let end = starts.get(k + 1).copied().unwrap_or(win.len());
                stops[k] = part.scan(win, starts[k], end);
            }
            (win.len(), starts)
        }
    };
    let count = starts.len();
    // Part k holds real events only if part k-1 ended exactly where it began.
    let mut proven = 1;
    while proven < count {
        let prev = stops[proven - 1];
        if prev.why == Why::Limit && prev.pos == starts[proven] {
            proven += 1;
        } else {
            break;
        }
    }
    for p in &mut parts[proven..count] {
        p.clear_block();
    }
    (n, proven, stops[proven - 1])
}

impl Parser {
    /// Reads the event array (the reader at its `[`).
    pub(super) fn events<R: Read>(&mut self, r: &mut JsonReader<R>) -> Result<(), JsonError> {
        r.begin_array()?;
        let mut counted = super::super::progress::EventCounter::current();
        let mut slow = Part::default();
        if !r.next_element(true)? {
            return Ok(());
        }
        self.slow_element(r, &mut slow, &mut counted)?;
        let threads = threads();
        let Some(part_bytes) = part_bytes(threads) else {
            while r.next_element(false)? {
                self.slow_element(r, &mut slow, &mut counted)?;
            }
            return Ok(());
        };
        if threads > 1 {
            // Helpers for the whole load, handed each block in turn.
            let board = Board::new();
            std::thread::scope(|s| {
                let crew = Crew::start(s, &board, threads - 1);
                self.blocks(r, part_bytes, threads, Some(&crew), &mut slow, &mut counted)
            })
        } else {
            self.blocks(r, part_bytes, threads, None, &mut slow, &mut counted)
        }
    }

    /// The event array after its first element, block by block (`crew`: the helper
    /// threads when there are several).
    fn blocks<R: Read>(
        &mut self,
        r: &mut JsonReader<R>,
        part_bytes: usize,
        threads: usize,
        crew: Option<&Crew<'_>>,
        slow: &mut Part,
        counted: &mut super::super::progress::EventCounter,
    ) -> Result<(), JsonError> {
        // Several parts per thread when there are several threads, so that a thread
        // free early (while this one still handles the block before) takes more.
        let per_block = if threads > 1 {
            threads * PARTS_PER_THREAD
        } else {
            1
        };
        // One thread reads blocks as big as two threads do (less peak memory on big300
        // than blocks half that size, measured; the allocator keeps less around).
        let block = part_bytes.saturating_mul(threads.max(2) * PARTS_PER_THREAD);
        // A part's two passes (`select::Stream`) need less of each slice's args.
        let slice_args = SliceArgs::of(self.filter.as_ref());
        // Two sets of parts: one is scanned while the events of the other, the block
        // before, are handled in file order.
        let mut sets: [Vec<Part>; 2] =
            std::array::from_fn(|_| (0..per_block).map(|_| Part::new(slice_args)).collect());
        let mut cur = 0;
        // A scanned set not handled yet: (set, proven parts).
        let mut pending: Option<(usize, usize)> = None;
        let mut want = block;
        loop {
            let [a, b] = &mut sets;
            let (scanning, done) = if cur == 0 { (a, b) } else { (b, a) };
            let before = pending.take();
            let mut eof = false;
            let this = &mut *self;
            let counted_ref = &mut *counted;
            let reader = &mut *r;
            let (win_len, proven, stop) = scan_block(
                scanning,
                crew,
                || {
                    let (win, end) = reader.window(want);
                    eof = end;
                    win
                },
                move || {
                    if let Some((_, proven)) = before {
                        for part in &mut done[..proven] {
                            this.replay(part, counted_ref);
                        }
                    }
                },
            );
            pending = Some((cur, proven));
            cur ^= 1;
            r.advance(stop.pos);
            let short = matches!(stop.why, Why::Short | Why::Limit);
            if short && stop.pos > 0 {
                want = block;
                continue;
            }
            if short && !eof {
                // One element longer than the block: a bigger window.
                want = want.max(win_len).saturating_mul(2);
                continue;
            }
            // The end of the array, a repair, an error, or the input's end: the
            // streaming reader takes the next element, after what came before it.
            if let Some((set, proven)) = pending.take() {
                for part in &mut sets[set][..proven] {
                    self.replay(part, counted);
                }
            }
            if !r.next_element(false)? {
                return Ok(());
            }
            self.slow_element(r, slow, counted)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_shrink_towards_the_end() {
        let win: Vec<u8> = std::iter::repeat_n(&b"{\"a\":1},"[..], 100)
            .flatten()
            .copied()
            .collect();
        let starts = split(&win, 4);
        // 40%, 30%, 20%, 10% of 800 bytes, each at the next boundary.
        assert_eq!(starts, vec![0, 327, 567, 727]);
    }

    #[test]
    fn boundaries_are_between_elements() {
        let b = br#"{"a":1},{"b":"x},{y"} , {"c":2}"#;
        assert_eq!(boundary_after(b, 1), Some(7));
        // The guess inside the string is found too; the scan of the part before refutes it.
        assert_eq!(boundary_after(b, 8), Some(16));
        assert_eq!(boundary_after(b, 17), Some(21));
        assert_eq!(boundary_after(b, 22), None);
    }
}
