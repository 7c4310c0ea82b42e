//! The readers: one list of them and one detection loop. Every reader turns one input
//! into profiles of the one `Profile` model; assembling several inputs (ensembles,
//! directories, globs) happens a layer up, in `crate::load`.
//!
//! Adding a reader: a file (or folder) named for its format with a unit struct that
//! implements [`Reader`], one line in [`READERS`] and, for a new format, its line in
//! `model::formats!` (`Format::ALL` and the label derive from it). Tests keyed on
//! `READERS` then fail, naming the reader, until it has an entry in describe.rs's
//! `REFUSED` (what a refused file of its kind is called), a fuzz target in
//! `tests/fuzz.rs`'s `FUZZED` and its format in `tests/corpus_detection.rs`:
//! docs/architecture.md, "Adding a reader", has the whole checklist.

pub mod caliper;
pub mod call_paths;
pub mod callgrind;
pub mod callgrind_tree;
pub mod chrome;
pub mod cprofile;
pub mod cpuprofile;
pub mod cube;
pub mod describe;
pub mod et;
pub mod fit;
pub mod folded;
pub mod gecko;
pub mod gprof;
pub mod gprof2dot;
pub mod grove_export;
pub mod hatchet;
pub mod hpctoolkit;
pub mod lines;
pub mod marshal;
pub mod nsys;
pub mod open;
pub mod otf2;
pub mod perf;
pub mod perf_data;
pub mod perf_json;
pub mod perfetto;
pub mod plaidml;
pub mod pprof;
pub mod probe;
pub mod progress;
pub mod pyinstrument;
pub mod rocprof;
pub mod select;
pub mod speedscope;
pub mod tau;
#[cfg(test)]
pub mod test_corpus;
pub mod thicket;
pub mod timemory;
pub mod trace_cct;
pub mod xml_entities;
pub mod xplane;

use std::fmt;
use std::fs::File;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use crate::model::{Format, Profile, Source};

pub use probe::Probe;
pub use probe::{decompressed, GZIP_MAGIC};
use probe::{file_name, Content};

/// Every reader, in the order detection asks them: the first that claims an input
/// reads it. Readers that open their path come before the stream formats.
pub static READERS: &[&dyn Reader] = &[
    &hpctoolkit::HpcToolkit,
    // Before Nsight, which claims every SQLite file (to explain what it refuses).
    &rocprof::RocprofDb,
    &otf2::Otf2,
    &nsys::Nsys,
    &tau::Tau,
    &caliper::Caliper,
    &grove_export::parquet::GroveParquet,
    &cube::Cube,
    &cube::cube3::Cube3,
    &perf_data::PerfData,
    // Formats with a distinctive head, before the broad JSON and folded claims.
    &StreamReader {
        name: "callgrind/cachegrind",
        format: Format::Callgrind,
        claims: callgrind::claims,
        read: callgrind::read,
    },
    &StreamReader {
        name: "grove tree JSON",
        format: Format::GroveExport,
        claims: grove_export::json::claims,
        read: grove_export::json::read,
    },
    &StreamReader {
        name: "grove tree CSV",
        format: Format::GroveExport,
        claims: grove_export::csv::claims,
        read: grove_export::csv::read,
    },
    &xplane::XPlaneReader,
    &StreamReader {
        name: "pprof protobuf",
        format: Format::Pprof,
        claims: pprof::claims,
        read: pprof::read,
    },
    // After XPlane and pprof, whose files also start with a field-1 message.
    &perfetto::Perfetto,
    &StreamReader {
        name: "speedscope JSON",
        format: Format::Speedscope,
        claims: speedscope::claims,
        read: speedscope::read,
    },
    &StreamReader {
        name: "Firefox Profiler (Gecko) JSON",
        format: Format::Gecko,
        claims: gecko::claims,
        read: gecko::read,
    },
    &StreamReader {
        name: "Chrome .cpuprofile",
        format: Format::CpuProfile,
        claims: cpuprofile::claims,
        read: cpuprofile::read,
    },
    &StreamReader {
        name: "rocprof CSV",
        format: Format::Rocprof,
        claims: rocprof::claims_csv,
        read: rocprof::read_csv,
    },
    &StreamReader {
        name: "rocprofv3 JSON",
        format: Format::Rocprof,
        claims: rocprof::claims_v3json,
        read: rocprof::read_v3json,
    },
    &StreamReader {
        name: "PlaidML event log",
        format: Format::PlaidML,
        claims: plaidml::claims,
        read: plaidml::read,
    },
    &StreamReader {
        name: "gprof report",
        format: Format::Gprof,
        claims: gprof::claims,
        read: gprof::read,
    },
    &StreamReader {
        name: "perf script text",
        format: Format::PerfScript,
        claims: perf::claims,
        read: perf::read,
    },
    &StreamReader {
        name: "perf JSON export",
        format: Format::PerfScript,
        claims: perf_json::claims,
        read: perf_json::read,
    },
    &StreamReader {
        name: "PyTorch execution trace JSON",
        format: Format::ExecutionTrace,
        claims: et::claims,
        read: et::read,
    },
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

/// A stream reader given as two functions, for readers written as `claims(head)` and
/// `read(input, source)` (the CPU-profiler readers of issue 10): registering one is
/// `pub mod x;` and one entry in [`READERS`],
/// `&StreamReader { name: "…", format: Format::X, claims: x::claims, read: x::read }`,
/// before `chrome` and `folded` (their strict detection refuses such files anyway).
pub struct StreamReader {
    pub name: &'static str,
    pub format: Format,
    pub claims: fn(&[u8]) -> bool,
    pub read: fn(&mut dyn BufRead, Source) -> Result<Profile, String>,
}

impl Reader for StreamReader {
    fn name(&self) -> &'static str {
        self.name
    }

    fn format(&self) -> Format {
        self.format
    }

    fn claims(&self, probe: &Probe) -> bool {
        !probe.is_dir && (self.claims)(probe.head)
    }

    fn read(&self, input: Input) -> Result<Vec<Profile>, String> {
        let (mut r, source) = input.into_stream()?;
        let mut p = (self.read)(&mut r, source)?;
        p.cct.finish();
        Ok(vec![p])
    }
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

    /// The whole stream in memory, for readers that parse a file at once (XML, tar,
    /// marshal, DOT, one JSON document).
    pub fn into_bytes(self) -> Result<(Vec<u8>, Source), String> {
        let (mut input, source) = self.into_stream()?;
        let mut bytes = Vec::new();
        input
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read: {e}"))?;
        Ok((bytes, source))
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

/// Whether a reader claims this file (its head is read, decompressed, and shown to
/// each reader's `claims`); false for what cannot be opened. Used when walking
/// sub-directories, where files that are no profile (sidecars, notes) are passed over.
pub fn claims_file(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let Ok(mut content) = Content::new(Box::new(file)) else {
        return false;
    };
    let (gzip, utf16) = (content.gzip, content.utf16);
    let probe = Probe {
        path: Some(path),
        name: file_name(path),
        is_dir: false,
        head: content.head(),
        gzip,
        utf16,
    };
    detect(&probe).is_some()
}

/// The one line for an input no reader claims: what it looks like, when that is
/// recognisable, and what grove reads.
fn unrecognised(probe: &Probe) -> String {
    let names: Vec<&str> = READERS.iter().map(|r| r.name()).collect();
    let list = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    };
    match describe::describe(probe) {
        Some(what) => format!("unrecognised format: {what} (grove reads {list})"),
        None => format!("unrecognised format (grove reads {list})"),
    }
}

/// A reader's profiles, or an error when none has a node: an empty screen would look
/// like a profile of nothing.
/// Also where mangled C++/Rust names become readable, for every reader at once.
fn non_empty(reader: &dyn Reader, mut ps: Vec<Profile>) -> Result<Vec<Profile>, String> {
    if ps.iter().any(|p| !p.cct.is_empty()) {
        for p in &mut ps {
            crate::model::names::demangle_tree(&mut p.cct);
            select::unapplied(p);
        }
        return Ok(ps);
    }
    let mut msg = format!(
        "{} with nothing grove can show: no call-tree node came out of it",
        reader.name()
    );
    if let Some(w) = ps.iter().flat_map(|p| &p.warnings).next() {
        msg.push_str(&format!(" ({w})"));
    }
    Err(msg)
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
/// `-` is standard input; it, and pipes or devices (`/dev/stdin`), are read once as a
/// stream: detection looks at the buffered head and never reopens the path, so only
/// the stream formats are asked.
pub fn load_all(path: &Path) -> Result<Vec<Profile>, LoadError> {
    let _alloc = crate::memory::LoadAllocator::begin();
    let err = |msg: String| LoadError {
        path: path.display().to_string(),
        msg,
    };
    let stdin = path == Path::new("-");
    let (src, size, stream): (Box<dyn Read>, u64, bool) = if stdin {
        (Box::new(std::io::stdin()), 0, true)
    } else {
        let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if meta.is_dir() {
            return load_dir(path).map_err(err);
        }
        if meta.is_file() {
            // Refuse in advance what cannot fit in the memory grove may use.
            let mut raw = vec![0u8; 4096];
            let n = File::open(path)
                .and_then(|mut f| f.read(&mut raw))
                .map_err(|e| err(e.to_string()))?;
            raw.truncate(n);
            // A part (`--steps`, `--window`) needs what the part holds, unknown before
            // it is read; the estimate is for the whole file. A Chrome trace that does
            // not fit loads the part that does (`fit`; other formats are refused), or
            // in low-memory mode the whole trace, whose rows give way to a summary
            // once its tree is built (`load::reduce`).
            // A load already let through whole (spilled, below) is not cut.
            fit::forced_spill();
            let short = (select::current().is_none() && !fit::loading_whole())
                .then(|| fit::shortfall(path, meta.len(), &raw))
                .flatten()
                .filter(|s| !(crate::memory::low_memory() && s.what == "JSON trace"));
            if let Some(short) = short {
                // Whole, its big arrays in mapped files on local disk, when the rest
                // fits (`fit::spill`); else the leading part that fits.
                let why = match fit::spill(&short) {
                    Ok(dir) => {
                        let mut ps = fit::whole(|| load_all(path))?;
                        let note = fit::spilled_note(&short, &dir);
                        for p in &mut ps {
                            p.warnings.insert(0, note.clone());
                        }
                        return Ok(ps);
                    }
                    Err(why) => why,
                };
                let fitted = fit::choose(path, &short).map_err(err)?;
                let mut ps = fit::with_part(fitted.part, || load_all(path))?;
                let note = if why.is_empty() {
                    fitted.note
                } else {
                    format!("{} ({why})", fitted.note)
                };
                for p in &mut ps {
                    p.warnings.insert(0, note.clone());
                }
                return Ok(ps);
            }
        }
        // Opened once: a FIFO or pipe is not there to be opened again.
        let file = open::open(path).map_err(|e| err(e.to_string()))?;
        let src: Box<dyn Read> = match progress::current() {
            Some(p) => {
                p.add_total(meta.len());
                Box::new(progress::Counting::new(file, p))
            }
            None => Box::new(file),
        };
        (src, meta.len(), !meta.is_file())
    };
    // A stream's size is what came through it (the path's metadata says 0).
    let (src, read_bytes) = if stream {
        let (r, n) = ByteCount::new(src);
        (Box::new(r) as Box<dyn Read>, Some(n))
    } else {
        (src, None)
    };
    let mut content = Content::new(src).map_err(err)?;
    let name = if stdin {
        "stdin".to_string()
    } else {
        file_name(path)
    };
    let (gzip, utf16) = (content.gzip, content.utf16);
    let head = content.head();
    let probe = Probe {
        path: (!stream).then_some(path),
        name: name.clone(),
        is_dir: false,
        head,
        gzip,
        utf16,
    };
    let Some(reader) = detect(&probe) else {
        let why = unrecognised(&probe);
        return Err(err(unclaimed(&mut content, why)));
    };
    if reader.reads_path() {
        drop(content);
        return reader
            .read(Input::Path(path.to_path_buf()))
            .and_then(|ps| non_empty(reader, ps))
            .map_err(err);
    }
    let label = if name.is_empty() {
        path.display().to_string()
    } else {
        name
    };
    let source = Source {
        path: Some(path.to_path_buf()),
        format: reader.format(),
        size,
        gzip,
        label,
    };
    let cut = content.cut.clone();
    let compression = content.compression;
    let ps = reader.read(Input::Stream(content.input, source));
    let mut ps = finish(reader, ps, &cut, compression).map_err(err)?;
    if let Some(n) = read_bytes {
        for p in &mut ps {
            p.source.size = n.get();
        }
    }
    Ok(ps)
}

/// Counts the bytes read through it, for a stream whose size is known only once read.
struct ByteCount {
    inner: Box<dyn Read>,
    n: std::rc::Rc<std::cell::Cell<u64>>,
}

impl ByteCount {
    fn new(inner: Box<dyn Read>) -> (ByteCount, std::rc::Rc<std::cell::Cell<u64>>) {
        let n = std::rc::Rc::new(std::cell::Cell::new(0));
        (
            ByteCount {
                inner,
                n: n.clone(),
            },
            n,
        )
    }
}

impl Read for ByteCount {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n.set(self.n.get() + k as u64);
        Ok(k)
    }
}

/// A directory: an HPCToolkit database, or one of the layouts `describe` names.
fn load_dir(path: &Path) -> Result<Vec<Profile>, String> {
    let probe = Probe::dir(path);
    match detect(&probe) {
        Some(r) => r
            .read(Input::Path(path.to_path_buf()))
            .and_then(|ps| non_empty(r, ps)),
        None => Err(match describe::describe(&probe) {
            Some(what) => format!("{what}, which grove does not read as one input"),
            None => "is a directory, but not an HPCToolkit database (no meta.db or experiment.xml)"
                .into(),
        }),
    }
}

/// What a stream reader returned, checked: not empty, and marked partial (a warning
/// each profile carries) when the decompressed stream was cut short.
fn finish(
    reader: &dyn Reader,
    ps: Result<Vec<Profile>, String>,
    cut: &probe::Cut,
    compression: Option<&str>,
) -> Result<Vec<Profile>, String> {
    let mut ps = non_empty(reader, ps?)?;
    for p in &mut ps {
        // Counts in half the bytes (`MetricTable::narrow_whole`): read back bit for bit.
        p.metrics.narrow_whole();
    }
    if let Some(why) = cut.borrow().as_ref() {
        for p in &mut ps {
            p.warnings
                .insert(0, format!("{PARTIAL}: {why}; loaded what came before it"));
        }
    }
    if let Some(c) = compression.filter(|c| *c != "gzip") {
        for p in &mut ps {
            p.meta.push(("input.compression".into(), c.into()));
        }
    }
    Ok(ps)
}

/// How a warning about an input that ends early starts.
pub const PARTIAL: &str = "partial input";

/// Whether the profile was loaded from an input that ends early (a truncated gzip or
/// JSON file): its header and `grove info` say so.
pub fn is_partial(p: &Profile) -> bool {
    p.warnings
        .iter()
        .any(|w| w.contains(PARTIAL) || w.contains("loaded the complete events before it"))
}

/// Why no reader claimed the content: it could not be read, it is empty, or its
/// format is not one grove reads.
fn unclaimed(content: &mut Content, unrecognised: String) -> String {
    let empty = content.head().is_empty();
    match content.failed.take() {
        Some(e) => e,
        None if empty => "the file is empty".into(),
        None => unrecognised,
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
        let why = unrecognised(&probe);
        return Err(unclaimed(&mut content, why));
    };
    let source = Source {
        path,
        format: reader.format(),
        size,
        gzip,
        label: label.to_string(),
    };
    let cut = content.cut.clone();
    let compression = content.compression;
    let ps = reader.read(Input::Stream(content.input, source));
    finish(reader, ps, &cut, compression)?
        .into_iter()
        .next()
        .ok_or_else(|| "no profile in the input".to_string())
}

/// The demo profile: a generated Kineto-like trace embedded in the binary.
pub fn load_demo() -> Profile {
    const DEMO: &[u8] = include_bytes!("../../../../testdata/demo.trace.json.gz");
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

    /// `READERS` is the list of formats: every `Format` but the demo's is what some
    /// reader reads, and reader names (the unrecognised line lists them, and the
    /// registry tests of describe.rs, tests/fuzz.rs and tests/corpus_detection.rs key
    /// on them) are distinct.
    #[test]
    fn every_format_has_a_reader() {
        let unread: Vec<String> = Format::ALL
            .iter()
            .filter(|&&f| f != Format::Demo && !READERS.iter().any(|r| r.format() == f))
            .map(|f| format!("{f:?}"))
            .collect();
        assert!(
            unread.is_empty(),
            "formats no reader of READERS reads: {}",
            unread.join(", ")
        );
        for (i, r) in READERS.iter().enumerate() {
            assert!(
                !READERS[..i].iter().any(|o| o.name() == r.name()),
                "two readers are named {:?}",
                r.name()
            );
        }
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
        assert!(e.contains("x.bin: unrecognised format: binary data"), "{e}");
        assert!(e.contains("(grove reads"), "{e}");
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
    fn a_stream_reader_from_two_functions() {
        fn claims(head: &[u8]) -> bool {
            head.starts_with(b"toy\n")
        }
        fn read(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
            let mut s = String::new();
            input.read_to_string(&mut s).map_err(|e| e.to_string())?;
            let mut p = folded::FoldedStacks
                .read(Input::Stream(
                    Box::new(std::io::Cursor::new(s[4..].to_string())),
                    source,
                ))?
                .remove(0);
            p.dialect = "toy".into();
            Ok(p)
        }
        let toy = StreamReader {
            name: "toy",
            format: Format::Folded,
            claims,
            read,
        };
        assert!(toy.claims(&Probe::bytes(b"toy\nmain 1\n")));
        assert!(!toy.claims(&Probe::bytes(b"main 1\n")));
        let source = Source {
            path: None,
            format: Format::Folded,
            size: 0,
            gzip: false,
            label: "t".into(),
        };
        let input = Input::Stream(Box::new(&b"toy\nmain;a 2\n"[..]), source);
        let ps = toy.read(input).unwrap();
        assert_eq!(
            (ps.len(), ps[0].cct.len(), ps[0].dialect.as_str()),
            (1, 2, "toy")
        );
    }

    #[test]
    fn the_unrecognised_line_lists_every_reader() {
        let line = unrecognised(&Probe::bytes(b"\x01"));
        for r in READERS {
            assert!(line.contains(r.name()), "{line}");
        }
        assert!(!line.contains('\n'));
    }
}
