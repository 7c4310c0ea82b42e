//! The event array read block by block: a block of the file (a few MB per thread, never
//! the whole file) is split at event boundaries into one part per thread, the parts are
//! scanned as slices at the same time (`scan`), and their events are then handled in
//! file order on the loading thread, so B/E matching, flows, `--steps` and every later
//! step see exactly what a serial read sees.
//!
//! Where a part starts is a guess (the next `},{` after its share of the block, which
//! could lie inside a string); the part before it proves or refutes it: that part is
//! scanned from a known boundary and must stop exactly there. A refuted part and
//! everything after it are dropped and read again from where the proof ended, so a
//! wrong guess costs time, never correctness. Whatever the fast path leaves (the end of
//! the array, repairs, errors) goes through the streaming reader one element at a time.

use std::cell::Cell;
use std::io::Read;

use super::scan::{Part, Stop, Why};
use super::Parser;
use crate::json::{JsonError, JsonReader};

/// Bytes per part: big enough that a part's events outweigh starting a thread, small
/// enough that the buffer (parts × threads) stays a few MB.
const PART_BYTES: usize = 4 << 20;

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
/// reference the fast path is compared with), else 4 MiB. None: streaming only.
fn part_bytes() -> Option<usize> {
    let n = OVERRIDE.with(|c| c.get().0).or_else(|| {
        std::env::var("GROVE_PART_BYTES")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
    });
    match n {
        Some(0) => None,
        Some(n) => Some(n),
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

/// Scans `win` in up to `parts.len()` parts at once, running `meanwhile` on this thread
/// (the handling of the block before); returns how many parts (from the first) hold
/// proven events, and where the last of them stopped. One part: no thread at all.
fn scan_parts(parts: &mut [Part], win: &[u8], meanwhile: impl FnOnce()) -> (usize, Stop) {
    let n = win.len();
    let mut starts = vec![0usize];
    for k in 1..parts.len() {
        let from = (k * n / parts.len()).max(starts[k - 1] + 1);
        match boundary_after(win, from) {
            Some(s) if s < n => starts.push(s),
            _ => break,
        }
    }
    let count = starts.len();
    let limit = |k: usize| starts.get(k + 1).copied().unwrap_or(n);
    let mut stops = vec![
        Stop {
            pos: 0,
            why: Why::Odd
        };
        count
    ];
    if parts.len() == 1 {
        meanwhile();
        stops[0] = parts[0].scan(win, 0, n);
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = parts[..count]
                .iter_mut()
                .zip(stops.iter_mut())
                .enumerate()
                .map(|(k, (part, stop))| {
                    let (start, end) = (starts[k], limit(k));
                    s.spawn(move || *stop = part.scan(win, start, end))
                })
                .collect();
            meanwhile();
            for h in handles {
                // A panic in a part is a bug; surface it as the serial read would.
                if let Err(p) = h.join() {
                    std::panic::resume_unwind(p);
                }
            }
        });
    }
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
    (proven, stops[proven - 1])
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
        let Some(part_bytes) = part_bytes() else {
            while r.next_element(false)? {
                self.slow_element(r, &mut slow, &mut counted)?;
            }
            return Ok(());
        };
        let threads = threads();
        let block = part_bytes.saturating_mul(threads);
        // Two sets of parts: one is scanned (on `threads` threads) while the events of
        // the other, the block before, are handled here in file order.
        let mut sets: [Vec<Part>; 2] =
            std::array::from_fn(|_| (0..threads).map(|_| Part::default()).collect());
        let mut cur = 0;
        // A scanned set not handled yet: (set, proven parts).
        let mut pending: Option<(usize, usize)> = None;
        let mut want = block;
        loop {
            let (win, eof) = r.window(want);
            let win_len = win.len();
            let [a, b] = &mut sets;
            let (scanning, done) = if cur == 0 { (a, b) } else { (b, a) };
            let before = pending.take();
            let (proven, stop) = scan_parts(scanning, win, || {
                if let Some((_, proven)) = before {
                    for part in &mut done[..proven] {
                        self.replay(part, &mut counted);
                    }
                }
            });
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
                    self.replay(part, &mut counted);
                }
            }
            if !r.next_element(false)? {
                return Ok(());
            }
            self.slow_element(r, &mut slow, &mut counted)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
