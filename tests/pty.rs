//! Drives the real binary in a pseudo-terminal and checks, after each way out, that
//! the terminal is back in its own modes (canonical, echo) and that grove left the
//! alternate screen and showed the cursor. Ctrl-Z must stop grove with the terminal
//! restored and `fg` (SIGCONT) must bring the TUI back.

#![cfg(unix)]

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Pty {
    master: RawFd,
    slave: RawFd,
    out: Arc<Mutex<Vec<u8>>>,
    pid: libc::pid_t,
}

fn start() -> Pty {
    start_with(&[])
}

fn start_with(env: &[(&str, &str)]) -> Pty {
    start_args(&["--no-session"], env)
}

fn start_args(args: &[&str], env: &[(&str, &str)]) -> Pty {
    let p = spawn(args, env);
    p.wait_for_screen(b"\x1b[?1049h", 0);
    p
}

/// grove on a new pseudo-terminal (stdin, stdout and stderr), not waited for.
fn spawn(args: &[&str], env: &[(&str, &str)]) -> Pty {
    let (mut master, mut slave) = (0, 0);
    let ws = libc::winsize {
        ws_row: 30,
        ws_col: 100,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty fills two fds.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &ws,
        )
    };
    assert_eq!(rc, 0, "openpty");
    let io = |fd: RawFd| {
        // SAFETY: dup of a valid fd, owned by the Stdio.
        Stdio::from(unsafe { OwnedFd::from_raw_fd(libc::dup(fd)) })
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_grove"));
    cmd.args(args)
        .env("TERM", "xterm-256color")
        .envs(env.iter().copied())
        .stdin(io(slave))
        .stdout(io(slave))
        .stderr(io(slave));
    // SAFETY: setsid and TIOCSCTTY are async-signal-safe; the pty becomes the
    // child's controlling terminal, as a shell would arrange.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY, 0);
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    let out = Arc::new(Mutex::new(Vec::new()));
    let sink = out.clone();
    // SAFETY: dup of the master for the reader thread.
    let mut reader = unsafe { std::fs::File::from_raw_fd(libc::dup(master)) };
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let p = Pty {
        master,
        slave,
        out,
        pid: child.id() as libc::pid_t,
    };
    std::mem::forget(child); // reaped with waitpid below
    p
}

impl Pty {
    fn output(&self) -> Vec<u8> {
        self.out.lock().unwrap().clone()
    }

    /// Waits until `what` appears in the output after byte `from`, and a frame is drawn.
    fn wait_for_screen(&self, what: &[u8], from: usize) {
        let t = Instant::now();
        loop {
            let o = self.output();
            if let Some(i) = find(&o[from.min(o.len())..], what) {
                // Something drawn after it: the TUI is up.
                if o.len() > from + i + what.len() + 200 {
                    std::thread::sleep(Duration::from_millis(300));
                    return;
                }
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "timed out waiting for {what:?}; output: {:?}",
                String::from_utf8_lossy(&o)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn send(&self, bytes: &[u8]) {
        // SAFETY: write to the master fd.
        unsafe { libc::write(self.master, bytes.as_ptr().cast(), bytes.len()) };
    }

    /// Waits for the child to exit or stop; the raw wait status.
    fn wait(&self, stopped_ok: bool) -> i32 {
        let t = Instant::now();
        loop {
            let mut status = 0;
            let flags = libc::WNOHANG | if stopped_ok { libc::WUNTRACED } else { 0 };
            // SAFETY: waitpid on our own child.
            let r = unsafe { libc::waitpid(self.pid, &mut status, flags) };
            if r == self.pid {
                return status;
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "grove did not stop or exit; output tail: {:?}",
                tail(&self.output())
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn termios(&self) -> libc::termios {
        // SAFETY: tcgetattr on the slave fd into a zeroed struct.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(self.slave, &mut t), 0);
            t
        }
    }

    /// The terminal is cooked again and grove's last screen escape left the
    /// alternate screen with the cursor shown.
    fn assert_restored(&self, how: &str) {
        let t = self.termios();
        assert!(
            t.c_lflag & libc::ICANON != 0 && t.c_lflag & libc::ECHO != 0,
            "{how}: terminal left in raw mode"
        );
        // The reader thread may still be copying the last bytes after the child ended:
        // wait (briefly) for the screen to be left before judging.
        let t = Instant::now();
        let o = loop {
            let o = self.output();
            let enter = rfind(&o, b"\x1b[?1049h").unwrap_or(0);
            let left = rfind(&o, b"\x1b[?1049l").is_some_and(|l| l > enter);
            if left || t.elapsed() > Duration::from_secs(5) {
                break o;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let enter = rfind(&o, b"\x1b[?1049h").unwrap_or(0);
        let leave = rfind(&o, b"\x1b[?1049l");
        assert!(
            leave.is_some_and(|l| l > enter),
            "{how}: still on the alternate screen"
        );
        let hide = rfind(&o, b"\x1b[?25l").unwrap_or(0);
        let show = rfind(&o, b"\x1b[?25h");
        assert!(show.is_some_and(|s| s > hide), "{how}: cursor left hidden");
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        // SAFETY: our own child and fds.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
            libc::close(self.master);
            libc::close(self.slave);
        }
    }
}

fn tail(out: &[u8]) -> String {
    let s = String::from_utf8_lossy(out);
    let n = s.chars().count();
    s.chars().skip(n.saturating_sub(300)).collect()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

#[test]
fn keys_restore_the_terminal() {
    for (how, key) in [("q", &b"q"[..]), ("Ctrl-C", &b"\x03"[..])] {
        let p = start();
        p.send(key);
        let st = p.wait(false);
        assert!(libc::WIFEXITED(st), "{how}: status {st}");
        p.assert_restored(how);
    }
}

#[test]
fn signals_restore_the_terminal() {
    for (how, sig) in [
        ("SIGTERM", libc::SIGTERM),
        ("SIGHUP", libc::SIGHUP),
        ("SIGINT", libc::SIGINT),
        ("SIGQUIT", libc::SIGQUIT),
        ("SIGABRT", libc::SIGABRT),
    ] {
        let p = start();
        // SAFETY: signalling our own child.
        unsafe { libc::kill(p.pid, sig) };
        let st = p.wait(false);
        assert!(
            libc::WIFSIGNALED(st) && libc::WTERMSIG(st) == sig,
            "{how}: grove should die of the signal, status {st}"
        );
        p.assert_restored(how);
    }
}

#[test]
fn ctrl_z_suspends_and_fg_redraws() {
    let p = start();
    p.send(b"\x1a");
    let st = p.wait(true);
    assert!(libc::WIFSTOPPED(st), "Ctrl-Z did not stop grove: {st}");
    p.assert_restored("Ctrl-Z");
    let mark = p.output().len();
    // SAFETY: continuing our own child, as `fg` does.
    unsafe { libc::kill(p.pid, libc::SIGCONT) };
    p.wait_for_screen(b"\x1b[?1049h", mark);
    let t = p.termios();
    assert!(
        t.c_lflag & libc::ICANON == 0,
        "raw mode not re-entered on fg"
    );
    // The same for SIGTSTP sent from outside.
    unsafe { libc::kill(p.pid, libc::SIGTSTP) };
    let st = p.wait(true);
    assert!(libc::WIFSTOPPED(st), "SIGTSTP did not stop grove: {st}");
    p.assert_restored("SIGTSTP");
    let mark = p.output().len();
    unsafe { libc::kill(p.pid, libc::SIGCONT) };
    p.wait_for_screen(b"\x1b[?1049h", mark);
    p.send(b"q");
    let st = p.wait(false);
    assert!(libc::WIFEXITED(st), "q after fg: status {st}");
    p.assert_restored("q after fg");
}

/// A panic inside the running TUI (the hidden `GROVE_TEST_PANIC_KEY` switch): the
/// terminal is restored before the report, and the report reaches the terminal.
#[test]
fn a_panic_restores_the_terminal() {
    let p = start_with(&[("GROVE_TEST_PANIC_KEY", "!"), ("RUST_BACKTRACE", "0")]);
    p.send(b"!");
    let st = p.wait(false);
    assert!(
        libc::WIFEXITED(st) && libc::WEXITSTATUS(st) != 0,
        "a panic should end grove with a failure status: {st}"
    );
    p.assert_restored("panic");
    // The reader thread may still be copying the last bytes.
    let t = Instant::now();
    let (o, report) = loop {
        let o = p.output();
        if let Some(i) = find(&o, b"deliberate panic") {
            break (o, i);
        }
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "no panic report: {:?}",
            tail(&o)
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let leave = rfind(&o, b"\x1b[?1049l").unwrap();
    assert!(
        leave < report,
        "the report must come after the terminal is restored"
    );
}

/// The session file is created with the first logged command (issue 13): opening and
/// quitting leaves none; after one command it is there and complete, even when grove is
/// killed with SIGKILL right after.
#[test]
fn session_file_appears_with_the_first_command() {
    let dir = std::env::temp_dir().join(format!("grove-pty-session-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("s.jsonl");
    let _ = std::fs::remove_file(&f);
    let path = f.to_str().unwrap();
    let p = start_args(&["--session", path], &[]);
    p.send(b"jjq");
    let st = p.wait(false);
    assert!(libc::WIFEXITED(st), "status {st}");
    assert!(!f.exists(), "a run that logged nothing left a session file");
    let p = start_args(&["--session", path], &[]);
    p.send(b"s");
    let t = Instant::now();
    while !std::fs::read_to_string(&f).is_ok_and(|s| s.contains("\"cmd\":\"sort")) {
        assert!(t.elapsed() < Duration::from_secs(20), "no session file");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: our own child.
    unsafe { libc::kill(p.pid, libc::SIGKILL) };
    p.wait(false);
    let s = grove::session::read(&f).unwrap();
    assert!(s.header.is_some());
    assert_eq!(s.commands.len(), 1, "{:?}", s.commands);
    assert!(s.commands[0].1.starts_with("sort "), "{:?}", s.commands);
}

/// Keys typed on the loading screen are not lost: they run, in order, once the tree
/// is up (the load held back 1.5 s by `GROVE_TEST_LOAD_DELAY_MS`; `s` typed meanwhile
/// sorts the tree and is logged).
#[test]
fn keys_typed_while_loading_run_after_the_load() {
    let dir = std::env::temp_dir().join(format!("grove-pty-typed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("s.jsonl");
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/demo.trace.json.gz");
    let p = start_args(
        &["--no-cache", "--session", f.to_str().unwrap(), file],
        &[("GROVE_TEST_LOAD_DELAY_MS", "1500")],
    );
    p.wait_for_screen(b"q cancels", 0);
    p.send(b"s");
    let t = Instant::now();
    while !std::fs::read_to_string(&f).is_ok_and(|s| s.contains("\"cmd\":\"sort")) {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the key typed was lost"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    p.send(b"q");
    p.wait(false);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A slow load (the `GROVE_TEST_LOAD_DELAY_MS` hook holds the reader back) shows the
/// loading screen; `q` during the load exits with status 0 and Ctrl-C with 130, the
/// terminal restored either way.
#[test]
fn the_loading_screen_shows_and_cancels() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/demo.trace.json.gz");
    for (how, key, status) in [("q", &b"q"[..], 0), ("Ctrl-C", &b"\x03"[..], 130)] {
        let p = start_args(
            &["--no-session", "--no-cache", file],
            &[("GROVE_TEST_LOAD_DELAY_MS", "20000")],
        );
        p.wait_for_screen(b"q cancels", 0);
        assert!(
            find(&p.output(), b"grove: loading").is_some(),
            "{how}: no loading screen"
        );
        p.send(key);
        let st = p.wait(false);
        assert!(
            libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == status,
            "{how}: status {st}"
        );
        p.assert_restored(how);
    }
}

/// A headless command whose load takes more than half a second shows the progress
/// line on a terminal's stderr, rewritten with `\r`, and erases it when done.
#[test]
fn a_slow_headless_load_shows_its_progress_on_a_terminal() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/demo.trace.json.gz");
    let p = spawn(
        &["tree", "--no-cache", "--depth", "0", file],
        &[("GROVE_TEST_LOAD_DELAY_MS", "1200")],
    );
    let st = p.wait(false);
    assert!(
        libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0,
        "status {st}"
    );
    let t = Instant::now();
    loop {
        let o = p.output();
        if find(&o, b"python (main thread)").is_some() {
            let line = find(&o, b"\rgrove: loading ").expect("no progress line");
            let erased = find(&o, b"\r\x1b[K").expect("the line was not erased");
            assert!(line < erased, "{:?}", tail(&o));
            assert!(find(&o, b"MB of 0.1 MB").is_some(), "{:?}", tail(&o));
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", tail(&o));
        std::thread::sleep(Duration::from_millis(50));
    }
}
