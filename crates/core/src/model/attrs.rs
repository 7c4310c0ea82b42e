//! A node's attribute list: (key, value) pairs in insertion order, shared between nodes.
//!
//! Kernel nodes of a big trace repeat a handful of launch configurations hundreds of
//! thousands of times; a list is one reference-counted slice, so nodes (and clones of
//! the tree: undo keeps the loaded one) with equal lists point at one copy. Changing a
//! shared list copies it first, so no other node sees the change.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

pub type Attr = (Arc<str>, Arc<str>);

/// An empty list allocates nothing; lists are short (a few entries), so a push builds a
/// new slice rather than keeping spare capacity on every node.
#[derive(Clone, Default, PartialEq)]
pub struct Attrs(Option<Arc<[Attr]>>);

impl Attrs {
    pub const fn new() -> Attrs {
        Attrs(None)
    }

    pub fn push(&mut self, kv: Attr) {
        let mut v = Vec::with_capacity(self.len() + 1);
        v.extend(self.iter().cloned());
        v.push(kv);
        *self = Attrs(Some(v.into()));
    }

    /// The entries for changing in place (a shared list is copied first).
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Attr> {
        match &mut self.0 {
            None => [].iter_mut(),
            Some(a) => Arc::make_mut(a).iter_mut(),
        }
    }

    /// True when both lists are the same allocation (tests of sharing).
    pub fn shares_with(&self, other: &Attrs) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Deref for Attrs {
    type Target = [Attr];
    fn deref(&self) -> &[Attr] {
        self.0.as_deref().unwrap_or(&[])
    }
}

impl From<Vec<Attr>> for Attrs {
    fn from(v: Vec<Attr>) -> Attrs {
        if v.is_empty() {
            Attrs(None)
        } else {
            Attrs(Some(v.into()))
        }
    }
}

impl<'a> IntoIterator for &'a Attrs {
    type Item = &'a Attr;
    type IntoIter = std::slice::Iter<'a, Attr>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for Attrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(k: &str, v: &str) -> Attr {
        (k.into(), v.into())
    }

    #[test]
    fn push_change_and_copy_on_write() {
        let mut a = Attrs::new();
        assert!(a.is_empty());
        a.push(kv("file", "a.c"));
        a.push(kv("line", "3"));
        let b = a.clone();
        assert!(a.shares_with(&b));
        for (k, v) in a.iter_mut() {
            if &**k == "line" {
                *v = "4".into();
            }
        }
        assert!(!a.shares_with(&b));
        assert_eq!(a[..], [kv("file", "a.c"), kv("line", "4")]);
        assert_eq!(b[..], [kv("file", "a.c"), kv("line", "3")]);
        assert_eq!(Attrs::from(Vec::new()), Attrs::new());
        assert_eq!(format!("{b:?}"), r#"[("file", "a.c"), ("line", "3")]"#);
    }
}
