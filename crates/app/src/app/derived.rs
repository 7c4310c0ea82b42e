//! The `derive` definitions in force, as a persistent list: every undo checkpoint
//! keeps the view, and a list shared between them (a checkpoint holds one pointer,
//! a new definition one link) keeps 10,000 derives linear in time and memory, where
//! a vector copied into each checkpoint grew with the square of their number.

use std::sync::Arc;

use crate::transform::derive::Arith;

/// Definitions, newest last; one per name.
#[derive(Default)]
pub struct Derived {
    last: Option<Arc<Link>>,
    /// The hashes of the names, built on the first look-up and kept up to date by
    /// this copy; a clone (an undo checkpoint) starts without it, so checkpoints hold
    /// no copy of it and a look-up stays O(1) instead of a walk down the list.
    names: Option<std::collections::HashSet<u64>>,
}

impl Clone for Derived {
    fn clone(&self) -> Derived {
        Derived {
            last: self.last.clone(),
            names: None,
        }
    }
}

struct Link {
    /// `name`'s hash: looking a name up compares words, not strings.
    hash: u64,
    name: String,
    arith: Arith,
    prev: Option<Arc<Link>>,
}

impl Drop for Link {
    /// Frees a long chain link by link: the derived drop recurses once per link.
    fn drop(&mut self) {
        let mut next = self.prev.take();
        while let Some(link) = next {
            match Arc::try_unwrap(link) {
                Ok(mut l) => next = l.prev.take(),
                // Still shared (by a checkpoint): whoever holds it frees the rest.
                Err(_) => break,
            }
        }
    }
}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|(n, _)| n)).finish()
    }
}

impl Derived {
    /// Newest first.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Arith)> {
        std::iter::successors(self.last.as_deref(), |l| l.prev.as_deref())
            .map(|l| (l.name.as_str(), &l.arith))
    }

    /// Oldest first, in the order they were defined (to evaluate again).
    pub fn in_order(&self) -> Vec<(String, Arith)> {
        let mut v: Vec<(String, Arith)> = self
            .iter()
            .map(|(n, e)| (n.to_string(), e.clone()))
            .collect();
        v.reverse();
        v
    }

    /// Defines `name`, replacing an older definition of the same name.
    pub fn set(&mut self, name: String, arith: Arith) {
        if self.has(&name) {
            // Rare (a name defined again): the list is built anew without it.
            let kept: Vec<(String, Arith)> = self
                .in_order()
                .into_iter()
                .filter(|(n, _)| *n != name)
                .collect();
            *self = Derived::default();
            for (n, e) in kept {
                self.push(n, e);
            }
        }
        self.push(name, arith);
    }

    fn has(&mut self, name: &str) -> bool {
        let hash = hash(name);
        if self.names.is_none() {
            let mut set = std::collections::HashSet::new();
            let mut at = self.last.as_deref();
            while let Some(l) = at {
                set.insert(l.hash);
                at = l.prev.as_deref();
            }
            self.names = Some(set);
        }
        if !self.names.as_ref().is_some_and(|s| s.contains(&hash)) {
            return false;
        }
        let mut at = self.last.as_deref();
        while let Some(l) = at {
            if l.hash == hash && l.name == name {
                return true;
            }
            at = l.prev.as_deref();
        }
        false
    }

    fn push(&mut self, name: String, arith: Arith) {
        if let Some(s) = self.names.as_mut() {
            s.insert(hash(&name));
        }
        let prev = self.last.take();
        self.last = Some(Arc::new(Link {
            hash: hash(&name),
            name,
            arith,
            prev,
        }));
    }
}

fn hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_one_definition_per_name() {
        let mut d = Derived::default();
        for n in ["a", "b", "c"] {
            d.set(n.into(), Arith::Num(1.0));
        }
        let before = d.clone();
        d.set("a".into(), Arith::Num(2.0));
        let names: Vec<String> = d.in_order().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["b", "c", "a"]);
        let names: Vec<String> = before.in_order().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn a_long_chain_drops_without_recursing() {
        let mut d = Derived::default();
        for i in 0..200_000 {
            d.push(format!("d{i}"), Arith::Num(1.0));
        }
        let shared = d.clone();
        drop(d);
        assert_eq!(shared.iter().count(), 200_000);
        drop(shared);
    }
}
