//! String interning: trace names repeat millions of times, so events store u32 ids.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher (the Fx hash of rustc): names are short and trusted, so
/// SipHash's DoS resistance buys nothing and costs a tenth of the load time.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const K: u64 = 0x517cc1b727220a95;

impl FxHasher {
    #[inline(always)]
    fn step(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.step(u64::from_le_bytes(c.try_into().unwrap()));
        }
        for &b in chunks.remainder() {
            self.step(b as u64);
        }
    }

    // The integer writes give exactly what `write` of their little-endian bytes gives
    // (so every hash, and every map's order, stays as it was), without the slice loop:
    // ids and timestamps are hashed millions of times per load.
    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.step(v as u64);
    }

    #[inline]
    fn write_u16(&mut self, v: u16) {
        for b in v.to_le_bytes() {
            self.step(b as u64);
        }
    }

    #[inline]
    fn write_u32(&mut self, v: u32) {
        for b in v.to_le_bytes() {
            self.step(b as u64);
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.step(v);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.write(&v.to_le_bytes());
    }

    /// The product's high bits are its mixed ones, and hashbrown takes a bucket from
    /// the low bits: without the rotation a key's low bits alone chose its bucket, so
    /// two ids packed in one word (`parent << 32 | key`) put every entry of one key in
    /// one probe chain (the tree's wide parents: one chain per op name, a step long).
    #[inline]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;

#[derive(Debug, Default, Clone)]
pub struct Interner {
    map: HashMap<Box<str>, u32, FxBuild>,
    strings: Vec<Box<str>>,
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        let b: Box<str> = s.into();
        self.strings.push(b.clone());
        self.map.insert(b, id);
        id
    }

    /// Interns raw bytes, replacing invalid UTF-8.
    pub fn intern_bytes(&mut self, b: &[u8]) -> u32 {
        match std::str::from_utf8(b) {
            Ok(s) => self.intern(s),
            Err(_) => self.intern(&String::from_utf8_lossy(b)),
        }
    }

    pub fn get(&self, s: &str) -> Option<u32> {
        self.map.get(s).copied()
    }

    pub fn resolve(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The integer writes hash as `write` of their bytes does.
    #[test]
    fn integer_writes_hash_as_bytes() {
        let h = |f: &dyn Fn(&mut FxHasher)| {
            let mut x = FxHasher(0x1234_5678);
            f(&mut x);
            x.finish()
        };
        for v in [0u64, 1, 0xff, 0x1234_5678_9abc_def0, u64::MAX] {
            assert_eq!(h(&|x| x.write_u8(v as u8)), h(&|x| x.write(&[v as u8])));
            let b16 = (v as u16).to_le_bytes();
            assert_eq!(h(&|x| x.write_u16(v as u16)), h(&|x| x.write(&b16)));
            let b32 = (v as u32).to_le_bytes();
            assert_eq!(h(&|x| x.write_u32(v as u32)), h(&|x| x.write(&b32)));
            assert_eq!(h(&|x| x.write_u64(v)), h(&|x| x.write(&v.to_le_bytes())));
            let bu = (v as usize).to_le_bytes();
            assert_eq!(h(&|x| x.write_usize(v as usize)), h(&|x| x.write(&bu)));
        }
    }
}
