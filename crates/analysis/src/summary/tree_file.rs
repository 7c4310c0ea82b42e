//! The tree file of grove's cache entry (`summary::cache`): a profile's tree, metrics,
//! metadata and warnings as flat little-endian arrays, written and read by the same
//! grove (the stamp records its version).
//!
//! Why not the summaries' Parquet (issue 30): a cache write made a table of strings per
//! 65,536 nodes and compressed it through polars, 0.55 s on a 317 MB trace (70% of the
//! cold load), and a warm reopen of a 1 GB trace spent 0.7 s and 521 MB decoding those
//! strings and hashing them back into frames. Here a frame slot is written once, as
//! string ids, and each node is its slot and parent (8 bytes) plus 8 bytes a metric:
//! writing is a pass over arrays the tree already holds, reading allocates what the
//! tree will hold and nothing else, and node slots stay shared as the cold load had
//! them. Metric values are kept bit for bit (NaN and infinities too).
//!
//! A warm open checks the file's CRC-32, reads its strings, slots and links into the
//! tree's arrays, and leaves each metric column where it lies in a read-only memory map
//! of the same open file (`mapped`, `MetricTable::set_outside`): the kernel reads in
//! only the pages something reads. A warm open of a 1 GB trace kept 101 MB of columns
//! on the heap for a tree whose first screen reads one or two of them.
//!
//! Layout: `MAGIC`, then strings (`u32` count, each `u32` length and its bytes), slots
//! (`u32` count, each name, kind, attribute count and its key/value string ids), nodes
//! (`u32` count, the slot of each, the parent of each, `NO_NODE` for a root), metrics
//! (`u32` count, each name, unit, zero bytes up to a multiple of 8 from the file's
//! start, so that the column can be read in place as `f64`s, and a value per node),
//! units (`u32` count, name/unit pairs), meta (`u32` count, key/value), warnings (`u32`
//! count), the default metric, then the saved order (`u32` 0 or 1; when 1: the column's
//! name, the heat scale's min and max as `f64` bits, zero bytes up to a multiple of 4,
//! the pre-order's node, position, end and parent columns as `u32`s and its depths as
//! `u16`s, zero bytes up to a multiple of 4). Every count is checked against the bytes left before
//! anything is allocated, and every id against what it indexes: a damaged file is an
//! error, never a panic or a huge allocation (the entry's CRC-32 catches damage first;
//! this is the second wall).

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use super::mapped::{self, Mapping};
use crate::model::cct::NO_NODE;
use crate::model::intern::FxBuild;
use crate::model::lent::{Backing, Col, Plain};
use crate::model::metrics::Outside;
use crate::model::{Cct, Frame, MetricTable, PreOrder, Profile, SavedOrder};

/// `grovtr03`: the saved order at the end (02 had none; 01 had no padding either).
const MAGIC: &[u8; 8] = b"grovtr03";

/// Values written or read per piece: the file streams through a buffer this size.
const PIECE: usize = 1 << 16;

/// What a profile's tree file holds besides its source and dialect (the stamp's).
pub struct Tree {
    /// With its saved order (`Cct::saved_order`) when the file has one and is mapped.
    pub cct: Cct,
    pub metrics: MetricTable,
    pub meta: Vec<(String, String)>,
    pub warnings: Vec<String>,
    pub default_metric: String,
}

/// A frame slot as string ids: name, kind, attributes (key, value).
type Slot = (u32, u32, Vec<(u32, u32)>);

/// Strings by id, each written once.
#[derive(Default)]
struct Ids<'a> {
    id: HashMap<&'a str, u32, FxBuild>,
    text: Vec<&'a str>,
}

impl<'a> Ids<'a> {
    fn of(&mut self, s: &'a str) -> u32 {
        if let Some(&i) = self.id.get(s) {
            return i;
        }
        let i = self.text.len() as u32;
        self.text.push(s);
        self.id.insert(s, i);
        i
    }
}

/// A writer that counts what went through it (the metric columns' padding needs the
/// offset in the file).
struct Counted<W> {
    w: W,
    at: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.w.write(b)?;
        self.at += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

fn put_u32(w: &mut impl Write, v: u32) -> std::io::Result<()> {
    w.write_all(&v.to_le_bytes())
}

/// Writes a column of `n` values, made by `value`, a piece at a time.
fn put_column<const B: usize>(
    w: &mut impl Write,
    n: usize,
    value: impl Fn(usize) -> [u8; B],
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(PIECE.min(n.max(1)) * B);
    for start in (0..n).step_by(PIECE) {
        buf.clear();
        for i in start..n.min(start + PIECE) {
            buf.extend_from_slice(&value(i));
        }
        w.write_all(&buf)?;
    }
    Ok(())
}

/// What writing `p`'s tree file takes beside the tree: its string table's index and
/// the slots' ids, the write buffer and a column piece (the nodes stream out).
fn write_needs(p: &Profile) -> u64 {
    let slots = p.cct.slot_count() as u64;
    slots * 96 + (p.meta.len() + p.warnings.len()) as u64 * 64 + (3 << 20)
}

/// Refuses a write that would take grove past its memory budget (`memory::room`), with
/// the line that says so: the cache is an optimisation, never the reason for running
/// out of memory.
pub fn fits_in_memory(p: &Profile) -> Result<(), String> {
    let need = write_needs(p);
    match crate::memory::room() {
        Some((room, source)) if need > room => Err(format!(
            "not written: it needs ~{} and grove has {} left under {source}",
            crate::memory::human(need),
            crate::memory::human(room)
        )),
        _ => Ok(()),
    }
}

/// Writes `p`'s tree file at `path`.
pub fn write(p: &Profile, path: &Path) -> std::io::Result<()> {
    let cct = &p.cct;
    let mut ids = Ids::default();
    // Every string gets its id first, so the string table can lead the file.
    let slots: Vec<Slot> = cct
        .frames()
        .map(|f| {
            let attrs = f
                .attrs
                .iter()
                .map(|(k, v)| (ids.of(k), ids.of(v)))
                .collect();
            (ids.of(&f.name), ids.of(&f.kind), attrs)
        })
        .collect();
    let names = p.metrics.names();
    let metrics: Vec<(u32, u32)> = names
        .iter()
        .map(|m| (ids.of(m), ids.of(p.metrics.unit(m))))
        .collect();
    let units: Vec<(u32, u32)> = p
        .metrics
        .units
        .iter()
        .map(|(k, v)| (ids.of(k), ids.of(v)))
        .collect();
    let meta: Vec<(u32, u32)> = p.meta.iter().map(|(k, v)| (ids.of(k), ids.of(v))).collect();
    let warnings: Vec<u32> = p.warnings.iter().map(|w| ids.of(w)).collect();
    let default_metric = ids.of(&p.default_metric);
    let order = saved_order(p);
    let order = order.as_ref().map(|o| (ids.of(&o.column), o));

    let mut w = Counted {
        w: BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?),
        at: 0,
    };
    w.write_all(MAGIC)?;
    put_u32(&mut w, ids.text.len() as u32)?;
    for s in &ids.text {
        put_u32(&mut w, s.len() as u32)?;
        w.write_all(s.as_bytes())?;
    }
    put_u32(&mut w, slots.len() as u32)?;
    for (name, kind, attrs) in &slots {
        for v in [*name, *kind, attrs.len() as u32] {
            put_u32(&mut w, v)?;
        }
        for &(k, v) in attrs {
            put_u32(&mut w, k)?;
            put_u32(&mut w, v)?;
        }
    }
    let n = cct.len();
    put_u32(&mut w, n as u32)?;
    put_column(&mut w, n, |i| cct.frame_slot(i as u32).to_le_bytes())?;
    put_column(&mut w, n, |i| {
        cct.parent(i as u32).unwrap_or(NO_NODE).to_le_bytes()
    })?;
    put_u32(&mut w, metrics.len() as u32)?;
    for (m, &(name, unit)) in names.iter().zip(&metrics) {
        put_u32(&mut w, name)?;
        put_u32(&mut w, unit)?;
        w.write_all(&[0; 8][..pad(w.at)])?;
        // A residual column streams out node by node: the entry is written behind the
        // TUI's first frame, where making it whole would raise the peak.
        let vals = p.metrics.at(m, cct);
        put_column(&mut w, n, |i| {
            vals.as_ref()
                .map_or(f64::NAN, |v| v.get(i))
                .to_bits()
                .to_le_bytes()
        })?;
    }
    for pairs in [&units, &meta] {
        put_u32(&mut w, pairs.len() as u32)?;
        for &(k, v) in pairs.iter() {
            put_u32(&mut w, k)?;
            put_u32(&mut w, v)?;
        }
    }
    put_u32(&mut w, warnings.len() as u32)?;
    for &s in &warnings {
        put_u32(&mut w, s)?;
    }
    put_u32(&mut w, default_metric)?;
    put_order(&mut w, p, order)?;
    w.flush()
}

/// The order a warm open shows first (`SavedOrder`): the one the TUI recorded on the
/// tree when it sorted it (a cold open in the TUI), else made here as the TUI would (a
/// headless command's cold open), with the column's heat scale.
fn saved_order(p: &Profile) -> Option<SavedOrder> {
    let column = p.metrics.inclusive_of(&p.shown_metric());
    if let Some(o) = p.cct.saved_order().filter(|o| o.column == column) {
        return Some(o.clone());
    }
    let vals = p.metrics.values(&column)?;
    let heat = crate::present::heat::HeatScale::from_values(vals.iter().copied());
    Some(SavedOrder {
        po: Arc::new(PreOrder::by_metric(&p.cct, vals, true)),
        column,
        min: heat.min,
        max: heat.max,
    })
}

fn put_order(
    w: &mut Counted<impl Write>,
    p: &Profile,
    order: Option<(u32, &SavedOrder)>,
) -> std::io::Result<()> {
    let Some((column, o)) = order.filter(|(_, o)| o.po.len() == p.cct.len()) else {
        return put_u32(w, 0);
    };
    put_u32(w, 1)?;
    put_u32(w, column)?;
    w.write_all(&o.min.to_bits().to_le_bytes())?;
    w.write_all(&o.max.to_bits().to_le_bytes())?;
    w.write_all(&[0; 4][..pad4(w.at)])?;
    let po = &o.po;
    let n = po.len();
    for c in [&po.node, &po.pos, &po.end] {
        put_column(w, n, |i| c[i].to_le_bytes())?;
    }
    // The parents as positions (a pre-order made here reads them through the tree's
    // links; the entry keeps the column, so that a warm open maps it).
    put_column(w, n, |i| po.parent(i as u32).to_le_bytes())?;
    put_column(w, n, |i| po.depth[i].to_le_bytes())?;
    w.write_all(&[0; 4][..pad4(w.at)])
}

/// Zero bytes after offset `at` up to the next multiple of 4.
fn pad4(at: u64) -> usize {
    (at.wrapping_neg() % 4) as usize
}

/// Zero bytes after offset `at` up to the next multiple of 8.
fn pad(at: u64) -> usize {
    (at.wrapping_neg() % 8) as usize
}

/// A metric column where it lies in the mapped file: `n` little-endian `f64`s at `at`,
/// a multiple of 8 (`read` checks both before making one).
#[derive(Debug)]
struct MappedColumn {
    map: Arc<Mapping>,
    at: usize,
    n: usize,
}

impl Outside for MappedColumn {
    fn values(&self) -> &[f64] {
        let b = &self.map.bytes()[self.at..self.at + self.n * 8];
        // SAFETY: the bytes lie inside the mapping (sliced above), which lives as long
        // as `self`; the mapping starts on a page and `at` is a multiple of 8, so they
        // are aligned for f64; every bit pattern is an f64; only built on a
        // little-endian machine, where the file's order is the machine's.
        unsafe { std::slice::from_raw_parts(b.as_ptr() as *const f64, self.n) }
    }

    /// Read through `read` calls, a piece at a time: a copy leaves none of the
    /// column's file pages mapped in the process beside it.
    fn to_vec(&self) -> Vec<f64> {
        use std::os::unix::fs::FileExt;
        let mut out = Vec::with_capacity(self.n);
        crate::memory::prefer_huge_pages(&mut out);
        let mut buf = vec![0u8; PIECE.min(self.n) * 8];
        let mut at = 0;
        while at < self.n {
            let k = PIECE.min(self.n - at);
            let b = &mut buf[..k * 8];
            let off = (self.at + at * 8) as u64;
            if self.map.file().read_exact_at(b, off).is_err() {
                // A read that fails (an I/O error): the mapping holds the same bytes.
                out.extend_from_slice(&self.values()[at..at + k]);
            } else {
                out.extend(
                    b.chunks_exact(8)
                        .map(|c| f64::from_bits(u64::from_le_bytes(c.try_into().expect("8")))),
                );
            }
            at += k;
        }
        out
    }
}

/// A reader of the file that knows how many bytes are left, so no count can ask for
/// more. It reads through `read` calls, not the mapping: what is copied out (strings,
/// slots, links) goes through the page cache into its arrays and leaves no mapped page
/// resident behind it (pages let go of a mapping as they were copied were mapped
/// again whole, the file's large pages spanning the pieces: 12 MB of 20 stayed).
struct Src<R> {
    r: R,
    /// The offset in the file.
    at: u64,
    left: u64,
    buf: Vec<u8>,
}

type Res<T> = Result<T, String>;

impl<R: std::io::BufRead + std::io::Seek> Src<R> {
    fn bytes(&mut self, n: u64) -> Res<&[u8]> {
        if n > self.left {
            return Err(format!("{n} bytes wanted, {} left", self.left));
        }
        self.left -= n;
        self.at += n;
        self.buf.resize(n as usize, 0);
        self.r
            .read_exact(&mut self.buf)
            .map_err(|e| e.to_string())?;
        Ok(&self.buf)
    }

    fn u32(&mut self) -> Res<u32> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A count of items of at least `each` bytes that the rest of the file can hold.
    fn count(&mut self, each: u64) -> Res<usize> {
        let n = self.u32()? as u64;
        if n.saturating_mul(each) > self.left {
            return Err(format!("a count of {n} past the end"));
        }
        Ok(n as usize)
    }

    /// `n` values of `B` bytes each, a piece at a time.
    fn column<const B: usize, T>(&mut self, n: usize, f: impl Fn([u8; B]) -> T) -> Res<Vec<T>> {
        if (n as u64).saturating_mul(B as u64) > self.left {
            return Err("a column past the end".into());
        }
        let mut out = Vec::with_capacity(n);
        crate::memory::prefer_huge_pages(&mut out);
        let mut at = 0;
        while at < n {
            let k = PIECE.min(n - at);
            let b = self.bytes((k * B) as u64)?;
            out.extend(
                b.chunks_exact(B)
                    .map(|c| f(c.try_into().expect("chunks of B bytes"))),
            );
            at += k;
        }
        Ok(out)
    }

    /// A metric column of `n` values: left in `map` when there is one (skipped here),
    /// else copied.
    fn metric(&mut self, map: Option<&Arc<Mapping>>, n: usize) -> Res<Column> {
        let skip = pad(self.at);
        if self.bytes(skip as u64)?.iter().any(|&b| b != 0) {
            return Err("padding that is not zero".into());
        }
        let len = (n as u64).saturating_mul(8);
        if let Some(map) = map.filter(|_| len <= self.left) {
            let at = self.at as usize;
            self.r
                .seek_relative(len as i64)
                .map_err(|e| e.to_string())?;
            self.at += len;
            self.left -= len;
            return Ok(Column::Mapped(Arc::new(MappedColumn {
                map: map.clone(),
                at,
                n,
            })));
        }
        let v = self.column(n, |b| f64::from_bits(u64::from_le_bytes(b)))?;
        Ok(Column::Heap(v))
    }

    /// Zero bytes, `n` of them.
    fn zeros(&mut self, n: usize) -> Res<()> {
        match self.bytes(n as u64)?.iter().all(|&b| b == 0) {
            true => Ok(()),
            false => Err("padding that is not zero".into()),
        }
    }

    /// A column of `n` values of `B` bytes left where it lies in `map`, each value
    /// checked by `ok` (position, value) as the bytes stream by through `read` calls
    /// (nothing of the mapping is touched); without a mapping it is skipped (None).
    fn lent<const B: usize, T: Plain>(
        &mut self,
        map: Option<&Arc<Mapping>>,
        n: usize,
        value: fn([u8; B]) -> T,
        ok: impl Fn(usize, T) -> bool,
    ) -> Res<Option<Col<T>>> {
        let len = (n as u64).saturating_mul(B as u64);
        if len > self.left {
            return Err("a column past the end".into());
        }
        let at = self.at as usize;
        let Some(map) = map else {
            self.r
                .seek_relative(len as i64)
                .map_err(|e| e.to_string())?;
            self.at += len;
            self.left -= len;
            return Ok(None);
        };
        let mut i = 0;
        while i < n {
            let k = PIECE.min(n - i);
            let b = self.bytes((k * B) as u64)?;
            for (j, c) in b.chunks_exact(B).enumerate() {
                let v = value(c.try_into().expect("chunks of B bytes"));
                if !ok(i + j, v) {
                    return Err(format!("saved order: {v:?} at {} out of range", i + j));
                }
            }
            i += k;
        }
        let back: Arc<dyn Backing> = map.clone();
        Ok(Col::lent(back, at, n))
    }

    /// The saved order (`put_order`), when there is one and the file is mapped.
    fn order(
        &mut self,
        map: Option<&Arc<Mapping>>,
        n: usize,
        strings: &[Arc<str>],
    ) -> Res<Option<SavedOrder>> {
        match self.u32()? {
            0 => return Ok(None),
            1 => {}
            k => return Err(format!("saved order: flag {k}")),
        }
        let column = self.id(strings)?.to_string();
        let mut f64_of = || -> Res<f64> {
            let b = self.bytes(8)?;
            Ok(f64::from_bits(u64::from_le_bytes(b.try_into().expect("8"))))
        };
        let (min, max) = (f64_of()?, f64_of()?);
        self.zeros(pad4(self.at))?;
        // No value may send the tree view out of range or round a loop: positions and
        // nodes below n, a subtree's end after its start, a parent before its child.
        let m = n as u32;
        let le = u32::from_le_bytes;
        let node = self.lent(map, n, le, |_, v| v < m)?;
        let pos = self.lent(map, n, le, |_, v| v < m)?;
        let end = self.lent(map, n, le, |p, v| v > p as u32 && v <= m)?;
        let parent = self.lent(map, n, le, |p, v| v == NO_NODE || v < p as u32)?;
        let depth = self.lent(map, n, u16::from_le_bytes, |_, _| true)?;
        self.zeros(pad4(self.at))?;
        Ok(match (node, pos, end, parent, depth) {
            (Some(node), Some(pos), Some(end), Some(parent), Some(depth)) => Some(SavedOrder {
                column,
                min,
                max,
                po: Arc::new(PreOrder {
                    node,
                    pos,
                    depth,
                    end,
                    parent: crate::model::cct::ParentPos::Col(parent),
                }),
            }),
            _ => None,
        })
    }

    fn id<'s>(&mut self, strings: &'s [Arc<str>]) -> Res<&'s Arc<str>> {
        let i = self.u32()?;
        strings
            .get(i as usize)
            .ok_or_else(|| format!("string {i} of {}", strings.len()))
    }
}

/// A metric column as read: in the mapping, or copied.
enum Column {
    Mapped(Arc<dyn Outside>),
    Heap(Vec<f64>),
}

/// Reads the tree file at `path` (an error for anything that is not one, whole); with
/// `sum`, only when the file has that size and CRC-32 (checked on the open file that is
/// then read and mapped, so what was checked is what is read).
pub fn read(path: &Path, sum: Option<(u64, u32)>) -> Res<Tree> {
    read_as(path, sum, true)
}

/// `read`, with the metric columns mapped only when `may_map`.
fn read_as(path: &Path, sum: Option<(u64, u32)>, may_map: bool) -> Res<Tree> {
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    // The sum, the reads and the mapping are all of this one open file: a rename over
    // the path meanwhile cannot mix two entries.
    if let Some(want) = sum {
        if mapped::checksum(&f)? != want {
            return Err("size or checksum differs from the stamp's".into());
        }
    }
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    // Mapped where the machine reads the file's order and the file system is local
    // (`mapped::local`); else every column is copied, as before the mapping.
    let map = match may_map && cfg!(target_endian = "little") && mapped::local(&f) {
        true => {
            let dup = f.try_clone().map_err(|e| e.to_string())?;
            Some(Arc::new(Mapping::of(dup).map_err(|e| e.to_string())?))
        }
        false => None,
    };
    let mut s = Src {
        // Never past the mapping, should the file have grown since.
        left: map
            .as_ref()
            .map_or(len, |m| len.min(m.bytes().len() as u64)),
        r: std::io::BufReader::with_capacity(1 << 20, &f),
        at: 0,
        buf: Vec::new(),
    };
    if s.bytes(8)? != MAGIC {
        return Err("not a grove tree file".into());
    }
    let n = s.count(4)?;
    let mut strings: Vec<Arc<str>> = Vec::with_capacity(n);
    for _ in 0..n {
        let len = s.u32()? as u64;
        let b = s.bytes(len)?;
        strings.push(std::str::from_utf8(b).map_err(|e| e.to_string())?.into());
    }
    let n = s.count(12)?;
    let mut frames = Vec::with_capacity(n);
    for _ in 0..n {
        let name = s.id(&strings)?.clone();
        let kind = s.id(&strings)?.clone();
        let k = s.count(8)?;
        let mut attrs = Vec::with_capacity(k);
        for _ in 0..k {
            attrs.push((s.id(&strings)?.clone(), s.id(&strings)?.clone()));
        }
        frames.push(Frame {
            name,
            kind,
            attrs: attrs.into(),
        });
    }
    let nodes = s.count(8)?;
    let slot = s.column(nodes, u32::from_le_bytes)?;
    let parent = s.column(nodes, u32::from_le_bytes)?;
    // `Cct::from_parents` asserts these; a damaged file must not get that far.
    if let Some(c) = slot.iter().position(|&x| x as usize >= frames.len()) {
        return Err(format!("node {c}: frame slot out of range"));
    }
    if let Some(c) = (0..nodes).find(|&c| parent[c] != NO_NODE && parent[c] as usize >= c) {
        return Err(format!("node {c}: parent {} not before it", parent[c]));
    }
    let k = s.count(8 + 8 * nodes as u64)?;
    let mut columns = Vec::with_capacity(k);
    for _ in 0..k {
        let name = s.id(&strings)?.clone();
        let unit = s.id(&strings)?.clone();
        columns.push((name, unit, s.metric(map.as_ref(), nodes)?));
    }
    let pairs = |s: &mut Src<_>| -> Res<Vec<(String, String)>> {
        let k = s.count(8)?;
        (0..k)
            .map(|_| Ok((s.id(&strings)?.to_string(), s.id(&strings)?.to_string())))
            .collect()
    };
    let units = pairs(&mut s)?;
    let meta = pairs(&mut s)?;
    let k = s.count(4)?;
    let warnings = (0..k)
        .map(|_| Ok(s.id(&strings)?.to_string()))
        .collect::<Res<Vec<_>>>()?;
    let default_metric = s.id(&strings)?.to_string();
    let order = s.order(map.as_ref(), nodes, &strings)?;
    if s.left != 0 {
        return Err(format!("{} bytes past the end", s.left));
    }
    let cct = Cct::from_parents(frames, slot, parent);
    if let Some(o) = order {
        cct.save_order(o);
    }
    let mut metrics = MetricTable::new(nodes);
    for (name, unit, col) in columns {
        match col {
            Column::Mapped(c) => metrics.set_outside(&name, &unit, c),
            Column::Heap(v) => metrics.set(&name, &unit, v),
        }
    }
    metrics.units = units.into_iter().collect();
    Ok(Tree {
        cct,
        metrics,
        meta,
        warnings,
        default_metric,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Profile {
        let mut p = Profile {
            source: crate::model::Source::of_file(
                Path::new("t.json"),
                crate::model::Format::ChromeTrace,
            ),
            dialect: String::new(),
            cct: Cct::default(),
            metrics: MetricTable::new(0),
            events: None,
            counters: None,
            meta: Vec::new(),
            warnings: Vec::new(),
            default_metric: String::new(),
            call_graph: None,
        };
        let a = p.cct.child(None, "main", "function");
        let b = p.cct.child(Some(a), "k", "kernel");
        p.cct.frame_mut(b).set_attr("grid", "[1,2,3]");
        p.cct.child(Some(a), "k2", "kernel");
        p.cct.finish();
        p.metrics = MetricTable::new(3);
        p.metrics
            .set("time", "ns", vec![1.5, f64::NAN, f64::INFINITY]);
        p.meta.push(("pid".into(), "42".into()));
        p.warnings.push("a warning".into());
        p.default_metric = "time".into();
        p
    }

    #[test]
    fn round_trips_and_refuses_damage() {
        let dir = std::env::temp_dir().join(format!("grove-treefile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.tree");
        let p = sample();
        write(&p, &f).unwrap();
        let t = read(&f, None).unwrap();
        assert_eq!(t.cct.len(), 3);
        assert_eq!(t.cct.parent(2), Some(0));
        assert_eq!(t.cct.frame(1).attr("grid"), Some("[1,2,3]"));
        assert_eq!(t.cct.name(2), "k2");
        let v = t.metrics.values("time").unwrap();
        assert!(v[0] == 1.5 && v[1].is_nan() && v[2] == f64::INFINITY);
        // The heap copy of a mapped column (read through `read` calls) is bit for bit
        // the mapped values, and the table reads the copy from then on.
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let copy = t.metrics.column("time").unwrap();
        assert_eq!(bits(&copy), bits(v));
        assert_eq!(t.metrics.values("time").unwrap().as_ptr(), copy.as_ptr());
        // Copied instead of mapped (a network file system): the same values.
        let c = read_as(&f, None, false).unwrap();
        assert_eq!(bits(c.metrics.values("time").unwrap()), bits(&copy));
        assert_eq!(t.metrics.unit("time"), "ns");
        assert_eq!((t.meta, t.warnings), (p.meta.clone(), p.warnings.clone()));
        assert_eq!(t.default_metric, "time");
        // The order the TUI opens on is saved, mapped, and is the one it would make.
        let o = t.cct.saved_order().expect("a saved order");
        let made = PreOrder::by_metric(&t.cct, t.metrics.values("time").unwrap(), true);
        assert_eq!(o.column, "time");
        assert!(o.po.node.is_lent() && o.po.depth.is_lent());
        for (a, b) in [(&o.po.node, &made.node), (&o.po.pos, &made.pos)] {
            assert_eq!(&a[..], &b[..]);
        }
        assert_eq!(&o.po.end[..], &made.end[..]);
        assert!(matches!(o.po.parent, crate::model::cct::ParentPos::Col(_)));
        assert!((0..made.len() as u32).all(|p| o.po.parent(p) == made.parent(p)));
        assert_eq!(&o.po.depth[..], &made.depth[..]);
        assert_eq!((o.min, o.max), (1.5, 1.5));
        assert!(c.cct.saved_order().is_none(), "not mapped: not kept");
        // Every cut and every single-byte change is an error or a tree, never a panic.
        let bytes = std::fs::read(&f).unwrap();
        for cut in 0..bytes.len() {
            std::fs::write(&f, &bytes[..cut]).unwrap();
            assert!(read(&f, None).is_err(), "cut at {cut}");
            assert!(read_as(&f, None, false).is_err(), "cut at {cut}, copied");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xff;
            std::fs::write(&f, &b).unwrap();
            let _ = read(&f, None);
            let _ = read_as(&f, None, false);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_residual_column_is_written_as_the_column_it_stands_for() {
        let dir = std::env::temp_dir().join(format!("grove-treefile-r-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut p = sample();
        let c = p.cct.child(Some(2), "k3", "kernel");
        p.metrics = MetricTable::new(c as usize + 1);
        p.metrics.set("time", "ns", vec![3.0, 0.0, 7.0, 2.0]);
        let mut plain = p.metrics.clone();
        plain.derive_inclusive(&p.cct, &["time"]);
        p.metrics
            .derive_inclusive_residual(&mut p.cct, &["time"], false);
        assert!(matches!(
            p.metrics.at("time", &p.cct),
            Some(crate::model::metrics::At::Residual(..))
        ));
        let (a, b) = (dir.join("a.tree"), dir.join("b.tree"));
        write(&p, &a).unwrap();
        // Streamed node by node, not made whole.
        assert!(matches!(
            p.metrics.at("time", &p.cct),
            Some(crate::model::metrics::At::Residual(..))
        ));
        p.metrics = plain;
        write(&p, &b).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
