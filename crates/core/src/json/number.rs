//! JSON numbers: their text converted once, exactly.
//!
//! Timestamps and ids become integers scaled by a power of ten without going through
//! a double ([`parse_decimal_scaled`], its one-pass form [`scaled_plain`] for the slice
//! lexer); a number's typed value is serde_json's ([`value`]); a double for readers that
//! keep doubles ([`to_f64`], and [`text_f64`] where strings hold numbers too); and the
//! strict grammar ([`is_strict`]).

use super::lexer::is_num;

/// A number's value the way serde_json types it: an integer that fits `i64`, else one
/// that fits `u64`, else a double (so is `-0` and every number with a point or an
/// exponent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    UInt(u64),
    Float(f64),
}

/// Parses decimal text (`123`, `-4.5`, `1.25e3`) as a value scaled by 10^scale, rounded
/// half away from zero, exactly — without going through f64. Returns None for text that
/// is not a complete number (Perfetto drops such events: `"100a"`).
///
/// The common case (`1006.900`: digits, at most one point, no more fraction digits than
/// the scale, at most 18 digits in all once scaled) in one pass; anything else goes to
/// the general walk.
#[inline]
pub fn parse_decimal_scaled(t: &[u8], scale: u32) -> Option<i64> {
    let (neg, d) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        _ => (false, t),
    };
    let mut acc: u64 = 0;
    let mut n = 0u32;
    let mut point = None;
    for (k, &c) in d.iter().enumerate() {
        match c {
            b'0'..=b'9' if n < 18 => {
                acc = acc * 10 + (c - b'0') as u64;
                n += 1;
            }
            b'.' if point.is_none() => point = Some(k),
            _ => return decimal_scaled_general(t, scale),
        }
    }
    let frac = point.map_or(0, |p| (d.len() - p - 1) as u32);
    if n == 0 || frac > scale || n + scale - frac > 18 {
        return decimal_scaled_general(t, scale);
    }
    let v = (acc * 10u64.pow(scale - frac)) as i64;
    Some(if neg { -v } else { v })
}

/// `parse_decimal_scaled` of any text: signs, exponents, padding, rounding.
pub(super) fn decimal_scaled_general(text: &[u8], scale: u32) -> Option<i64> {
    let text = trim_ascii(text);
    let (neg, rest) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mant, exp) = match rest.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => {
            let e = std::str::from_utf8(&rest[i + 1..])
                .ok()?
                .parse::<i32>()
                .ok()?;
            (&rest[..i], e)
        }
        None => (rest, 0),
    };
    let (int_part, frac_part) = match mant.iter().position(|&b| b == b'.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, &mant[..0]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    // Called several times per event: the digits are walked in place, never collected.
    if !int_part.iter().chain(frac_part).all(u8::is_ascii_digit) {
        return None;
    }
    let n_digits = int_part.len() + frac_part.len();
    let digit = |k: usize| -> u8 {
        if k < int_part.len() {
            int_part[k] - b'0'
        } else {
            frac_part[k - int_part.len()] - b'0'
        }
    };
    // value = digits * 10^(exp - frac_len); we want value * 10^scale
    let shift = exp as i64 + scale as i64 - frac_part.len() as i64;
    let mut acc: i128 = 0;
    let keep = if shift >= 0 {
        n_digits
    } else {
        (n_digits as i64 + shift).max(0) as usize
    };
    for k in 0..keep {
        acc = acc.checked_mul(10)?.checked_add(digit(k) as i128)?;
        if acc > i64::MAX as i128 * 10 {
            return None;
        }
    }
    if shift > 0 {
        for _ in 0..shift {
            acc = acc.checked_mul(10)?;
            if acc > i64::MAX as i128 {
                return None;
            }
        }
    } else if keep < n_digits && digit(keep) >= 5 {
        acc += 1;
    }
    let v = if neg { -acc } else { acc };
    i64::try_from(v).ok()
}

fn trim_ascii(mut t: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = t {
        if first.is_ascii_whitespace() {
            t = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = t {
        if last.is_ascii_whitespace() {
            t = rest;
        } else {
            break;
        }
    }
    t
}

/// `parse_decimal_scaled` of the number at `b[i]` with its end (`number_end`'s) in one pass,
/// for the form timestamps, durations and ids take: an optional minus, up to 18 digits
/// with at most one point among them, no more fraction digits than `scale`, then a byte
/// that cannot continue a number. None for anything else (an exponent, a sign inside,
/// more digits, the slice's end), which the two passes (`number_end`, then
/// `parse_decimal_scaled`) take, giving exactly what they gave before.
#[inline(always)]
pub fn scaled_plain(b: &[u8], i: usize, scale: u32) -> Option<(i64, usize)> {
    let neg = b[i] == b'-';
    let mut j = i + neg as usize;
    let mut acc = 0u64;
    let mut n = 0u32;
    digit_run(b, &mut j, &mut acc, &mut n)?;
    let mut frac = 0u32;
    if b.get(j) == Some(&b'.') {
        j += 1;
        let before = n;
        digit_run(b, &mut j, &mut acc, &mut n)?;
        frac = n - before;
    }
    let end = *b.get(j)?;
    if is_num(end) || n == 0 || frac > scale || n + scale - frac > 18 {
        return None;
    }
    let v = (acc * 10u64.pow(scale - frac)) as i64;
    Some((if neg { -v } else { v }, j))
}

/// The run of ASCII digits at `b[*j]` appended to `acc` (`n` digits so far), eight
/// at a time: each word's leading digits counted and converted at once. None when the
/// number would pass 18 digits or a word would pass the slice's end (the caller's
/// two-pass path takes those).
#[inline(always)]
fn digit_run(b: &[u8], j: &mut usize, acc: &mut u64, n: &mut u32) -> Option<()> {
    loop {
        let w = u64::from_le_bytes(b.get(*j..*j + 8)?.try_into().unwrap());
        let k = leading_digits(w);
        if k > 0 {
            if *n + k > 18 {
                return None;
            }
            *acc = *acc * POW10_INT[k as usize] + digits_value(w, k);
            *n += k;
            *j += k as usize;
        }
        if k < 8 {
            return Some(());
        }
    }
}

/// 10^0..10^8 as integers.
const POW10_INT: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// How many of the word's bytes, from the first (little-endian), are ASCII digits.
#[inline(always)]
pub(super) fn leading_digits(w: u64) -> u32 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    (!super::lexer::digit_bytes(w) & HIGH).trailing_zeros() / 8
}

/// The value of the word's first `k` bytes (1 to 8, all ASCII digits, the first the
/// most significant): the digits moved to the word's top with zeros before them, then
/// pairs, quads and octets joined by three multiplies.
#[inline(always)]
pub(super) fn digits_value(w: u64, k: u32) -> u64 {
    let d = w.wrapping_sub(0x3030_3030_3030_3030) << (8 * (8 - k));
    let d = (d.wrapping_mul(10) + (d >> 8)) & 0x00FF_00FF_00FF_00FF;
    let d = (d.wrapping_mul(100) + (d >> 16)) & 0x0000_FFFF_0000_FFFF;
    (d.wrapping_mul(10_000) + (d >> 32)) & 0xFFFF_FFFF
}

/// 10^0..10^22: the powers of ten a double holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A JSON number's value as serde_json gives it, for the text of a number the slice
/// lexer walked (`number_end`); None where it is unsure (not strict JSON, too many
/// digits, an exponent beyond what one exact operation gives), and the caller falls
/// back to serde_json itself.
#[inline]
pub fn value(t: &[u8]) -> Option<Number> {
    let (neg, d) = match t.first()? {
        b'-' => (true, &t[1..]),
        _ => (false, t),
    };
    let digits = |from: usize| d[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = match d.first()? {
        b'0' => 1,
        b'1'..=b'9' => digits(0),
        _ => return None,
    };
    let mut exp: i32 = 0;
    let mut float = false;
    let int_end = i;
    let mut frac = 0;
    if d.get(i) == Some(&b'.') {
        frac = digits(i + 1);
        if frac == 0 {
            return None;
        }
        exp -= frac as i32;
        i += 1 + frac;
        float = true;
    }
    // 19 digits always fit a u64: serde_json's overflow paths are never taken.
    if int_end + frac > 19 {
        return None;
    }
    let frac_digits: &[u8] = if float {
        &d[int_end + 1..int_end + 1 + frac]
    } else {
        &[]
    };
    // Two plain loops: a chained iterator's fold did not unroll and cost about as much
    // as the rest of the number.
    let mut sig = 0u64;
    for &c in &d[..int_end] {
        sig = sig * 10 + (c - b'0') as u64;
    }
    for &c in frac_digits {
        sig = sig * 10 + (c - b'0') as u64;
    }
    if matches!(d.get(i), Some(b'e' | b'E')) {
        i += 1;
        let minus = match d.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let k = digits(i);
        if k == 0 || k > 3 {
            return None;
        }
        let e = d[i..i + k]
            .iter()
            .fold(0i32, |v, &c| v * 10 + (c - b'0') as i32);
        exp += if minus { -e } else { e };
        i += k;
        float = true;
    }
    if i != d.len() {
        return None;
    }
    if !float {
        if !neg {
            return Some(match i64::try_from(sig) {
                Ok(v) => Number::Int(v),
                Err(_) => Number::UInt(sig),
            });
        }
        // serde_json: a negative integer that does not fit, or -0, is a float.
        let v = (sig as i64).wrapping_neg();
        return Some(if v >= 0 {
            Number::Float(-(sig as f64))
        } else {
            Number::Int(v)
        });
    }
    // An exact significand and one exact power: a single correctly rounded operation,
    // which both of serde_json's float parsers (fast and round-trip) then agree with.
    if sig > 1 << 53 || exp.unsigned_abs() as usize >= POW10.len() {
        return None;
    }
    let p = POW10[exp.unsigned_abs() as usize];
    let f = if exp >= 0 {
        sig as f64 * p
    } else {
        sig as f64 / p
    };
    Some(Number::Float(if neg { -f } else { f }))
}

/// A number's text as a double (what a reader keeping doubles stores): plain integers
/// of up to 15 digits directly, anything else through Rust's parser, refusing the `+`
/// it accepts and JSON does not.
#[inline]
pub fn to_f64(b: &[u8]) -> Option<f64> {
    if !b.is_empty() && b.len() <= 15 && b.iter().all(u8::is_ascii_digit) {
        let v = b.iter().fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
        return Some(v as f64);
    }
    let s = std::str::from_utf8(b).ok()?;
    // JSON numbers only (Rust also reads "inf" and "+1"; the bytes here are digits,
    // signs, dots and exponents, so only a leading '+' needs refusing).
    if s.starts_with('+') {
        return None;
    }
    s.parse().ok()
}

/// A scalar's text as a double, a number's or a string's that holds one (`"12.5"`,
/// `" 7 "`): padding trimmed, then Rust's parser (it also reads `inf`, `NaN`, `+1`,
/// which metric strings hold), then [`parse_decimal_scaled`]. For readers whose
/// metrics may be written either way (Hatchet, pyinstrument, Caliper).
pub fn text_f64(text: &[u8]) -> Option<f64> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .or_else(|| parse_decimal_scaled(text, 0).map(|v| v as f64))
}

/// JSON's number grammar: `-? digits (. digits)? ([eE] [+-]? digits)?`.
pub fn is_strict(b: &[u8]) -> bool {
    let digits = |mut i: usize| {
        let from = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    let mut i = usize::from(b.first() == Some(&b'-'));
    let Some(mut at) = digits(i) else {
        return false;
    };
    if b.get(at) == Some(&b'.') {
        let Some(a) = digits(at + 1) else {
            return false;
        };
        at = a;
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        i = at + 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let Some(a) = digits(i) else {
            return false;
        };
        at = a;
    }
    at == b.len()
}
