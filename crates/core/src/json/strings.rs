//! JSON strings: where one ends in a slice, and the one decoder of escapes.
//!
//! Both readers decode through here: the streaming [`JsonReader`](super::JsonReader)
//! feeds each escape to [`Escapes`] as it meets it (a string may cross its buffer's
//! end), and the slice lexer's [`unescape`] feeds the escapes of a whole string the
//! same way, so a string decodes alike whichever reader takes it.
//!
//! Surrogates: a high surrogate escape joins the low one right after it into one code
//! point. A lone surrogate (high or low) becomes U+FFFD and whatever follows it is read
//! as it is: `"\uD800\n"` is U+FFFD then a newline, `"\uD800\"x"` is U+FFFD, a quote
//! and `x` (the string goes on), `"\uD800\uD800"` two U+FFFD (serde_json refuses such
//! strings; docs/formats.md states the rule for users).

use super::lexer::{byte, Fail, Scan};

type R<T> = Scan<T>;

/// A string's raw content, `i` at its opening quote: (content start, closing quote,
/// whether it has escapes). Raw control characters are for the streaming reader (it
/// counts them for a warning).
#[inline]
pub fn string_span(b: &[u8], i: usize) -> R<(usize, usize, bool)> {
    string_span_ascii(b, i).map(|(s, q, e, _)| (s, q, e))
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Bit 7 of each byte of `w` (8 bytes, little-endian) that ends a run of plain string
/// content: a quote, a backslash or a control character. Exact up to the first such
/// byte (the usual zero-byte test: a borrow only runs on past a byte that matched), so
/// `trailing_zeros / 8` finds it; bytes after it may be flagged spuriously.
#[inline(always)]
pub(super) fn specials(w: u64) -> u64 {
    let q = w ^ (ONES * b'"' as u64);
    let s = w ^ (ONES * b'\\' as u64);
    let quote = q.wrapping_sub(ONES) & !q;
    let backslash = s.wrapping_sub(ONES) & !s;
    let control = w.wrapping_sub(ONES * 0x20) & !w;
    (quote | backslash | control) & HIGHS
}

/// `string_span`, and whether the raw content is all ASCII (then it, and its unescaped
/// text, is valid UTF-8 without a check). The plain runs between escapes are found by
/// [`plain_run`] (16 bytes at a time on x86_64): names, keys and kernel names alike
/// are a few steps.
// Inline: every key and string value of every event goes through here.
#[inline(always)]
pub fn string_span_ascii(b: &[u8], i: usize) -> R<(usize, usize, bool, bool)> {
    let start = i + 1;
    let mut j = start;
    let mut high = false;
    let mut escaped = false;
    loop {
        j = plain_run(b, j, &mut high)?;
        match b[j] {
            b'"' => return Ok((start, j, escaped, !high)),
            b'\\' => {}
            _ => return Err(Fail::Odd),
        }
        escaped = true;
        j = escape_end(b, j)?;
    }
}

/// The first quote, backslash or control byte at or after `j` (Short: none in the
/// slice); `high` is set when a byte before it is not ASCII. SSE2 (every x86_64 has
/// it): 16 bytes compared at once, one mask of the three kinds and one of the high
/// bits; the last 15 bytes of the slice, and other targets, take [`plain_run_words`].
#[inline(always)]
pub(super) fn plain_run(b: &[u8], j: usize, high: &mut bool) -> R<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut j = j;
        let mut hi = 0i32;
        while j + 16 <= b.len() {
            // SAFETY: SSE2 is part of the x86_64 baseline; the 16 bytes at `j` lie in
            // `b` (checked just above), and the load has no alignment requirement.
            let (special, top) = unsafe {
                let v = _mm_loadu_si128(b.as_ptr().add(j) as *const __m128i);
                let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
                let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
                // Unsigned v <= 0x1F: max(v, 0x1F) is 0x1F.
                let limit = _mm_set1_epi8(0x1F);
                let control = _mm_cmpeq_epi8(_mm_max_epu8(v, limit), limit);
                let any = _mm_or_si128(_mm_or_si128(quote, backslash), control);
                (_mm_movemask_epi8(any), _mm_movemask_epi8(v))
            };
            if special != 0 {
                let k = special.trailing_zeros();
                *high |= (hi | (top & ((1 << k) - 1))) != 0;
                return Ok(j + k as usize);
            }
            hi |= top;
            j += 16;
        }
        *high |= hi != 0;
        plain_run_words(b, j, high)
    }
    #[cfg(not(target_arch = "x86_64"))]
    plain_run_words(b, j, high)
}

/// [`plain_run`] eight bytes at a time (SWAR, [`specials`]), the last bytes one by one:
/// other targets' path, and the x86_64 path's tail.
#[inline(always)]
pub(super) fn plain_run_words(b: &[u8], mut j: usize, high: &mut bool) -> R<usize> {
    let mut hi = 0u64;
    loop {
        if let Some(w) = b.get(j..j + 8) {
            let w = u64::from_le_bytes(w.try_into().unwrap());
            let m = specials(w);
            if m == 0 {
                hi |= w;
                j += 8;
                continue;
            }
            let k = m.trailing_zeros() as usize / 8;
            hi |= w & ((1u64 << (k * 8)) - 1);
            *high |= hi & HIGHS != 0;
            return Ok(j + k);
        }
        let c = byte(b, j).inspect_err(|_| *high |= hi & HIGHS != 0)?;
        if c == b'"' || c == b'\\' || c < 0x20 {
            *high |= hi & HIGHS != 0;
            return Ok(j);
        }
        hi |= c as u64;
        j += 1;
    }
}

/// Past the escape whose backslash is `b[j]`, checked as the streaming reader checks it
/// (decoding is [`unescape`]'s).
#[inline]
pub fn escape_end(b: &[u8], j: usize) -> R<usize> {
    match byte(b, j + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Ok(j + 2),
        b'u' => {
            for d in 0..4 {
                if !byte(b, j + 2 + d)?.is_ascii_hexdigit() {
                    return Err(Fail::Odd);
                }
            }
            Ok(j + 6)
        }
        _ => Err(Fail::Odd),
    }
}

/// The byte a one-letter escape stands for (`\n` -> newline); None for `u` (see
/// [`Escapes::unit`]) and for letters that are no escape.
#[inline]
pub fn simple_escape(e: u8) -> Option<u8> {
    Some(match e {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 8,
        b'f' => 12,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// The value of a hexadecimal digit.
#[inline]
pub fn hex_digit(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

/// Decodes the escapes of one string in order: the code units of `\u` escapes are
/// joined into code points here, everything else passes through [`Escapes::other`]
/// first (it ends a pending high surrogate as U+FFFD).
#[derive(Debug, Default, Clone, Copy)]
pub struct Escapes {
    /// A high surrogate waiting for its low half (0: none).
    high: u32,
}

impl Escapes {
    /// A `\u` escape's code unit `cp`, appended as UTF-8 (a high surrogate waits for
    /// the next unit).
    #[inline]
    pub fn unit(&mut self, out: &mut Vec<u8>, cp: u32) {
        if self.high != 0 {
            let hi = std::mem::take(&mut self.high);
            if (0xDC00..0xE000).contains(&cp) {
                push_char(out, 0x10000 + ((hi - 0xD800) << 10) + (cp - 0xDC00));
                return;
            }
            push_char(out, 0xFFFD);
        }
        if (0xD800..0xDC00).contains(&cp) {
            self.high = cp;
        } else {
            // A lone low surrogate is no scalar value: U+FFFD.
            push_char(out, cp);
        }
    }

    /// Something other than a `\u` escape comes next (a plain byte, another escape, the
    /// string's end): a pending high surrogate was lone.
    #[inline]
    pub fn other(&mut self, out: &mut Vec<u8>) {
        if self.high != 0 {
            self.high = 0;
            push_char(out, 0xFFFD);
        }
    }
}

/// Appends code point `cp` as UTF-8 (U+FFFD where it is not a scalar value).
#[inline]
pub(super) fn push_char(out: &mut Vec<u8>, cp: u32) {
    let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
    out.extend_from_slice(ch.encode_utf8(&mut [0u8; 4]).as_bytes());
}

/// Decodes a string's raw content (between its quotes, checked by [`string_span`])
/// into `out`, replacing what `out` held.
pub fn unescape(raw: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut esc = Escapes::default();
    let mut i = 0;
    while i < raw.len() {
        let run = memchr::memchr(b'\\', &raw[i..]).unwrap_or(raw.len() - i);
        if run > 0 {
            esc.other(out);
            out.extend_from_slice(&raw[i..i + run]);
            i += run;
            continue;
        }
        let e = raw[i + 1];
        i += 2;
        if e == b'u' {
            let cp = raw[i..i + 4]
                .iter()
                .fold(0, |v, &c| v * 16 + hex_digit(c).unwrap_or(0));
            esc.unit(out, cp);
            i += 4;
        } else {
            esc.other(out);
            out.push(simple_escape(e).unwrap_or(e));
        }
    }
    esc.other(out);
}
