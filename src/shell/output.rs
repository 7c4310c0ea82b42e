//! Writing to stdout, in one place: buffered, flushed, and a closed pipe
//! (`grove tree x | head`) is not an error.

use std::io::{self, BufWriter, IsTerminal, StdoutLock, Write};

use grove::cli::Format;
use grove::gpu::report;

/// Runs `write` on a buffered, locked stdout and flushes it.
pub fn to_stdout(
    write: impl FnOnce(&mut BufWriter<StdoutLock<'static>>) -> io::Result<()>,
) -> Result<(), String> {
    let mut out = BufWriter::new(io::stdout().lock());
    match write(&mut out).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Writes a finished text to stdout.
pub fn text(text: &str) -> Result<(), String> {
    to_stdout(|out| out.write_all(text.as_bytes()))
}

/// Binary output goes to a file or a pipe, never onto the terminal.
pub fn binary_to_pipe() -> Result<(), String> {
    if io::stdout().is_terminal() {
        return Err("parquet is binary: redirect it to a file (> out.parquet)".into());
    }
    Ok(())
}

/// The report formats; `--format` offers kernels and summary no others.
pub fn report_format(f: Format) -> report::Format {
    match f {
        Format::Csv => report::Format::Csv,
        Format::Json => report::Format::Json,
        _ => report::Format::Text,
    }
}
