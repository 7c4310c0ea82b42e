//! `perf.data` itself (`PERFILE2`): its binary layout is perf's own, so grove asks perf
//! to read it. When `perf` is on PATH it runs `perf script` with the fields the perf
//! script reader needs and reads perf's output as it comes (never a temporary file);
//! perf's own error reaches the user in one line. Without perf the refusal names the
//! command to run where perf is.

use std::io::{BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::model::{Format, Profile, Source};

use super::{Input, Probe};

/// The fields `perf::read` needs: the header's comm, pid/tid, time, period and event,
/// then the call chain (or the one sampled address without `-g`).
pub const FIELDS: &str = "comm,pid,tid,time,period,event,ip,sym,dso";

/// The perf.data magic, as perf writes it on little- and big-endian machines.
pub fn is_perf_data(head: &[u8]) -> bool {
    head.starts_with(b"PERFILE2") || head.starts_with(b"2ELIFREP")
}

/// The command that turns the file into text grove reads.
pub fn script_command(path: &Path) -> String {
    format!(
        "perf script -F {FIELDS} -i {} > {}.txt",
        shell_quote(&path.display().to_string()),
        shell_quote(&path.display().to_string())
    )
}

fn shell_quote(s: &str) -> String {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub struct PerfData;

impl super::Reader for PerfData {
    fn name(&self) -> &'static str {
        "perf.data (through perf script)"
    }

    fn format(&self) -> Format {
        Format::PerfScript
    }

    fn reads_path(&self) -> bool {
        true
    }

    fn claims(&self, probe: &Probe) -> bool {
        !probe.is_dir && probe.path.is_some() && is_perf_data(probe.head)
    }

    fn read(&self, input: Input) -> Result<Vec<Profile>, String> {
        let path = input.into_path()?;
        let mut magic = [0u8; 2];
        let compressed = std::fs::File::open(&path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
            && magic == super::GZIP_MAGIC;
        if compressed {
            return Err(
                "a gzip-compressed perf.data: perf reads it uncompressed (gunzip it first)".into(),
            );
        }
        let mut p = run_perf_script(&path)?;
        p.cct.finish();
        Ok(vec![p])
    }
}

/// Runs `perf script` on the file and reads its output as perf script text.
fn run_perf_script(path: &Path) -> Result<Profile, String> {
    let mut child = Command::new("perf")
        .args(["script", "-F", FIELDS, "-i"])
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "a perf.data file, and perf is not on PATH to read it: run `{}` where perf is, and open the .txt",
                script_command(path)
            ),
            _ => format!("cannot run perf script: {e}"),
        })?;
    // perf's stderr is read beside its stdout, so neither pipe fills and stalls it.
    let mut stderr = child.stderr.take();
    let errs = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let stdout = child
        .stdout
        .take()
        .ok_or("perf script gave no output pipe")?;
    let source = Source::of_file(path, Format::PerfScript);
    let read = super::perf::read(&mut BufReader::new(stdout), source);
    let status = child.wait().map_err(|e| format!("perf script: {e}"))?;
    let err_text = errs.join().unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "perf script failed: {}",
            one_line(&err_text, status.code())
        ));
    }
    let mut p = read.map_err(|e| format!("perf script's output: {e}"))?;
    p.meta
        .push(("input.converter".into(), format!("perf script -F {FIELDS}")));
    for w in err_text
        .lines()
        .map(str::trim)
        .filter(|l| is_perf_warning(l))
    {
        p.warnings.push(format!("perf script: {w}"));
    }
    Ok(p)
}

/// perf's lines worth passing on as warnings (lost samples, missing symbols), not its
/// progress chatter.
fn is_perf_warning(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    !line.is_empty() && (l.contains("warning") || l.contains("lost") || l.contains("failed"))
}

/// perf's error output as one line: its non-empty lines joined, cut at 300 characters.
fn one_line(stderr: &str, code: Option<i32>) -> String {
    let joined: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let mut s = joined.join("; ");
    if s.is_empty() {
        s = match code {
            Some(c) => format!("exit status {c}, no message"),
            None => "killed by a signal".into(),
        };
    }
    if s.chars().count() > 300 {
        s = s.chars().take(300).collect::<String>() + "…";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_quotes_odd_paths() {
        assert_eq!(
            script_command(Path::new("/t/perf.data")),
            format!("perf script -F {FIELDS} -i /t/perf.data > /t/perf.data.txt")
        );
        assert!(script_command(Path::new("/t/my perf.data")).contains("-i '/t/my perf.data'"));
        assert_eq!(one_line("a\n\n b \n", Some(1)), "a; b");
        assert_eq!(one_line("", Some(255)), "exit status 255, no message");
    }
}
