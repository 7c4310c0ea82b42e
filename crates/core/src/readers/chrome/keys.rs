//! The `args` keys of a part, each read once.
//!
//! Every event of a kind writes the same keys in the same order (a kernel's dozen, an
//! operator's handful), so the walk of an `args` object predicts each key from the one
//! before it in the same category (or, for the first, from the category alone) and
//! checks the prediction by comparing the bytes `"key":` in place, a few word compares.
//! Entries are per category and key: `External id` comes first in operators, runtime
//! calls and kernels alike, and is followed by a different key in each (one successor
//! per key missed 12% of the keys of a Kineto trace, one per category and key 0.4%). A key checked so
//! needs no span search, no hashing and no classification: its entry holds what it is
//! (an id key or not) and its id in the part's typed args store. A failed prediction
//! finds the key through a direct-mapped cache of the entries (or adds it) and learns
//! the new successor, so optional keys cost one miss where they appear.
//!
//! A key matched by its bytes is the key the slow path would read: the entry's text is
//! the content of a plain string (no quote, backslash or control byte, as `plain_key`
//! took it), so its closing quote is where the stored one is.

use super::scan::{same_bytes, Ends};
use crate::json::lexer::{plain_key, Scan};
use crate::model::args::ArgValue;

/// No entry (a key not stored, or no prediction).
pub(super) const NO_KEY: u32 = u32::MAX;

/// At most this many entries per part: traces that put data in their keys (a key per
/// event) stop adding past it and read such keys the slow way.
const MAX_KEYS: usize = 1 << 12;
const KEY_SLOTS: usize = 1 << 10;

/// One args key seen in the part, in the args of one category.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The local id of the category it was seen in.
    cat: u32,
    /// Its text `"key":` in [`ArgKeys::text`]: start and length.
    at: u32,
    len: u32,
    id: IdKey,
    /// Its id in the part's typed args store, valid for block `gen` (`NO_KEY`: not UTF-8).
    arg: u32,
    gen: u32,
    /// The key that followed it last.
    next: u32,
}

/// The args keys of a part and the successor of each (see the module's comment).
pub(super) struct ArgKeys {
    entries: Vec<Entry>,
    text: Vec<u8>,
    /// Slot (by the key's [`Ends`] and the category) -> entry.
    slots: Vec<u32>,
    /// Local category id -> the first key of that category's args last time.
    first: Vec<u32>,
    /// The block the typed args store's ids are valid for.
    gen: u32,
}

impl Default for ArgKeys {
    fn default() -> ArgKeys {
        ArgKeys {
            entries: Vec::new(),
            text: Vec::new(),
            slots: vec![NO_KEY; KEY_SLOTS],
            first: Vec::new(),
            gen: 0,
        }
    }
}

/// A key read: its entry (`NO_KEY`: none), what it is, its span and where its value
/// starts (past the colon; whitespace after it may be left for the caller to skip).
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyAt {
    pub entry: u32,
    pub id: IdKey,
    pub start: usize,
    pub end: usize,
    pub value: usize,
}

impl ArgKeys {
    /// The predicted first key of an args object of category `cat`.
    #[inline(always)]
    pub fn first(&self, cat: u32) -> u32 {
        self.first.get(cat as usize).copied().unwrap_or(NO_KEY)
    }

    /// The predicted key after `entry`.
    #[inline(always)]
    pub fn next(&self, entry: u32) -> u32 {
        self.entries.get(entry as usize).map_or(NO_KEY, |e| e.next)
    }

    /// The key whose opening quote is `b[j]`: `predicted`'s when its bytes are there,
    /// else found or added.
    #[inline(always)]
    pub fn read(&mut self, b: &[u8], j: usize, predicted: u32, cat: u32) -> Scan<KeyAt> {
        if let Some(e) = self.entries.get(predicted as usize) {
            let (at, n) = (e.at as usize, e.len as usize);
            if let Some(t) = b.get(j..j + n) {
                if same_words(t, &self.text[at..at + n]) {
                    return Ok(KeyAt {
                        entry: predicted,
                        id: e.id,
                        start: j + 1,
                        end: j + n - 2,
                        value: j + n,
                    });
                }
            }
        }
        self.find(b, j, cat)
    }

    /// `read` past a failed prediction, out of line.
    #[inline(never)]
    fn find(&mut self, b: &[u8], j: usize, cat: u32) -> Scan<KeyAt> {
        let (start, end, value) = plain_key(b, j)?;
        let key = &b[start..end];
        let ends = Ends::of(key);
        let slot = (ends.slot(key, KEY_SLOTS) + cat as usize * 613) & (KEY_SLOTS - 1);
        let found = self.slots[slot];
        let mut at = KeyAt {
            entry: found,
            id: IdKey::Other,
            start,
            end,
            value,
        };
        if let Some(e) = self.entries.get(found as usize) {
            let (s, n) = (e.at as usize + 1, e.len as usize - 3);
            if e.cat == cat && same_bytes(&self.text[s..s + n], key) {
                at.id = e.id;
                return Ok(at);
            }
        }
        at.id = id_key(key, ends);
        if self.entries.len() >= MAX_KEYS {
            at.entry = NO_KEY;
            return Ok(at);
        }
        at.entry = self.entries.len() as u32;
        let start = self.text.len() as u32;
        self.text.push(b'"');
        self.text.extend_from_slice(key);
        self.text.extend_from_slice(b"\":");
        self.entries.push(Entry {
            cat,
            at: start,
            len: key.len() as u32 + 3,
            id: at.id,
            arg: NO_KEY,
            gen: u32::MAX,
            next: NO_KEY,
        });
        self.slots[slot] = at.entry;
        Ok(at)
    }

    /// Learns that `entry` came after `prev` (`NO_KEY`: first in an object of category
    /// `cat`). Written only when it changed: most calls confirm the prediction.
    #[inline(always)]
    pub fn link(&mut self, prev: u32, cat: u32, entry: u32) {
        let to = match self.entries.get_mut(prev as usize) {
            Some(e) => &mut e.next,
            None if prev == NO_KEY => {
                let c = cat as usize;
                if c >= self.first.len() {
                    self.first.resize(c + 1, NO_KEY);
                }
                &mut self.first[c]
            }
            None => return,
        };
        if *to != entry {
            *to = entry;
        }
    }

    /// The key's id in the typed args store of this block, if known (`Some(None)`: the
    /// key is not UTF-8).
    #[inline(always)]
    pub fn arg(&self, entry: u32) -> Option<Option<u32>> {
        let e = self.entries.get(entry as usize)?;
        (e.gen == self.gen).then_some((e.arg != NO_KEY).then_some(e.arg))
    }

    /// Records the key's id in this block's typed args store.
    #[inline]
    pub fn set_arg(&mut self, entry: u32, arg: Option<u32>) {
        if let Some(e) = self.entries.get_mut(entry as usize) {
            e.arg = arg.unwrap_or(NO_KEY);
            e.gen = self.gen;
        }
    }

    /// The block the typed args store's ids are valid for.
    #[inline(always)]
    pub fn gen(&self) -> u32 {
        self.gen
    }

    /// A new block: the typed args store starts empty, its ids are stale.
    pub fn new_block(&mut self) {
        self.gen = self.gen.wrapping_add(1);
        if self.gen == u32::MAX {
            // Never equal to a fresh entry's `gen`.
            self.gen = 0;
            for e in &mut self.entries {
                e.gen = u32::MAX;
            }
        }
    }
}

/// Args values seen, by event name and key: an operator's `Input type` and `Input
/// Strides`, a kernel's `grid`, `registers per thread` and the rest are the same text
/// every time an event of that name runs. A value whose text is the one stored for
/// its (name, key) ends where that one ended and types alike: it is compared in place
/// (and, after it, a separator or whitespace, so a number cannot go on) instead of
/// being walked and typed again.
pub(super) struct Values<const SLOTS: usize = VALUE_SLOTS> {
    slots: Vec<ValueSlot>,
}

/// Values up to this long are kept (operators' shapes and types are 20-40 bytes).
const VALUE_BYTES: usize = 48;
const VALUE_SLOTS: usize = 1 << 10;

#[derive(Clone, Copy)]
struct ValueSlot {
    name: u32,
    entry: u32,
    len: u32,
    /// The block whose typed args store `typed` is valid for (`u32::MAX`: the value
    /// was walked, not typed).
    gen: u32,
    typed: ArgValue,
    /// The text as words (zero past its end), and the mask of its bytes in the last.
    text: [u64; VALUE_BYTES / 8],
    last: u64,
}

const EMPTY_VALUE: ValueSlot = ValueSlot {
    name: NO_KEY,
    entry: NO_KEY,
    len: 0,
    gen: u32::MAX,
    typed: ArgValue::Null,
    text: [0; VALUE_BYTES / 8],
    last: 0,
};

impl<const SLOTS: usize> Default for Values<SLOTS> {
    fn default() -> Values<SLOTS> {
        Values {
            slots: vec![EMPTY_VALUE; SLOTS],
        }
    }
}

impl<const SLOTS: usize> Values<SLOTS> {
    /// The slot of (`name`, `entry`); `SLOTS` is a power of two.
    #[inline(always)]
    fn slot(&self, name: u32, entry: u32) -> usize {
        let h = (name as u64 ^ (entry as u64) << 32).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 40) as usize & (SLOTS - 1)
    }

    /// The value at `b[v]` when its text is the one stored for (`name`, `entry`):
    /// its end, and its typed value when one was stored for block `gen`.
    #[inline(always)]
    pub fn find(
        &self,
        name: u32,
        entry: u32,
        gen: u32,
        b: &[u8],
        v: usize,
    ) -> Option<(usize, Option<ArgValue>)> {
        let s = &self.slots[self.slot(name, entry)];
        if s.name != name || s.entry != entry || entry == NO_KEY {
            return None;
        }
        let n = s.len as usize;
        // Whole words (the last masked), and the byte after the value.
        let words = n.div_ceil(8);
        let t = b.get(v..v + words * 8 + 1)?;
        let w = |k: usize| u64::from_le_bytes(t[8 * k..8 * k + 8].try_into().unwrap());
        for k in 0..words - 1 {
            if w(k) != s.text[k] {
                return None;
            }
        }
        if (w(words - 1) ^ s.text[words - 1]) & s.last != 0 {
            return None;
        }
        match t[n] {
            b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t' => {}
            _ => return None,
        }
        Some((v + n, (s.gen == gen).then_some(s.typed)))
    }

    /// Stores the value `b[v..end]` for (`name`, `entry`), typed as `typed` in block
    /// `gen` when given (values longer than `VALUE_BYTES` are not kept).
    #[inline]
    pub fn put(
        &mut self,
        name: u32,
        entry: u32,
        b: &[u8],
        (v, end): (usize, usize),
        typed: Option<(ArgValue, u32)>,
    ) {
        let n = end - v;
        if n == 0 || n > VALUE_BYTES || entry == NO_KEY {
            return;
        }
        let at = self.slot(name, entry);
        let s = &mut self.slots[at];
        s.name = name;
        s.entry = entry;
        s.len = n as u32;
        let mut text = [0u8; VALUE_BYTES];
        text[..n].copy_from_slice(&b[v..end]);
        for (k, w) in s.text.iter_mut().enumerate() {
            *w = u64::from_le_bytes(text[8 * k..8 * k + 8].try_into().unwrap());
        }
        s.last = match n % 8 {
            0 => u64::MAX,
            r => (1u64 << (8 * r)) - 1,
        };
        (s.typed, s.gen) = typed.unwrap_or((ArgValue::Null, u32::MAX));
    }
}

/// `a == b` for slices of one length, a word at a time (the last word overlapping):
/// the keys' texts are 4 to 30 bytes, where a call to `memcmp` cost more.
#[inline(always)]
fn same_words(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n < 8 {
        return same_bytes(a, b);
    }
    let w = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
    let mut i = 0;
    while i + 8 < n {
        if w(a, i) != w(b, i) {
            return false;
        }
        i += 8;
    }
    w(a, n - 8) == w(b, n - 8)
}

/// The args keys whose values every event keeps typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IdKey {
    Correlation,
    External,
    RecordFunction,
    Device,
    Stream,
    Other,
}

/// [`Ends`] of a literal, at compile time.
const fn ends_of(k: &[u8]) -> (u64, u64) {
    const fn word(k: &[u8], at: usize, len: usize) -> u64 {
        let mut w = 0u64;
        let mut i = 0;
        while i < len {
            w |= (k[at + i] as u64) << (8 * i);
            i += 1;
        }
        w
    }
    let n = k.len();
    if n >= 8 {
        (word(k, 0, 8), word(k, n - 8, 8))
    } else if n >= 4 {
        (word(k, 0, 4), word(k, n - 4, 4))
    } else {
        panic!("keys of 4 bytes or more")
    }
}

/// Which id key `k` (with its `ends`) is: word compares instead of a `memcmp` per
/// member of every args object (most keys are none of these).
#[inline(always)]
pub(super) fn id_key(k: &[u8], e: Ends) -> IdKey {
    const CORRELATION: (u64, u64) = ends_of(b"correlation");
    const EXTERNAL: (u64, u64) = ends_of(b"External id");
    const EXTERNAL_LOWER: (u64, u64) = ends_of(b"external id");
    const RECORD: (u64, u64) = ends_of(b"Record function id");
    const DEVICE: (u64, u64) = ends_of(b"device");
    const STREAM: (u64, u64) = ends_of(b"stream");
    let is = |w: (u64, u64)| (e.head, e.tail) == w;
    match e.len {
        11 if is(CORRELATION) => IdKey::Correlation,
        11 if is(EXTERNAL) || is(EXTERNAL_LOWER) => IdKey::External,
        // The two words cover 16 of its 18 bytes: the rest compared as well.
        18 if is(RECORD) && k == b"Record function id" => IdKey::RecordFunction,
        6 if is(DEVICE) => IdKey::Device,
        6 if is(STREAM) => IdKey::Stream,
        _ => IdKey::Other,
    }
}
