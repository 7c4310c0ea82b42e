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
pub mod lent;
pub mod lod;
pub mod metric_aliases;
pub mod metrics;
pub mod names;
pub mod paths;
pub mod sparse;

pub use cct::{Attrs, Cct, Frame, PreOrder, SavedOrder, NO_NODE};
pub use events::{CounterTable, EventKind, EventTable};
pub use metrics::MetricTable;

use std::path::PathBuf;

/// Declares [`Format`] from one list of variants with their labels: `Format::ALL` and
/// `label()` are derived from it, so a new variant is in both (summaries and the cache
/// store a format by its label and find it back through `ALL`).
macro_rules! formats {
    ($($(#[$doc:meta])* $variant:ident => $label:literal,)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Format {
            $($(#[$doc])* $variant,)*
        }

        impl Format {
            /// Every format, in declaration order.
            pub const ALL: &'static [Format] = &[$(Format::$variant,)*];

            pub fn label(self) -> &'static str {
                match self {
                    $(Format::$variant => $label,)*
                }
            }
        }
    };
}

formats! {
    /// Chrome Trace Event JSON, including the PyTorch/Kineto dialects.
    ChromeTrace => "Chrome Trace Event JSON",
    HatchetLiteral => "Hatchet literal JSON",
    Folded => "folded stacks",
    Demo => "demo (Kineto trace)",
    Caliper => "Caliper",
    HpcToolkit => "HPCToolkit database",
    NsightSqlite => "Nsight Systems SQLite export",
    // CPU profilers (issue 10).
    Callgrind => "callgrind/cachegrind",
    PerfScript => "perf script text",
    Speedscope => "speedscope JSON",
    CpuProfile => "Chrome .cpuprofile",
    Pprof => "pprof protobuf",
    // HPC and Python profilers (issue 12).
    CProfile => "cProfile/pstats",
    Pyinstrument => "pyinstrument JSON",
    Tau => "TAU profile",
    Gprof2Dot => "gprof2dot DOT",
    /// gprof's text report (flat profile and call graph).
    Gprof => "gprof report",
    Timemory => "timemory JSON",
    ThicketJson => "Thicket/Hatchet to_json",
    // Framework traces (issue 11).
    ExecutionTrace => "PyTorch execution trace",
    XPlane => "TensorFlow/JAX XSpace protobuf",
    // AMD and PlaidML device traces (issue 11).
    Rocprof => "AMD rocprof",
    PlaidML => "PlaidML event log",
    /// OTF2 archives (Score-P traces).
    Otf2 => "OTF2 trace",
    /// grove's own `tree --format json|csv|parquet`, read back.
    GroveExport => "grove tree export",
    /// Score-P/Scalasca CUBE profiles (CUBE4 `.cubex`, CUBE 3 XML `.cube`).
    Cube => "Score-P/Scalasca CUBE",
    /// Firefox Profiler / Gecko profile JSON (samply, Firefox), raw or processed.
    Gecko => "Firefox Profiler (Gecko) JSON",
    /// Perfetto protobuf traces (issue 29).
    Perfetto => "Perfetto protobuf trace",
}

impl Format {
    /// The format whose `label` this is.
    pub fn from_label(label: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.label() == label)
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

    /// The metric a tree opens on: the default metric when the table has it, else the
    /// first base metric. The TUI sorts by its inclusive column, and the cache saves
    /// that order (`SavedOrder`).
    pub fn shown_metric(&self) -> String {
        if self.metrics.has(&self.default_metric) {
            self.default_metric.clone()
        } else {
            self.metrics
                .base_metrics()
                .first()
                .cloned()
                .unwrap_or_default()
        }
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

    /// Every format is found back by its label (`Format::ALL` and `label()` come from
    /// one list, `formats!`; two formats with one label would be one).
    #[test]
    fn labels_find_every_format_back() {
        for &f in Format::ALL {
            assert_eq!(Format::from_label(f.label()), Some(f), "{f:?}");
        }
    }
}
