//! How far a load has come, for the loading screen and the headless progress line: the
//! bytes of the file consumed (compressed bytes for a compressed file, so they compare
//! with its size), the events read so far, and a cancel flag the loader polls.
//!
//! A load opts in by attaching a [`Progress`] to its thread ([`attach`]); `load_all`
//! wraps the file in [`Counting`] and the Chrome reader bumps the event count. Without
//! one attached nothing is counted. The cost is one relaxed atomic add per read call
//! (64 KiB or more) and one per [`EVENT_BATCH`] events, never per byte or per event.

use std::cell::RefCell;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Events a reader counts locally before publishing them.
pub const EVENT_BATCH: u64 = 4096;

/// Counters of one load, shared between the loading thread and whoever watches it.
#[derive(Debug, Default)]
pub struct Progress {
    bytes: AtomicU64,
    total: AtomicU64,
    events: AtomicU64,
    cancel: AtomicBool,
}

impl Progress {
    pub fn new() -> Arc<Progress> {
        Arc::default()
    }

    /// Bytes of the input consumed so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The input's size in bytes (0: unknown, e.g. standard input).
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    pub fn set_total(&self, n: u64) {
        self.total.store(n, Ordering::Relaxed);
    }

    /// Adds a file to read (each file of an ensemble; a file read twice).
    pub fn add_total(&self, n: u64) {
        self.total.fetch_add(n, Ordering::Relaxed);
    }

    /// Events read so far (by readers that count them; the Chrome reader does).
    pub fn events(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }

    pub fn add_events(&self, n: u64) {
        self.events.fetch_add(n, Ordering::Relaxed);
    }

    /// Asks the load to stop: its next read fails with "cancelled".
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Progress>>> = const { RefCell::new(None) };
}

/// Detaches the thread's progress when dropped.
pub struct Attached(Option<Arc<Progress>>);

impl Drop for Attached {
    fn drop(&mut self) {
        let prev = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
}

/// Counts the loads this thread runs into `p` until the guard drops.
pub fn attach(p: Arc<Progress>) -> Attached {
    Attached(CURRENT.with(|c| c.borrow_mut().replace(p)))
}

/// The progress attached to this thread, if any.
pub fn current() -> Option<Arc<Progress>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// A `Read` that adds what passes through it to a [`Progress`], and fails once the
/// load is cancelled.
pub struct Counting<R> {
    inner: R,
    progress: Arc<Progress>,
    /// `GROVE_TEST_LOAD_DELAY_MS`: a pause before the first read, for the terminal
    /// tests of the loading screen (a small file otherwise loads before it is drawn).
    delay: Option<Duration>,
}

impl<R> Counting<R> {
    pub fn new(inner: R, progress: Arc<Progress>) -> Counting<R> {
        let delay = std::env::var("GROVE_TEST_LOAD_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis);
        Counting {
            inner,
            progress,
            delay,
        }
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(d) = self.delay.take() {
            let step = Duration::from_millis(10);
            let mut waited = Duration::ZERO;
            while waited < d && !self.progress.cancelled() {
                std::thread::sleep(step);
                waited += step;
            }
        }
        if self.progress.cancelled() {
            // Not `Interrupted`: buffered readers retry those.
            return Err(io::Error::other("cancelled"));
        }
        let n = self.inner.read(buf)?;
        self.progress.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The reader's side of event counting: counts locally, publishes every
/// [`EVENT_BATCH`] events and at the end.
pub struct EventCounter {
    progress: Option<Arc<Progress>>,
    pending: u64,
}

impl EventCounter {
    /// Counts into the progress attached to this thread (nothing when none is).
    pub fn current() -> EventCounter {
        EventCounter {
            progress: current(),
            pending: 0,
        }
    }

    #[inline]
    pub fn one(&mut self) {
        self.pending += 1;
        if self.pending == EVENT_BATCH {
            self.flush();
        }
    }

    pub fn flush(&mut self) {
        if let Some(p) = &self.progress {
            p.add_events(self.pending);
        }
        self.pending = 0;
    }
}

impl Drop for EventCounter {
    fn drop(&mut self) {
        self.flush();
    }
}

/// What a watcher shows: how far, how fast, and how long is left.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub bytes: u64,
    pub total: u64,
    pub events: u64,
    /// Bytes per second since the load started (None before 100 ms: too early to say).
    pub rate: Option<f64>,
    /// Seconds left at that rate (None when the size or the rate is unknown).
    pub eta: Option<f64>,
}

impl Snapshot {
    pub fn of(p: &Progress, elapsed: Duration) -> Snapshot {
        let (bytes, total, events) = (p.bytes(), p.total(), p.events());
        let secs = elapsed.as_secs_f64();
        let rate = (secs >= 0.1 && bytes > 0).then(|| bytes as f64 / secs);
        let eta = rate
            .filter(|_| total > 0)
            .map(|r| total.saturating_sub(bytes) as f64 / r);
        Snapshot {
            bytes,
            total,
            events,
            rate,
            eta,
        }
    }

    /// The fraction read, 0..=1 (0 when the size is unknown).
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            (self.bytes as f64 / self.total as f64).clamp(0.0, 1.0)
        }
    }

    /// `45%  123.4 MB of 300.0 MB  1.2M events  85.0 MB/s  about 2 s left`.
    pub fn line(&self) -> String {
        let mut s = if self.total > 0 {
            format!(
                "{:>3.0}%  {} of {}",
                self.fraction() * 100.0,
                mb(self.bytes),
                mb(self.total)
            )
        } else {
            mb(self.bytes)
        };
        if self.events > 0 {
            s.push_str(&format!("  {} events", count(self.events)));
        }
        if let Some(r) = self.rate {
            s.push_str(&format!("  {}/s", mb(r as u64)));
        }
        if self.total > 0 && self.bytes >= self.total {
            // Read through; what is left is the tree and the indexes.
            s.push_str("  building the tree");
        } else if let Some(e) = self.eta {
            s.push_str(&format!("  about {} left", secs(e)));
        }
        s
    }
}

fn mb(n: u64) -> String {
    format!("{:.1} MB", n as f64 / 1e6)
}

fn count(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

fn secs(s: f64) -> String {
    if s < 60.0 {
        format!("{:.0} s", s.ceil())
    } else {
        format!("{:.0} min", (s / 60.0).ceil())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_adds_every_byte_once() {
        let p = Progress::new();
        let data = vec![7u8; 300_000];
        let mut r = Counting::new(&data[..], p.clone());
        let mut buf = [0u8; 4096];
        let mut seen = 0;
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            seen += n;
        }
        assert_eq!(seen, 300_000);
        assert_eq!(p.bytes(), 300_000);
    }

    #[test]
    fn a_cancelled_load_fails_its_next_read() {
        let p = Progress::new();
        let mut r = Counting::new(&b"abc"[..], p.clone());
        p.cancel();
        let e = r.read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(e.to_string(), "cancelled");
    }

    #[test]
    fn events_are_published_in_batches_and_at_the_end() {
        let p = Progress::new();
        let _g = attach(p.clone());
        let mut c = EventCounter::current();
        for _ in 0..EVENT_BATCH + 5 {
            c.one();
        }
        assert_eq!(p.events(), EVENT_BATCH);
        drop(c);
        assert_eq!(p.events(), EVENT_BATCH + 5);
        drop(_g);
        assert!(current().is_none());
    }

    #[test]
    fn the_line_says_how_far_and_how_long() {
        let p = Progress::new();
        p.set_total(300_000_000);
        p.bytes.store(150_000_000, Ordering::Relaxed);
        p.add_events(1_200_000);
        let s = Snapshot::of(&p, Duration::from_secs(2));
        assert_eq!(s.eta, Some(2.0));
        assert_eq!(
            s.line(),
            " 50%  150.0 MB of 300.0 MB  1.2M events  75.0 MB/s  about 2 s left"
        );
        // Before 100 ms there is no rate to go on.
        assert_eq!(Snapshot::of(&p, Duration::from_millis(50)).rate, None);
    }
}
