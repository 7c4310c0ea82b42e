//! The export formats: one table, [`FORMATS`]. A format's name, help line, what it
//! writes (a tree, tables, a query's answer, events, `grove info`'s report), whether it
//! is binary and its tree writer are one entry; `:export`, every subcommand's `--format`
//! (its parser, `--help` and completion), the refusals and the docs' lists are derived
//! from it (tests/export_formats.rs checks the docs against it).

use std::io::{self, Write};

use crate::model::{PreOrder, Profile};

/// An output format. Its name, help and abilities are its [`Spec`] in [`FORMATS`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Json,
    Parquet,
    Hatchet,
    Folded,
    Thicket,
    Svg,
}

/// What a command writes; each format says which of these it can write.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Writes {
    /// The calling context tree: `grove tree`, `grove replay` and, for the formats with
    /// a [`TreeWriter`], `:export`.
    Tree,
    /// Rows of a fixed table: `grove kernels`, `summary`, `diff`, `functions`.
    Tables,
    /// The answer of an SQL query (`grove sql`): a table with typed columns.
    Query,
    /// The timeline's slices (`grove timeline`).
    Events,
    /// What `grove info` says of each input.
    Info,
}

impl Writes {
    /// What it is, for the refusal of a format that cannot write it.
    pub const fn what(self) -> &'static str {
        match self {
            Writes::Tree => "a tree",
            Writes::Tables => "a table",
            Writes::Query => "a query's answer",
            Writes::Events => "the timeline",
            Writes::Info => "grove info",
        }
    }
}

/// The current tree as the tree writers see it: the rows to write (positions in the
/// pre-order, already limited to the focus and a depth, without hidden subtrees).
pub struct Tree<'a> {
    pub profile: &'a Profile,
    pub po: &'a PreOrder,
    pub positions: &'a [u32],
    /// The focused node, the only root of a Hatchet literal.
    pub focus: Option<u32>,
    /// The primary metric (folded stacks write its exclusive column).
    pub metric: &'a str,
}

/// Writes a tree. Text is not one: the shell draws it for the terminal (colour, glyphs,
/// an open gaps list or flame graph), so `:export` cannot write it.
pub type TreeWriter = fn(&Tree<'_>, &mut dyn Write) -> io::Result<()>;

/// One export format.
pub struct Spec {
    pub format: Format,
    /// What `--format` and `:export` take.
    pub name: &'static str,
    /// The line `--help` shows beside it.
    pub help: &'static str,
    pub writes: &'static [Writes],
    /// Never written onto a terminal (redirect it to a file).
    pub binary: bool,
    /// How it writes a tree (`grove tree`, `replay`, `:export`).
    pub tree: Option<TreeWriter>,
}

use Writes::*;

/// Every format, in the order `--help` lists them.
pub const FORMATS: &[Spec] = &[
    Spec {
        format: Format::Text,
        name: "text",
        help: "for reading (tree: Hatchet's tree() layout)",
        writes: &[Tree, Tables, Query, Events, Info],
        binary: false,
        tree: None,
    },
    Spec {
        format: Format::Csv,
        name: "csv",
        help: "one row per node or table row",
        writes: &[Tree, Tables, Query, Events],
        binary: false,
        tree: Some(|t, mut out| super::csv::write(&mut out, t.profile, t.po, t.positions)),
    },
    Spec {
        format: Format::Json,
        name: "json",
        help: "grove's JSON schema (docs/formats.md)",
        writes: &[Tree, Tables, Query, Info],
        binary: false,
        tree: Some(|t, mut out| super::json::write(&mut out, t.profile, t.po, t.positions)),
    },
    Spec {
        format: Format::Parquet,
        name: "parquet",
        help: "the CSV's table, typed (binary: redirect it to a file)",
        writes: &[Tree, Query],
        binary: true,
        tree: Some(|t, mut out| {
            super::parquet::write(&mut out, t.profile, t.po, t.positions)
                .map_err(|e| io::Error::other(format!("parquet: {e}")))
        }),
    },
    Spec {
        format: Format::Hatchet,
        name: "hatchet",
        help: "Hatchet literal JSON (GraphFrame.from_literal)",
        writes: &[Tree],
        binary: false,
        tree: Some(super::hatchet::write_tree),
    },
    Spec {
        format: Format::Folded,
        name: "folded",
        help: "folded stacks (flamegraph.pl, speedscope, inferno)",
        writes: &[Tree],
        binary: false,
        tree: Some(super::folded::write_tree),
    },
    Spec {
        format: Format::Thicket,
        name: "thicket",
        help: "Thicket JSON, an ensemble's profiles (Thicket.from_json)",
        writes: &[Tree],
        binary: false,
        tree: Some(|t, mut out| super::thicket::write(&mut out, t.profile, t.po, t.positions)),
    },
    Spec {
        format: Format::Svg,
        name: "svg",
        help: "a flame graph of the folded stacks (inferno)",
        writes: &[Tree],
        binary: false,
        tree: Some(super::flame::write_tree),
    },
];

impl Format {
    /// Its entry in [`FORMATS`].
    pub fn spec(self) -> &'static Spec {
        // Every variant has an entry (tests/export_formats.rs); text's is the fallback
        // only to keep this total.
        FORMATS
            .iter()
            .find(|s| s.format == self)
            .unwrap_or(&FORMATS[0])
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The format named `name`, if any.
    pub fn named(name: &str) -> Option<Format> {
        FORMATS.iter().find(|s| s.name == name).map(|s| s.format)
    }
}

impl Spec {
    pub const fn can_write(&self, w: Writes) -> bool {
        let mut i = 0;
        while i < self.writes.len() {
            if self.writes[i] as u8 == w as u8 {
                return true;
            }
            i += 1;
        }
        false
    }
}

/// The formats that can write `w`.
pub fn writing(w: Writes) -> impl Iterator<Item = &'static Spec> {
    FORMATS.iter().filter(move |s| s.can_write(w))
}

/// The formats `:export` writes: those with a tree writer.
pub fn exportable() -> impl Iterator<Item = &'static Spec> {
    FORMATS.iter().filter(|s| s.tree.is_some())
}

/// `a, b or c`.
pub fn list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// The one line refusing `format` for what a command writes.
pub fn refusal(format: Format, w: Writes) -> String {
    format!(
        "{} cannot write {}: {} can",
        format.name(),
        w.what(),
        list(writing(w).map(|s| s.name))
    )
}

/// Writes the current tree as `format`; a format without a tree writer is refused.
pub fn write_tree(format: Format, tree: &Tree<'_>, out: &mut dyn Write) -> io::Result<()> {
    match format.spec().tree {
        Some(write) => write(tree, out),
        None => Err(io::Error::other(format!(
            "{} cannot be exported: {} can",
            format.name(),
            list(exportable().map(|s| s.name))
        ))),
    }
}

/// `csv|json|...`: the formats `:export` takes, for its usage and help lines.
pub const EXPORT_NAMES: &str = {
    const LEN: usize = export_names_len();
    const BYTES: [u8; LEN] = export_names();
    match std::str::from_utf8(&BYTES) {
        Ok(s) => s,
        Err(_) => panic!("format names are ASCII"),
    }
};

/// `:export`'s help line in the command table.
pub const EXPORT_HELP: &str = {
    const A: &str = EXPORT_NAMES;
    const B: &str = " FILE: write the current tree";
    const BYTES: [u8; A.len() + B.len()] = concat2(A, B);
    match std::str::from_utf8(&BYTES) {
        Ok(s) => s,
        Err(_) => panic!("format names are ASCII"),
    }
};

// The names are joined at compile time so that the command table, a `static`, can hold
// them: those of the formats with a tree writer, joined by `|`.
const fn export_names_len() -> usize {
    let (mut i, mut n) = (0, 0);
    while i < FORMATS.len() {
        if FORMATS[i].tree.is_some() {
            n += FORMATS[i].name.len() + if n == 0 { 0 } else { 1 };
        }
        i += 1;
    }
    n
}

const fn export_names<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    let (mut i, mut at) = (0, 0);
    while i < FORMATS.len() {
        if FORMATS[i].tree.is_some() {
            if at > 0 {
                out[at] = b'|';
                at += 1;
            }
            at = copy(&mut out, at, FORMATS[i].name.as_bytes());
        }
        i += 1;
    }
    out
}

const fn concat2<const N: usize>(a: &str, b: &str) -> [u8; N] {
    let mut out = [0u8; N];
    let at = copy(&mut out, 0, a.as_bytes());
    copy(&mut out, at, b.as_bytes());
    out
}

const fn copy<const N: usize>(out: &mut [u8; N], mut at: usize, from: &[u8]) -> usize {
    let mut j = 0;
    while j < from.len() {
        out[at] = from[j];
        at += 1;
        j += 1;
    }
    at
}
