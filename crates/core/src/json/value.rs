//! Whole JSON values as `serde_json::Value`s, decoded by this module's one decoder
//! (`JsonReader`): the readers that want a document tree (speedscope, `.cpuprofile`,
//! perf's JSON, rocprofv3, execution traces, grove's own exports, a trace's metadata and
//! sample tables) get the same strings, escapes and lone-surrogate rule as the streaming
//! readers, instead of serde_json's decoder, which refuses a lone surrogate or invalid
//! UTF-8 that the trace readers repair. serde_json stays the value type (and the
//! reference `tests/json_decoder.rs` checks against).
//!
//! The numbers are serde_json's (without `arbitrary_precision`): an integer that fits is
//! a u64, or an i64 when negative; `-0`, a fraction, an exponent or an integer out of
//! range is an f64; a number whose f64 is infinite is an error ("number out of range").
//! Nesting is walked with an explicit stack and limited to `MAX_DEPTH` levels: a
//! `Value` is dropped and compared recursively, so a deeper one could overflow the
//! thread's stack later (serde_json stops at 128).

use std::io::Read;

use serde_json::{Map, Number, Value};

use super::{JsonReader, Kind, Result};

/// The deepest nesting a value may have (objects and arrays inside each other).
pub const MAX_DEPTH: usize = 512;

/// A container being filled: an array's elements, or an object's members and the key
/// of the value being read.
enum Open {
    Array(Vec<Value>),
    Object(Map<String, Value>, String),
}

impl<R: Read> JsonReader<R> {
    /// The next value, whole, nested at most `MAX_DEPTH` levels (strings decoded
    /// lossily as `read_str` does, counted in `repairs`).
    pub fn read_value(&mut self) -> Result<Value> {
        self.read_value_within(MAX_DEPTH)
    }

    /// The next value, nested at most `max_depth` levels. A caller that allows more
    /// than `MAX_DEPTH` drops the value with `drop_deep`.
    pub fn read_value_within(&mut self, max_depth: usize) -> Result<Value> {
        let mut stack = Vec::new();
        let r = self.build(&mut stack, max_depth);
        // What an error left open is dropped without recursing.
        for open in stack {
            drop_deep(match open {
                Open::Array(items) => Value::Array(items),
                Open::Object(members, _) => Value::Object(members),
            });
        }
        r
    }

    fn build(&mut self, stack: &mut Vec<Open>, max_depth: usize) -> Result<Value> {
        let mut text = Vec::new();
        'value: loop {
            let mut v = match self.peek_kind()? {
                Kind::Object | Kind::Array if stack.len() == max_depth => {
                    return Err(self.error(format!("nested deeper than {max_depth} levels")));
                }
                Kind::Object => {
                    self.begin_object()?;
                    if self.next_key(true, &mut text)? {
                        stack.push(Open::Object(Map::new(), lossy(&text)));
                        continue 'value;
                    }
                    Value::Object(Map::new())
                }
                Kind::Array => {
                    self.begin_array()?;
                    if self.next_element(true)? {
                        stack.push(Open::Array(Vec::new()));
                        continue 'value;
                    }
                    Value::Array(Vec::new())
                }
                Kind::Str => {
                    self.read_str(&mut text)?;
                    Value::String(lossy(&text))
                }
                Kind::Num => {
                    self.read_num(&mut text)?;
                    Value::Number(number(&text).map_err(|m| self.error(m))?)
                }
                Kind::True | Kind::False | Kind::Null => match self.read_bool_or_null()? {
                    Some(b) => Value::Bool(b),
                    None => Value::Null,
                },
            };
            // Put the value in its container; a container that ends is itself the value
            // to put in the one around it.
            loop {
                match stack.last_mut() {
                    None => return Ok(v),
                    Some(Open::Array(items)) => {
                        items.push(v);
                        if self.next_element(false)? {
                            continue 'value;
                        }
                    }
                    Some(Open::Object(members, key)) => {
                        if let Some(twice) = members.insert(std::mem::take(key), v) {
                            drop_deep(twice);
                        }
                        if self.next_key(false, &mut text)? {
                            *key = lossy(&text);
                            continue 'value;
                        }
                    }
                }
                v = match stack.pop() {
                    Some(Open::Array(items)) => Value::Array(items),
                    Some(Open::Object(members, _)) => Value::Object(members),
                    None => unreachable!("the stack had a last element"),
                };
            }
        }
    }
}

/// Drops a value of any depth without recursing (a `Value`'s own drop recurses once
/// per level).
pub fn drop_deep(v: Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// A whole document of any depth read from `src` (timemory's trees nest two levels a
/// call level; 10,000-level trees load). Drop it with `drop_deep`.
pub fn from_reader_deep<R: Read>(src: R) -> Result<Value> {
    document(JsonReader::new(src), usize::MAX)
}

/// A whole document read from `src`: one value and nothing after it but whitespace.
pub fn from_reader<R: Read>(src: R) -> Result<Value> {
    document(JsonReader::new(src), MAX_DEPTH)
}

/// A whole document in memory (a buffer no larger than the text: this is called per
/// event for a trace's `args`).
pub fn from_slice(text: &[u8]) -> Result<Value> {
    let size = text.len().clamp(16, super::BUF_SIZE);
    document(JsonReader::with_buffer_size(text, size), MAX_DEPTH)
}

/// The one value `r` holds after an optional byte-order mark, and nothing after it but
/// whitespace.
fn document<R: Read>(mut r: JsonReader<R>, max_depth: usize) -> Result<Value> {
    r.skip_bom();
    let v = r.read_value_within(max_depth)?;
    if r.skip_ws().is_some() {
        drop_deep(v);
        return Err(r.error("trailing characters after the document"));
    }
    Ok(v)
}

/// A document into a type of its own (`#[derive(Deserialize)]`), through a `Value`.
pub fn from_slice_as<T: serde::de::DeserializeOwned>(
    text: &[u8],
) -> std::result::Result<T, String> {
    let v = from_slice(text).map_err(|e| e.to_string())?;
    serde_json::from_value(v).map_err(|e| e.to_string())
}

/// A document read from `src` into a type of its own, through a `Value`.
pub fn from_reader_as<T: serde::de::DeserializeOwned, R: Read>(
    src: R,
) -> std::result::Result<T, String> {
    let v = from_reader(src).map_err(|e| e.to_string())?;
    serde_json::from_value(v).map_err(|e| e.to_string())
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// serde_json's number for a JSON number's text (see the module's comment), or why the
/// text is not one.
pub fn number(text: &[u8]) -> std::result::Result<Number, String> {
    let bad = || format!("invalid number {:?}", String::from_utf8_lossy(text));
    let (neg, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let int_end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    let (int, rest) = digits.split_at(int_end);
    if int.is_empty() || (int.len() > 1 && int[0] == b'0') {
        return Err(bad());
    }
    let mut tail = rest;
    let mut integer = true;
    if let Some(frac) = tail.strip_prefix(b".") {
        let n = frac.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return Err(bad());
        }
        tail = &frac[n..];
        integer = false;
    }
    if let Some(exp) = tail.strip_prefix(b"e").or_else(|| tail.strip_prefix(b"E")) {
        let exp = exp
            .strip_prefix(b"+")
            .or_else(|| exp.strip_prefix(b"-"))
            .unwrap_or(exp);
        let n = exp.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return Err(bad());
        }
        tail = &exp[n..];
        integer = false;
    }
    if !tail.is_empty() {
        return Err(bad());
    }
    // ASCII digits and signs only, checked above.
    let s = std::str::from_utf8(text).map_err(|_| bad())?;
    if integer {
        if !neg {
            if let Ok(u) = s.parse::<u64>() {
                return Ok(Number::from(u));
            }
        } else if let Ok(i) = s.parse::<i64>() {
            // serde_json reads `-0` as the float -0.0.
            if i != 0 {
                return Ok(Number::from(i));
            }
        }
    }
    let f: f64 = s.parse().map_err(|_| bad())?;
    Number::from_f64(f).ok_or_else(|| format!("number out of range: {s}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> std::result::Result<Value, String> {
        from_slice(text.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn numbers_as_serde_json_types_them() {
        let n = |t: &str| doc(t).unwrap();
        assert!(n("18446744073709551615").is_u64());
        assert!(n("18446744073709551616").is_f64());
        assert!(n("-9223372036854775808").is_i64());
        assert!(n("-9223372036854775809").is_f64());
        assert!(n("-0")
            .as_f64()
            .is_some_and(|f| f == 0.0 && f.is_sign_negative()));
        assert!(n("-0").is_f64());
        assert!(n("0").is_u64() && n("-3").is_i64() && n("1.0").is_f64() && n("1e2").is_f64());
        for bad in [
            "01", "1.", ".5", "1e", "1e+", "-", "--1", "1.5.2", "+1", "1e400",
        ] {
            assert!(doc(bad).is_err(), "{bad}");
        }
        assert_eq!(n("1e-400"), serde_json::json!(0.0));
    }

    #[test]
    fn documents_nest_and_end() {
        assert_eq!(
            doc(r#" {"a": [1, {"b": null}, [], {}], "a2": true, "c": "x\u00e9"} "#).unwrap(),
            serde_json::json!({"a": [1, {"b": null}, [], {}], "a2": true, "c": "xé"})
        );
        // The last of two equal keys wins, as in serde_json.
        assert_eq!(
            doc(r#"{"k":1,"k":2}"#).unwrap(),
            serde_json::json!({"k": 2})
        );
        assert!(doc("[1, 2] x").is_err());
        assert!(doc("[1, 2").is_err());
        assert!(doc("").is_err());
        assert_eq!(doc("\u{feff}[1]").unwrap(), serde_json::json!([1]));
        // As deep as allowed, and one level deeper.
        let nest = |n: usize| "[".repeat(n) + &"]".repeat(n);
        assert!(doc(&nest(MAX_DEPTH)).is_ok());
        let e = doc(&nest(MAX_DEPTH + 1)).unwrap_err();
        assert!(e.contains("nested deeper than 512 levels"), "{e}");
        assert!(doc(&nest(1_000_000)).is_err());
    }

    /// Lone surrogates, which serde_json refuses: U+FFFD, and what follows is kept.
    #[test]
    fn lone_surrogates_in_documents() {
        assert_eq!(doc(r#""\uD800\n""#).unwrap(), Value::from("\u{fffd}\n"));
        assert_eq!(
            doc(r#"["\uD800\"x"]"#).unwrap(),
            serde_json::json!(["\u{fffd}\"x"])
        );
        assert_eq!(
            doc(r#"{"\uDC00": 1}"#).unwrap(),
            serde_json::json!({"\u{fffd}": 1})
        );
        assert_eq!(doc(r#""\uD83D\uDE00""#).unwrap(), Value::from("😀"));
    }
}
