//! The fast path of the Chrome reader: trace events parsed straight from a byte slice
//! (a block of the file), fields borrowed where they lie, strings interned into a
//! part-local table, numbers converted once.
//!
//! It is built on the slice lexer of [`crate::json::lexer`] (JSON walked in a slice,
//! strings and numbers decoded by the one decoder the streaming reader uses too); what
//! is here is the trace's own: the event's keys found by word compares, the id keys of
//! `args`, the interning caches, the typed args list.
//!
//! It only takes the common, well-formed case. Anything else — an escape it cannot
//! decode, a raw control character, invalid UTF-8, an object where a scalar belongs, a
//! trailing comma, a non-object element, the end of the array, the end of the slice —
//! stops it *before* that element, and the caller hands the element to the streaming
//! reader (`chrome::Parser::read_event`), which repairs, warns or fails exactly as
//! before. So the fast path never raises an error or a warning of its own, and its
//! results are those of the streaming reader by construction.
//!
//! Parts of one block are scanned on several threads (`chrome_blocks`); everything
//! here is per part, and the order-dependent work (B/E matching, flows, the
//! `--steps` filter, the global string table) happens afterwards, in file order.

#[cfg(test)]
use super::keys::id_key;
use super::keys::{ArgKeys, IdKey, Values, NO_KEY};
use crate::json::lexer::{
    after_member, byte, int_array, literal_end, number_end, plain_key, skip_value, ws, Fail, Next,
    Scan,
};
use crate::json::number::{self, parse_decimal_scaled, scaled_plain, Number};
use crate::json::strings::{string_span_ascii, unescape};
use crate::model::args::{ArgStore, ArgValue, ListCopy};
use crate::model::events::EventKind;
use crate::model::intern::Interner;

/// One event object, its strings as ids into its part's [`Part::strings`].
///
/// Its numbers are held as plain values with a bit each saying whether they are set
/// (96 bytes, where eight `Option<i64>` made it 168): every event is written here on
/// the scanning thread and read again in file order, often on the other core, so its
/// size is memory traffic on every event.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ev {
    pub ph: u8,
    pub has_args: bool,
    /// Bit `k`: `nums[k]` is set (`Num`); bit `ARGS_SET`: `args` is.
    set: u16,
    pub name: u32,
    pub cat: u32,
    pub pid: u32,
    pub tid: u32,
    nums: [i64; 8],
    /// The raw text of `args` in [`Part::args`] (start, end) when a later step needs it
    /// (GPU rows, metadata, counters); see [`Ev::args`].
    args: (u32, u32),
    /// The typed args of a slice that may need them (GPU and sync rows), parsed here
    /// into [`Part::arg_lists`] so the parse runs on the part's thread; `u32::MAX`: none.
    pub arg_list: u32,
}

/// The numbers of an [`Ev`], as indices of its `nums`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Num {
    Ts,
    Dur,
    Id,
    Correlation,
    ExternalId,
    RecordFunctionId,
    Device,
    Stream,
}

const ARGS_SET: u16 = 1 << 8;

impl Ev {
    /// An event with no member read yet (`empty`: the id of "").
    pub fn new(empty: u32) -> Ev {
        Ev {
            ph: 0,
            has_args: false,
            set: 0,
            name: empty,
            cat: empty,
            pid: empty,
            tid: empty,
            nums: [0; 8],
            args: (0, 0),
            arg_list: u32::MAX,
        }
    }

    #[inline]
    pub fn get(&self, n: Num) -> Option<i64> {
        let k = n as usize;
        (self.set >> k & 1 == 1).then_some(self.nums[k])
    }

    #[inline]
    pub fn put(&mut self, n: Num, v: Option<i64>) {
        let k = n as usize;
        match v {
            Some(v) => {
                self.nums[k] = v;
                self.set |= 1 << k;
            }
            None => self.set &= !(1 << k),
        }
    }

    #[inline]
    pub fn ts(&self) -> Option<i64> {
        self.get(Num::Ts)
    }

    #[inline]
    pub fn dur(&self) -> Option<i64> {
        self.get(Num::Dur)
    }

    /// The kept `args` text's range in [`Part::args`], when one was kept.
    #[inline]
    pub fn args(&self) -> Option<(u32, u32)> {
        (self.set & ARGS_SET != 0).then_some(self.args)
    }

    fn set_args(&mut self, range: (u32, u32)) {
        self.args = range;
        self.set |= ARGS_SET;
    }
}

/// What one part of the event array gives: its events in file order and the strings
/// they name. The interner and the id maps persist from block to block, so a name is
/// hashed into the global table once per part slot, not once per block.
#[derive(Default)]
pub(super) struct Part {
    pub strings: Interner,
    pub events: Vec<Ev>,
    pub args: Vec<u8>,
    /// Typed args of this block's events (see [`Ev::arg_list`]).
    pub arg_lists: ArgStore,
    /// Local id -> whether an event of that category may need its args text.
    keep_args: Vec<u8>,
    /// Local id -> global id of the string (`u32::MAX`: not yet interned there).
    pub global: Vec<u32>,
    /// Local category id -> what it means (filled when first used, in file order).
    pub(super) categories: Vec<Option<super::Category>>,
    /// Unescaped text of the string being read, when it had escapes.
    scratch: Vec<u8>,
    /// A direct-mapped cache in front of `strings` (see [`Slot`]). Names repeat on
    /// almost every event; a hit costs a few loads and compares instead of hashing the
    /// whole name, looking it up and checking its UTF-8 again.
    cache: Vec<Slot>,
    /// The same in front of `arg_lists`' strings (args keys repeat on every GPU row);
    /// emptied with `arg_lists`, once per block.
    arg_cache: Vec<Slot>,
    /// What of `arg_lists` is mapped into the event table's store (see
    /// `ArgStore::copy_list_with`); emptied with `arg_lists`.
    copied: ListCopy,
    /// The compact text of a nested args value being built.
    nested: Vec<u8>,
    /// What is read of the `args` of slices (`SliceArgs`).
    slice_args: SliceArgs,
    /// The args keys seen, each with the key that followed it (`ArgKeys`).
    keys: ArgKeys,
    /// Args values seen, by event name and key (`Values`).
    values: Values,
    /// Process and thread ids seen, by category, phase and field (`Values`, their
    /// local string ids as the typed value): a few dozen pairs.
    fields: Values<64>,
}

/// What a part reads of the `args` of slices, by the load it serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum SliceArgs {
    /// A whole load: typed on the part's thread.
    #[default]
    Typed,
    /// Walked, not read: the first pass of a part's load keeps nothing of them
    /// (`select::Stream::Scan`), and a kernel's dozen args were much of the scan's work.
    Skipped,
    /// The text kept for the slices that may need typed args, typed only for the rows
    /// the load keeps (`Part::copy_args`): the second pass of a part's load
    /// (`select::Stream::Keep`) drops most GPU rows, whose lists were built for nothing.
    Deferred,
}

impl SliceArgs {
    /// What the load with this filter needs.
    pub fn of(filter: Option<&crate::readers::select::Stream>) -> SliceArgs {
        use crate::readers::select::Stream;
        match filter {
            None => SliceArgs::Typed,
            Some(Stream::Scan { .. }) => SliceArgs::Skipped,
            Some(Stream::Keep { .. }) => SliceArgs::Deferred,
        }
    }
}

const CACHE_SLOTS: usize = 1 << 12;
const ARG_CACHE_SLOTS: usize = 1 << 8;

/// A cache entry: a string's length, its first and last words (see [`Ends`]) and its
/// id. Up to 16 bytes the words are the whole string, so a hit on the categories, ids
/// and most names is confirmed in the entry itself, without following the id to the
/// interned text (two dependent loads that missed the caches on every event).
#[derive(Debug, Clone, Copy)]
struct Slot {
    head: u64,
    tail: u64,
    /// `u32::MAX`: empty (no string is that long here).
    len: u32,
    id: u32,
}

const EMPTY_SLOT: Slot = Slot {
    head: 0,
    tail: 0,
    len: u32::MAX,
    id: u32::MAX,
};

/// A string's length and its first and last words, overlapping: bytes 0..8 and n-8..n
/// (4-byte words for 4 to 7 bytes, the bytes themselves below 4). With the length they
/// determine a string of up to 16 bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ends {
    pub head: u64,
    pub tail: u64,
    pub len: usize,
}

impl Ends {
    #[inline(always)]
    pub fn of(b: &[u8]) -> Ends {
        let n = b.len();
        // Whole-word loads only (a copy of a partial word is a call to memcpy).
        let w8 = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        let w4 = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as u64;
        let (head, tail) = if n >= 8 {
            (w8(0), w8(n - 8))
        } else if n >= 4 {
            (w4(0), w4(n - 4))
        } else if n > 0 {
            (
                b[0] as u64 | (b[n / 2] as u64) << 8 | (b[n - 1] as u64) << 16,
                0,
            )
        } else {
            (0, 0)
        };
        Ends { head, tail, len: n }
    }

    /// The cache slot (of `slots`, a power of two) for the string `b` these are the ends
    /// of: the top bits of one multiply (they depend on every bit of what is
    /// multiplied, where the middle bits taken before ignored the length), and for
    /// longer strings every word between the ends folded in first. Kernel names share
    /// long prefixes and suffixes and often differ in a byte or two of their middle
    /// (`{lambda()#1}` .. `#5`, `128x64` / `256x128`): sampling one middle word sent
    /// k40's kernels to the same few slots, and 17,800 of its names missed.
    #[inline(always)]
    pub fn slot(&self, b: &[u8], slots: usize) -> usize {
        let k = 0x9E37_79B9_7F4A_7C15u64;
        let mut h = self.head ^ self.tail.rotate_left(29) ^ (self.len as u64) << 56;
        if self.len > 16 {
            h ^= middle_words(b);
        }
        let bits = slots.trailing_zeros();
        if bits == 0 {
            return 0;
        }
        (h.wrapping_mul(k) >> (64 - bits)) as usize
    }
}

/// The words of `b` (longer than 16 bytes) between its first and last, folded by
/// rotating and xoring (one cycle each, no multiply chain): bytes past the last whole
/// word are in the last word (`Ends::tail`).
#[inline]
fn middle_words(b: &[u8]) -> u64 {
    let n = b.len();
    let w8 = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let mut acc = 0u64;
    let mut i = 8;
    while i + 16 <= n {
        acc = (acc ^ w8(i)).rotate_left(23);
        i += 8;
    }
    acc
}

/// Looks `text` (with its `ends`) up in a direct-mapped cache: the id on a hit (longer
/// strings confirmed by comparing with `resolve`'s text), else the slot to fill.
#[inline(always)]
fn cache_find<'s>(
    cache: &[Slot],
    text: &[u8],
    ends: Ends,
    resolve: impl FnOnce(u32) -> &'s str,
) -> Result<u32, usize> {
    let slot = ends.slot(text, cache.len());
    let e = cache[slot];
    // The empty marker's length is u32::MAX: a text that long (never cached) must not
    // match it.
    if e.len as usize == ends.len
        && ends.len < u32::MAX as usize
        && e.head == ends.head
        && e.tail == ends.tail
        && (ends.len <= 16 || same_bytes(resolve(e.id).as_bytes(), text))
    {
        return Ok(e.id);
    }
    Err(slot)
}

/// The cache entry for a string with `ends` interned as `id`.
#[inline]
fn slot_of(ends: Ends, id: u32) -> Slot {
    if ends.len >= u32::MAX as usize {
        return EMPTY_SLOT;
    }
    Slot {
        head: ends.head,
        tail: ends.tail,
        len: ends.len as u32,
        id,
    }
}

/// `a == b`, inline for the short names, categories, ids and args keys a cache hit
/// confirms on nearly every event (a call to `memcmp` each cost more than the compare):
/// strings up to 16 bytes are compared as two overlapping words.
#[inline(always)]
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
    let w4 = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap());
    match n {
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
}

/// Where and why a scan stopped, at a separator position (just after an element, or
/// where the scan started).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stop {
    pub pos: usize,
    pub why: Why,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Why {
    /// Reached the limit it was given (at an element boundary).
    Limit,
    /// The next element does not end inside the slice.
    Short,
    /// The next element (or what follows the last one) is for the streaming reader.
    Odd,
}

type R<T> = Scan<T>;

/// The members of an event object the fast path reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Name,
    Cat,
    Pid,
    Tid,
    Ph,
    /// `s` and `bp`: read as scalars, unused.
    Unused,
    Ts,
    Dur,
    Id,
    Args,
    Other,
}

fn key_of(k: &[u8]) -> Key {
    match k {
        b"name" => Key::Name,
        b"cat" => Key::Cat,
        b"pid" => Key::Pid,
        b"tid" => Key::Tid,
        b"ph" => Key::Ph,
        b"s" | b"bp" => Key::Unused,
        b"ts" => Key::Ts,
        b"dur" => Key::Dur,
        b"id" => Key::Id,
        b"args" => Key::Args,
        _ => Key::Other,
    }
}

/// A key's bytes and its closing quote as one little-endian word, and the mask of
/// that many bytes.
const fn key_word(k: &[u8]) -> (u64, u64) {
    let mut w = 0u64;
    let mut i = 0;
    while i < k.len() {
        w |= (k[i] as u64) << (8 * i);
        i += 1;
    }
    w |= (b'"' as u64) << (8 * k.len());
    (w, (1u64 << (8 * (k.len() + 1))) - 1)
}

/// An event member's key (`b[j]` its opening quote) and where its value starts. The
/// keys grove reads are at most four letters: one word compare against the key and its
/// closing quote finds them without scanning for the quote; anything else (other
/// keys, escapes, the slice's end near) takes `plain_key`.
#[inline(always)]
fn event_key(b: &[u8], j: usize) -> R<(Key, usize)> {
    if b[j] == b'"' {
        if let Some(w) = b.get(j + 1..j + 9) {
            let w = u64::from_le_bytes(w.try_into().unwrap());
            let is = |k: &[u8]| {
                let (word, mask) = key_word(k);
                w & mask == word
            };
            let found = match w as u8 {
                b'n' if is(b"name") => Some((Key::Name, 4)),
                b'c' if is(b"cat") => Some((Key::Cat, 3)),
                b'p' if is(b"ph") => Some((Key::Ph, 2)),
                b'p' if is(b"pid") => Some((Key::Pid, 3)),
                b't' if is(b"tid") => Some((Key::Tid, 3)),
                b't' if is(b"ts") => Some((Key::Ts, 2)),
                b'd' if is(b"dur") => Some((Key::Dur, 3)),
                b'a' if is(b"args") => Some((Key::Args, 4)),
                b'i' if is(b"id") => Some((Key::Id, 2)),
                b'b' if is(b"bp") => Some((Key::Unused, 2)),
                b's' if is(b"s") => Some((Key::Unused, 1)),
                _ => None,
            };
            if let Some((key, n)) = found {
                // `": ` after the key (the usual form) is in the word already.
                if (w >> (8 * (n + 1))) & 0xFFFF == u16::from_le_bytes(*b": ") as u64 {
                    return Ok((key, ws(b, j + n + 4)?));
                }
                let k = ws(b, j + n + 2)?;
                if b[k] != b':' {
                    return Err(Fail::Odd);
                }
                return Ok((key, ws(b, k + 1)?));
            }
        }
    }
    let (ks, kq, v) = plain_key(b, j)?;
    Ok((key_of(&b[ks..kq]), v))
}

/// A scalar field's text as the streaming reader's `read_scalar` gives it: a string's
/// unescaped content, a number's text, nothing for true/false/null. Objects and arrays
/// (a repair) are Odd. Returns the text and the end of the value.
enum Text {
    /// A range of the slice.
    Raw(usize, usize),
    /// In the part's scratch buffer.
    Scratch,
}

impl Part {
    /// A part reading the `args` of slices as `slice_args` says.
    pub fn new(slice_args: SliceArgs) -> Part {
        Part {
            slice_args,
            ..Part::default()
        }
    }

    // Inline: called for most members of every event, and a call's saving and
    // restoring of registers cost as much as the work of a short value.
    #[inline(always)]
    fn scalar(&mut self, b: &[u8], i: usize) -> R<(Text, usize)> {
        match byte(b, i)? {
            b'"' => {
                let (s, q, escaped, ascii) = string_span_ascii(b, i)?;
                let raw = &b[s..q];
                let text = if escaped {
                    let mut out = std::mem::take(&mut self.scratch);
                    unescape(raw, &mut out);
                    self.scratch = out;
                    Text::Scratch
                } else {
                    Text::Raw(s, q)
                };
                // Invalid UTF-8 in a value read is counted for a warning: not ours.
                if !ascii && std::str::from_utf8(self.text(b, &text)).is_err() {
                    return Err(Fail::Odd);
                }
                Ok((text, q + 1))
            }
            b'-' | b'0'..=b'9' => {
                let e = number_end(b, i)?;
                Ok((Text::Raw(i, e), e))
            }
            b't' | b'f' | b'n' => Ok((Text::Raw(i, i), literal_end(b, i)?)),
            _ => Err(Fail::Odd),
        }
    }

    /// `parse_decimal_scaled` of the scalar at `b[i]` (its text as `scalar` gives it) and the
    /// value's end; a plain number (timestamps, durations, ids) read straight from the
    /// slice.
    #[inline(always)]
    fn scaled(&mut self, b: &[u8], i: usize, scale: u32) -> R<(Option<i64>, usize)> {
        if matches!(byte(b, i)?, b'-' | b'0'..=b'9') {
            if let Some((v, e)) = scaled_plain(b, i, scale) {
                return Ok((Some(v), e));
            }
            let e = number_end(b, i)?;
            return Ok((parse_decimal_scaled(&b[i..e], scale), e));
        }
        let (t, e) = self.scalar(b, i)?;
        Ok((parse_decimal_scaled(self.text(b, &t), scale), e))
    }

    #[inline]
    fn text<'a>(&'a self, b: &'a [u8], t: &Text) -> &'a [u8] {
        match *t {
            Text::Raw(s, e) => &b[s..e],
            Text::Scratch => &self.scratch,
        }
    }

    fn intern(&mut self, b: &[u8], t: &Text) -> u32 {
        match *t {
            Text::Raw(s, e) => self.intern_cached(&b[s..e]),
            Text::Scratch => {
                let s = std::mem::take(&mut self.scratch);
                let id = self.intern_cached(&s);
                self.scratch = s;
                id
            }
        }
    }

    #[inline]
    fn intern_cached(&mut self, text: &[u8]) -> u32 {
        if self.cache.is_empty() {
            self.cache = vec![EMPTY_SLOT; CACHE_SLOTS];
        }
        let ends = Ends::of(text);
        match cache_find(&self.cache, text, ends, |id| self.strings.resolve(id)) {
            Ok(id) => id,
            Err(slot) => self.intern_missed(text, ends, slot),
        }
    }

    /// `intern_cached` past a cache miss: out of line, so the hit path stays small.
    #[inline(never)]
    fn intern_missed(&mut self, text: &[u8], ends: Ends, slot: usize) -> u32 {
        let id = self.strings.intern_bytes(text);
        self.cache[slot] = slot_of(ends, id);
        id
    }

    /// Interns a key or string value of a typed args list; None when it is not valid
    /// UTF-8 (`push_json` replaces that; the caller falls back to it).
    #[inline]
    fn intern_arg(&mut self, text: &[u8]) -> Option<u32> {
        self.intern_arg_ends(text, Ends::of(text))
    }

    /// `intern_arg` with the text's ends already known.
    #[inline]
    fn intern_arg_ends(&mut self, text: &[u8], ends: Ends) -> Option<u32> {
        if self.arg_cache.is_empty() {
            self.arg_cache = vec![EMPTY_SLOT; ARG_CACHE_SLOTS];
        }
        match cache_find(&self.arg_cache, text, ends, |id| self.arg_lists.resolve(id)) {
            Ok(id) => Some(id),
            Err(slot) => self.intern_arg_missed(text, ends, slot),
        }
    }

    /// `intern_arg` past a cache miss, out of line.
    #[inline(never)]
    fn intern_arg_missed(&mut self, text: &[u8], ends: Ends, slot: usize) -> Option<u32> {
        let id = self.arg_lists.intern(std::str::from_utf8(text).ok()?);
        self.arg_cache[slot] = slot_of(ends, id);
        Some(id)
    }

    /// The value at `b[j..e]` (a member value the walk has checked and skipped) as
    /// `ArgStore::push_json` types it; None where unsure.
    fn arg_value(&mut self, b: &[u8], j: usize, e: usize) -> Option<ArgValue> {
        let t = &b[j..e];
        Some(match t[0] {
            b'"' => {
                let raw = &t[1..t.len() - 1];
                let id = if memchr::memchr(b'\\', raw).is_none() {
                    self.intern_arg(raw)?
                } else {
                    // serde_json's surrogate rules differ from the streaming reader's:
                    // \u escapes go to serde_json itself.
                    if memchr::memmem::find(raw, b"\\u").is_some() {
                        return None;
                    }
                    let mut out = std::mem::take(&mut self.scratch);
                    unescape(raw, &mut out);
                    let id = self.intern_arg(&out);
                    self.scratch = out;
                    id?
                };
                ArgValue::Str(id)
            }
            b't' => ArgValue::Bool(true),
            b'f' => ArgValue::Bool(false),
            b'n' => ArgValue::Null,
            b'[' | b'{' => {
                let mut out = std::mem::take(&mut self.nested);
                if !(t[0] == b'[' && int_array(t, &mut out)) {
                    // Nested objects, floats, strings: the decoder's value, written as serde_json writes it.
                    let v: serde_json::Value = crate::json::from_slice(t).ok()?;
                    out.clear();
                    out.extend_from_slice(v.to_string().as_bytes());
                }
                let id = self.intern_arg(&out);
                self.nested = out;
                ArgValue::Json(id?)
            }
            _ => match number::value(t)? {
                Number::Int(v) => ArgValue::Int(v),
                Number::UInt(v) => ArgValue::UInt(v),
                Number::Float(v) => ArgValue::Float(v),
            },
        })
    }

    /// Whether events of category `cat` (a local id) may need their args text later:
    /// GPU rows and sync rows keep typed args; unknown or empty categories may be
    /// placed on a GPU lane (rocprof). Cached per category.
    fn keeps_args(&mut self, cat: u32) -> bool {
        let i = cat as usize;
        if i >= self.keep_args.len() {
            self.keep_args.resize(i + 1, 2);
        }
        if self.keep_args[i] == 2 {
            let text = self.strings.resolve(cat);
            let keep = text.is_empty()
                || EventKind::from_category(text)
                    .is_none_or(|k| k.on_gpu_lane() || k == EventKind::Sync);
            self.keep_args[i] = keep as u8;
        }
        self.keep_args[i] == 1
    }

    /// Parses the event object at `i` (its `{`) and appends it; returns its end.
    fn event(&mut self, b: &[u8], i: usize, empty: u32) -> R<usize> {
        let mut ev = Ev::new(empty);
        let mut args_span: Option<(usize, usize)> = None;
        // A repeated `cat` or `args` is the streaming reader's: it decides whether to keep
        // args with the category seen so far and joins the args texts, which this walk
        // does not reproduce.
        let mut seen_cat = false;
        // Whether `arg_lists` holds the typed list of the last `args` object, unfinished.
        let mut typed_list = false;
        let mut j = ws(b, i + 1)?;
        if b[j] == b'}' {
            self.events.push(ev);
            return Ok(j + 1);
        }
        loop {
            let key;
            (key, j) = event_key(b, j)?;
            match key {
                Key::Cat if seen_cat => return Err(Fail::Odd),
                Key::Args if args_span.is_some() => return Err(Fail::Odd),
                // A process or thread id is nearly always the last one of its
                // (category, phase): compared in place (`Values`) instead of being
                // scanned and interned again. Names and categories vary too much.
                Key::Pid | Key::Tid => {
                    let field = (key == Key::Tid) as u32 | (ev.ph as u32) << 8;
                    let (id, e) = match self.fields.find(ev.cat, field, 0, b, j) {
                        Some((e, Some(ArgValue::Int(id)))) => (id as u32, e),
                        _ => {
                            let (t, e) = self.scalar(b, j)?;
                            let id = self.intern(b, &t);
                            let typed = Some((ArgValue::Int(id as i64), 0));
                            self.fields.put(ev.cat, field, b, (j, e), typed);
                            (id, e)
                        }
                    };
                    if key == Key::Pid {
                        ev.pid = id;
                    } else {
                        ev.tid = id;
                    }
                    j = e;
                }
                Key::Name | Key::Cat => {
                    seen_cat |= key == Key::Cat;
                    let (t, e) = self.scalar(b, j)?;
                    let id = self.intern(b, &t);
                    match key {
                        Key::Name => ev.name = id,
                        _ => ev.cat = id,
                    }
                    j = e;
                }
                Key::Ph => {
                    let (t, e) = self.scalar(b, j)?;
                    ev.ph = self.text(b, &t).first().copied().unwrap_or(0);
                    j = e;
                }
                // Unused, but read as scalars (and so checked) by the streaming reader.
                Key::Unused => j = self.scalar(b, j)?.1,
                Key::Ts | Key::Dur => {
                    let v;
                    (v, j) = self.scaled(b, j, 3)?;
                    ev.put(if key == Key::Ts { Num::Ts } else { Num::Dur }, v);
                }
                Key::Id => {
                    let v;
                    (v, j) = self.scaled(b, j, 0)?;
                    ev.put(Num::Id, v);
                }
                // Only once `ph` says a slice (Kineto writes it first): metadata and
                // counters keep their args.
                Key::Args
                    if self.slice_args == SliceArgs::Skipped
                        && matches!(ev.ph, b'X' | b'B' | b'E' | b'i' | b'I') =>
                {
                    ev.has_args = true;
                    j = skip_value(b, j)?;
                }
                Key::Args if b[j] == b'{' => {
                    ev.has_args = true;
                    // Typed in the same walk when what is known so far says the list
                    // will be kept (checked again at the end: `ph` or `cat` may follow).
                    let typed = self.slice_args == SliceArgs::Typed
                        && !matches!(ev.ph, b'M' | b'C')
                        && self.keeps_args(ev.cat);
                    self.arg_lists.discard();
                    let e;
                    (e, typed_list) = self.args(b, j, &mut ev, typed)?;
                    args_span = Some((j, e));
                    j = e;
                }
                _ => j = skip_value(b, j)?,
            }
            match after_member(b, j)? {
                Next::Member(k) => j = k,
                Next::End(k) => {
                    j = k;
                    break;
                }
            }
        }
        if ev.ph == b'P' {
            // Sampled-profile events are the streaming reader's (`chrome::samples`).
            return Err(Fail::Odd);
        }
        if let Some((s, e)) = args_span {
            if typed_list && !matches!(ev.ph, b'M' | b'C') && self.keeps_args(ev.cat) {
                ev.arg_list = self.arg_lists.finish();
            } else {
                self.arg_lists.discard();
                self.keep_args_of(&mut ev, &b[s..e]);
            }
        }
        self.events.push(ev);
        Ok(j + 1)
    }

    /// The `args` object at `i`: the ids grove keeps typed on every event, and with
    /// `typed` the whole list pushed into `arg_lists` (unfinished) as `push_json` would
    /// push it. Returns its end and whether that list is complete (false: something
    /// was unsure, and `push_json` must read the text).
    fn args(&mut self, b: &[u8], i: usize, ev: &mut Ev, mut typed: bool) -> R<(usize, bool)> {
        let mut j = ws(b, i + 1)?;
        if b[j] == b'}' {
            return Ok((j + 1, typed));
        }
        // The key before (see `ArgKeys`): it predicts the next.
        let mut prev = NO_KEY;
        let mut predicted = self.keys.first(ev.cat);
        loop {
            let at = self.keys.read(b, j, predicted, ev.cat)?;
            self.keys.link(prev, ev.cat, at.entry);
            (prev, predicted) = (at.entry, self.keys.next(at.entry));
            j = ws(b, at.value)?;
            let v = j;
            let mut known = None;
            let slot = match at.id {
                IdKey::Correlation => Some(Num::Correlation),
                IdKey::External => Some(Num::ExternalId),
                IdKey::RecordFunction => Some(Num::RecordFunctionId),
                IdKey::Device => Some(Num::Device),
                IdKey::Stream => Some(Num::Stream),
                IdKey::Other => None,
            };
            match slot {
                Some(slot) => {
                    let c = byte(b, j)?;
                    let v;
                    if matches!(c, b'-' | b'0'..=b'9') {
                        (v, j) = self.scaled(b, j, 0)?;
                    } else {
                        let (t, e) = self.scalar(b, j)?;
                        // true/false/null leave the slot unset, as the streaming reader
                        // does.
                        v = if c == b'"' {
                            parse_decimal_scaled(self.text(b, &t), 0)
                        } else {
                            None
                        };
                        j = e;
                    }
                    ev.put(slot, v);
                }
                None => {
                    // Numbers are kept only when typed: those walked past (sequence
                    // numbers, indices) change with every event.
                    let number = matches!(b[j], b'-' | b'0'..=b'9');
                    let seen = if typed || !number {
                        let gen = self.keys.gen();
                        self.values.find(ev.name, at.entry, gen, b, j)
                    } else {
                        None
                    };
                    match seen {
                        Some((end, value)) if !typed || value.is_some() => {
                            (j, known) = (end, value);
                        }
                        _ => {
                            // A number (most args values) skipped here: a call to
                            // `skip_value` per member cost more than the number's walk.
                            let end = if number {
                                number_end(b, j)?
                            } else {
                                skip_value(b, j)?
                            };
                            if !typed && !number {
                                self.values.put(ev.name, at.entry, b, (j, end), None);
                            }
                            j = end;
                        }
                    }
                }
            }
            if typed {
                let key = match self.keys.arg(at.entry) {
                    Some(key) => key,
                    None => {
                        let text = &b[at.start..at.end];
                        let key = self.intern_arg_ends(text, Ends::of(text));
                        self.keys.set_arg(at.entry, key);
                        key
                    }
                };
                let value = match known {
                    Some(value) => Some(value),
                    None => {
                        let value = self.arg_value(b, v, j);
                        if let (Some(value), None) = (value, slot) {
                            let gen = self.keys.gen();
                            self.values
                                .put(ev.name, at.entry, b, (v, j), Some((value, gen)));
                        }
                        value
                    }
                };
                match (key, value) {
                    (Some(k), Some(val)) => self.arg_lists.push_id(k, val),
                    _ => typed = false,
                }
            }
            match after_member(b, j)? {
                Next::Member(k) => j = k,
                Next::End(k) => return Ok((k + 1, typed)),
            }
        }
    }

    /// Scans the elements after separator position `start` (just after an element),
    /// each `, {...}`, until a separator position at or past `limit`, or the first
    /// element the fast path does not take.
    pub fn scan(&mut self, b: &[u8], start: usize, limit: usize) -> Stop {
        let empty = self.strings.intern("");
        let mut pos = start;
        loop {
            if pos >= limit {
                return Stop {
                    pos,
                    why: Why::Limit,
                };
            }
            let (n_events, n_args) = (self.events.len(), self.args.len());
            let r = (|| {
                let j = ws(b, pos)?;
                if b[j] != b',' {
                    return Err(Fail::Odd);
                }
                let j = ws(b, j + 1)?;
                if b[j] != b'{' {
                    return Err(Fail::Odd);
                }
                self.event(b, j, empty)
            })();
            match r {
                Ok(end) => pos = end,
                Err(f) => {
                    self.events.truncate(n_events);
                    self.args.truncate(n_args);
                    self.arg_lists.discard();
                    let why = if f == Fail::Short {
                        Why::Short
                    } else {
                        Why::Odd
                    };
                    return Stop { pos, why };
                }
            }
        }
    }

    /// The kept `args` text of an event (empty when none was kept).
    pub fn args_of(&self, ev: &Ev) -> &[u8] {
        match ev.args() {
            Some((s, e)) => &self.args[s as usize..e as usize],
            None => &[],
        }
    }

    /// Keeps what later steps need of an event's `args` text: the text of metadata
    /// and counters (read as JSON values), the typed list of slices that may be GPU
    /// or sync rows.
    pub fn keep_args_of(&mut self, ev: &mut Ev, text: &[u8]) {
        let deferred = self.slice_args == SliceArgs::Deferred;
        if matches!(ev.ph, b'M' | b'C') || (deferred && self.keeps_args(ev.cat)) {
            let start = self.args.len() as u32;
            self.args.extend_from_slice(text);
            ev.set_args((start, self.args.len() as u32));
        } else if self.keeps_args(ev.cat) {
            ev.arg_list = self.arg_lists.push_json(text);
        }
    }

    /// Copies an event's typed args into the table's store: the same list (sorted,
    /// last duplicate kept) that parsing its text there would give.
    pub fn copy_args(&mut self, ev: &Ev, store: &mut ArgStore) -> u32 {
        if ev.arg_list == u32::MAX {
            // The text kept in place of a list (`SliceArgs::Deferred`), typed now; empty
            // when neither was kept.
            return store.push_json(self.args_of(ev));
        }
        // `copied` is valid for one block: this part's events all go to one table.
        self.arg_lists
            .copy_list_with(ev.arg_list, store, &mut self.copied)
    }

    /// Clears the events of the last block (the strings and id maps stay).
    pub fn clear_block(&mut self) {
        self.events.clear();
        self.args.clear();
        self.arg_lists = ArgStore::default();
        self.arg_cache.fill(EMPTY_SLOT);
        self.keys.new_block();
        self.copied.clear();
    }

    /// The global id of local string `id`, interning it into `global` on first use.
    #[inline]
    pub fn global_id(&mut self, id: u32, global: &mut Interner) -> u32 {
        let i = id as usize;
        if i >= self.global.len() {
            self.global.resize(self.strings.len().max(i + 1), u32::MAX);
        }
        let g = self.global[i];
        if g != u32::MAX {
            return g;
        }
        let g = global.intern(self.strings.resolve(id));
        self.global[i] = g;
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> (Part, Stop) {
        let mut p = Part::default();
        let s = p.scan(text.as_bytes(), 0, usize::MAX);
        (p, s)
    }

    #[test]
    fn reads_the_common_case_and_stops_before_the_rest() {
        let t = r#", {"ph":"X","name":"a\"b","pid":1,"tid":"7","ts":1.5,"dur":"2","args":{"correlation":9,"x":[1,{"y":null}],"stream":null}} ,{"ph":"C","#;
        let (p, s) = scan(t);
        assert_eq!(s.why, Why::Short);
        assert_eq!(&t[s.pos..s.pos + 3], " ,{");
        let e = p.events[0];
        assert_eq!(p.strings.resolve(e.name), "a\"b");
        assert_eq!(
            (e.ts(), e.dur(), e.get(Num::Correlation), e.get(Num::Stream)),
            (Some(1500), Some(2000), Some(9), None)
        );
        assert!(e.has_args);
    }

    #[test]
    fn a_first_pass_walks_past_the_args_of_slices() {
        let t = r#", {"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"args":{"correlation":9,"grid":[1,2,3]}}, {"ph":"M","name":"process_name","pid":1,"args":{"name":"python"}}, {"cat":"kernel","args":{"stream":7},"ph":"X","name":"k","ts":3,"dur":1}"#;
        let mut p = Part::new(SliceArgs::Skipped);
        let s = p.scan(t.as_bytes(), 0, usize::MAX);
        assert_eq!((s.why, p.events.len()), (Why::Short, 3));
        let (k, m, late) = (p.events[0], p.events[1], p.events[2]);
        // The slice's times are read, its args walked past (no ids, no typed list).
        assert_eq!(
            (k.ts(), k.dur(), k.get(Num::Correlation)),
            (Some(1000), Some(2000), None)
        );
        assert!(k.has_args && k.arg_list == u32::MAX);
        // Metadata keeps its args text; args before `ph` are read as ever.
        assert_eq!(p.args_of(&m), br#"{"name":"python"}"#);
        assert_eq!(late.get(Num::Stream), Some(7));
    }

    #[test]
    fn leaves_repairs_to_the_streaming_reader() {
        for odd in [
            ", {\"name\":\"a\u{1}\"}, {}",
            ", {\"name\":[1]}, {}",
            ", {\"args\":{\"a\":[1,]}}, {}",
            ", {\"a\":1,}, {}",
            ", 3, {}",
            "]",
            ", {\"name\":\"\\q\"}",
            ", {\"cat\":\"a\",\"cat\":\"b\"}, {}",
            ", {\"args\":{\"x\":1},\"args\":{}}, {}",
        ] {
            let (p, s) = scan(odd);
            assert_eq!((s.pos, s.why, p.events.len()), (0, Why::Odd, 0), "{odd}");
        }
    }

    /// Up to 16 bytes a string's ends determine it (a cache hit needs no other
    /// compare); the id keys are found by them and near misses are not.
    #[test]
    fn ends_determine_short_strings_and_find_id_keys() {
        let base: Vec<u8> = (b'a'..=b'z').collect();
        for n in 0..=16 {
            let s = &base[..n];
            let e = Ends::of(s);
            for k in 0..n {
                let mut t = s.to_vec();
                t[k] = b'A';
                let f = Ends::of(&t);
                assert_ne!((e.len, e.head, e.tail), (f.len, f.head, f.tail), "{n} {k}");
            }
        }
        let key = |k: &str| id_key(k.as_bytes(), Ends::of(k.as_bytes()));
        assert_eq!(key("correlation"), IdKey::Correlation);
        assert_eq!(key("External id"), IdKey::External);
        assert_eq!(key("external id"), IdKey::External);
        assert_eq!(key("Record function id"), IdKey::RecordFunction);
        assert_eq!(key("device"), IdKey::Device);
        assert_eq!(key("stream"), IdKey::Stream);
        for other in [
            "Record fuNction id",
            "correlatioN",
            "External iD",
            "devicE",
            "streams",
            "strea",
            "",
            "cbid",
        ] {
            assert_eq!(key(other), IdKey::Other, "{other}");
        }
    }

    /// Long names that share their ends and length and differ in one byte of their
    /// middle (generated kernels) take different cache slots: with one slot each the
    /// names of one trace all stay cached.
    #[test]
    fn names_alike_but_a_byte_take_their_own_slots() {
        let mut names: Vec<String> = (1..=9)
            .map(|k| {
                format!(
                    "void at::native::vectorized_elementwise_kernel<4, at::native::launch_clamp_scalar()::{{lambda()#1}}::operator()() const::{{lambda()#{k}}}::operator()() const::{{lambda(float)#1}}, at::detail::Array<char*, 2> >(int, float, at::detail::Array<char*, 2>)"
                )
            })
            .collect();
        for tile in ["256x128", "128x64_", "64x64__", "128x256", "64x128_"] {
            names.push(format!(
                "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_{tile}_16x5_tn_align4>(cutlass_80_tensorop_s1688gemm_{tile}_16x5_tn_align4::Params)"
            ));
        }
        for k in 0..40 {
            names.push(format!("nn.Module: Block_{k}"));
        }
        let slots: std::collections::HashSet<usize> = names
            .iter()
            .map(|n| Ends::of(n.as_bytes()).slot(n.as_bytes(), CACHE_SLOTS))
            .collect();
        // 54 names in 4,096 slots: a collision or two may happen, not a pile-up.
        assert!(slots.len() >= names.len() - 2, "{} slots", slots.len());
    }

    /// A typed args list as comparable text: keys, values (strings and nested text
    /// resolved, floats by their bits).
    fn list_text(store: &ArgStore, id: u32) -> Vec<(String, String)> {
        store
            .list(id)
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    ArgValue::Str(s) => format!("str {:?}", store.resolve(s)),
                    ArgValue::Json(s) => format!("json {}", store.resolve(s)),
                    ArgValue::Float(f) => format!("float {:x}", f.to_bits()),
                    other => format!("{other:?}"),
                };
                (k.to_string(), v)
            })
            .collect()
    }

    /// The list the walk builds is the one `push_json` gives, on odd cases too (or
    /// the walk falls back to it).
    #[test]
    fn typed_args_as_push_json() {
        let cases: &[&[u8]] = &[
            br#"{"z": 1, "a": "x\"y", "m": [1, 2.50, 3], "f": 1.0, "e": 1e3, "n": null,
                "b": true, "o": {"q": 2, "p": 1}, "a": "last", "big": 18446744073709551615,
                "neg": -4}"#,
            br#"{"External id": 5, "queued": 0, "device": 0, "context": 1, "stream": 7,
                "correlation": 1001, "registers per thread": 232, "shared memory": 73728,
                "blocks per SM": 0.96, "warps per SM": 3.88, "grid": [128, 4, 1],
                "block": [128, 1, 1], "est. achieved occupancy %": 6}"#,
            br#"{}"#,
            br#"{ "a" : [ ] , "b":[ -1 , 0,7 ], "c": [-0], "d": [1.5], "e": [[1]], "f": ["a"]}"#,
            br#"{"a": -0, "b": -0.0, "c": 0.1, "d": 1E+2, "e": 1e-2, "f": -1.5e-7, "g": 0e5}"#,
            br#"{"a": 123456789012345678901, "b": 1}"#,
            br#"{"a": -9223372036854775808, "b": -9223372036854775809, "c": 9223372036854775808}"#,
            br#"{"a": 9223372036854775807, "b": 18446744073709551615, "c": 18446744073709551616}"#,
            br#"{"a": 1.7976931348623157e308, "b": 5e-324, "c": 1e400, "d": 2.2250738585072014e-308}"#,
            br#"{"a": 9007199254740993, "b": 9007199254740993.0, "c": 0.30000000000000004}"#,
            br#"{"a": 01}"#,
            br#"{"a": 1.}"#,
            br#"{"a": 1-2}"#,
            br#"{"a": "\u00e9", "b": "\ud83d\ude00", "c": "\ud800", "d": "\\u"}"#,
            br#"{"a": "\n\t\/\b\f\r\\", "b": "\u0041"}"#,
            "{\"\u{e9}t\u{e9}\": \"\u{1f600}\", \"a\": \"\u{e9}\"}".as_bytes(),
            b"{\"a\": \"\xff\", \"b\": 1}",
            b"{\"\xff\": 2, \"b\": 1}",
            br#"{"a": 1, "a": 2, "b": 3, "a": 4}"#,
            br#"{"a": "\n\t\/\b\f\r\\ x\"y", "m": [1, 2.50, 3], "f": 1.0, "e": 1e3, "n": null,
                "b": true, "o": {"q": 2, "p": 1}, "a": "last", "neg": -4, "x": 9007199254740992.0}"#,
            br#"{"b": {"z": [1, {"y": null}], "a": 1.50}, "a": true, "c": false}"#,
            br#"{"stream": "7", "device": null, "correlation": 1e3, "External id": -3}"#,
        ];
        for &text in cases {
            let mut want = ArgStore::default();
            let w = want.push_json(text);
            let mut ev = b", {\"ph\":\"X\",\"cat\":\"kernel\",\"args\":".to_vec();
            ev.extend_from_slice(text);
            ev.extend_from_slice(b"}");
            let mut p = Part::default();
            let stop = p.scan(&ev, 0, usize::MAX);
            if p.events.is_empty() {
                // Left to the streaming reader (which calls push_json).
                assert_eq!(stop.why, Why::Odd, "{}", String::from_utf8_lossy(text));
                continue;
            }
            let got = p.events[0].arg_list;
            assert_eq!(
                list_text(&p.arg_lists, got),
                list_text(&want, w),
                "{}",
                String::from_utf8_lossy(text)
            );
            // Copied into another store, the list stays the same.
            let mut dest = ArgStore::default();
            let ev0 = p.events[0];
            let c = p.copy_args(&ev0, &mut dest);
            assert_eq!(list_text(&dest, c), list_text(&want, w));
            // Deferred (a part's second pass): the text is kept and typed on copy.
            let mut p = Part::new(SliceArgs::Deferred);
            p.scan(&ev, 0, usize::MAX);
            let ev0 = p.events[0];
            assert_eq!(ev0.arg_list, u32::MAX);
            let mut dest = ArgStore::default();
            let c = p.copy_args(&ev0, &mut dest);
            assert_eq!(list_text(&dest, c), list_text(&want, w));
        }
    }

    /// Keys predicted from the key before (per category) and values repeated from the
    /// key's last one give the lists and ids that reading each event alone gives:
    /// optional keys, keys shared by categories, whitespace around colons, values that
    /// start like the last one but go on (`0` then `01`, `0.5`, `0e1`), strings with
    /// escapes, and a block boundary between events (the store's ids are renewed).
    #[test]
    fn predicted_keys_and_repeated_values_as_alone() {
        let args = [
            r#"{"External id": 5, "queued": 0, "device": 0, "stream": 7, "grid": [128, 4, 1], "correlation": 9}"#,
            r#"{"External id": 6, "queued": 0, "device": 0, "stream": 7, "grid": [128, 4, 1], "correlation": 10}"#,
            r#"{"External id": 7, "queued": 01, "device": 1, "stream": 7, "grid": [128, 4, 2], "correlation": 11}"#,
            r#"{"External id": 8, "queued": 0.5, "grid": [128, 4, 2], "correlation": 12}"#,
            r#"{"External id": 8, "queued": 0e1, "grid" : [128, 4, 2] , "correlation":12}"#,
            r#"{"External id": 9, "extra": "a\"b", "queued": 0, "grid": [128,4,2]}"#,
            r#"{"External id": 9, "extra": "a\"b", "queued": 0 , "grid": [128,4,2]}"#,
            r#"{"queued": 0, "External id": 9, "extra": "a\"b", "grid": [128,4,2]}"#,
            r#"{"queued": true, "External id": "9", "extra": "ab", "grid": [128,4,2]}"#,
            r#"{"queued": truex, "External id": 9}"#,
            r#"{"queued": 0}"#,
            r#"{}"#,
        ];
        // Typed lists (GPU rows) and walked args (operators).
        let cats = ["kernel", "cpu_op", "gpu_memcpy"];
        let mut text = String::new();
        let mut alone = Vec::new();
        for round in 0..3 {
            for (k, a) in args.iter().enumerate() {
                let cat = cats[(k + round) % cats.len()];
                let ev = format!(
                    r#", {{"ph":"X","cat":"{cat}","name":"k{}","ts":1,"dur":2,"args":{a}}}"#,
                    k % 2
                );
                text.push_str(&ev);
                alone.push(ev);
            }
        }
        // What an event gives: its numbers and its typed list (copied into `dest`, the
        // one table a part's block goes to).
        let read = |p: &mut Part, ev: &Ev, dest: &mut ArgStore| {
            let nums: Vec<Option<i64>> = [
                Num::Ts,
                Num::Dur,
                Num::Id,
                Num::Correlation,
                Num::ExternalId,
                Num::RecordFunctionId,
                Num::Device,
                Num::Stream,
            ]
            .into_iter()
            .map(|n| ev.get(n))
            .collect();
            let list = p.copy_args(ev, dest);
            (nums, ev.has_args, list_text(dest, list))
        };
        let b = text.as_bytes();
        let mut p = Part::default();
        let mut pos = 0;
        let mut n = 0;
        while pos < b.len() {
            let stop = p.scan(b, pos, usize::MAX);
            let mut dest = ArgStore::default();
            for ev in p.events.clone() {
                let mut q = Part::default();
                q.scan(alone[n].as_bytes(), 0, usize::MAX);
                let first = q.events[0];
                let want = read(&mut q, &first, &mut ArgStore::default());
                assert_eq!(read(&mut p, &ev, &mut dest), want, "{}", alone[n]);
                n += 1;
            }
            // An odd event (`truex`) is the streaming reader's: skip it here.
            pos = stop.pos;
            if stop.why == Why::Odd {
                assert!(alone[n].contains("truex"), "{}", alone[n]);
                pos += alone[n].len();
                n += 1;
            }
            p.clear_block();
        }
        assert_eq!(n, alone.len());
    }

    /// `same_bytes` is `==` for every length and every differing position.
    #[test]
    fn same_bytes_as_eq() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i % 26).collect();
            assert!(same_bytes(&a, &a.clone()));
            for k in 0..n {
                let mut b = a.clone();
                b[k] ^= 1;
                assert!(!same_bytes(&a, &b), "{n} {k}");
            }
            let mut longer = a.clone();
            longer.push(b'z');
            assert!(!same_bytes(&a, &longer));
        }
    }
}
