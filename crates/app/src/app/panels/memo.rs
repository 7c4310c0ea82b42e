//! A value derived from state, kept until its inputs change. Views get `&App`, so the
//! first frame after a change computes it (once) and every later frame reads it: a
//! frame costs what is on screen, not a pass over the whole profile. The key names the
//! inputs; `clear` drops the value when an input that is not in the key changes.

use std::sync::{Arc, Mutex};

pub struct Memo<K, V> {
    slot: Mutex<Option<(K, Arc<V>)>>,
}

impl<K: PartialEq + Clone, V> Memo<K, V> {
    /// The value for `key`, computed by `make` only when the key differs from the
    /// last one (or after `clear`).
    pub fn get(&self, key: &K, make: impl FnOnce() -> V) -> Arc<V> {
        // A poisoned lock only means a panic elsewhere mid-compute: start afresh.
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, v)) = slot.as_ref() {
            if k == key {
                return Arc::clone(v);
            }
        }
        let v = Arc::new(make());
        *slot = Some((key.clone(), Arc::clone(&v)));
        v
    }

    pub fn clear(&self) {
        *self.slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo {
            slot: Mutex::new(None),
        }
    }
}

/// A copy shares the value: an undo checkpoint's copy of a panel's state keeps its
/// derived data, so undoing does not derive it again. The key still decides on every
/// use; of the inputs outside a key, the metric table is put back with the checkpoint,
/// and the GPU state changes only when a trace's events arrive, before which no
/// breakdown table was derived.
impl<K: Clone, V> Clone for Memo<K, V> {
    fn clone(&self) -> Self {
        let slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        Memo {
            slot: Mutex::new(slot.as_ref().map(|(k, v)| (k.clone(), Arc::clone(v)))),
        }
    }
}

impl<K, V> std::fmt::Debug for Memo<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_key() {
        let m: Memo<u32, u32> = Memo::default();
        let mut calls = 0;
        assert_eq!(
            *m.get(&1, || {
                calls += 1;
                10
            }),
            10
        );
        assert_eq!(*m.get(&1, || unreachable!()), 10);
        assert_eq!(*m.get(&2, || 20), 20);
        m.clear();
        assert_eq!(*m.get(&2, || 21), 21);
        assert_eq!(calls, 1);
    }
}
