//! A decoder for the data subset of Python's `marshal` format: what `pstats` files
//! hold (dicts of tuples of strings, ints and floats), written by Python 2 or 3.
//! Code objects and other types a profile never holds are refused with one line.
//!
//! Python 3 flags an object with bit 0x80 when a later `r` record may refer back to
//! it; Python 2 interns strings (`t`) and refers back with `R`. Both tables are kept.

/// One decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// Text and byte strings alike (Python 2 `str` is bytes): decoded as UTF-8, lossily.
    Str(String),
    /// Tuples, lists, sets and frozensets.
    Seq(Vec<Value>),
    /// Key/value pairs in file order.
    Dict(Vec<(Value, Value)>),
}

impl Value {
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Nesting deeper than this is refused: a profile is three levels deep, and a corrupt
/// file must not overflow the stack.
const MAX_DEPTH: usize = 64;

struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Python 3 back-references (`r`), by the order objects were flagged.
    refs: Vec<Option<Value>>,
    /// Python 2 interned strings (`R`).
    interned: Vec<String>,
}

/// Decodes one value from the start of `buf`. Errors name the byte offset.
pub fn decode(buf: &[u8]) -> Result<Value, String> {
    let mut d = Decoder {
        buf,
        pos: 0,
        refs: Vec::new(),
        interned: Vec::new(),
    };
    d.value(0)
}

impl Decoder<'_> {
    fn err<T>(&self, msg: &str) -> Result<T, String> {
        Err(format!("byte {}: {msg}", self.pos))
    }

    fn bytes(&mut self, n: usize) -> Result<&[u8], String> {
        if self.buf.len() - self.pos < n {
            return self.err("the file ends inside a value (truncated?)");
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.bytes(1)?[0])
    }

    fn i32(&mut self) -> Result<i32, String> {
        let b = self.bytes(4)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A length: non-negative and not beyond the bytes left (each element takes one).
    fn len(&mut self) -> Result<usize, String> {
        let n = self.i32()?;
        if n < 0 || n as usize > self.buf.len() - self.pos {
            return self.err(&format!("bad length {n}"));
        }
        Ok(n as usize)
    }

    fn text(&mut self, n: usize) -> Result<String, String> {
        Ok(String::from_utf8_lossy(self.bytes(n)?).into_owned())
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return self.err("values nest too deeply");
        }
        let code = self.u8()?;
        let flagged = code & 0x80 != 0;
        let slot = flagged.then(|| {
            self.refs.push(None);
            self.refs.len() - 1
        });
        let v = self.body(code & 0x7f, depth)?;
        if let Some(i) = slot {
            self.refs[i] = Some(v.clone());
        }
        Ok(v)
    }

    fn body(&mut self, code: u8, depth: usize) -> Result<Value, String> {
        Ok(match code {
            b'N' => Value::None,
            b'T' => Value::Bool(true),
            b'F' => Value::Bool(false),
            b'i' => Value::Int(self.i32()? as i64),
            b'I' => {
                let b = self.bytes(8)?;
                Value::Int(i64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            // Arbitrary precision: base-2^15 digits, sign on the count. Kept as f64 past
            // i64 (call counts never get there).
            b'l' => {
                let n = self.i32()?;
                let digits = n.unsigned_abs() as usize;
                if digits * 2 > self.buf.len() - self.pos {
                    return self.err(&format!("bad length {n}"));
                }
                let mut x = 0f64;
                for i in 0..digits {
                    let b = self.bytes(2)?;
                    x += u16::from_le_bytes([b[0], b[1]]) as f64 * 32768f64.powi(i as i32);
                }
                let x = if n < 0 { -x } else { x };
                if x.abs() < 9.0e18 {
                    Value::Int(x as i64)
                } else {
                    Value::Float(x)
                }
            }
            b'g' => {
                let b = self.bytes(8)?;
                Value::Float(f64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            b'f' => {
                let n = self.u8()? as usize;
                let t = self.text(n)?;
                match t.trim().parse() {
                    Ok(f) => Value::Float(f),
                    Err(_) => return self.err(&format!("bad float {t:?}")),
                }
            }
            b's' | b'u' | b'a' | b'A' => {
                let n = self.len()?;
                Value::Str(self.text(n)?)
            }
            b't' => {
                let n = self.len()?;
                let s = self.text(n)?;
                self.interned.push(s.clone());
                Value::Str(s)
            }
            b'z' | b'Z' => {
                let n = self.u8()? as usize;
                Value::Str(self.text(n)?)
            }
            b'R' => {
                let i = self.i32()?;
                match usize::try_from(i).ok().and_then(|i| self.interned.get(i)) {
                    Some(s) => Value::Str(s.clone()),
                    None => return self.err(&format!("string reference {i} to nothing")),
                }
            }
            b'r' => {
                let i = self.i32()?;
                match usize::try_from(i).ok().and_then(|i| self.refs.get(i)) {
                    Some(Some(v)) => v.clone(),
                    _ => return self.err(&format!("reference {i} to nothing")),
                }
            }
            b'(' | b'[' | b'<' | b'>' => {
                let n = self.len()?;
                self.seq(n, depth)?
            }
            b')' => {
                let n = self.u8()? as usize;
                self.seq(n, depth)?
            }
            b'{' => {
                let mut items = Vec::new();
                loop {
                    if self.buf.get(self.pos) == Some(&b'0') {
                        self.pos += 1;
                        break;
                    }
                    let k = self.value(depth + 1)?;
                    let v = self.value(depth + 1)?;
                    items.push((k, v));
                }
                Value::Dict(items)
            }
            b'c' => return self.err("a code object (this is a .pyc, not a profile)"),
            other => {
                self.pos -= 1;
                return self.err(&format!("unknown type code 0x{other:02x}"));
            }
        })
    }

    fn seq(&mut self, n: usize, depth: usize) -> Result<Value, String> {
        let mut v = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            v.push(self.value(depth + 1)?);
        }
        Ok(Value::Seq(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python3_refs_and_python2_interning() {
        // {('a', 1): 2.5} with the tuple flagged and 'a' referenced again.
        let mut b = vec![b'{', b')' | 0x80, 2, b'z' | 0x80, 1, b'a', b'i', 1, 0, 0, 0];
        b.extend([b'g']);
        b.extend(2.5f64.to_le_bytes());
        b.extend([b'r', 1, 0, 0, 0, b'N', b'0']);
        let v = decode(&b).unwrap();
        let Value::Dict(items) = v else { panic!() };
        assert_eq!(items[0].1, Value::Float(2.5));
        assert_eq!(items[1].0, Value::Str("a".into()));
        // Python 2: t'x' then R0.
        let b = [b'(', 2, 0, 0, 0, b't', 1, 0, 0, 0, b'x', b'R', 0, 0, 0, 0];
        assert_eq!(
            decode(&b).unwrap(),
            Value::Seq(vec![Value::Str("x".into()), Value::Str("x".into())])
        );
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(decode(b"").is_err());
        assert!(decode(b"(\xff\xff\xff\x7f").is_err());
        assert!(decode(b"r\x05\x00\x00\x00").is_err());
        assert!(decode(&[b'['; 200]).unwrap_err().contains("bad length"));
        let deep: Vec<u8> = std::iter::repeat_n([b')', 1], 100).flatten().collect();
        assert!(decode(&deep).unwrap_err().contains("nest"));
        assert!(decode(b"{i\x01\x00\x00\x00").is_err());
    }
}
