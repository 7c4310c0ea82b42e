//! Path patterns, Hatchet's query model: a sequence of (quantifier, predicate) matched
//! along downward paths that may start at any node; the result is every node on a
//! matched path. Runs in O(nodes x pattern length): a bottom-up pass finds where a
//! pattern suffix can still complete, a top-down pass follows the paths that start.

use crate::model::{Cct, PreOrder};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quant {
    /// Exactly one node.
    One,
    /// Zero or more nodes.
    Star,
}

/// One pattern element; `pred[n]` says whether node n may be consumed by it.
pub struct Elem {
    pub quant: Quant,
    pub pred: Vec<bool>,
}

/// Marks the nodes on any downward path that matches `pattern`.
pub fn match_paths(cct: &Cct, pattern: &[Elem]) -> Vec<bool> {
    let n = cct.len();
    let l = pattern.len();
    let mut marked = vec![false; n];
    if l == 0 || n == 0 {
        return marked;
    }
    // empty[i]: pattern[i..] can match an empty path.
    let mut empty = vec![true; l + 1];
    for i in (0..l).rev() {
        empty[i] = empty[i + 1] && pattern[i].quant == Quant::Star;
    }
    let po = PreOrder::build(cct, |_| {});
    // done[i][node]: pattern[i..] matches a path whose first node is `node`.
    let mut done = vec![vec![false; n]; l + 1];
    // after[i][node]: having consumed `node`, the rest from element i can complete below
    // it (or right there when the rest may be empty).
    let next_of = |i: usize| match pattern[i].quant {
        Quant::One => i + 1,
        Quant::Star => i,
    };
    let mut after = vec![vec![false; n]; l];
    for p in (0..po.len()).rev() {
        let node = po.node[p] as usize;
        for i in (0..l).rev() {
            let nx = next_of(i);
            let cont = empty[i + 1] || cct.children(node as u32).iter().any(|&c| done[nx][c as usize]);
            after[i][node] = cont;
            let consume = pattern[i].pred[node] && cont;
            done[i][node] = consume
                || (pattern[i].quant == Quant::Star && done[i + 1][node]);
        }
    }
    // Forward: reach[i][node] = some start leads to element i at `node`.
    let mut reach = vec![vec![false; n]; l];
    for &node in &po.node {
        let node = node as usize;
        reach[0][node] = true;
        for i in 0..l {
            if !reach[i][node] {
                continue;
            }
            if pattern[i].quant == Quant::Star && i + 1 < l {
                reach[i + 1][node] = true;
            }
            if pattern[i].pred[node] && after[i][node] {
                marked[node] = true;
                let nx = next_of(i);
                if nx < l {
                    for &c in cct.children(node as u32) {
                        if done[nx][c as usize] {
                            reach[nx][c as usize] = true;
                        }
                    }
                }
            }
        }
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    // main -> a -> b -> c ; main -> d
    fn tree() -> Cct {
        let mut c = Cct::default();
        let m = c.child(None, "main", "f");
        let a = c.child(Some(m), "a", "f");
        let b = c.child(Some(a), "b", "f");
        c.child(Some(b), "c", "f");
        c.child(Some(m), "d", "f");
        c
    }

    fn named(c: &Cct, name: &str) -> Vec<bool> {
        (0..c.len() as u32).map(|n| c.name(n) == name).collect()
    }

    fn all(c: &Cct) -> Vec<bool> {
        vec![true; c.len()]
    }

    #[test]
    fn star_then_node_keeps_call_paths() {
        let c = tree();
        let p = [
            Elem { quant: Quant::Star, pred: all(&c) },
            Elem { quant: Quant::One, pred: named(&c, "b") },
        ];
        assert_eq!(match_paths(&c, &p), [true, true, true, false, false]);
    }

    #[test]
    fn single_node_and_trailing_star() {
        let c = tree();
        let p = [Elem { quant: Quant::One, pred: named(&c, "a") }];
        assert_eq!(match_paths(&c, &p), [false, true, false, false, false]);
        let p = [
            Elem { quant: Quant::One, pred: named(&c, "a") },
            Elem { quant: Quant::Star, pred: all(&c) },
        ];
        assert_eq!(match_paths(&c, &p), [false, true, true, true, false]);
    }

    #[test]
    fn exact_chain() {
        let c = tree();
        let p = [
            Elem { quant: Quant::One, pred: named(&c, "a") },
            Elem { quant: Quant::Star, pred: all(&c) },
            Elem { quant: Quant::One, pred: named(&c, "c") },
        ];
        assert_eq!(match_paths(&c, &p), [false, true, true, true, false]);
        let p = [
            Elem { quant: Quant::One, pred: named(&c, "a") },
            Elem { quant: Quant::One, pred: named(&c, "c") },
        ];
        assert_eq!(match_paths(&c, &p), [false; 5]);
    }
}
