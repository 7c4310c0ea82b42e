//! Opening an input once. A regular file opens as it is; a FIFO, a pipe
//! (`/dev/stdin`, `<(cmd)`) or a device is read once, as a stream, by whoever opens it
//! here: detection looks at the stream's buffered head, never at the path again (a
//! second open of a FIFO waits for a writer that has already gone).
//!
//! Opening a FIFO that no process writes blocks forever, so a FIFO is opened without
//! blocking and waited on for at most [`FIFO_WAIT`] for a writer; none is one line.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a FIFO is waited on for a writer before it is an error.
pub const FIFO_WAIT: Duration = Duration::from_secs(10);

/// The wait, shortened for tests by `GROVE_TEST_FIFO_WAIT_MS`.
fn fifo_wait() -> Duration {
    std::env::var("GROVE_TEST_FIFO_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(FIFO_WAIT)
}

/// An input opened for reading: the file, and for a FIFO the bytes read while
/// waiting for its writer (they come first).
pub struct Opened {
    first: Option<u8>,
    file: File,
}

impl Read for Opened {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.first.take() {
            Some(b) if !buf.is_empty() => {
                buf[0] = b;
                Ok(1)
            }
            Some(b) => {
                self.first = Some(b);
                Ok(0)
            }
            None => self.file.read(buf),
        }
    }
}

impl Opened {
    /// The file's metadata (its kind and, for a regular file, its size).
    pub fn metadata(&self) -> io::Result<std::fs::Metadata> {
        self.file.metadata()
    }
}

/// Opens `path` for reading, once. A FIFO without a writer is an error after
/// [`FIFO_WAIT`] ("no process writes to this FIFO"), not a hang.
pub fn open(path: &Path) -> io::Result<Opened> {
    let kind = std::fs::metadata(path)?.file_type();
    if !kind.is_fifo() {
        return Ok(Opened {
            first: None,
            file: File::open(path)?,
        });
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let first = wait_for_writer(&file, fifo_wait())?;
    set_blocking(&file)?;
    Ok(Opened { first, file })
}

/// Waits until the FIFO has data, a writer, or had one that left (then it reads as
/// empty). Returns a byte read while finding out, which must come first.
fn wait_for_writer(file: &File, wait: Duration) -> io::Result<Option<u8>> {
    let fd = file.as_raw_fd();
    let deadline = Instant::now() + wait;
    loop {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // Linux reports POLLHUP on a fresh FIFO only once a writer came and went, so
        // no event means: no data yet, and a writer may or may not be there.
        // SAFETY: one valid pollfd for the length given.
        let r = unsafe { libc::poll(&mut pfd, 1, 50) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r > 0 {
            return Ok(None);
        }
        // A non-blocking read tells them apart: EAGAIN is a writer that has not
        // written yet, end of file is no writer at all.
        let mut b = [0u8; 1];
        match (&*file).read(&mut b) {
            Ok(1) => return Ok(Some(b[0])),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() != io::ErrorKind::Interrupted => return Err(e),
            _ => {}
        }
        if Instant::now() >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "a FIFO that no process writes to (waited {} s)",
                    wait.as_secs_f64()
                ),
            ));
        }
    }
}

fn set_blocking(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above; only O_NONBLOCK changes.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether `path` is a regular file (what may be opened twice: measured, probed,
/// hashed and then read).
pub fn is_regular(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("grove-open-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        p
    }

    #[test]
    fn a_fifo_without_a_writer_is_an_error_after_the_wait() {
        let p = fifo("lonely");
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
            .unwrap();
        let t = Instant::now();
        let e = wait_for_writer(&file, Duration::from_millis(200)).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(e.to_string().contains("no process writes"), "{e}");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_fifo_is_read_whole_once_its_writer_comes() {
        let p = fifo("late");
        let q = p.clone();
        let w = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            std::fs::write(&q, b"hello fifo").unwrap();
        });
        let mut s = String::new();
        open(&p).unwrap().read_to_string(&mut s).unwrap();
        w.join().unwrap();
        assert_eq!(s, "hello fifo");
        std::fs::remove_file(&p).unwrap();
    }
}
