//! The headless progress line: while a load runs, after half a second, one line on
//! stderr rewritten in place (`\r`) with the bytes read, the events so far and the time
//! left; erased when the load ends. Only when stderr is a terminal: a pipe or a log
//! file never gets it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use grove::readers::progress::{self, Progress, Snapshot};

/// A load quicker than this shows no line.
const QUIET: Duration = Duration::from_millis(500);
const EVERY: Duration = Duration::from_millis(200);

/// Runs the load `f` with its progress on stderr (when stderr is a terminal).
pub fn headless<T>(label: &str, f: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() || progress::current().is_some() {
        return f();
    }
    let p = Progress::new();
    let _attached = progress::attach(p.clone());
    let done = Arc::new(AtomicBool::new(false));
    let ticker = {
        let (done, label) = (done.clone(), label.to_string());
        std::thread::spawn(move || tick(&p, &done, &label))
    };
    let out = f();
    done.store(true, Ordering::Relaxed);
    let _ = ticker.join();
    out
}

fn tick(p: &Progress, done: &AtomicBool, label: &str) {
    let start = Instant::now();
    let mut last: Option<Instant> = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
        let now = Instant::now();
        if now - start < QUIET || last.is_some_and(|l| now - l < EVERY) {
            continue;
        }
        last = Some(now);
        let line = format!(
            "grove: loading {label}  {}",
            Snapshot::of(p, now - start).line()
        );
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
    }
    if last.is_some() {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}
