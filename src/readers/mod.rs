//! The readers: one list of them and one detection loop. Every reader turns one input
//! into profiles of the one `Profile` model; assembling several inputs (ensembles,
//! directories, globs) happens a layer up, in `crate::load`.
//!
//! Adding a reader: a file (or folder) named for its format with a unit struct that
//! implements [`Reader`], and one line in [`READERS`].

pub mod caliper;
pub mod call_graph;
pub mod chrome;
pub mod cprofile;
pub mod folded;
pub mod gprof2dot;
pub mod hatchet;
pub mod hpctoolkit;
pub mod marshal;
pub mod nsys;
pub mod probe;
pub mod pyinstrument;
pub mod tau;
pub mod thicket;
pub mod timemory;
pub mod trace_cct;

use std::fmt;
use std::fs::File;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use crate::model::{Format, Profile, Source};

pub use probe::Probe;
pub(crate) use probe::{decompressed, GZIP_MAGIC};
use probe::{file_name, Content};

/// Every reader, in the order detection asks them: the first that claims an input
/// reads it. Readers that open their path come before the stream formats.
pub static READERS: &[&dyn Reader] = &[
    &hpctoolkit::HpcToolkit,
    &nsys::Nsys,
    &tau::Tau,
    &caliper::Caliper,
    &cprofile::CProfile,
    &pyinstrument::Pyinstrument,
    &gprof2dot::Gprof2Dot,
    &timemory::Timemory,
    &thicket::ThicketJson,
    &hatchet::Hatchet,
    &chrome::Chrome,
    &folded::FoldedStacks,
];

/// One input format.
pub trait Reader: Sync {
    /// What grove calls the format in messages ("Chrome/Kineto trace JSON").
    fn name(&self) -> &'static str;
    /// The `Source::format` of what it reads.
    fn format(&self) -> Format;
    /// Whether it opens the input's path itself (databases, directories, formats read
    /// in several passes) rather than reading the decompressed stream. Such readers
    /// are not asked about a bare stream.
    fn reads_path(&self) -> bool {
        false
    }
    /// Whether this input is in its format. Cheap: it answers from the probe.
    fn claims(&self, probe: &Probe) -> bool;
    /// Reads the input: `Input::Path` when `reads_path`, else `Input::Stream`. Errors are
    /// one line, without the path (the loader adds it).
    fn read(&self, input: Input) -> Result<Vec<Profile>, String>;
}

/// What a reader reads.
pub enum Input {
    /// A file or directory that the reader opens itself.
    Path(PathBuf),
    /// The decompressed content, and where it came from (its `format` already set).
    Stream(Box<dyn BufRead>, Source),
}

impl Input {
    pub fn into_path(self) -> Result<PathBuf, String> {
        match self {
            Input::Path(p) => Ok(p),
            Input::Stream(_, s) => Err(format!("{} is read from a path", s.format.label())),
        }
    }

    pub fn into_stream(self) -> Result<(Box<dyn BufRead>, Source), String> {
        match self {
            Input::Stream(r, s) => Ok((r, s)),
            Input::Path(p) => Err(format!("{} is read as a stream", p.display())),
        }
    }
}

/// The reader that claims the input, if any.
pub fn detect(probe: &Probe) -> Option<&'static dyn Reader> {
    READERS
        .iter()
        .copied()
        .find(|r| (probe.path.is_some() || !r.reads_path()) && r.claims(probe))
}

/// Whether a directory is an input of its own (an HPCToolkit database) rather than a
/// folder of inputs.
pub fn claims_dir(path: &Path) -> bool {
    detect(&Probe::dir(path)).is_some()
}

/// The one line for an input no reader claims.
fn unrecognised() -> String {
    let names: Vec<&str> = READERS.iter().map(|r| r.name()).collect();
    let list = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    };
    format!("unrecognised format (grove reads {list})")
}

#[derive(Debug)]
pub struct LoadError {
    pub path: String,
    pub msg: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.msg)
    }
}

impl std::error::Error for LoadError {}

/// Loads every profile one input holds: databases and multi-rank files give several.
pub fn load_all(path: &Path) -> Result<Vec<Profile>, LoadError> {
    let err = |msg: String| LoadError {
        path: path.display().to_string(),
        msg,
    };
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    if meta.is_dir() {
        return match detect(&Probe::dir(path)) {
            Some(r) => r.read(Input::Path(path.to_path_buf())).map_err(err),
            None => Err(err(
                "is a directory, but not an HPCToolkit database (no meta.db or experiment.xml)"
                    .into(),
            )),
        };
    }
    let file = File::open(path).map_err(|e| err(e.to_string()))?;
    let mut content = Content::new(Box::new(file)).map_err(err)?;
    let name = file_name(path);
    let (gzip, utf16) = (content.gzip, content.utf16);
    let head = content.head();
    let probe = Probe {
        path: Some(path),
        name: name.clone(),
        is_dir: false,
        head,
        gzip,
        utf16,
    };
    let Some(reader) = detect(&probe) else {
        return Err(err(unclaimed(&mut content)));
    };
    if reader.reads_path() {
        drop(content);
        return reader.read(Input::Path(path.to_path_buf())).map_err(err);
    }
    let label = if name.is_empty() {
        path.display().to_string()
    } else {
        name
    };
    let source = Source {
        path: Some(path.to_path_buf()),
        format: reader.format(),
        size: meta.len(),
        gzip,
        label,
    };
    reader
        .read(Input::Stream(content.input, source))
        .map_err(err)
}

/// Why no reader claimed the content: it could not be read, it is empty, or its
/// format is not one grove reads.
fn unclaimed(content: &mut Content) -> String {
    let empty = content.head().is_empty();
    match content.failed.take() {
        Some(e) => e,
        None if empty => "the file is empty".into(),
        None => unrecognised(),
    }
}

/// Loads from any byte source (stream formats only); errors are one line, without the
/// path.
pub fn load_reader(
    src: Box<dyn Read>,
    path: Option<PathBuf>,
    size: u64,
    label: &str,
) -> Result<Profile, String> {
    let mut content = Content::new(src)?;
    let (gzip, utf16) = (content.gzip, content.utf16);
    let head = content.head();
    let probe = Probe {
        utf16,
        gzip,
        ..Probe::bytes(head)
    };
    let Some(reader) = detect(&probe) else {
        return Err(unclaimed(&mut content));
    };
    let source = Source {
        path,
        format: reader.format(),
        size,
        gzip,
        label: label.to_string(),
    };
    reader
        .read(Input::Stream(content.input, source))?
        .into_iter()
        .next()
        .ok_or_else(|| "no profile in the input".to_string())
}

/// The demo profile: a generated Kineto-like trace embedded in the binary.
pub fn load_demo() -> Profile {
    const DEMO: &[u8] = include_bytes!("../../testdata/demo.trace.json.gz");
    let mut p = load_reader(Box::new(DEMO), None, DEMO.len() as u64, "demo")
        .expect("the embedded demo profile loads");
    p.source.format = Format::Demo;
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff(head: &[u8]) -> Option<Format> {
        detect(&Probe::bytes(head)).map(|r| r.format())
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"  {\"traceEvents\":[]}"), Some(Format::ChromeTrace));
        assert_eq!(sniff(b"[{\"ph\":\"X\"}]"), Some(Format::ChromeTrace));
        assert_eq!(
            sniff(b"[{\"frame\":{\"name\":\"a\"}}]"),
            Some(Format::HatchetLiteral)
        );
        assert_eq!(
            sniff(b"[{\"name\":\"a\",\"frame\":{},\"ph\":1}]"),
            Some(Format::HatchetLiteral)
        );
        assert_eq!(sniff(b"a;b;c 12\n"), Some(Format::Folded));
        assert_eq!(sniff(b"[Unknown];main 12\n"), Some(Format::Folded));
        assert_eq!(sniff(b"hello world\n"), None);
        assert_eq!(sniff(b"   \n"), None);
    }

    #[test]
    fn files_no_reader_claims_get_one_line() {
        let dir = std::env::temp_dir().join(format!("grove-registry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let msg = |p: &Path| load_all(p).unwrap_err().to_string();
        let e = msg(&file("x.bin", b"\x00\x01hello"));
        assert!(e.contains("x.bin: unrecognised format (grove reads"), "{e}");
        assert!(msg(&file("e.json", b"")).ends_with("the file is empty"));
        let e = msg(&file("t.nsys-rep", b"binary"));
        assert!(e.contains("export one first: nsys export"), "{e}");
        assert!(msg(&dir).contains("is a directory, but not an HPCToolkit database"));
        // A folded file, gzip-compressed, is detected on its decompressed bytes.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
        std::io::Write::write_all(&mut gz, b"main;a 3\n").unwrap();
        let ps = load_all(&file("s.txt.gz", &gz.finish().unwrap())).unwrap();
        assert_eq!(ps[0].source.format, Format::Folded);
        assert!(ps[0].source.gzip);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_unrecognised_line_lists_every_reader() {
        let line = unrecognised();
        for r in READERS {
            assert!(line.contains(r.name()), "{line}");
        }
        assert!(!line.contains('\n'));
    }
}
