//! `GROVE_PHASES=1`: wall and CPU time of the tree build's steps on stderr, to see
//! where a load's time goes without a profiler. The CPU time is the whole process's
//! (all threads), so a step that uses a second core shows more CPU than wall; the
//! first line is everything before the build (the parse, on a Chrome trace). Each line
//! also gives the resident memory and its peak so far.

use std::time::Instant;

pub struct Phases {
    on: bool,
    wall: Instant,
    cpu: f64,
}

/// CPU seconds used by the process so far (every thread).
pub fn process_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } != 0 {
        return 0.0;
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Resident memory now and at its peak so far (Linux; empty elsewhere).
fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    format!("RSS {} (peak {})", field("VmRSS:"), field("VmHWM:"))
}

/// Wall time since the process started, from /proc (to 10 ms; "?" elsewhere).
fn process_age() -> String {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let uptime = std::fs::read_to_string("/proc/uptime").unwrap_or_default();
    // The command name (field 2) may hold spaces: count fields after its ')'.
    let start = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(19))
        .and_then(|t| t.parse::<f64>().ok());
    let up = uptime
        .split_whitespace()
        .next()
        .and_then(|t| t.parse::<f64>().ok());
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    match (start, up) {
        (Some(start), Some(up)) if hz > 0.0 => format!("{:.2} s", up - start / hz),
        _ => "? s".into(),
    }
}

impl Phases {
    pub fn start() -> Phases {
        let on = std::env::var("GROVE_PHASES").is_ok_and(|v| v.trim() == "1");
        let cpu = if on { process_cpu() } else { 0.0 };
        if on {
            eprintln!(
                "phase before-tree: {} wall, {:.3} s CPU (parse and setup), {}",
                process_age(),
                cpu,
                memory()
            );
        }
        Phases {
            on,
            wall: Instant::now(),
            cpu,
        }
    }

    /// Ends the step named `what` and starts the next one.
    pub fn mark(&mut self, what: &str) {
        if !self.on {
            return;
        }
        let cpu = process_cpu();
        eprintln!(
            "phase tree/{what}: {:.3} s wall, {:.3} s CPU, {}",
            self.wall.elapsed().as_secs_f64(),
            cpu - self.cpu,
            memory()
        );
        self.wall = Instant::now();
        self.cpu = cpu;
    }
}
