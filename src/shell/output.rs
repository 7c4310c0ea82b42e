//! Writing to stdout, in one place: buffered, flushed, and a closed pipe
//! (`grove tree x | head`) is not an error.

use std::io::{self, BufWriter, IsTerminal, StdoutLock, Write};

use grove::cli::Format;

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
    binary_format_to_pipe(Format::Parquet)
}

/// A binary format (`FORMATS` says which) goes to a file or a pipe, never onto the
/// terminal; text formats go anywhere.
pub fn binary_format_to_pipe(f: Format) -> Result<(), String> {
    if f.spec().binary && io::stdout().is_terminal() {
        let name = f.name();
        return Err(format!(
            "{name} is binary: redirect it to a file (> out.{name})"
        ));
    }
    Ok(())
}
