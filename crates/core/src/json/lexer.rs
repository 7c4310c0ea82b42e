//! The slice lexer: JSON values walked straight in a byte slice that holds them whole
//! (a block of a file), for the fast paths built on it (the Chrome event scanner).
//!
//! It takes only well-formed, strict JSON. Anything it does not take — a repair the
//! streaming reader makes (a trailing comma, a raw control character), an error, the
//! end of the slice — fails with [`Fail`] and the caller hands the value to the
//! streaming [`JsonReader`](super::JsonReader), which reads, repairs or reports it. The
//! checks here are the streaming reader's, so what one accepts the other reads alike;
//! strings decode through [`super::strings`] and numbers through [`super::number`],
//! which the streaming reader and the other readers use too.

use super::strings::string_span;

/// Why a slice walk stopped: the value ran past the slice (more bytes may complete it),
/// or it is not for the fast path (a repair, an error, a form it does not take).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fail {
    Short,
    Odd,
}

/// A slice walk's result.
pub type Scan<T> = Result<T, Fail>;

type R<T> = Scan<T>;

/// The byte at `i`, or Short past the slice's end.
#[inline]
pub fn byte(b: &[u8], i: usize) -> R<u8> {
    b.get(i).copied().ok_or(Fail::Short)
}

/// JSON whitespace (the streaming reader skips the same four bytes).
#[inline]
pub fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// Past the whitespace at `i`. Every byte above a space is not whitespace, and the
/// common cases (none, or the one space of `", "` and `": "`) are decided by that one
/// compare per byte; anything else takes the loop.
#[inline(always)]
pub fn ws(b: &[u8], i: usize) -> R<usize> {
    let c = byte(b, i)?;
    if c > b' ' {
        return Ok(i);
    }
    if c == b' ' && byte(b, i + 1)? > b' ' {
        return Ok(i + 1);
    }
    ws_loop(b, i)
}

#[inline(never)]
fn ws_loop(b: &[u8], mut i: usize) -> R<usize> {
    while is_ws(byte(b, i)?) {
        i += 1;
    }
    Ok(i)
}

/// What follows an object member's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Another member, its key at this position.
    Member(usize),
    /// The object's closing brace, at this position.
    End(usize),
}

/// Past an object member's value at `j` (whitespace allowed): the next member's key
/// past `,` and whitespace, or the closing `}`; Odd for anything else, a trailing
/// comma included (the streaming reader's repair). The form writers use, `, "`, is
/// decided by three byte compares; anything else takes the general walk.
#[inline(always)]
pub fn after_member(b: &[u8], j: usize) -> R<Next> {
    if let Some(w) = b.get(j..j + 3) {
        if w[0] == b',' && w[1] == b' ' && w[2] > b' ' && w[2] != b'}' {
            return Ok(Next::Member(j + 2));
        }
        if w[0] == b'}' {
            return Ok(Next::End(j));
        }
    }
    let j = ws(b, j)?;
    match b[j] {
        b',' => {
            let j = ws(b, j + 1)?;
            if b[j] == b'}' {
                return Err(Fail::Odd);
            }
            Ok(Next::Member(j))
        }
        b'}' => Ok(Next::End(j)),
        _ => Err(Fail::Odd),
    }
}

/// A byte of a number's run as both readers walk it (signs and exponents anywhere:
/// the number is checked when its text is converted).
#[inline]
pub fn is_num(c: u8) -> bool {
    matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

/// Past an object member's key and colon (`b[j]` is the key's opening quote): where its
/// value starts.
#[inline(always)]
pub fn member_value(b: &[u8], j: usize) -> R<usize> {
    if b[j] != b'"' {
        return Err(Fail::Odd);
    }
    let j = ws(b, string_span(b, j)?.1 + 1)?;
    if b[j] != b':' {
        return Err(Fail::Odd);
    }
    ws(b, j + 1)
}

/// An object member's key without escapes (`b[j]` is its opening quote; an escaped key
/// is the streaming reader's): the key's span and where its value starts.
#[inline(always)]
pub fn plain_key(b: &[u8], j: usize) -> R<(usize, usize, usize)> {
    if b[j] != b'"' {
        return Err(Fail::Odd);
    }
    let (ks, kq, escaped) = string_span(b, j)?;
    if escaped {
        return Err(Fail::Odd);
    }
    let j = ws(b, kq + 1)?;
    if b[j] != b':' {
        return Err(Fail::Odd);
    }
    Ok((ks, kq, ws(b, j + 1)?))
}

/// The end of the string, number or literal starting at `b[j]`.
#[inline(always)]
pub fn scalar_end(b: &[u8], j: usize) -> R<usize> {
    match b[j] {
        b'"' => Ok(string_span(b, j)?.1 + 1),
        b'-' | b'0'..=b'9' => number_end(b, j),
        b't' | b'f' | b'n' => literal_end(b, j),
        _ => Err(Fail::Odd),
    }
}

/// A skipped number: the run of number bytes (at least one), as the streaming reader
/// walks it. It must end inside the slice (a number cut by the slice end is Short).
/// Inline: called for every number of every event, skipped ones included.
#[inline(always)]
pub fn number_end(b: &[u8], i: usize) -> R<usize> {
    let mut j = i;
    // Timestamps and ids are long runs of digits and a point: eight bytes at a time
    // while every byte is one of those; the byte loop below takes the rest (signs,
    // exponents, the end), so it ends where it alone would.
    while let Some(w) = b.get(j..j + 8) {
        let n = digits_or_point(u64::from_le_bytes(w.try_into().unwrap()));
        j += n;
        if n < 8 {
            break;
        }
    }
    while is_num(byte(b, j)?) {
        j += 1;
    }
    if j == i {
        return Err(Fail::Odd);
    }
    Ok(j)
}

/// The high bit of each of the word's bytes that is an ASCII digit: per-byte tests on
/// the low seven bits, without carries between bytes.
#[inline(always)]
pub(super) fn digit_bytes(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let low7 = w & !HIGH;
    // High bit per byte: the byte's low 7 bits are > 0x39, are >= 0x30.
    let above_9 = low7 + ONES * (0x7F - 0x39);
    let from_0 = low7 + ONES * (0x80 - 0x30);
    from_0 & !above_9 & !w & HIGH
}

/// How many of the word's bytes, from the first (little-endian), are ASCII digits or
/// `.` before the first that is not: per-byte tests without carries between bytes.
#[inline]
pub(super) fn digits_or_point(w: u64) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let digit = digit_bytes(w);
    // A byte equal to '.': its xor with '.' is zero (exact test, no borrow).
    let x = w ^ (ONES * b'.' as u64);
    let nonzero = ((x & !HIGH) + !HIGH) | x;
    let point = !nonzero & HIGH;
    let other = !(digit | point) & HIGH;
    (other.trailing_zeros() / 8) as usize
}

/// The end of `true`, `false` or `null` at `b[i]` (its first byte chose which).
#[inline]
pub fn literal_end(b: &[u8], i: usize) -> R<usize> {
    let word: &[u8] = match b[i] {
        b't' => b"true",
        b'f' => b"false",
        _ => b"null",
    };
    for (k, &w) in word.iter().enumerate() {
        if byte(b, i + k)? != w {
            return Err(Fail::Odd);
        }
    }
    Ok(i + word.len())
}

/// Skips one value of any kind at `i` (no whitespace before it); returns its end.
/// Nesting is tracked in a bit stack (64 levels; deeper goes to the streaming reader).
#[inline]
pub fn skip_value(b: &[u8], i: usize) -> R<usize> {
    match byte(b, i)? {
        b'"' => return string_span(b, i).map(|(_, q, _)| q + 1),
        b'-' | b'0'..=b'9' => return number_end(b, i),
        b't' | b'f' | b'n' => return literal_end(b, i),
        b'{' | b'[' => {}
        _ => return Err(Fail::Odd),
    }
    // Bit set: an object at that depth (it expects keys).
    let mut objects: u64 = 0;
    let mut depth = 0u32;
    let mut j = i;
    // `j` is at a value (a member's value past its key) inside the open containers.
    loop {
        match b[j] {
            open @ (b'{' | b'[') => {
                if depth == 64 {
                    return Err(Fail::Odd);
                }
                let obj = open == b'{';
                objects = (objects & !(1 << depth)) | ((obj as u64) << depth);
                depth += 1;
                j = ws(b, j + 1)?;
                if b[j] != if obj { b'}' } else { b']' } {
                    // Its first member or element.
                    if obj {
                        j = member_value(b, j)?;
                    }
                    continue;
                }
                // Empty: it closes at once.
                j += 1;
                depth -= 1;
            }
            _ => j = scalar_end(b, j)?,
        }
        // A value ended: closes (possibly several levels), then a separator and the
        // next value.
        loop {
            if depth == 0 {
                return Ok(j);
            }
            j = ws(b, j)?;
            let obj = objects >> (depth - 1) & 1 == 1;
            let close = if obj { b'}' } else { b']' };
            match b[j] {
                b',' => {
                    j = ws(b, j + 1)?;
                    // A trailing comma is a repair: the streaming reader's.
                    if b[j] == close {
                        return Err(Fail::Odd);
                    }
                    if obj {
                        j = member_value(b, j)?;
                    }
                    break;
                }
                c if c == close => {
                    j += 1;
                    depth -= 1;
                }
                _ => return Err(Fail::Odd),
            }
        }
    }
}

/// The compact JSON text of an array of plain integers (`[128, 4, 1]` -> `[128,4,1]`,
/// as serde_json prints it), into `out`; false for anything else.
#[inline]
pub fn int_array(t: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    out.push(b'[');
    let mut i = 1;
    let skip_ws = |i: &mut usize| {
        while t.get(*i).is_some_and(|&c| is_ws(c)) {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    if t.get(i) == Some(&b']') {
        out.push(b']');
        return i + 1 == t.len();
    }
    loop {
        let s = i;
        if t.get(i) == Some(&b'-') {
            i += 1;
        }
        let k = t[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        // No leading zero, no -0 (a float to serde_json), at most 18 digits (an i64).
        if k == 0 || k > 18 || (t[i] == b'0' && (k > 1 || i > s)) {
            return false;
        }
        i += k;
        out.extend_from_slice(&t[s..i]);
        skip_ws(&mut i);
        match t.get(i) {
            Some(b',') => {
                out.push(b',');
                i += 1;
                skip_ws(&mut i);
            }
            Some(b']') => {
                out.push(b']');
                return i + 1 == t.len();
            }
            _ => return false,
        }
    }
}
