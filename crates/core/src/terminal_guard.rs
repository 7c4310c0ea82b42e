//! Putting the terminal back however grove leaves it. The TUI's normal exit and a
//! panic go through ratatui's restore; this module covers the rest: SIGTERM, SIGHUP,
//! SIGINT and SIGQUIT from outside, an abort (stack overflow, allocation failure),
//! and Ctrl-Z / SIGTSTP, which must leave the alternate screen before stopping and
//! come back (redrawn) on `fg`.
//!
//! Everything reachable from a signal handler here is async-signal-safe: an atomic,
//! `tcsetattr` with termios saved before raw mode, `write(2)` of fixed escapes,
//! `signal` and `raise`.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

/// The terminal is in grove's modes (raw, alternate screen, cursor hidden).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Set after a stop: the event loop re-enters the TUI's modes and redraws.
static RESUMED: AtomicBool = AtomicBool::new(false);
static TTY_FD: AtomicI32 = AtomicI32::new(-1);
/// The modes before raw mode, as `tcgetattr` gave them.
static SAVED: OnceLock<libc::termios> = OnceLock::new();
static INSTALLED: OnceLock<()> = OnceLock::new();

/// End synchronized output, show the cursor, leave the alternate screen.
const LEAVE: &[u8] = b"\x1b[?2026l\x1b[?25h\x1b[?1049l";

/// Saves the terminal's modes and installs the handlers; call before raw mode.
pub fn enter() {
    // SAFETY: isatty/open/tcgetattr on a valid fd with a zeroed termios to fill.
    unsafe {
        let fd = if libc::isatty(0) == 1 {
            0
        } else {
            libc::open(c"/dev/tty".as_ptr(), libc::O_RDWR)
        };
        if fd >= 0 {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &mut t) == 0 {
                let _ = SAVED.set(t);
                TTY_FD.store(fd, Ordering::SeqCst);
            }
        }
    }
    install();
    ACTIVE.store(true, Ordering::SeqCst);
}

/// The TUI left its modes the normal way.
pub fn leave() {
    ACTIVE.store(false, Ordering::SeqCst);
}

/// Restores the terminal if grove still holds it. Async-signal-safe.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let fd = TTY_FD.load(Ordering::SeqCst);
    // SAFETY: write(2) of a static buffer and tcsetattr with saved modes.
    unsafe {
        let _ = libc::write(1, LEAVE.as_ptr().cast(), LEAVE.len());
        if let (true, Some(t)) = (fd >= 0, SAVED.get()) {
            libc::tcsetattr(fd, libc::TCSANOW, t);
        }
    }
}

/// True once after the process was stopped and continued while the TUI ran.
pub fn take_resumed() -> bool {
    RESUMED.swap(false, Ordering::SeqCst)
}

/// Suspends like Ctrl-Z in a cooked terminal: restore, stop, and on `fg` ask the
/// event loop to re-enter and redraw.
pub fn suspend() {
    let was = ACTIVE.load(Ordering::SeqCst);
    restore();
    // SAFETY: raising SIGSTOP stops this process until SIGCONT.
    unsafe {
        libc::raise(libc::SIGSTOP);
    }
    if was {
        RESUMED.store(true, Ordering::SeqCst);
    }
}

fn install() {
    INSTALLED.get_or_init(|| {
        // SIGABRT too: an abort (stack overflow, allocation failure) must not leave
        // the terminal raw either, and a SIGABRT from outside must still end grove.
        for sig in [
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGABRT,
        ] {
            // SAFETY: the action only calls async-signal-safe functions.
            let _ = unsafe {
                signal_hook::low_level::register(sig, move || {
                    restore();
                    // Die of the signal as if grove had no handler, so the parent
                    // sees the usual status (130 for SIGINT in a shell).
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                })
            };
        }
        // SAFETY: as above; SIGSTOP cannot be caught, so this cannot recurse.
        let _ = unsafe { signal_hook::low_level::register(libc::SIGTSTP, suspend) };
    });
}
