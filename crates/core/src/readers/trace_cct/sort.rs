//! Sorting a lane's slices when they are nearly in order already.
//!
//! Profilers write a slice when it ends, so a lane's rows come in post-order: a parent
//! after its children, each a few places from where its start puts it (Kineto's
//! ProfilerStep a step's length away). Insertion costs a move per place a row is off,
//! a few per row here, where a general sort compares every row log n times through
//! two indirections. A lane far from order stops early and is left to the general sort.

/// Rows a row is compared with one by one before the rest of the sorted prefix is
/// searched by halves (a parent that ends a long run of children).
const SCAN: usize = 8;

/// Sorts `idx` by `key` by insertion if it takes at most a few moves per row, and
/// says whether it did; otherwise `idx` is left a permutation of itself, to be sorted
/// otherwise. Keys must be unique (then any correct sort gives this order).
pub fn nearly_sorted<K: Ord>(idx: &mut [u32], key: impl Fn(u32) -> K) -> bool {
    // Rows moved so far against what insertion may move: past this the input is far
    // from order and a general sort is cheaper.
    let budget = 4 * idx.len() + 4096;
    let mut moved = 0usize;
    for j in 1..idx.len() {
        let x = idx[j];
        let kx = key(x);
        if key(idx[j - 1]) <= kx {
            continue;
        }
        // Where x goes: scan a few rows back, then halve the rest of the prefix.
        let mut at = j - 1;
        let mut scanned = 1;
        while at > 0 && scanned < SCAN && key(idx[at - 1]) > kx {
            at -= 1;
            scanned += 1;
        }
        if at > 0 && scanned == SCAN {
            // idx[..at] is sorted and idx[at] > kx: the first row above kx in it.
            at = idx[..at].partition_point(|&r| key(r) <= kx);
        }
        moved += j - at;
        if moved > budget {
            return false;
        }
        idx.copy_within(at..j, at + 1);
        idx[at] = x;
    }
    true
}

/// Sorts `idx` by `key` when few rows are out of place, however far (a file that writes
/// each step's annotation after the step): rows in order of the running maximum are
/// kept, the rest sorted alone and merged in. Says whether it did; otherwise `idx` is
/// unchanged. Keys must be unique.
pub fn few_out_of_place<K: Ord + Copy>(idx: &mut [u32], key: impl Fn(u32) -> K) -> bool {
    let mut kept: Vec<(K, u32)> = Vec::with_capacity(idx.len());
    let mut rest: Vec<(K, u32)> = Vec::new();
    for &x in idx.iter() {
        let k = key(x);
        match kept.last() {
            Some(&(last, _)) if k < last => rest.push((k, x)),
            _ => kept.push((k, x)),
        }
        // Past this share a general sort of everything is cheaper.
        if rest.len() > idx.len() / 8 + 64 {
            return false;
        }
    }
    // Keys side by side: no reaching into columns at scattered rows while sorting.
    rest.sort_unstable_by_key(|a| a.0);
    let (mut a, mut b) = (kept.iter().peekable(), rest.iter().peekable());
    for slot in idx.iter_mut() {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.0 < y.0,
            (Some(_), None) => true,
            _ => false,
        };
        let next = if take_a { a.next() } else { b.next() };
        if let Some(&(_, x)) = next {
            *slot = x;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(keys: &[i64]) {
        let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
        let key = |i: u32| (keys[i as usize], i);
        let mut want = idx.clone();
        want.sort_by_key(|&i| key(i));
        let mut other = idx.clone();
        if !nearly_sorted(&mut idx, key) {
            let mut seen = idx.clone();
            seen.sort();
            assert_eq!(seen, (0..keys.len() as u32).collect::<Vec<_>>());
            idx.sort_unstable_by_key(|&i| key(i));
        }
        assert_eq!(idx, want);
        let before = other.clone();
        if few_out_of_place(&mut other, key) {
            assert_eq!(other, want);
        } else {
            assert_eq!(other, before);
        }
    }

    #[test]
    fn sorts_post_order_and_gives_up_on_disorder() {
        check(&[]);
        check(&[5]);
        check(&[3, 2, 1, 0]);
        check(&[1, 1, 0, 2, 2, 1]);
        // Post-order: children first, the parent (earlier start) after them.
        let mut post = Vec::new();
        for step in 0..50i64 {
            for op in 0..40i64 {
                let t = step * 1000 + op * 20 + 1;
                post.extend([t + 2, t + 1, t]);
            }
            post.push(step * 1000);
        }
        check(&post);
        // Each step's annotation written after the step: far out of place, but few.
        let mut late = Vec::new();
        for step in 0..20i64 {
            late.extend((1..500).map(|k| step * 1000 + k));
            late.push(step * 1000);
        }
        check(&late);
        let mut idx: Vec<u32> = (0..late.len() as u32).collect();
        assert!(few_out_of_place(&mut idx, |i| (late[i as usize], i)));
        let mut idx: Vec<u32> = (0..post.len() as u32).collect();
        assert!(nearly_sorted(&mut idx, |i| (post[i as usize], i)));
        // Reversed: far from order, given up.
        let rev: Vec<i64> = (0..100_000).rev().collect();
        let mut idx: Vec<u32> = (0..rev.len() as u32).collect();
        assert!(!nearly_sorted(&mut idx, |i| (rev[i as usize], i)));
        check(&rev);
        let mut x = 12345u64;
        let rnd: Vec<i64> = (0..10_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 40) as i64 % 500
            })
            .collect();
        check(&rnd);
    }
}
