//! The anchor file (`traces.otf2`): an unchunked OTF2 buffer holding the magic
//! `OTF2`, the anchor format, the OTF2 version that wrote the archive, the chunk sizes
//! of event and definition files, the file substrate and compression, the numbers of
//! locations and global definitions, machine/creator/description and (anchor format 2
//! and later) named properties and a trace id.

use super::buffer::{Buf, Res};

pub const MAGIC: &[u8] = b"OTF2\0";

/// File substrates and compression (OTF2_FileSubstrate, OTF2_Compression).
const SUBSTRATE_POSIX: u8 = 1;
const SUBSTRATE_SION: u8 = 2;
const COMPRESSION_ZLIB: u8 = 2;

#[derive(Debug, Clone, Default)]
pub struct Anchor {
    pub version: (u8, u8, u8),
    pub trace_format: u8,
    pub chunk_size_events: u64,
    pub chunk_size_defs: u64,
    pub locations: u64,
    pub global_defs: u64,
    pub machine: String,
    pub creator: String,
    pub description: String,
    pub properties: Vec<(String, String)>,
}

/// Whether a file starts as an anchor file does: the buffer header then the magic.
pub fn looks_like_anchor(head: &[u8]) -> bool {
    head.len() >= 2 + MAGIC.len()
        && head[0] == super::buffer::CHUNK_HEADER
        && matches!(
            head[1],
            super::buffer::BIG_ENDIAN | super::buffer::LITTLE_ENDIAN
        )
        && &head[2..2 + MAGIC.len()] == MAGIC
}

pub fn parse(data: &[u8]) -> Res<Result<Anchor, String>> {
    let mut b = Buf::new(data, 0);
    b.header(false)?;
    if b.cstr()? != "OTF2" {
        return b.err("not an OTF2 anchor file (no OTF2 magic)");
    }
    let anchor_format = b.u8()?;
    if anchor_format == 0 {
        return b.err("anchor format 0");
    }
    let trace_format = b.u8()?;
    let version = (b.u8()?, b.u8()?, b.u8()?);
    let chunk_size_events = b.u64_full()?;
    let chunk_size_defs = b.u64_full()?;
    let substrate = b.u8()?;
    let compression = b.u8()?;
    let locations = b.u64_full()?;
    let global_defs = b.u64_full()?;
    let machine = b.cstr()?;
    let creator = b.cstr()?;
    let description = b.cstr()?;
    let mut properties = Vec::new();
    if anchor_format > 1 {
        let n = b.u32_full()?;
        for _ in 0..n {
            let k = b.cstr()?;
            let v = b.cstr()?;
            properties.push((k, v));
        }
    }
    // Archives written with SIONlib or zlib keep their data in other containers;
    // say so plainly instead of misreading them.
    if substrate == SUBSTRATE_SION {
        return Ok(Err(
            "an OTF2 archive written with the SIONlib substrate, which grove does not read (only POSIX archives)".into(),
        ));
    }
    if substrate != SUBSTRATE_POSIX && substrate != 0 {
        return Ok(Err(format!(
            "an OTF2 archive with file substrate {substrate}, which grove does not read (only POSIX archives)"
        )));
    }
    if compression == COMPRESSION_ZLIB {
        return Ok(Err(
            "a zlib-compressed OTF2 archive, which grove does not read; otf2-print reads it".into(),
        ));
    }
    Ok(Ok(Anchor {
        version,
        trace_format,
        chunk_size_events,
        chunk_size_defs,
        locations,
        global_defs,
        machine,
        creator,
        description,
        properties,
    }))
}
