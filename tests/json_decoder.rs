//! The one JSON decoder (`grove::json`) against serde_json: random strings and values
//! (without lone surrogates, which serde_json refuses and grove reads as U+FFFD), and
//! every JSON file of ../shared/corpus that serde_json accepts. Both ways in are
//! checked: the streaming `JsonReader` (at several buffer sizes) and the slice lexer
//! the Chrome scanner is built on (`json::lexer`, `json::strings`, `json::number`), and
//! whole documents as values (`json::from_slice`, `json::from_reader`: what the readers
//! of small documents use).

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};

use common::Rng;
use grove::json::lexer::{byte, literal_end, number_end, ws, Fail, Scan};
use grove::json::number::{self, Number};
use grove::json::strings::{string_span_ascii, unescape};
use grove::json::{JsonReader, Kind};
use serde_json::Value;

/// A number's text as a Value: through `number::value` where it decides, else (it
/// declines: more digits or a larger exponent than it converts exactly) through
/// serde_json, which then checks only that the lexer cut the right text. `decided`
/// counts the first kind.
fn number_value(text: &[u8], decided: &mut usize) -> Result<Value, String> {
    match number::value(text) {
        Some(Number::Int(v)) => {
            *decided += 1;
            Ok(Value::from(v))
        }
        Some(Number::UInt(v)) => {
            *decided += 1;
            Ok(Value::from(v))
        }
        Some(Number::Float(f)) => {
            *decided += 1;
            serde_json::Number::from_f64(f)
                .map(Value::Number)
                .ok_or_else(|| format!("not finite: {f}"))
        }
        None => serde_json::from_slice(text).map_err(|e| e.to_string()),
    }
}

fn utf8(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| format!("decoded string not UTF-8: {e}"))
}

/// One value through the streaming reader.
fn pull(r: &mut JsonReader<&[u8]>, decided: &mut usize) -> Result<Value, String> {
    let e = |e: grove::json::JsonError| e.to_string();
    let mut text = Vec::new();
    Ok(match r.peek_kind().map_err(e)? {
        Kind::Object => {
            r.begin_object().map_err(e)?;
            let mut map = serde_json::Map::new();
            let (mut first, mut key) = (true, Vec::new());
            while r.next_key(first, &mut key).map_err(e)? {
                first = false;
                let k = utf8(key.clone())?;
                map.insert(k, pull(r, decided)?);
            }
            Value::Object(map)
        }
        Kind::Array => {
            r.begin_array().map_err(e)?;
            let mut v = Vec::new();
            let mut first = true;
            while r.next_element(first).map_err(e)? {
                first = false;
                v.push(pull(r, decided)?);
            }
            Value::Array(v)
        }
        Kind::Str => {
            r.read_str(&mut text).map_err(e)?;
            Value::String(utf8(text)?)
        }
        Kind::Num => {
            r.read_num(&mut text).map_err(e)?;
            number_value(&text, decided)?
        }
        Kind::True | Kind::False | Kind::Null => match r.read_bool_or_null().map_err(e)? {
            Some(b) => Value::Bool(b),
            None => Value::Null,
        },
    })
}

/// A whole document through the streaming reader with a buffer of `size` bytes.
fn streamed(bytes: &[u8], size: usize, decided: &mut usize) -> Result<Value, String> {
    let mut r = JsonReader::with_buffer_size(bytes, size);
    r.skip_bom();
    let v = pull(&mut r, decided)?;
    if !r.at_eof() {
        return Err("text after the value".into());
    }
    Ok(v)
}

/// A string at `b[i]` (its opening quote) through the slice lexer: (text, end).
fn slice_str(b: &[u8], i: usize) -> Scan<(String, usize)> {
    let (s, q, _, _) = string_span_ascii(b, i)?;
    let mut out = Vec::new();
    unescape(&b[s..q], &mut out);
    Ok((String::from_utf8(out).map_err(|_| Fail::Odd)?, q + 1))
}

/// One value at `b[i]` (no whitespace before it) through the slice lexer: (value, end).
fn slice_value(b: &[u8], i: usize, decided: &mut usize) -> Scan<(Value, usize)> {
    match byte(b, i)? {
        b'"' => slice_str(b, i).map(|(s, e)| (Value::String(s), e)),
        b'-' | b'0'..=b'9' => {
            let e = number_end(b, i)?;
            let v = number_value(&b[i..e], decided).map_err(|_| Fail::Odd)?;
            Ok((v, e))
        }
        c @ (b't' | b'f' | b'n') => {
            let e = literal_end(b, i)?;
            let v = match c {
                b't' => Value::Bool(true),
                b'f' => Value::Bool(false),
                _ => Value::Null,
            };
            Ok((v, e))
        }
        open @ (b'{' | b'[') => {
            let close = if open == b'{' { b'}' } else { b']' };
            let mut j = ws(b, i + 1)?;
            let (mut map, mut list) = (serde_json::Map::new(), Vec::new());
            if b[j] != close {
                loop {
                    if open == b'{' {
                        let (k, e) = slice_str(b, j)?;
                        j = ws(b, e)?;
                        if b[j] != b':' {
                            return Err(Fail::Odd);
                        }
                        let (v, e) = slice_value(b, ws(b, j + 1)?, decided)?;
                        map.insert(k, v);
                        j = e;
                    } else {
                        let (v, e) = slice_value(b, j, decided)?;
                        list.push(v);
                        j = e;
                    }
                    j = ws(b, j)?;
                    match b[j] {
                        b',' => j = ws(b, j + 1)?,
                        c if c == close => break,
                        _ => return Err(Fail::Odd),
                    }
                }
            }
            let v = if open == b'{' {
                Value::Object(map)
            } else {
                Value::Array(list)
            };
            Ok((v, j + 1))
        }
        _ => Err(Fail::Odd),
    }
}

/// A whole document through the slice lexer.
fn sliced(bytes: &[u8], decided: &mut usize) -> Result<Value, String> {
    let b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // The lexer reads a value's end only where a byte follows it (a number cut by the
    // slice's end is Short): the document is walked with a newline after it.
    let mut b = b.to_vec();
    b.push(b'\n');
    let (v, e) = ws(&b, 0)
        .and_then(|i| slice_value(&b, i, decided))
        .map_err(|f| format!("slice lexer: {f:?}"))?;
    if b[e..].iter().any(|c| !c.is_ascii_whitespace()) {
        return Err("slice lexer: text after the value".into());
    }
    Ok(v)
}

/// `text` decoded both ways equals serde_json's value of it; returns how many numbers
/// `number::value` decided.
fn check_both_ways(name: &str, text: &[u8], want: &Value, sizes: &[usize]) -> usize {
    let mut decided = 0;
    for &size in sizes {
        let got = streamed(text, size, &mut decided);
        assert_eq!(
            got.as_ref(),
            Ok(want),
            "{name}: streaming, {size}-byte buffer"
        );
    }
    let got = sliced(text, &mut decided);
    assert_eq!(got.as_ref(), Ok(want), "{name}: slice lexer");
    // The whole document as one value (`json::from_slice`, what the document readers
    // use), and through a reader at a small buffer.
    let doc = grove::json::from_slice(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(same(&doc, want), "{name}: json::from_slice\n{doc}\n{want}");
    let doc = grove::json::from_reader(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(same(&doc, want), "{name}: json::from_reader\n{doc}\n{want}");
    decided
}

/// Equal values, a float within one unit in the last place: the document decoder
/// rounds a long decimal correctly (Rust's `str::parse`) where serde_json without its
/// `float_roundtrip` feature may land on the neighbouring double
/// (`-1818317741587922279.4697289`: ...222e18 against serde_json's ...224e18).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() && y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x.signum() == y.signum() && x.to_bits().abs_diff(y.to_bits()) <= 1)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, x), (ky, y))| kx == ky && same(x, y))
        }
        _ => a == b,
    }
}

const PIECES: &[&str] = &[
    "a",
    "Z",
    "0",
    " ",
    "é",
    "ß",
    "中",
    "😀",
    "𝄞",
    "\u{7f}",
    "\u{80}",
    "\u{ffff}",
    "\u{fffd}",
    "\"",
    "\\",
    "/",
    "\n",
    "\t",
    "\r",
    "\u{8}",
    "\u{c}",
    "\u{0}",
    "\u{1f}",
    "\u{10ffff}",
];

/// A random string without lone surrogates (Rust strings cannot hold them).
fn random_string(rng: &mut Rng) -> String {
    let n = rng.next() % 12;
    (0..n).map(|_| rng.pick(PIECES)).collect()
}

/// `s` as a JSON string literal, each character written one of the ways JSON allows:
/// itself (where allowed), a short escape, or `\u` escapes (a surrogate pair above
/// U+FFFF), hex digits in either case.
fn random_literal(rng: &mut Rng, s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\n' => Some("\\n"),
            '\t' => Some("\\t"),
            '\r' => Some("\\r"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            _ => None,
        };
        let must = c == '"' || c == '\\' || (c as u32) < 0x20;
        match rng.next() % 3 {
            0 if !must => out.push(c),
            1 if short.is_some() => out.push_str(short.unwrap()),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    if rng.next().is_multiple_of(2) {
                        out.push_str(&format!("\\u{u:04x}"));
                    } else {
                        out.push_str(&format!("\\u{u:04X}"));
                    }
                }
            }
        }
    }
    out.push('"');
    out
}

fn random_number(rng: &mut Rng) -> String {
    let mut t = String::new();
    if rng.next().is_multiple_of(2) {
        t.push('-');
    }
    let digits = 1 + rng.next() % 21;
    let first = rng.next() % 10;
    t.push(char::from(b'0' + first as u8));
    if first != 0 {
        for _ in 1..digits {
            t.push(char::from(b'0' + (rng.next() % 10) as u8));
        }
    }
    if rng.next().is_multiple_of(2) {
        t.push('.');
        for _ in 0..1 + rng.next() % 12 {
            t.push(char::from(b'0' + (rng.next() % 10) as u8));
        }
    }
    if rng.next().is_multiple_of(3) {
        t.push(if rng.next().is_multiple_of(2) {
            'e'
        } else {
            'E'
        });
        t.push_str(rng.pick(&["", "+", "-"]));
        for _ in 0..1 + rng.next() % 3 {
            t.push(char::from(b'0' + (rng.next() % 10) as u8));
        }
    }
    t
}

fn space(rng: &mut Rng) -> &'static str {
    rng.pick(&["", "", " ", "\n", "\t ", "\r\n  "])
}

/// A random JSON document: objects, arrays, strings, numbers, literals, whitespace.
fn random_value(rng: &mut Rng, depth: u32, out: &mut String) {
    let pick = if depth >= 4 {
        2 + rng.next() % 4
    } else {
        rng.next() % 6
    };
    match pick {
        0 | 1 => {
            let (open, close) = if pick == 0 { ('{', '}') } else { ('[', ']') };
            out.push(open);
            let n = rng.next() % 5;
            for k in 0..n {
                if k > 0 {
                    out.push(',');
                }
                out.push_str(space(rng));
                if pick == 0 {
                    let key = random_string(rng);
                    out.push_str(&random_literal(rng, &key));
                    out.push_str(space(rng));
                    out.push(':');
                    out.push_str(space(rng));
                }
                random_value(rng, depth + 1, out);
                out.push_str(space(rng));
            }
            out.push(close);
        }
        2 => {
            let s = random_string(rng);
            out.push_str(&random_literal(rng, &s));
        }
        3 | 4 => out.push_str(&random_number(rng)),
        _ => out.push_str(rng.pick(&["true", "false", "null"])),
    }
}

/// Random strings, each written with random escapes: both ways decode them to the
/// string itself, as serde_json does.
#[test]
fn random_strings_as_serde_json() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..20_000 {
        let s = random_string(&mut rng);
        let lit = random_literal(&mut rng, &s);
        let theirs: String = serde_json::from_str(&lit).unwrap();
        assert_eq!(theirs, s, "{lit}");
        let want = Value::String(s);
        check_both_ways(&lit, lit.as_bytes(), &want, &[1, 2, 5, 64]);
    }
}

/// Random documents (nested values, numbers of every form, whitespace): both ways give
/// serde_json's value.
#[test]
fn random_values_as_serde_json() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut decided, mut checked) = (0, 0);
    for _ in 0..5_000 {
        let mut text = String::new();
        random_value(&mut rng, 0, &mut text);
        // Numbers beyond a double's range are an error to serde_json.
        let Ok(want) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        checked += 1;
        decided += check_both_ways(&text, text.as_bytes(), &want, &[1, 3, 4096]);
    }
    assert!(checked > 4_000, "{checked} documents checked");
    assert!(decided > 5_000, "{decided} numbers typed by number::value");
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().to_lowercase();
        if p.is_dir() {
            json_files(&p, out);
        } else if name.ends_with(".json") || name.ends_with(".json.gz") {
            out.push(p);
        }
    }
}

/// Every `.json` and `.json.gz` file of the corpus that serde_json reads: both ways
/// give its value, every string and number alike.
#[test]
fn corpus_json_as_serde_json() {
    let Some(dir) = common::corpus_dir() else {
        skip!()
    };
    let mut files = Vec::new();
    json_files(&dir, &mut files);
    assert!(!files.is_empty(), "no JSON file in {}", dir.display());
    let (mut checked, mut refused) = (0, Vec::new());
    for p in &files {
        let mut bytes = std::fs::read(p).unwrap();
        if p.extension().is_some_and(|x| x == "gz") {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(&bytes[..])
                .read_to_end(&mut out)
                .unwrap();
            bytes = out;
        }
        let name = p.strip_prefix(&dir).unwrap().display().to_string();
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let Ok(want) = serde_json::from_slice::<Value>(body) else {
            refused.push(name);
            continue;
        };
        // Small files at small buffers too; every file at the default size.
        let sizes: &[usize] = if bytes.len() < 200_000 {
            &[7, 1 << 18]
        } else {
            &[1 << 18]
        };
        check_both_ways(&name, &bytes, &want, sizes);
        checked += 1;
    }
    eprintln!(
        "corpus_json_as_serde_json: {checked} of {} files compared; serde_json refuses {}: {refused:?}",
        files.len(),
        refused.len()
    );
    assert!(checked > files.len() / 2, "{checked} of {}", files.len());
}
