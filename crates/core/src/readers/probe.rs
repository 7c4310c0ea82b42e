//! What detection looks at: where the input is, whether it is a directory, and the
//! first block of its content after gunzip (and UTF-16 decoding). Readers answer from
//! this alone, so detection opens and decompresses an input once.

use std::cell::RefCell;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
const XZ_MAGIC: [u8; 6] = [0xfd, b'7', b'z', b'X', b'Z', 0];
const BZIP2_MAGIC: [u8; 3] = *b"BZh";

/// Why a decompressed stream ended before its end, shared between the stream (which
/// ends cleanly instead of failing, so readers keep what came before) and the loader
/// (which turns it into a "partial input" warning).
pub(crate) type Cut = Rc<RefCell<Option<String>>>;

/// A decompressor that ends at a truncated or corrupt tail instead of failing, once
/// it has produced something: a cut-off `.gz` loads what is complete.
struct Tolerant<R> {
    inner: R,
    read_any: bool,
    cut: Cut,
    what: &'static str,
}

impl<R: Read> Read for Tolerant<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.read_any |= n > 0;
                Ok(n)
            }
            Err(e) if self.read_any && e.kind() != std::io::ErrorKind::Interrupted => {
                *self.cut.borrow_mut() = Some(format!("the {} stream ends early ({e})", self.what));
                Ok(0)
            }
            Err(e) => Err(e),
        }
    }
}

/// The bytes of a source, decompressed when they start with the magic bytes of gzip,
/// zstd, xz or bzip2 (whatever the file is called), and whether they were gzip.
pub fn decompressed(src: impl Read + 'static) -> Result<(Box<dyn BufRead>, bool), String> {
    decompress(Box::new(src)).map(|d| (d.input, d.compression == Some("gzip")))
}

/// A decompressed source.
pub(crate) struct Decompressed {
    pub input: Box<dyn BufRead>,
    /// `gzip`, `zstd`, `xz` or `bzip2`.
    pub compression: Option<&'static str>,
    pub cut: Cut,
}

pub(crate) fn decompress(src: Box<dyn Read>) -> Result<Decompressed, String> {
    let mut raw = BufReader::with_capacity(64 * 1024, src);
    let head = raw.fill_buf().map_err(|e| format!("cannot read: {e}"))?;
    let compression = if head.starts_with(&GZIP_MAGIC) {
        Some("gzip")
    } else if head.starts_with(&ZSTD_MAGIC) {
        Some("zstd")
    } else if head.starts_with(&XZ_MAGIC) {
        Some("xz")
    } else if head.starts_with(&BZIP2_MAGIC)
        && head.get(3).is_some_and(|b| (b'1'..=b'9').contains(b))
    {
        Some("bzip2")
    } else {
        None
    };
    let cut: Cut = Rc::default();
    let tolerant = |inner: Box<dyn Read>, what| -> Box<dyn BufRead> {
        Box::new(BufReader::with_capacity(
            256 * 1024,
            Tolerant {
                inner,
                read_any: false,
                cut: cut.clone(),
                what,
            },
        ))
    };
    let input: Box<dyn BufRead> = match compression {
        Some("gzip") => tolerant(Box::new(flate2::bufread::MultiGzDecoder::new(raw)), "gzip"),
        Some("zstd") => {
            let d = zstd::stream::read::Decoder::with_buffer(raw)
                .map_err(|e| format!("cannot read the zstd stream: {e}"))?;
            tolerant(Box::new(d), "zstd")
        }
        Some("bzip2") => tolerant(Box::new(bzip2::bufread::MultiBzDecoder::new(raw)), "bzip2"),
        Some(_) => {
            // lzma-rs decodes xz into a writer, not as a reader: the whole content is
            // decompressed into memory first (a truncated tail keeps what came out).
            let mut out = Vec::new();
            if let Err(e) = lzma_rs::xz_decompress(&mut raw, &mut out) {
                if out.is_empty() {
                    return Err(format!("cannot read the xz stream: {e}"));
                }
                *cut.borrow_mut() = Some(format!("the xz stream ends early ({e})"));
            }
            Box::new(std::io::Cursor::new(out))
        }
        None => Box::new(raw),
    };
    Ok(Decompressed {
        input,
        compression,
        cut,
    })
}

/// Decodes UTF-16 text (by BOM) into UTF-8; other input passes through.
fn utf16_to_utf8(mut r: impl Read) -> std::io::Result<Box<dyn BufRead>> {
    let mut all = Vec::new();
    r.read_to_end(&mut all)?;
    let le = all.starts_with(&[0xFF, 0xFE]);
    let units: Vec<u16> = all[2..]
        .chunks_exact(2)
        .map(|c| {
            if le {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        })
        .collect();
    let s = String::from_utf16_lossy(&units);
    Ok(Box::new(std::io::Cursor::new(s.into_bytes())))
}

/// The content of a byte source, ready to probe and then to read.
pub(crate) struct Content {
    pub input: Box<dyn BufRead>,
    pub gzip: bool,
    /// `gzip`, `zstd`, `xz` or `bzip2`, when the source was compressed.
    pub compression: Option<&'static str>,
    /// Set when the decompressed stream ended early (a truncated file).
    pub cut: Cut,
    pub utf16: bool,
    /// Why the first block could not be read (a corrupt gzip stream, say): reported
    /// when no reader claims the input by its name alone.
    pub failed: Option<String>,
}

impl Content {
    pub fn new(src: Box<dyn Read>) -> Result<Content, String> {
        let d = decompress(src)?;
        let (mut input, gzip) = (d.input, d.compression == Some("gzip"));
        let mut utf16 = false;
        let mut failed = None;
        match input.fill_buf() {
            Ok(head) if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) => {
                utf16 = true;
                match utf16_to_utf8(input) {
                    Ok(decoded) => input = decoded,
                    Err(e) => {
                        failed = Some(e.to_string());
                        input = Box::new(std::io::empty());
                    }
                }
            }
            Ok(_) => {}
            Err(e) => failed = Some(format!("cannot read: {e}")),
        }
        Ok(Content {
            input,
            gzip,
            compression: d.compression,
            cut: d.cut,
            utf16,
            failed,
        })
    }

    /// The first block (empty when it could not be read).
    pub fn head(&mut self) -> &[u8] {
        if self.failed.is_some() {
            return &[];
        }
        match self.input.fill_buf() {
            Ok(h) => h,
            Err(e) => {
                self.failed = Some(format!("cannot read: {e}"));
                &[]
            }
        }
    }
}

/// What a reader sees of an input before it claims it.
pub struct Probe<'a> {
    /// The input's path, for readers that open it themselves; `None` for a bare byte
    /// stream (then only stream readers are asked).
    pub path: Option<&'a Path>,
    /// The file name as given (`trace.json.gz`); empty for a stream.
    pub name: String,
    pub is_dir: bool,
    /// The first block of the content after gunzip and UTF-16 decoding (for a file,
    /// up to 64 KiB); empty for a directory.
    pub head: &'a [u8],
    /// Whether the bytes on disk are gzip-compressed.
    pub gzip: bool,
    /// Whether the content was UTF-16 and `head` is its UTF-8 decoding.
    pub utf16: bool,
}

impl<'a> Probe<'a> {
    /// A directory.
    pub fn dir(path: &'a Path) -> Probe<'a> {
        Probe {
            path: Some(path),
            name: file_name(path),
            is_dir: true,
            head: &[],
            gzip: false,
            utf16: false,
        }
    }

    /// A bare stream whose first block is `head`.
    pub fn bytes(head: &'a [u8]) -> Probe<'a> {
        Probe {
            path: None,
            name: String::new(),
            is_dir: false,
            head,
            gzip: false,
            utf16: false,
        }
    }

    /// The head after a UTF-8 byte-order mark and leading whitespace; `None` when
    /// nothing else is there.
    pub fn text(&self) -> Option<&'a [u8]> {
        let text = self
            .head
            .strip_prefix(&[0xEF, 0xBB, 0xBF][..])
            .unwrap_or(self.head);
        let start = text.iter().position(|b| !b.is_ascii_whitespace())?;
        Some(&text[start..])
    }

    /// The head starts a JSON object or array: `{`, or `[` followed by `{`, `]` or
    /// nothing (`[Unknown];main 12` is a folded line, not JSON).
    pub fn json(&self) -> Option<&'a [u8]> {
        let text = self.text()?;
        let second = text[1..].iter().find(|b| !b.is_ascii_whitespace()).copied();
        match text[0] {
            b'{' => Some(text),
            b'[' if matches!(second, Some(b'{' | b']') | None) => Some(text),
            _ => None,
        }
    }

    /// The file name's extension, as given.
    pub fn extension(&self) -> Option<&str> {
        Path::new(&self.name).extension()?.to_str()
    }
}

pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
