//! One model for every input format: a CCT, its metric table and, for traces, events.

/// `extend`, `collect`, `From<Vec>` and `==` as on a `Vec`, for the compact event
/// columns (`sparse::Sparse`, `coded::Coded`) that readers fill like vectors: written
/// once from their `push`, `iter`, `len` and `shrink_to_fit`.
macro_rules! vec_like {
    ($col:ident, $bound:ident) => {
        impl<T: $bound> Extend<T> for $col<T> {
            fn extend<I: IntoIterator<Item = T>>(&mut self, it: I) {
                for v in it {
                    self.push(v);
                }
            }
        }

        impl<T: $bound> FromIterator<T> for $col<T> {
            fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
                let mut c = Self::default();
                c.extend(it);
                c
            }
        }

        impl<T: $bound> From<Vec<T>> for $col<T> {
            fn from(v: Vec<T>) -> Self {
                let mut c: Self = v.into_iter().collect();
                c.shrink_to_fit();
                c
            }
        }

        impl<T: $bound> PartialEq for $col<T> {
            fn eq(&self, other: &Self) -> bool {
                self.len() == other.len() && self.iter().eq(other.iter())
            }
        }
    };
}
pub(crate) use vec_like;

pub mod args;
pub mod attrs;
pub mod call_graph;
pub mod cct;
pub mod coded;
pub mod demangle;
pub mod events;
pub mod hidden;
pub mod intern;
pub mod lod;
pub mod metric_aliases;
pub mod metrics;
pub mod names;
pub mod paths;
pub mod sparse;

pub use cct::{Attrs, Cct, Frame, PreOrder, NO_NODE};
pub use events::{CounterTable, EventKind, EventTable};
pub use metrics::MetricTable;

use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Chrome Trace Event JSON, including the PyTorch/Kineto dialects.
    ChromeTrace,
    HatchetLiteral,
    Folded,
    Demo,
    Caliper,
    HpcToolkit,
    NsightSqlite,
    // CPU profilers (issue 10).
    Callgrind,
    PerfScript,
    Speedscope,
    CpuProfile,
    Pprof,
    // HPC and Python profilers (issue 12).
    CProfile,
    Pyinstrument,
    Tau,
    Gprof2Dot,
    /// gprof's text report (flat profile and call graph).
    Gprof,
    Timemory,
    ThicketJson,
    // Framework traces (issue 11).
    ExecutionTrace,
    XPlane,
    // AMD and PlaidML device traces (issue 11).
    Rocprof,
    PlaidML,
    /// OTF2 archives (Score-P traces).
    Otf2,
    /// grove's own `tree --format json|csv|parquet`, read back.
    GroveExport,
    /// Score-P/Scalasca CUBE profiles (CUBE4 `.cubex`, CUBE 3 XML `.cube`).
    Cube,
    /// Firefox Profiler / Gecko profile JSON (samply, Firefox), raw or processed.
    Gecko,
    /// Perfetto protobuf traces (issue 29).
    Perfetto,
}

impl Format {
    /// Every format (a new variant belongs here too: summaries and the cache store a
    /// format by its label and find it back through this list).
    pub const ALL: [Format; 28] = [
        Format::ChromeTrace,
        Format::HatchetLiteral,
        Format::Folded,
        Format::Demo,
        Format::Caliper,
        Format::HpcToolkit,
        Format::NsightSqlite,
        Format::Callgrind,
        Format::PerfScript,
        Format::Speedscope,
        Format::CpuProfile,
        Format::Pprof,
        Format::CProfile,
        Format::Pyinstrument,
        Format::Tau,
        Format::Gprof2Dot,
        Format::Gprof,
        Format::Timemory,
        Format::ThicketJson,
        Format::ExecutionTrace,
        Format::XPlane,
        Format::Rocprof,
        Format::PlaidML,
        Format::Otf2,
        Format::GroveExport,
        Format::Cube,
        Format::Gecko,
        Format::Perfetto,
    ];

    /// The format whose `label` this is.
    pub fn from_label(label: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.label() == label)
    }

    pub fn label(self) -> &'static str {
        match self {
            Format::ChromeTrace => "Chrome Trace Event JSON",
            Format::HatchetLiteral => "Hatchet literal JSON",
            Format::Folded => "folded stacks",
            Format::Demo => "demo (Kineto trace)",
            Format::Caliper => "Caliper",
            Format::HpcToolkit => "HPCToolkit database",
            Format::NsightSqlite => "Nsight Systems SQLite export",
            Format::Callgrind => "callgrind/cachegrind",
            Format::PerfScript => "perf script text",
            Format::Speedscope => "speedscope JSON",
            Format::CpuProfile => "Chrome .cpuprofile",
            Format::Pprof => "pprof protobuf",
            Format::CProfile => "cProfile/pstats",
            Format::Pyinstrument => "pyinstrument JSON",
            Format::Tau => "TAU profile",
            Format::Gprof2Dot => "gprof2dot DOT",
            Format::Gprof => "gprof report",
            Format::Timemory => "timemory JSON",
            Format::ThicketJson => "Thicket/Hatchet to_json",
            Format::ExecutionTrace => "PyTorch execution trace",
            Format::XPlane => "TensorFlow/JAX XSpace protobuf",
            Format::Rocprof => "AMD rocprof",
            Format::PlaidML => "PlaidML event log",
            Format::Otf2 => "OTF2 trace",
            Format::GroveExport => "grove tree export",
            Format::Cube => "Score-P/Scalasca CUBE",
            Format::Gecko => "Firefox Profiler (Gecko) JSON",
            Format::Perfetto => "Perfetto protobuf trace",
        }
    }
}

/// Where a profile came from.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: Option<PathBuf>,
    pub format: Format,
    /// Size of the file on disk (compressed size for .gz).
    pub size: u64,
    pub gzip: bool,
    /// A short name for titles: the file name or "demo".
    pub label: String,
}

impl Source {
    /// A file read whole from disk (not compressed): its size, and its file name as
    /// the label.
    pub fn of_file(path: &std::path::Path, format: Format) -> Source {
        Source {
            path: Some(path.to_path_buf()),
            format,
            size: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
            gzip: false,
            label: path
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string()),
        }
    }
}

#[derive(Debug)]
pub struct Profile {
    pub source: Source,
    /// The dialect or producer when recognisable (e.g. "Kineto (2021 dialect)").
    pub dialect: String,
    pub cct: Cct,
    pub metrics: MetricTable,
    pub events: Option<EventTable>,
    pub counters: Option<CounterTable>,
    /// Run metadata: key/value pairs in file order.
    pub meta: Vec<(String, String)>,
    pub warnings: Vec<String>,
    /// The metric shown first (Hatchet's default_metric).
    pub default_metric: String,
    /// The call graph with the file's exact per-function figures, for formats that
    /// record one (callgrind, gprof2dot, cProfile); the CCT is then unfolded from it.
    pub call_graph: Option<call_graph::CallGraph>,
}

impl Profile {
    pub fn meta_value(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the tree's figures are estimates (call paths unfolded from a call
    /// graph), which the header and the exports must say.
    pub fn estimated_paths(&self) -> bool {
        self.call_graph.as_ref().is_some_and(|g| g.estimated_paths)
    }
}

/// A profile made of call paths with an exclusive time each (`main/solve`, 3.0), for
/// the unit tests of the layers above (ensembles, diff). Compiled always: the crates
/// above cannot see this crate's `cfg(test)` items.
#[doc(hidden)]
pub fn profile_of_paths(paths: &[(&str, f64)], unit: &str) -> Profile {
    let mut cct = Cct::default();
    let mut time = Vec::new();
    for (path, t) in paths {
        let mut parent = None;
        for seg in path.split('/') {
            parent = Some(cct.child(parent, seg, "function"));
        }
        time.resize(cct.len(), 0.0);
        time[parent.unwrap() as usize] += t;
    }
    time.resize(cct.len(), 0.0);
    let mut m = MetricTable::new(cct.len());
    m.set("time", unit, time);
    m.derive_inclusive(&cct, &["time"]);
    cct.finish();
    Profile {
        call_graph: None,
        source: Source {
            path: None,
            format: Format::Folded,
            size: 0,
            gzip: false,
            label: "p".into(),
        },
        dialect: String::new(),
        cct,
        metrics: m,
        events: None,
        counters: None,
        meta: Vec::new(),
        warnings: Vec::new(),
        default_metric: "time".into(),
    }
}

#[cfg(test)]
mod format_tests {
    use super::Format;

    /// Every format is in `Format::ALL` (summaries and the cache find a format back by
    /// its label through that list): the match fails to compile when a variant is
    /// added, pointing here.
    #[test]
    fn all_lists_every_format() {
        for f in Format::ALL {
            assert_eq!(Format::from_label(f.label()), Some(f));
        }
        let count = |f: Format| match f {
            Format::ChromeTrace
            | Format::HatchetLiteral
            | Format::Folded
            | Format::Demo
            | Format::Caliper
            | Format::HpcToolkit
            | Format::NsightSqlite
            | Format::Callgrind
            | Format::PerfScript
            | Format::Speedscope
            | Format::CpuProfile
            | Format::Pprof
            | Format::CProfile
            | Format::Pyinstrument
            | Format::Tau
            | Format::Gprof2Dot
            | Format::Gprof
            | Format::Timemory
            | Format::ThicketJson
            | Format::ExecutionTrace
            | Format::XPlane
            | Format::Rocprof
            | Format::PlaidML
            | Format::Otf2
            | Format::GroveExport
            | Format::Cube
            | Format::Gecko
            | Format::Perfetto => 1,
        };
        assert_eq!(Format::ALL.iter().map(|f| count(*f)).sum::<usize>(), 28);
    }
}
