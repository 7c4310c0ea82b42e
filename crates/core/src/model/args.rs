//! Event args stored typed: parsed once when a trace is read, never re-parsed as JSON.
//!
//! Each event with args owns one list of (key, value) pairs in flat columns; keys and
//! string values are interned in the store's own table (so event-name ids do not move).
//! Lists are kept in key byte order with the last duplicate winning: the order and
//! values a JSON object parsed into a sorted map gave, so every display stays identical.
//!
//! Memory (issue 16): a list stores one u32 per value. Its keys are a "shape" shared by
//! every list with the same keys (the GPU rows of a trace have a handful). Values that
//! fit in 29 bits (small integers, string ids, null, booleans) are packed into the word
//! with a 3-bit tag; the rest (floats, big integers) go to a side table the word points
//! into, where repeated ones share an entry.

use super::intern::{FxBuild, Interner};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

/// One arg value. Strings and nested arrays/objects (as compact JSON text) are interned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue {
    Null,
    Bool(bool),
    Int(i64),
    /// Integers above i64::MAX.
    UInt(u64),
    Float(f64),
    Str(u32),
    Json(u32),
}

impl ArgValue {
    pub fn as_f64(self) -> Option<f64> {
        match self {
            ArgValue::Int(i) => Some(i as f64),
            ArgValue::UInt(u) => Some(u as f64),
            ArgValue::Float(f) => Some(f),
            _ => None,
        }
    }

    pub fn as_i64(self) -> Option<i64> {
        match self {
            ArgValue::Int(i) => Some(i),
            _ => None,
        }
    }
}

/// All args lists of one event table.
#[derive(Debug, Default, Clone)]
pub struct ArgStore {
    strings: Interner,
    /// Packed values (see `pack`) of every list, one after the other.
    vals: Vec<u32>,
    /// End of list k in `vals`; list k starts where list k-1 ends.
    ends: Vec<u32>,
    /// The shape (key list) of list k.
    shape_of: Vec<u32>,
    /// The keys of every shape, one after the other; shape s ends at `shape_ends[s]`.
    shape_keys: Vec<u32>,
    shape_ends: Vec<u32>,
    shape_ids: HashMap<Vec<u32>, u32, FxBuild>,
    /// Values too wide to pack, and (up to WIDE_SHARED of them) where each one is.
    wide: Vec<ArgValue>,
    wide_ids: HashMap<(u8, u64), u32, FxBuild>,
    /// A direct-mapped memo of `wide_ids` (key, id): a kernel's two floats (`blocks
    /// per SM`, `warps per SM`) repeat with its name, and the map's hash and probe
    /// cost four times the memo's compare. Only ids `wide_ids` holds are kept here.
    wide_memo: [((u8, u64), u32); WIDE_MEMO],
    /// The list being built (closed by `finish`), and its keys when looking up its shape.
    open: Vec<(u32, ArgValue)>,
    scratch: Vec<u32>,
    /// What `finish` made of the last few key sequences. Rows of one kind push the same
    /// keys in the same order (kernels, copies, sets alternate), so their sort and
    /// shape lookup are done once per kind, not once per row. Held inline: the
    /// event table's store lives through the whole load, and small heap blocks of its
    /// own made mid-load measurably raised the peak (glibc's heap layout).
    orders: [Order; ORDERS],
    /// The entry of `orders` the next new sequence replaces.
    next_order: usize,
}

/// A list's keys as they were pushed (`len` of them; 0 entries: unused), the pushed
/// pairs `finish` kept of them (indices, in key order) and their shape.
#[derive(Debug, Clone, Copy)]
struct Order {
    len: u8,
    kept_len: u8,
    pushed: [u32; ORDER_KEYS],
    kept: [u8; ORDER_KEYS],
    shape: u32,
}

impl Default for Order {
    fn default() -> Self {
        Order {
            len: 0,
            kept_len: 0,
            pushed: [0; ORDER_KEYS],
            kept: [0; ORDER_KEYS],
            shape: 0,
        }
    }
}

const ORDERS: usize = 4;
/// Lists with more keys are sorted each time.
const ORDER_KEYS: usize = 24;

/// Entries of `ArgStore::wide_memo` (a power of two, at most 16: the slot is a
/// multiply's top four bits).
const WIDE_MEMO: usize = 16;

/// Distinct wide values looked up for sharing: past this many, new ones are appended
/// as they come (a trace with a unique float per event should not grow a map too).
const WIDE_SHARED: usize = 1 << 16;

const TAG_SHIFT: u32 = 29;
const PAYLOAD: u32 = (1 << TAG_SHIFT) - 1;
const TAG_INT: u32 = 0;
const TAG_STR: u32 = 1;
const TAG_JSON: u32 = 2;
const TAG_NULL: u32 = 3;
const TAG_FALSE: u32 = 4;
const TAG_TRUE: u32 = 5;
const TAG_WIDE: u32 = 6;

impl ArgStore {
    /// A value as its word: small integers, string ids and constants in the word
    /// itself (inlined: this runs for every value of every list), the rest through
    /// `pack_wide`.
    #[inline(always)]
    fn pack(&mut self, v: ArgValue) -> u32 {
        match v {
            ArgValue::Int(i) if (-(1i64 << 28)..1i64 << 28).contains(&i) => {
                TAG_INT << TAG_SHIFT | (i as u32 & PAYLOAD)
            }
            ArgValue::Str(s) if s <= PAYLOAD => TAG_STR << TAG_SHIFT | s,
            ArgValue::Json(s) if s <= PAYLOAD => TAG_JSON << TAG_SHIFT | s,
            ArgValue::Null => TAG_NULL << TAG_SHIFT,
            ArgValue::Bool(false) => TAG_FALSE << TAG_SHIFT,
            ArgValue::Bool(true) => TAG_TRUE << TAG_SHIFT,
            _ => self.pack_wide(v),
        }
    }

    /// A value too wide for its word: an entry of `wide` (shared with an equal one
    /// while `wide_ids` has room).
    #[inline(never)]
    fn pack_wide(&mut self, v: ArgValue) -> u32 {
        let key = match v {
            ArgValue::Int(i) => (0, i as u64),
            ArgValue::UInt(u) => (1, u),
            ArgValue::Float(f) => (2, f.to_bits()),
            // Everything else packs (ids past 2^29 aside).
            ArgValue::Str(s) => (3, s as u64),
            ArgValue::Json(s) => (4, s as u64),
            _ => (5, 0),
        };
        let m = (key.1 ^ (key.0 as u64) << 59).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60;
        let memo = &mut self.wide_memo[m as usize % WIDE_MEMO];
        // The zeroed entries' key is Int(0), which never comes here (it packs small).
        if memo.0 == key {
            return TAG_WIDE << TAG_SHIFT | memo.1;
        }
        if let Some(&at) = self.wide_ids.get(&key) {
            *memo = (key, at);
            return TAG_WIDE << TAG_SHIFT | at;
        }
        // 2^29 wide values would take 8 GB: memory runs out long before.
        let at = self.wide.len() as u32;
        self.wide.push(v);
        if self.wide_ids.len() < WIDE_SHARED {
            self.wide_ids.insert(key, at);
            *memo = (key, at);
        }
        TAG_WIDE << TAG_SHIFT | at
    }

    fn unpack(&self, w: u32) -> ArgValue {
        let p = w & PAYLOAD;
        match w >> TAG_SHIFT {
            // Sign-extend the 29-bit integer.
            TAG_INT => ArgValue::Int((((p << 3) as i32) >> 3) as i64),
            TAG_STR => ArgValue::Str(p),
            TAG_JSON => ArgValue::Json(p),
            TAG_NULL => ArgValue::Null,
            TAG_FALSE => ArgValue::Bool(false),
            TAG_TRUE => ArgValue::Bool(true),
            _ => self.wide[p as usize],
        }
    }
}

/// What `ArgStore::copy_list_with` has mapped of one source store into one
/// destination: string ids, wide values (as `dest`'s words; `u32::MAX`, never a
/// word, where none yet) and shapes. Cleared when either store changes.
#[derive(Debug, Default, Clone)]
pub struct ListCopy {
    strings: Vec<u32>,
    wide: Vec<u32>,
    shapes: Vec<u32>,
}

impl ListCopy {
    pub fn clear(&mut self) {
        self.strings.clear();
        self.wide.clear();
        self.shapes.clear();
    }
}

/// One event's args, borrowed from the store.
#[derive(Clone, Copy)]
pub struct Args<'a> {
    store: &'a ArgStore,
    /// The list's values are `vals[start..end]`, its keys start at `shape_keys[keys]`.
    start: usize,
    end: usize,
    keys: usize,
}

impl<'a> Args<'a> {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// (key, value) pairs in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, ArgValue)> + 'a {
        let s = self.store;
        let (off, start) = (self.keys, self.start);
        (0..self.end - self.start).map(move |j| {
            let v = s.unpack(s.vals[start + j]);
            (s.strings.resolve(s.shape_keys[off + j]), v)
        })
    }

    pub fn get(&self, key: &str) -> Option<ArgValue> {
        let k = self.store.strings.get(key)?;
        (self.start..self.end)
            .find(|&j| self.store.shape_keys[self.keys + j - self.start] == k)
            .map(|j| self.store.unpack(self.store.vals[j]))
    }

    /// A value as display text: strings bare, everything else as compact JSON.
    pub fn text(&self, v: ArgValue) -> Cow<'a, str> {
        self.store.text(v)
    }

    /// The list as a JSON object (tests and exports).
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (k, v) in self.iter() {
            let j = match v {
                ArgValue::Str(s) => serde_json::Value::String(self.store.resolve(s).into()),
                ArgValue::Json(s) => {
                    serde_json::from_str(self.store.resolve(s)).unwrap_or_default()
                }
                ArgValue::Null => serde_json::Value::Null,
                ArgValue::Bool(b) => b.into(),
                ArgValue::Int(i) => i.into(),
                ArgValue::UInt(u) => u.into(),
                ArgValue::Float(f) => f.into(),
            };
            m.insert(k.to_string(), j);
        }
        serde_json::Value::Object(m)
    }
}

impl ArgStore {
    pub fn resolve(&self, id: u32) -> &str {
        self.strings.resolve(id)
    }

    pub fn text(&self, v: ArgValue) -> Cow<'_, str> {
        match v {
            ArgValue::Str(s) | ArgValue::Json(s) => Cow::Borrowed(self.strings.resolve(s)),
            ArgValue::Null => Cow::Borrowed("null"),
            ArgValue::Bool(b) => Cow::Borrowed(if b { "true" } else { "false" }),
            ArgValue::Int(i) => Cow::Owned(i.to_string()),
            ArgValue::UInt(u) => Cow::Owned(u.to_string()),
            // serde_json's own float text (ryu), as the JSON round trip printed it.
            ArgValue::Float(f) => Cow::Owned(match serde_json::Number::from_f64(f) {
                Some(n) => n.to_string(),
                None => "null".into(),
            }),
        }
    }

    pub fn list(&self, id: u32) -> Args<'_> {
        let k = id as usize;
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        let shape = self.shape_of[k] as usize;
        Args {
            store: self,
            start,
            end: self.ends[k] as usize,
            keys: if shape == 0 {
                0
            } else {
                self.shape_ends[shape - 1] as usize
            },
        }
    }

    /// Interns a string value.
    pub fn str_value(&mut self, s: &str) -> ArgValue {
        ArgValue::Str(self.strings.intern(s))
    }

    /// Interns compact JSON text (arrays, objects).
    pub fn json_value(&mut self, s: &str) -> ArgValue {
        ArgValue::Json(self.strings.intern(s))
    }

    /// Appends a pair to the list being built (closed by `finish`).
    pub fn push(&mut self, key: &str, v: ArgValue) {
        let k = self.strings.intern(key);
        self.open.push((k, v));
    }

    /// Appends a pair whose key is already interned here (`intern`).
    #[inline]
    pub fn push_id(&mut self, key: u32, v: ArgValue) {
        self.open.push((key, v));
    }

    /// Interns a key or a string value; its id is valid for `push_id` and `ArgValue::Str`.
    #[inline]
    pub fn intern(&mut self, s: &str) -> u32 {
        self.strings.intern(s)
    }

    /// Drops the list being built.
    #[inline]
    pub fn discard(&mut self) {
        self.open.clear();
    }

    /// Closes the list being built: sorts it by key, keeps the last of equal keys.
    pub fn finish(&mut self) -> u32 {
        let open = std::mem::take(&mut self.open);
        let n = open.len();
        let known = (n > 0 && n <= ORDER_KEYS)
            .then(|| {
                self.orders.iter().position(|o| {
                    o.len as usize == n && o.pushed[..n].iter().zip(&open).all(|(&k, p)| p.0 == k)
                })
            })
            .flatten();
        // What is kept of a known sequence is read in place (the whole `Order`, copied
        // out, cost more than packing the list's values).
        let (shape, kept, kept_len, long) = match known {
            Some(at) => {
                let o = &self.orders[at];
                (o.shape, o.kept, o.kept_len as usize, None)
            }
            None => {
                let (o, long) = self.order(&open);
                (o.shape, o.kept, o.kept_len as usize, long)
            }
        };
        self.shape_of.push(shape);
        match long {
            Some(kept) => {
                for k in kept {
                    let w = self.pack(open[k as usize].1);
                    self.vals.push(w);
                }
            }
            None => {
                for &k in &kept[..kept_len] {
                    let w = self.pack(open[k as usize].1);
                    self.vals.push(w);
                }
            }
        }
        self.open = open;
        self.open.clear();
        self.ends.push(self.vals.len() as u32);
        self.ends.len() as u32 - 1
    }

    /// Sorts a pushed list with a new key sequence: what `finish` keeps of it, as an
    /// entry of `orders` (remembered there) when it has 1 to ORDER_KEYS keys, else as
    /// the kept indices (the entry then gives only the shape).
    fn order(&mut self, open: &[(u32, ArgValue)]) -> (Order, Option<Vec<u32>>) {
        let s = &self.strings;
        let mut kept: Vec<u32> = (0..open.len() as u32).collect();
        let sorted = open
            .windows(2)
            .all(|w| s.resolve(w[0].0) < s.resolve(w[1].0));
        if !sorted {
            // Stable: of equal keys the last pushed stays last, and wins.
            kept.sort_by(|&a, &b| {
                s.resolve(open[a as usize].0)
                    .cmp(s.resolve(open[b as usize].0))
            });
            let mut n = 0;
            for i in 0..kept.len() {
                if n > 0 && open[kept[n - 1] as usize].0 == open[kept[i] as usize].0 {
                    kept[n - 1] = kept[i];
                } else {
                    kept[n] = kept[i];
                    n += 1;
                }
            }
            kept.truncate(n);
        }
        let mut keys = std::mem::take(&mut self.scratch);
        keys.clear();
        keys.extend(kept.iter().map(|&i| open[i as usize].0));
        let shape = match self.shape_ids.get(&keys[..]) {
            Some(&s) => s,
            None => {
                let s = self.shape_ends.len() as u32;
                self.shape_keys.extend_from_slice(&keys);
                self.shape_ends.push(self.shape_keys.len() as u32);
                self.shape_ids.insert(keys.clone(), s);
                s
            }
        };
        self.scratch = keys;
        let mut o = Order {
            shape,
            ..Order::default()
        };
        if !open.is_empty() && open.len() <= ORDER_KEYS {
            o.len = open.len() as u8;
            o.kept_len = kept.len() as u8;
            for (i, p) in open.iter().enumerate() {
                o.pushed[i] = p.0;
            }
            for (i, &k) in kept.iter().enumerate() {
                o.kept[i] = k as u8;
            }
            self.orders[self.next_order] = o;
            self.next_order = (self.next_order + 1) % ORDERS;
            (o, None)
        } else {
            (o, Some(kept))
        }
    }

    /// Copies list `id` into `dest` (a list equal in keys and values), `memo` mapping
    /// this store's string ids to `dest`'s as they are met (`u32::MAX`: not yet), so a
    /// key is interned there once, not once per row, and `shapes` this store's shape
    /// ids to `dest`'s the same way. The list is closed directly, not through `finish`:
    /// its keys are sorted and unique here already, and string order does not depend on
    /// the store, so `finish` would keep every pair in this order and find the same
    /// shape (this runs once per GPU row, in the serial part of a load).
    pub fn copy_list(
        &self,
        id: u32,
        dest: &mut ArgStore,
        memo: &mut Vec<u32>,
        shapes: &mut Vec<u32>,
    ) -> u32 {
        if memo.len() < self.strings.len() {
            memo.resize(self.strings.len(), u32::MAX);
        }
        let mut map = |s: u32, dest: &mut ArgStore| {
            let m = &mut memo[s as usize];
            if *m == u32::MAX {
                *m = dest.strings.intern(self.strings.resolve(s));
            }
            *m
        };
        let l = self.list(id);
        let shape = self.shape_of[id as usize] as usize;
        if shapes.len() <= shape {
            shapes.resize(self.shape_ends.len().max(shape + 1), u32::MAX);
        }
        let known = shapes[shape];
        let mut keys = std::mem::take(&mut dest.scratch);
        keys.clear();
        for j in 0..l.len() {
            // The value first, then the key: the order `str_value` and `push` interned
            // them in, so `dest`'s ids come out as they did.
            let w = self.vals[l.start + j];
            let w = match w >> TAG_SHIFT {
                // Small integers and constants pack the same in any store.
                TAG_INT | TAG_NULL | TAG_FALSE | TAG_TRUE => w,
                _ => {
                    let v = match self.unpack(w) {
                        ArgValue::Str(s) => ArgValue::Str(map(s, dest)),
                        ArgValue::Json(s) => ArgValue::Json(map(s, dest)),
                        other => other,
                    };
                    dest.pack(v)
                }
            };
            dest.vals.push(w);
            let k = map(self.shape_keys[l.keys + j], dest);
            if known == u32::MAX {
                keys.push(k);
            }
        }
        let s = if known != u32::MAX {
            known
        } else {
            let s = match dest.shape_ids.get(&keys[..]) {
                Some(&s) => s,
                None => {
                    let s = dest.shape_ends.len() as u32;
                    dest.shape_keys.extend_from_slice(&keys);
                    dest.shape_ends.push(dest.shape_keys.len() as u32);
                    dest.shape_ids.insert(keys.clone(), s);
                    s
                }
            };
            shapes[shape] = s;
            s
        };
        dest.scratch = keys;
        dest.shape_of.push(s);
        dest.ends.push(dest.vals.len() as u32);
        dest.ends.len() as u32 - 1
    }

    /// `copy_list` for a reader that copies many lists of one store in a row (a part of
    /// a Chrome load, once per GPU row, in the serial part of the load): each word of
    /// the list is mapped through `memo` (this store's strings, wide values and shapes
    /// to `dest`'s, each found once), so a list whose shape is known costs a copy of
    /// its words, and a float or big integer is looked up in `dest` once, not once per
    /// row. `dest` ends as `copy_list` leaves it, but that a wide value seen again
    /// after `dest` stopped sharing them (`WIDE_SHARED`) reuses the entry it got first.
    pub fn copy_list_with(&self, id: u32, dest: &mut ArgStore, memo: &mut ListCopy) -> u32 {
        let k = id as usize;
        let shape = self.shape_of[k] as usize;
        let known = memo.shapes.get(shape).copied().unwrap_or(u32::MAX);
        if known == u32::MAX {
            // A shape not met yet: its keys are interned in the order `copy_list` does.
            return self.copy_list(id, dest, &mut memo.strings, &mut memo.shapes);
        }
        if memo.strings.len() < self.strings.len() {
            memo.strings.resize(self.strings.len(), u32::MAX);
        }
        if memo.wide.len() < self.wide.len() {
            memo.wide.resize(self.wide.len(), u32::MAX);
        }
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        let end = self.ends[k] as usize;
        // The words copied as they are (small integers and constants pack the same in
        // any store), then the strings and wide values among them mapped in place.
        let at = dest.vals.len();
        dest.vals.extend_from_slice(&self.vals[start..end]);
        for i in at..dest.vals.len() {
            let w = dest.vals[i];
            let tag = w >> TAG_SHIFT;
            let p = (w & PAYLOAD) as usize;
            if tag == TAG_STR || tag == TAG_JSON {
                let m = memo.strings[p];
                dest.vals[i] = if m <= PAYLOAD {
                    tag << TAG_SHIFT | m
                } else {
                    self.copy_word(w, dest, memo)
                };
            } else if tag == TAG_WIDE {
                dest.vals[i] = match memo.wide[p] {
                    u32::MAX => self.copy_word(w, dest, memo),
                    m => m,
                };
            }
        }
        dest.shape_of.push(known);
        dest.ends.push(dest.vals.len() as u32);
        dest.ends.len() as u32 - 1
    }

    /// `copy_list_with`'s word for a string or wide value met the first time: its
    /// string interned in `dest` (the memo remembers it) and the value packed there.
    #[inline(never)]
    fn copy_word(&self, w: u32, dest: &mut ArgStore, memo: &mut ListCopy) -> u32 {
        let mut map = |s: u32, dest: &mut ArgStore| {
            let m = &mut memo.strings[s as usize];
            if *m == u32::MAX {
                *m = dest.strings.intern(self.strings.resolve(s));
            }
            *m
        };
        let v = match self.unpack(w) {
            ArgValue::Str(s) => ArgValue::Str(map(s, dest)),
            ArgValue::Json(s) => ArgValue::Json(map(s, dest)),
            other => other,
        };
        let out = dest.pack(v);
        if w >> TAG_SHIFT == TAG_WIDE {
            memo.wide[(w & PAYLOAD) as usize] = out;
        }
        out
    }

    /// Parses a JSON object's text into a new list; text that is not an object gives an
    /// empty list (what the JSON consumers showed for it).
    pub fn push_json(&mut self, text: &[u8]) -> u32 {
        // Invalid UTF-8 is replaced, as reading the text lossily did before.
        let lossy;
        let text = match std::str::from_utf8(text) {
            Ok(_) => text,
            Err(_) => {
                lossy = String::from_utf8_lossy(text).into_owned();
                lossy.as_bytes()
            }
        };
        let mut de = serde_json::Deserializer::from_slice(text);
        let ok = ObjectSeed(self).deserialize(&mut de).is_ok() && de.end().is_ok();
        if !ok {
            self.open.clear();
        }
        self.finish()
    }
}

struct ObjectSeed<'a>(&'a mut ArgStore);
struct KeySeed<'a>(&'a mut ArgStore);
struct ValueSeed<'a>(&'a mut ArgStore);

impl<'de> DeserializeSeed<'de> for ObjectSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjectSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an args object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key_seed(KeySeed(self.0))? {
            let v = map.next_value_seed(ValueSeed(self.0))?;
            self.0.open.push((k, v));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = u32;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<u32, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = u32;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<u32, E> {
        Ok(self.0.strings.intern(s))
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = ArgValue;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<ArgValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = ArgValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<ArgValue, E> {
        Ok(ArgValue::Null)
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<ArgValue, E> {
        Ok(ArgValue::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> Result<ArgValue, E> {
        Ok(ArgValue::Int(i))
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<ArgValue, E> {
        Ok(match i64::try_from(u) {
            Ok(i) => ArgValue::Int(i),
            Err(_) => ArgValue::UInt(u),
        })
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<ArgValue, E> {
        Ok(ArgValue::Float(f))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<ArgValue, E> {
        Ok(self.0.str_value(s))
    }
    // Nested values are rare (grid, block): kept as the compact text serde_json prints.
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ArgValue, A::Error> {
        use serde::Deserialize;
        let v = serde_json::Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(self.0.json_value(&v.to_string()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ArgValue, A::Error> {
        use serde::Deserialize;
        let v = serde_json::Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(self.0.json_value(&v.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old copy: every pair pushed again and the list closed by `finish`.
    fn copy_by_finish(src: &ArgStore, id: u32, dest: &mut ArgStore) -> u32 {
        let l = src.list(id);
        for j in 0..l.len() {
            let v = match src.unpack(src.vals[l.start + j]) {
                ArgValue::Str(s) => dest.str_value(src.strings.resolve(s)),
                ArgValue::Json(s) => dest.json_value(src.strings.resolve(s)),
                other => other,
            };
            dest.push(src.strings.resolve(src.shape_keys[l.keys + j]), v);
        }
        dest.finish()
    }

    fn state(s: &ArgStore) -> impl PartialEq + std::fmt::Debug {
        let strings: Vec<String> = (0..s.strings.len() as u32)
            .map(|i| s.strings.resolve(i).to_string())
            .collect();
        let wide: Vec<String> = s.wide.iter().map(|v| format!("{v:?}")).collect();
        (
            strings,
            s.vals.clone(),
            s.ends.clone(),
            s.shape_of.clone(),
            s.shape_keys.clone(),
            s.shape_ends.clone(),
            wide,
        )
    }

    /// `copy_list` and `copy_list_with` leave the destination exactly as pushing the
    /// pairs again and `finish` did: the same string, shape and wide ids, in the same
    /// order.
    #[test]
    fn copy_list_as_finish() {
        let texts: [&[u8]; 7] = [
            br#"{"z": 1, "a": "x", "m": [1, 2], "big": 18446744073709551615, "f": 2.5}"#,
            br#"{"b": null, "a": true, "c": false, "neg": -4, "w": -9007199254740993}"#,
            br#"{}"#,
            br#"{"z": 1, "a": "x", "m": [1, 2], "big": 18446744073709551615, "f": 2.5}"#,
            br#"{"a": "y", "a": "last", "s": "x", "o": {"q": 2}}"#,
            br#"{"k00":0,"k01":1,"k02":2,"k03":3,"k04":4,"k05":5,"k06":6,"k07":7,"k08":8,
                "k09":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,
                "k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":"s"}"#,
            br#"{"b": null, "a": false, "c": false, "neg": 7, "w": 1e300}"#,
        ];
        let mut src = ArgStore::default();
        let ids: Vec<u32> = texts.iter().map(|t| src.push_json(t)).collect();
        let mut old = ArgStore::default();
        let mut new = ArgStore::default();
        let mut with = ArgStore::default();
        // The destinations hold lists of their own first (ids not equal to src's).
        for d in [&mut old, &mut new, &mut with] {
            d.push_json(br#"{"s": "x", "q": 1.5, "z": "zz"}"#);
        }
        let (mut memo, mut shapes) = (Vec::new(), Vec::new());
        let mut copy = ListCopy::default();
        for round in 0..2 {
            for &id in ids.iter().chain(ids.iter().rev()) {
                let a = copy_by_finish(&src, id, &mut old);
                let b = src.copy_list(id, &mut new, &mut memo, &mut shapes);
                let c = src.copy_list_with(id, &mut with, &mut copy);
                assert_eq!((a, a), (b, c), "round {round}, list {id}");
            }
        }
        assert_eq!(state(&old), state(&new));
        assert_eq!(state(&old), state(&with));
    }

    /// The typed list prints what parsing the JSON into a serde_json map printed.
    #[test]
    fn same_text_as_json_round_trip() {
        let text = br#"{"z": 1, "a": "x\"y", "m": [1, 2.50, 3], "f": 1.0, "e": 1e3,
            "n": null, "b": true, "o": {"q": 2, "p": 1}, "a": "last", "big": 18446744073709551615,
            "neg": -4}"#;
        let mut s = ArgStore::default();
        let id = s.push_json(text);
        let l = s.list(id);
        let ours: Vec<(String, String)> = l
            .iter()
            .map(|(k, v)| (k.to_string(), l.text(v).into_owned()))
            .collect();
        let serde_json::Value::Object(m) = serde_json::from_slice(text).unwrap() else {
            panic!()
        };
        let theirs: Vec<(String, String)> = m
            .into_iter()
            .map(|(k, v)| {
                let t = match v {
                    serde_json::Value::String(s) => s,
                    o => o.to_string(),
                };
                (k, t)
            })
            .collect();
        assert_eq!(ours, theirs);
        assert_eq!(l.get("e").and_then(|v| v.as_f64()), Some(1000.0));
        assert_eq!(
            l.to_json(),
            serde_json::from_slice::<serde_json::Value>(text).unwrap()
        );
    }

    /// Values at the edges of what packs into a word come back unchanged.
    #[test]
    fn packed_and_wide_values() {
        let mut s = ArgStore::default();
        let vals = [
            ArgValue::Int(0),
            ArgValue::Int(-1),
            ArgValue::Int((1 << 28) - 1),
            ArgValue::Int(1 << 28),
            ArgValue::Int(-(1 << 28)),
            ArgValue::Int(-(1 << 28) - 1),
            ArgValue::Int(i64::MIN),
            ArgValue::Int(i64::MAX),
            ArgValue::UInt(u64::MAX),
            ArgValue::Float(0.96),
            ArgValue::Float(f64::NAN),
            ArgValue::Null,
            ArgValue::Bool(false),
            ArgValue::Bool(true),
            ArgValue::Str(7),
            ArgValue::Json(u32::MAX),
        ];
        for (i, &v) in vals.iter().enumerate() {
            s.push(&format!("k{i:02}"), v);
        }
        let id = s.finish();
        let back: Vec<ArgValue> = s.list(id).iter().map(|(_, v)| v).collect();
        for (a, b) in vals.iter().zip(&back) {
            match (a, b) {
                (ArgValue::Float(x), ArgValue::Float(y)) => assert_eq!(x.to_bits(), y.to_bits()),
                _ => assert_eq!(a, b),
            }
        }
        assert_eq!(back.len(), vals.len());
    }

    #[test]
    fn bad_text_gives_empty_list() {
        let mut s = ArgStore::default();
        let a = s.push_json(b"{\"a\": 1, \"b\": ");
        let b = s.push_json(b"[1]");
        s.push("k", ArgValue::Int(3));
        let c = s.finish();
        assert!(s.list(a).is_empty() && s.list(b).is_empty());
        assert_eq!(s.list(c).get("k"), Some(ArgValue::Int(3)));
        // Lists with the same keys share them; equal wide values share an entry.
        s.push("k", ArgValue::Float(0.5));
        let d = s.finish();
        s.push("k", ArgValue::Float(0.5));
        let e = s.finish();
        assert_eq!((s.shape_ends.len(), s.wide.len()), (2, 1));
        assert_eq!(s.list(d).get("k"), s.list(e).get("k"));
        assert_eq!(
            s.list(c).iter().collect::<Vec<_>>(),
            [("k", ArgValue::Int(3))]
        );
    }

    /// Lists past the remembered length, and lists whose key sequence repeats (the
    /// remembered sort), come out as serde_json's sorted map has them.
    #[test]
    fn long_and_repeated_lists() {
        let text = |n: usize, salt: usize| {
            let mut t = String::from("{");
            for k in (0..n).rev() {
                t += &format!("\"k{:02}\": {},", k % (n - 3), k * salt);
            }
            t += "\"a\": 1}";
            t
        };
        let mut s = ArgStore::default();
        for n in [5, 30, 5, 30, 13, 5, 24, 25, 13] {
            for salt in [1, 2] {
                let t = text(n, salt);
                let id = s.push_json(t.as_bytes());
                let ours: Vec<(String, String)> = s
                    .list(id)
                    .iter()
                    .map(|(k, v)| (k.to_string(), s.text(v).into_owned()))
                    .collect();
                let serde_json::Value::Object(m) = serde_json::from_str(&t).unwrap() else {
                    panic!()
                };
                let theirs: Vec<(String, String)> =
                    m.into_iter().map(|(k, v)| (k, v.to_string())).collect();
                assert_eq!(ours, theirs, "{t}");
            }
        }
    }
}
