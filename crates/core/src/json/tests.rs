//! The JSON module's unit tests: the streaming reader, the slice lexer, the string
//! and number decoders.

use super::lexer::{byte, digits_or_point, number_end, Fail, Scan};
use super::number::{self, scaled_plain, Number};
use super::strings::{escape_end, string_span_ascii, unescape};
use super::*;

#[test]
fn decimal_exact() {
    assert_eq!(
        parse_decimal_scaled(b"1712195495519689.123", 3),
        Some(1712195495519689123)
    );
    assert_eq!(parse_decimal_scaled(b"12.5", 3), Some(12500));
    assert_eq!(parse_decimal_scaled(b"-0.0005", 3), Some(-1));
    assert_eq!(parse_decimal_scaled(b"1e3", 3), Some(1_000_000));
    assert_eq!(parse_decimal_scaled(b"1.5e-3", 3), Some(2));
    assert_eq!(parse_decimal_scaled(b"100a", 3), None);
    assert_eq!(parse_decimal_scaled(b"", 3), None);
    assert_eq!(parse_decimal_scaled(b"7", 0), Some(7));
}

/// Edges of the in-place digit walk: rounding at the first dropped digit, digits
/// far beyond i64, exponents that shift left and right.
#[test]
fn decimal_edges() {
    assert_eq!(parse_decimal_scaled(b"0.0004999", 3), Some(0));
    assert_eq!(parse_decimal_scaled(b"0.0005", 3), Some(1));
    assert_eq!(
        parse_decimal_scaled(b"1.23456789012345678901234", 3),
        Some(1235)
    );
    assert_eq!(parse_decimal_scaled(b"-2.5e-1", 3), Some(-250));
    assert_eq!(parse_decimal_scaled(b" 42 ", 3), Some(42_000));
    assert_eq!(
        parse_decimal_scaled(b"9223372036854775807", 0),
        Some(i64::MAX)
    );
    assert_eq!(parse_decimal_scaled(b"9223372036854775807", 3), None);
    assert_eq!(parse_decimal_scaled(b"12345678901234567890123", 0), None);
    assert_eq!(parse_decimal_scaled(b"1.2.3", 3), None);
    assert_eq!(parse_decimal_scaled(b".", 3), None);
    assert_eq!(parse_decimal_scaled(b"1e", 3), None);
    assert_eq!(parse_decimal_scaled(b".5", 0), Some(1));
}

/// Skipping scans strings and keys in place: the same repairs are counted, the same
/// errors raised, and captured text is unchanged, as when they were copied.
#[test]
fn skip_counts_and_captures_like_reading() {
    let text = "{\"k\\u0041\": [\"a\u{1}b\", 1.5e3, {\"x\": \"\\n\"}], \"z\": true}";
    let mut r = JsonReader::with_buffer_size(text.as_bytes(), 3);
    let mut raw = Vec::new();
    r.capture_value(&mut raw).unwrap();
    assert_eq!(r.repairs.control_chars, 1);
    let expected = text.replace('\u{1}', "\\u0001");
    assert_eq!(String::from_utf8(raw).unwrap(), expected);
    let mut r = JsonReader::new(&b"[\"a\\q\"]"[..]);
    let e = r.skip_value().unwrap_err();
    assert!(e.msg.contains("invalid escape"), "{e}");
}

fn events(text: &str) -> (Vec<String>, Result<()>, Repairs) {
    let mut r = JsonReader::new(text.as_bytes());
    let mut names = Vec::new();
    let mut key = Vec::new();
    let mut val = Vec::new();
    let res = (|| {
        r.begin_array()?;
        let mut first = true;
        while r.next_element(first)? {
            first = false;
            r.begin_object()?;
            let mut f = true;
            while r.next_key(f, &mut key)? {
                f = false;
                if key == b"name" {
                    r.read_str(&mut val)?;
                    names.push(String::from_utf8_lossy(&val).into_owned());
                } else {
                    r.skip_value()?;
                }
            }
        }
        Ok(())
    })();
    (names, res, r.repairs)
}

#[test]
fn lenient_forms() {
    let (n, res, rep) = events(r#"[{"name":"a","args":{"x":[1,{"y":null}]}},{"name":"b"},]"#);
    assert_eq!(n, ["a", "b"]);
    assert!(res.is_ok());
    assert_eq!(rep.trailing_commas, 1);

    let (n, res, _) = events("[{\"name\":\"a\"},\n{\"name\":\"b\"}");
    assert_eq!(n, ["a", "b"]);
    let e = res.unwrap_err();
    assert!(e.eof);
    assert_eq!(e.line, 2);

    let (n, res, rep) = events("[{\"name\":\"a\u{1}\tb\"}]");
    assert!(res.is_ok());
    assert_eq!(n, ["a\u{1}\tb"]);
    assert_eq!(rep.control_chars, 2);
}

#[test]
fn error_position() {
    let (_, res, _) = events("[\n  {\"name\": x}]");
    let e = res.unwrap_err();
    assert_eq!((e.line, e.column), (2, 12));
    assert!(!e.eof);
}

#[test]
fn capture_keeps_text() {
    let mut r = JsonReader::new(&br#"{"a": {"b": [1, 2.50, "x\"y"]}, "c": 1}"#[..]);
    let mut key = Vec::new();
    r.begin_object().unwrap();
    assert!(r.next_key(true, &mut key).unwrap());
    let mut raw = Vec::new();
    r.capture_value(&mut raw).unwrap();
    assert_eq!(raw, br#"{"b": [1, 2.50, "x\"y"]}"#);
    let v: serde_json::Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(v["b"][2], "x\"y");
}

#[test]
fn escapes_and_unicode() {
    let mut r = JsonReader::new(&br#""\u00e9\ud83d\ude00\n""#[..]);
    let mut out = Vec::new();
    r.read_str(&mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "é😀\n");
}

/// A lone surrogate (high or low) is U+FFFD and the escape after it is kept; a pair
/// joins. The one decoder, through both readers: the streaming reader at every buffer
/// size (a refill may fall between the two escapes) and the slice lexer's span and
/// `unescape`.
#[test]
fn lone_surrogates_keep_what_follows() {
    let cases: [(&[u8], &str); 12] = [
        (br#""\uD800\n""#, "\u{FFFD}\n"),
        (br#""\uD800\"x""#, "\u{FFFD}\"x"),
        (br#""\uD800\uD800""#, "\u{FFFD}\u{FFFD}"),
        (br#""\uD83D\uDE00""#, "\u{1F600}"),
        (br#""\uDBFF\uDFFF""#, "\u{10FFFF}"),
        (br#""\uD800\uD83D\uDE00\u0041""#, "\u{FFFD}😀A"),
        (br#""\uDC00x""#, "\u{FFFD}x"),
        (br#""\uDC00\uD800""#, "\u{FFFD}\u{FFFD}"),
        (br#""a\uD83Dz""#, "a\u{FFFD}z"),
        (br#""\uD800""#, "\u{FFFD}"),
        (br#""\uD800\\""#, "\u{FFFD}\\"),
        (br#""\uD800\/\u00e9""#, "\u{FFFD}/é"),
    ];
    for (text, want) in cases {
        for size in [1, 2, 3, 7, 64] {
            let mut r = JsonReader::with_buffer_size(text, size);
            let mut out = Vec::new();
            r.read_str(&mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want, "buffer {size}");
            assert!(r.at_eof(), "{text:?} ended early");
        }
        let (s, q, escaped, _) = string_span_ascii(text, 0).unwrap();
        assert!(escaped);
        assert_eq!(q + 1, text.len(), "{text:?} ended early");
        let mut out = Vec::new();
        unescape(&text[s..q], &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }
}

/// The one-pass number read gives what the two passes give (or leaves the number
/// to them), end included.
#[test]
fn scaled_plain_as_two_passes() {
    let mut cases: Vec<String> = [
        "0",
        "-0",
        "5.",
        "-.5",
        ".5",
        "1006.900",
        "1006.9001",
        "-12.5",
        "1e3",
        "1.5e-3",
        "--1",
        "1-2",
        "1.2.3",
        "+1",
        "-",
        "123456789012345678",
        "1234567890123456789",
        "12345678901234567.8",
        "999999999999999.999",
        "9999999999999999.99",
        "00012",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..20_000 {
        xorshift(&mut x);
        let digits = (x % 22) as usize;
        let mut t: String = if x >> 40 & 1 == 1 {
            "-".into()
        } else {
            String::new()
        };
        for k in 0..digits {
            t.push((b'0' + (x >> (k % 50)) as u8 % 10) as char);
        }
        if digits > 0 && x >> 41 & 1 == 1 {
            let at = (x >> 44) as usize % (t.len() + 1);
            t.insert(at, '.');
        }
        cases.push(t);
    }
    for t in cases {
        for end in [",", "}", " ", "e", "E", "+", "-", "."] {
            let text = format!("{t}{end}");
            let b = text.as_bytes();
            if !matches!(b[0], b'-' | b'0'..=b'9') {
                continue;
            }
            for scale in [0, 3] {
                let two = number_end(b, 0).map(|e| (parse_decimal_scaled(&b[..e], scale), e));
                if let Some((v, e)) = scaled_plain(b, 0, scale) {
                    assert_eq!(Ok((Some(v), e)), two, "{text} scale {scale}");
                }
            }
        }
        // Cut by the slice's end: left to the two passes (Short there).
        let b = t.as_bytes();
        if !b.is_empty() && matches!(b[0], b'-' | b'0'..=b'9') {
            assert_eq!(scaled_plain(b, 0, 3), None, "{t}");
        }
    }
}

/// `unescape` (the slice lexer's) decodes as the streaming reader does.
#[test]
fn unescapes_like_the_streaming_reader() {
    let mut out = Vec::new();
    unescape(br#"\u00e9\ud83d\ude00\n\/"#, &mut out);
    assert_eq!(String::from_utf8(out.clone()).unwrap(), "é😀\n/");
    unescape(br#"\ud83dx"#, &mut out);
    assert_eq!(String::from_utf8(out.clone()).unwrap(), "\u{FFFD}x");
    // A lone high surrogate: U+FFFD, and the escape after it is kept.
    unescape(br#"\uD800\n"#, &mut out);
    assert_eq!(String::from_utf8(out.clone()).unwrap(), "\u{FFFD}\n");
    unescape(br#"\uD800\"x"#, &mut out);
    assert_eq!(String::from_utf8(out.clone()).unwrap(), "\u{FFFD}\"x");
    unescape(br#"\uD800\uD83D\uDE00\u0041"#, &mut out);
    assert_eq!(String::from_utf8(out).unwrap(), "\u{FFFD}😀A");
}

/// `digits_or_point` counts as a byte-by-byte walk does, for every byte at every
/// position of the word.
#[test]
fn digits_or_point_as_bytes() {
    let walk = |w: &[u8; 8]| {
        w.iter()
            .take_while(|c| c.is_ascii_digit() || **c == b'.')
            .count()
    };
    for c in 0..=255u8 {
        for k in 0..8 {
            let mut w = *b"12.45678";
            w[k] = c;
            assert_eq!(digits_or_point(u64::from_le_bytes(w)), walk(&w), "{c} {k}");
            let mut v = [c; 8];
            v[7 - k] = b'5';
            assert_eq!(digits_or_point(u64::from_le_bytes(v)), walk(&v), "{c} {k}");
        }
    }
    // Numbers of every length end where the byte loop ends them.
    let text = b"[1, 22.5, -3e7, 123456789012.345678, 0.000001, 99999999, 1.5E+3]";
    let mut i = 1;
    while i < text.len() - 1 {
        let e = number_end(text, i).unwrap();
        let want = i + text[i..].iter().take_while(|c| is_num(**c)).count();
        assert_eq!(e, want);
        i = e + 2;
    }
}

/// `number::value` agrees with serde_json on every number it takes.
#[test]
fn numbers_as_serde_json() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rand = |n: u64| xorshift(&mut x) % n;
    let mut taken = 0;
    for _ in 0..200_000 {
        let mut t = String::new();
        if rand(2) == 0 {
            t.push('-');
        }
        for _ in 0..1 + rand(21) {
            t.push((b'0' + rand(10) as u8) as char);
        }
        if rand(2) == 0 {
            t.push('.');
            for _ in 0..rand(12) {
                t.push((b'0' + rand(10) as u8) as char);
            }
        }
        if rand(3) == 0 {
            t.push(if rand(2) == 0 { 'e' } else { 'E' });
            match rand(3) {
                0 => t.push('-'),
                1 => t.push('+'),
                _ => {}
            }
            for _ in 0..rand(4) {
                t.push((b'0' + rand(10) as u8) as char);
            }
        }
        let ours = number::value(t.as_bytes());
        let theirs = serde_json::from_str::<serde_json::Value>(&t).ok().map(|v| {
            let n = v.as_number().unwrap().clone();
            if let Some(u) = n.as_u64() {
                i64::try_from(u).map_or(Number::UInt(u), Number::Int)
            } else if let Some(i) = n.as_i64() {
                Number::Int(i)
            } else {
                Number::Float(n.as_f64().unwrap())
            }
        });
        if let Some(v) = ours {
            taken += 1;
            let bits = |v: Option<Number>| match v {
                Some(Number::Float(f)) => format!("f{:x}", f.to_bits()),
                other => format!("{other:?}"),
            };
            assert_eq!(bits(Some(v)), bits(theirs), "{t}");
        }
    }
    assert!(taken > 50_000, "{taken}");
}

/// The word-at-a-time string scan agrees with a byte-at-a-time one, at every
/// length and end of the slice.
#[test]
fn string_span_as_bytewise() {
    fn bytewise(b: &[u8], i: usize) -> Scan<(usize, usize, bool, bool)> {
        let (mut j, mut escaped, mut ascii) = (i + 1, false, true);
        loop {
            let c = byte(b, j)?;
            match c {
                b'"' => return Ok((i + 1, j, escaped, ascii)),
                b'\\' => {
                    escaped = true;
                    j = escape_end(b, j)?;
                }
                c if c < 0x20 => return Err(Fail::Odd),
                c => {
                    ascii &= c < 0x80;
                    j += 1;
                }
            }
        }
    }
    let alphabet: &[u8] = b"ab\"\\u0/n\x01\x1f\x7f\x80\xc3\xa9 ";
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..100_000 {
        xorshift(&mut x);
        let n = (x % 40) as usize;
        let mut t = vec![b'"'];
        let mut y = x;
        // Half the strings: long plain runs with a rare special byte.
        let plain = x.is_multiple_of(2);
        for _ in 0..n {
            y = y
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let c = alphabet[(y >> 33) as usize % alphabet.len()];
            t.push(if plain && !(y >> 20).is_multiple_of(8) {
                b'a'
            } else {
                c
            });
        }
        if plain && x.is_multiple_of(4) {
            t.push(b'"');
        }
        assert_eq!(string_span_ascii(&t, 0), bytewise(&t, 0), "{t:?}");
    }
}

/// The one-pass common case of `parse_decimal_scaled` agrees with its general walk.
#[test]
fn decimal_one_pass_as_general() {
    let alphabet = b"0123456789.-+e ";
    let mut x = 0x1234_5678_9abc_def1u64;
    for _ in 0..200_000 {
        xorshift(&mut x);
        let n = (x % 24) as usize;
        let t: Vec<u8> = (0..n)
            .map(|k| {
                let r = (x >> (k * 2 % 60)) as usize ^ k;
                // Mostly digits, a point sometimes, the rest rarely.
                match r % 16 {
                    0..=11 => b'0' + (r / 16 % 10) as u8,
                    12 | 13 => b'.',
                    _ => alphabet[r / 16 % alphabet.len()],
                }
            })
            .collect();
        for scale in [0, 3, 6] {
            assert_eq!(
                parse_decimal_scaled(&t, scale),
                number::decimal_scaled_general(&t, scale),
                "{:?} {scale}",
                String::from_utf8_lossy(&t)
            );
        }
    }
}

/// The random inputs' generator (xorshift64): the next value of `x`, kept in `x`.
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Doubles of a scalar's text: a number token (`to_f64`, strict about a leading `+`)
/// and a string that may hold one, padded (`text_f64`).
#[test]
fn doubles_of_numbers_and_number_strings() {
    assert_eq!(number::to_f64(b"123"), Some(123.0));
    assert_eq!(number::to_f64(b"-2.5e3"), Some(-2500.0));
    assert_eq!(number::to_f64(b"+1"), None);
    assert_eq!(number::to_f64(b"1-2"), None);
    assert_eq!(number::text_f64(b" 1.5 "), Some(1.5));
    assert_eq!(number::text_f64(b"7"), Some(7.0));
    assert_eq!(number::text_f64(b"+1"), Some(1.0));
    assert!(number::text_f64(b"inf").is_some_and(f64::is_infinite));
    assert_eq!(number::text_f64(b"abc"), None);
    assert!(number::is_strict(b"-0.5e+3"));
    assert!(!number::is_strict(b"1."));
}

/// The 16-byte run search (SSE2 on x86_64) finds what the word-at-a-time one (other
/// targets, and the tail) finds, and both what a byte walk finds: the first quote,
/// backslash or control byte, whether a byte before it is not ASCII, Short past the
/// end. Every special at every position of strings up to 40 bytes, with a high byte
/// before, after or at it.
#[test]
fn plain_runs_as_bytes() {
    use super::strings::{plain_run, plain_run_words};
    let walk = |b: &[u8], j: usize| -> (Option<usize>, bool) {
        let k = b[j..]
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
            .map(|k| j + k);
        let end = k.unwrap_or(b.len());
        (k, b[j..end].iter().any(|&c| c >= 0x80))
    };
    for len in 0..40usize {
        for at in 0..=len {
            for special in [b'"', b'\\', 0u8, 0x1F, b' ', 0x7F, 0x80, 0xFF] {
                for high in [None, Some(0), Some(at.saturating_sub(1)), Some(len)] {
                    let mut b: Vec<u8> = (0..len + 3).map(|k| b'a' + (k % 26) as u8).collect();
                    if let Some(h) = high {
                        b[h] = 0xC3;
                    }
                    b[at] = special;
                    let b = &b[..len];
                    for j in [0, 1.min(len)] {
                        let want = walk(b, j);
                        for f in [plain_run, plain_run_words] {
                            let mut hi = false;
                            let got = f(b, j, &mut hi);
                            match want.0 {
                                Some(k) => assert_eq!((got, hi), (Ok(k), want.1), "{b:?} {j}"),
                                None => assert_eq!(got, Err(Fail::Short), "{b:?} {j}"),
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The word-at-a-time digits: `leading_digits` counts as a byte walk does, and
/// `digits_value` of those digits is their value, for every length.
#[test]
fn digit_words_as_bytes() {
    use super::number::{digits_value, leading_digits};
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..20_000 {
        xorshift(&mut x);
        let mut w = x.to_le_bytes();
        for (k, c) in w.iter_mut().enumerate() {
            // Mostly digits, sometimes a byte next to them in ASCII or a high one.
            *c = match (x >> (k * 3 + 20)) % 10 {
                0 => [b'/', b':', b'.', 0xB0, 0x39 | 0x80][(x >> k) as usize % 5],
                _ => b'0' + (x >> (k * 5)) as u8 % 10,
            };
        }
        let k = w.iter().take_while(|c| c.is_ascii_digit()).count();
        let v = u64::from_le_bytes(w);
        assert_eq!(leading_digits(v) as usize, k, "{w:?}");
        if k > 0 {
            let want = w[..k].iter().fold(0u64, |a, &c| a * 10 + (c - b'0') as u64);
            assert_eq!(digits_value(v, k as u32), want, "{w:?}");
        }
    }
}
