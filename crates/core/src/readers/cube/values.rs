//! A metric's `N.index` and `N.data`: which call-tree rows the data holds, and the
//! values themselves, one per (row, location), in the byte order the index declares.
//!
//! Index: `CUBEX.INDEX`, a u32 `1` in the writer's byte order (so a reader can tell
//! it), a u16 version, a u8 format (1 sparse, 3 dense); a sparse index follows with a
//! u32 count and that many i32 row numbers. Row numbers are positions in the metric's
//! cnode enumeration (`anchor::enumeration`), not cnode ids. Dense: every position.
//!
//! Data: `CUBEX.DATA` and the rows, each one value per location; or `ZCUBEX.DATA`, an
//! i64 count of zlib blocks, three i64 per block (uncompressed position, compressed
//! position, compressed size) and the blocks, which inflate to the same rows.

use std::io::Read;

/// A value type's layout: its fields (each decoded to f64) and how each aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F64,
}

impl Field {
    fn size(self) -> usize {
        match self {
            Field::U8 | Field::I8 => 1,
            Field::U16 | Field::I16 => 2,
            Field::U32 | Field::I32 => 4,
            Field::U64 | Field::I64 | Field::F64 => 8,
        }
    }
}

/// How a plane (one field of the value over all cells) combines across call paths and
/// locations, as Cube's value classes do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agg {
    Sum,
    Min,
    Max,
}

/// How the planes make the one figure grove shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One plane, the value.
    Scalar,
    /// `TAU_ATOMIC`: count, min, max, sum, sum of squares; shown as sum / count (Cube's
    /// default "average" pivot), with count, min, max and sum as columns of their own.
    TauAtomic,
    /// `RATE`: main and time; shown as main / time.
    Rate,
    /// `COMPLEX`: real and imaginary; shown as the modulus.
    Complex,
}

#[derive(Debug, Clone)]
pub struct Layout {
    pub fields: Vec<(Field, Agg)>,
    pub shape: Shape,
    /// Unsigned integers: an exclusive value never goes below zero (a child larger than
    /// its parent is clamped, as pycubexr does against cubelib's wrap-around).
    pub unsigned: bool,
}

/// The layout of a `<dtype>`, or why it is not read.
pub fn layout(dtype: &str) -> Result<Layout, String> {
    let d = dtype.trim().to_ascii_uppercase();
    let scalar = |f: Field, a: Agg| Layout {
        fields: vec![(f, a)],
        shape: Shape::Scalar,
        unsigned: matches!(f, Field::U8 | Field::U16 | Field::U32 | Field::U64),
    };
    Ok(match d.as_str() {
        "CHAR" | "UINT8" => scalar(Field::U8, Agg::Sum),
        "INT8" => scalar(Field::I8, Agg::Sum),
        "UINT16" | "UNSIGNED SHORT INT" => scalar(Field::U16, Agg::Sum),
        "INT16" | "SHORT INT" | "SIGNED SHORT INT" => scalar(Field::I16, Agg::Sum),
        "UINT32" | "UNSIGNED INT" => scalar(Field::U32, Agg::Sum),
        "INT" | "INT32" | "SIGNED INT" => scalar(Field::I32, Agg::Sum),
        "UINT64" | "UNSIGNED INTEGER" => scalar(Field::U64, Agg::Sum),
        "INT64" | "INTEGER" | "SIGNED INTEGER" => scalar(Field::I64, Agg::Sum),
        "DOUBLE" | "FLOAT" => scalar(Field::F64, Agg::Sum),
        "MINDOUBLE" => scalar(Field::F64, Agg::Min),
        "MAXDOUBLE" => scalar(Field::F64, Agg::Max),
        "TAU_ATOMIC" => Layout {
            fields: vec![
                (Field::U32, Agg::Sum),
                (Field::F64, Agg::Min),
                (Field::F64, Agg::Max),
                (Field::F64, Agg::Sum),
                (Field::F64, Agg::Sum),
            ],
            shape: Shape::TauAtomic,
            unsigned: false,
        },
        "RATE" => Layout {
            fields: vec![(Field::F64, Agg::Sum), (Field::F64, Agg::Sum)],
            shape: Shape::Rate,
            unsigned: false,
        },
        "COMPLEX" => Layout {
            fields: vec![(Field::F64, Agg::Sum), (Field::F64, Agg::Sum)],
            shape: Shape::Complex,
            unsigned: false,
        },
        _ => return Err(format!("its value type {dtype} is not read")),
    })
}

/// A parsed index: the byte order, and the enumeration positions of the stored rows
/// (None: dense, every position in order).
#[derive(Debug)]
pub struct Index {
    pub big_endian: bool,
    pub rows: Option<Vec<i64>>,
}

fn u32_at(b: &[u8], at: usize, big: bool) -> Option<u32> {
    let a: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(if big {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    })
}

fn i64_at(b: &[u8], at: usize, big: bool) -> Option<i64> {
    let a: [u8; 8] = b.get(at..at + 8)?.try_into().ok()?;
    Some(if big {
        i64::from_be_bytes(a)
    } else {
        i64::from_le_bytes(a)
    })
}

const INDEX_MARK: &[u8] = b"CUBEX.INDEX";
const DATA_MARK: &[u8] = b"CUBEX.DATA";
const ZDATA_MARK: &[u8] = b"ZCUBEX.DATA";

pub fn parse_index(b: &[u8]) -> Result<Index, String> {
    let b = b
        .strip_prefix(INDEX_MARK)
        .ok_or("the index does not start with CUBEX.INDEX")?;
    let big_endian = match u32_at(b, 0, false) {
        Some(1) => false,
        Some(0x0100_0000) => true,
        _ => return Err("the index's byte-order mark is neither 1 nor its swap".into()),
    };
    // b[4..6]: version (unused); b[6]: format.
    match b.get(6) {
        Some(3) => Ok(Index {
            big_endian,
            rows: None,
        }),
        Some(1) => {
            let n = u32_at(b, 7, big_endian).ok_or("the sparse index has no row count")? as usize;
            let body = &b[11..];
            if body.len() / 4 < n {
                return Err(format!(
                    "the sparse index promises {n} rows but holds {}",
                    body.len() / 4
                ));
            }
            let rows = (0..n)
                .map(|i| u32_at(body, 4 * i, big_endian).unwrap_or(0) as i32 as i64)
                .collect();
            Ok(Index {
                big_endian,
                rows: Some(rows),
            })
        }
        Some(f) => Err(format!(
            "index format {f} is neither sparse (1) nor dense (3)"
        )),
        None => Err("the index is cut short".into()),
    }
}

/// The raw rows of a data file, inflated when compressed; at most `limit` bytes (the
/// size the anchor and index imply), so that a corrupt block cannot inflate without end.
pub fn raw_data(b: &[u8], big: bool, limit: usize) -> Result<Vec<u8>, String> {
    if let Some(rest) = b.strip_prefix(DATA_MARK) {
        return Ok(rest[..rest.len().min(limit)].to_vec());
    }
    let rest = b
        .strip_prefix(ZDATA_MARK)
        .ok_or("the data does not start with CUBEX.DATA or ZCUBEX.DATA")?;
    let n = i64_at(rest, 0, big).ok_or("the compressed data has no block count")?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n <= rest.len() / 24)
        .ok_or_else(|| format!("the compressed data claims {n} blocks"))?;
    let mut pos = 8 + 24 * n;
    let mut out = Vec::new();
    for k in 0..n {
        let size = i64_at(rest, 8 + 24 * k + 16, big).unwrap_or(0);
        let size = usize::try_from(size)
            .ok()
            .filter(|&s| pos.checked_add(s).is_some_and(|e| e <= rest.len()))
            .ok_or_else(|| format!("compressed block {k} runs past the data's end"))?;
        if size == 0 {
            continue;
        }
        let want = limit.saturating_sub(out.len()) as u64;
        flate2::read::ZlibDecoder::new(&rest[pos..pos + size])
            .take(want)
            .read_to_end(&mut out)
            .map_err(|e| format!("compressed block {k}: {e}"))?;
        pos += size;
    }
    Ok(out)
}

/// Decodes field `f` of every value in `raw` (records of `rec` bytes, the field at
/// byte `off`) into f64. UINT64 values above 0xFFFF_FFFF_FFFF_FBFF (which do not
/// survive cubelib's round trip through double) become 0, as cubelib and pycubexr read
/// them; the count of such is returned.
pub fn decode(raw: &[u8], rec: usize, off: usize, f: Field, big: bool) -> (Vec<f64>, usize) {
    let mut huge = 0;
    let n = raw.len() / rec.max(1);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let b = &raw[i * rec + off..i * rec + off + f.size()];
        macro_rules! num {
            ($t:ty) => {{
                let a = b.try_into().unwrap_or_default();
                if big {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            }};
        }
        let v = match f {
            Field::U8 => b[0] as f64,
            Field::I8 => b[0] as i8 as f64,
            Field::U16 => num!(u16) as f64,
            Field::I16 => num!(i16) as f64,
            Field::U32 => num!(u32) as f64,
            Field::I32 => num!(i32) as f64,
            Field::U64 => {
                let v = num!(u64);
                if v > 0xFFFF_FFFF_FFFF_FBFF {
                    huge += 1;
                    0.0
                } else {
                    v as f64
                }
            }
            Field::I64 => num!(i64) as f64,
            Field::F64 => num!(f64),
        };
        out.push(v);
    }
    (out, huge)
}

/// The record size and each field's offset in it (fields are packed).
pub fn offsets(l: &Layout) -> (usize, Vec<usize>) {
    let mut offs = Vec::new();
    let mut at = 0;
    for (f, _) in &l.fields {
        offs.push(at);
        at += f.size();
    }
    (at, offs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_forms() {
        let mut b = INDEX_MARK.to_vec();
        b.extend([1, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0]);
        let i = parse_index(&b).unwrap();
        assert!(!i.big_endian);
        assert_eq!(i.rows, Some(vec![5, 9]));
        let mut b = INDEX_MARK.to_vec();
        b.extend([0, 0, 0, 1, 0, 0, 3]);
        let i = parse_index(&b).unwrap();
        assert!(i.big_endian && i.rows.is_none());
        let mut b = INDEX_MARK.to_vec();
        b.extend([1, 0, 0, 0, 0, 0, 1, 200, 0, 0, 0]);
        assert!(parse_index(&b).unwrap_err().contains("promises 200"));
        assert!(parse_index(b"nope").is_err());
    }

    #[test]
    fn compressed_data_inflates() {
        use std::io::Write;
        let payload: Vec<u8> = (0..64u8).collect();
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&payload).unwrap();
        let c = z.finish().unwrap();
        let mut b = ZDATA_MARK.to_vec();
        b.extend(1i64.to_le_bytes());
        b.extend(0i64.to_le_bytes());
        b.extend(0i64.to_le_bytes());
        b.extend((c.len() as i64).to_le_bytes());
        b.extend(&c);
        assert_eq!(raw_data(&b, false, 1000).unwrap(), payload);
        assert_eq!(raw_data(&b, false, 10).unwrap().len(), 10);
        b.truncate(b.len() - 1);
        assert!(raw_data(&b, false, 1000).is_err());
    }

    #[test]
    fn decodes_fields() {
        let raw = [
            1u8, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ];
        let (v, huge) = decode(&raw, 8, 0, Field::U64, false);
        assert_eq!((v, huge), (vec![1.0, 0.0], 1));
        let (v, _) = decode(&raw, 8, 0, Field::I64, false);
        assert_eq!(v, vec![1.0, -1.0]);
        assert!(layout("HISTOGRAM(5)").is_err());
        assert_eq!(
            offsets(&layout("TAU_ATOMIC").unwrap()),
            (36, vec![0, 4, 12, 20, 28])
        );
    }
}
