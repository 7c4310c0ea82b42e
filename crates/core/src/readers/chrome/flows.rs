//! Launch flows (Chrome `s`/`f` pairs of the `ac2g` kind, Perfetto's flow ids): the
//! fallback that links a GPU activity to its launch when the rows carry no correlation
//! id. Kineto links every activity by correlation, so on its traces (a third of whose
//! events are flows) the lookup maps are never needed: they are built on the first
//! lookup, not at the end of the parse, where 1.2 million inserts into two maps took
//! about 65 ms of the loading thread on a 1 GB trace with the second core idle.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::model::intern::FxBuild;

/// Where a flow starts or ends: (pid, tid, ts), pid and tid interned.
pub type At = (u32, u32, i64);

type Maps = (HashMap<i64, At, FxBuild>, HashMap<At, i64, FxBuild>);

/// The flows of a trace, as the reader listed them in file order.
#[derive(Debug, Default)]
pub struct Flows {
    starts: Vec<(i64, At)>,
    ends: Vec<(At, i64)>,
    maps: OnceLock<Maps>,
}

impl Flows {
    /// `starts`: (id, where it starts); `ends`: (where one ends, its id). For each id and
    /// each end, the last in the lists wins, as when each was inserted into a map as read.
    pub fn from_lists(starts: Vec<(i64, At)>, ends: Vec<(At, i64)>) -> Flows {
        Flows {
            starts,
            ends,
            maps: OnceLock::new(),
        }
    }

    /// Id -> start, and end -> id (built on the first call).
    pub fn maps(&self) -> &Maps {
        self.maps.get_or_init(|| {
            fn build<K: std::hash::Hash + Eq + Copy, V: Copy>(
                list: &[(K, V)],
            ) -> HashMap<K, V, FxBuild> {
                let mut m = HashMap::with_capacity_and_hasher(list.len(), FxBuild::default());
                m.extend(list.iter().copied());
                m
            }
            (build(&self.starts), build(&self.ends))
        })
    }

    /// The start of the flow that ends at `end`.
    pub fn start_of(&self, end: At) -> Option<At> {
        let (starts, ends) = self.maps();
        ends.get(&end).and_then(|id| starts.get(id)).copied()
    }

    /// Whether no flow starts.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Starts as listed: the flows' number where each id is listed once (Perfetto's).
    pub fn starts_listed(&self) -> usize {
        self.starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_listed_wins_and_ends_find_their_starts() {
        let f = Flows::from_lists(
            vec![(1, (1, 1, 10)), (2, (1, 1, 20)), (1, (1, 1, 30))],
            vec![((2, 2, 40), 1), ((2, 2, 50), 2), ((2, 2, 50), 9)],
        );
        assert_eq!(f.start_of((2, 2, 40)), Some((1, 1, 30)));
        // The later end at the same place names id 9, which never starts.
        assert_eq!(f.start_of((2, 2, 50)), None);
        assert_eq!(f.start_of((2, 2, 60)), None);
        assert_eq!(f.maps().0.len(), 2);
        assert!(!f.is_empty());
        assert!(Flows::default().is_empty());
    }
}
