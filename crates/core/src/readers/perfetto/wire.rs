//! The protobuf wire format, read by hand on the hot path: a `TracePacket` and its
//! `TrackEvent` are walked field by field without allocating (prost's derive would make
//! a Vec per repeated field of every event), and the walk sees the field number of every
//! packet kind grove does not read, which it counts.

/// One field's value as the wire gives it.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Len(&'a [u8]),
}

impl Value<'_> {
    /// A varint or fixed integer (what a `uint64`/`int64`/`fixed64` field holds).
    pub fn int(self) -> Option<u64> {
        match self {
            Value::Varint(v) | Value::Fixed64(v) => Some(v),
            Value::Fixed32(v) => Some(u64::from(v)),
            Value::Len(_) => None,
        }
    }
}

/// Reads a varint at the start of `b`: its value and length.
#[inline(always)]
pub fn varint(b: &[u8]) -> Option<(u64, usize)> {
    // Most varints on the hot path (keys, small ids, deltas) are one byte.
    if let Some(&x) = b.first() {
        if x < 0x80 {
            return Some((u64::from(x), 1));
        }
    }
    let mut v = 0u64;
    for (i, &x) in b.iter().enumerate().take(10) {
        v |= u64::from(x & 0x7f) << (7 * i);
        if x < 0x80 {
            return Some((v, i + 1));
        }
    }
    None
}

/// A varint at the start of `b`: its value and the bytes after it (split off, so the
/// field walk below takes no second bounds check).
#[inline(always)]
pub fn varint_rest(b: &[u8]) -> Option<(u64, &[u8])> {
    match b {
        [x, rest @ ..] if *x < 0x80 => Some((u64::from(*x), rest)),
        // Two bytes: deltas of a sequence's clock, most iids past 127.
        [x, y, rest @ ..] if *y < 0x80 => Some((u64::from(x & 0x7f) | u64::from(*y) << 7, rest)),
        _ => {
            let (v, n) = varint(b)?;
            Some((v, b.get(n..)?))
        }
    }
}

/// The fields of one message, in order; `None` ends it, and `bad` says whether it ended
/// on malformed bytes (a truncated field, a group, an unknown wire type).
pub struct Fields<'a> {
    rest: &'a [u8],
    pub bad: bool,
}

impl<'a> Fields<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Fields {
            rest: b,
            bad: false,
        }
    }

    fn fail(&mut self) -> Option<(u32, Value<'a>)> {
        self.bad = true;
        self.rest = &[];
        None
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = (u32, Value<'a>);

    #[inline(always)]
    fn next(&mut self) -> Option<(u32, Value<'a>)> {
        self.field()
    }
}

impl<'a> Fields<'a> {
    /// The next field. Always inlined, and the hot loops call it by this name: a
    /// `for` loop over `&mut fields` went through `<&mut I as Iterator>::next`, which
    /// was not inlined (a call per field, 20 % of the load's instructions).
    #[inline(always)]
    pub fn field(&mut self) -> Option<(u32, Value<'a>)> {
        if self.rest.is_empty() {
            return None;
        }
        let Some((key, b)) = varint_rest(self.rest) else {
            return self.fail();
        };
        let field = key >> 3;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            return self.fail();
        }
        let (value, rest) = match key & 7 {
            0 => match varint_rest(b) {
                Some((v, r)) => (Value::Varint(v), r),
                None => return self.fail(),
            },
            1 => match b.split_first_chunk::<8>() {
                Some((x, r)) => (Value::Fixed64(u64::from_le_bytes(*x)), r),
                None => return self.fail(),
            },
            2 => {
                let Some((len, r)) = varint_rest(b) else {
                    return self.fail();
                };
                match usize::try_from(len)
                    .ok()
                    .and_then(|l| r.split_at_checked(l))
                {
                    Some((x, r)) => (Value::Len(x), r),
                    None => return self.fail(),
                }
            }
            5 => match b.split_first_chunk::<4>() {
                Some((x, r)) => (Value::Fixed32(u32::from_le_bytes(*x)), r),
                None => return self.fail(),
            },
            _ => return self.fail(),
        };
        self.rest = rest;
        Some((field as u32, value))
    }
}

/// A length-delimited value's bytes (its length is `len`) and the bytes after it.
#[inline(always)]
pub fn split_len(len: u64, b: &[u8]) -> Option<(&[u8], &[u8])> {
    usize::try_from(len)
        .ok()
        .and_then(|l| b.split_at_checked(l))
}

/// The integers of a repeated integer field, packed (one Len) or not (one value).
pub fn ints(v: Value<'_>, fixed64: bool, out: &mut Vec<u64>) -> bool {
    match v {
        Value::Len(mut b) => {
            while !b.is_empty() {
                if fixed64 {
                    let Some(x) = b.get(..8) else {
                        return false;
                    };
                    out.push(u64::from_le_bytes(x.try_into().unwrap_or([0; 8])));
                    b = &b[8..];
                } else {
                    let Some((x, n)) = varint(b) else {
                        return false;
                    };
                    out.push(x);
                    b = &b[n..];
                }
            }
            true
        }
        other => match other.int() {
            Some(x) => {
                out.push(x);
                true
            }
            None => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_fields_and_stops_on_damage() {
        // field 1 varint 150, field 2 "hi", field 3 fixed64 7
        let b = [
            0x08, 0x96, 0x01, 0x12, 2, b'h', b'i', 0x19, 7, 0, 0, 0, 0, 0, 0, 0,
        ];
        let f: Vec<_> = Fields::new(&b).map(|(n, _)| n).collect();
        assert_eq!(f, vec![1, 2, 3]);
        let mut it = Fields::new(&b[..5]);
        assert!(it.next().is_some());
        assert!(it.next().is_none());
        assert!(it.bad);
        let mut packed = Vec::new();
        assert!(ints(Value::Len(&[1, 0x96, 0x01]), false, &mut packed));
        assert_eq!(packed, vec![1, 150]);
    }
}
