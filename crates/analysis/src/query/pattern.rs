//! Path patterns, Hatchet's query model: a sequence of (quantifier, predicate) matched
//! along downward paths; the result is every node on a matched path.
//!
//! The matching follows Hatchet's engine step for step, because users compare the
//! kept nodes with Hatchet's: a match may start at any node; `*` is non-greedy (it
//! stops at the first node that satisfies the next step, and that node is then taken
//! by the next step); a `*` in first position may also consume the start node; a
//! trailing `*` runs down every chain of matching nodes. On a tree a path is fixed by
//! its first and last node, so partial matches are (first, last) pairs, not lists.

use crate::model::Cct;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quant {
    /// Exactly one node.
    One,
    /// Zero or more nodes.
    Star,
}

/// One pattern element; `pred[n]` says whether node n satisfies it.
pub struct Elem {
    pub quant: Quant,
    pub pred: Vec<bool>,
}

/// A node under a `*`: its children, the next child to visit, and the ends found.
type StarFrame = (u32, Vec<u32>, usize, Vec<Option<u32>>);

struct Matcher<'a> {
    cct: &'a Cct,
    p: &'a [Elem],
}

impl Matcher<'_> {
    fn kids(&self, n: u32) -> Vec<u32> {
        let mut k: Vec<u32> = self.cct.children(n).collect();
        k.sort_unstable();
        k
    }

    /// What a `*` at element `j` makes of the subtree at `node`: `None` when no path
    /// goes on through it; otherwise the new last nodes (`None` inside = the path stops
    /// before `node`). Iterative: real CCTs are deep.
    fn star(&self, node: u32, j: usize) -> Option<Vec<Option<u32>>> {
        let last = j + 1 == self.p.len();
        // Decide for one node without looking at children: Some(result) when final.
        let direct = |n: u32| -> Option<Option<Vec<Option<u32>>>> {
            if !last && self.p[j + 1].pred[n as usize] {
                return Some(Some(vec![None]));
            }
            if !self.p[j].pred[n as usize] {
                return Some(if last { Some(vec![None]) } else { None });
            }
            if !self.cct.has_children(n) {
                return Some(if last { Some(vec![Some(n)]) } else { None });
            }
            None
        };
        if let Some(r) = direct(node) {
            return r;
        }
        // Frames: (node, its children, next child index, collected ends).
        let mut stack: Vec<StarFrame> = vec![(node, self.kids(node), 0, Vec::new())];
        loop {
            let top = stack.last_mut().unwrap();
            if top.2 < top.1.len() {
                let c = top.1[top.2];
                top.2 += 1;
                match direct(c) {
                    Some(Some(v)) => top.3.extend(v),
                    Some(None) => {}
                    None => {
                        let kids = self.kids(c);
                        stack.push((c, kids, 0, Vec::new()));
                    }
                }
                continue;
            }
            let (n, _, _, mut ends) = stack.pop().unwrap();
            let result = if ends.is_empty() {
                None
            } else {
                ends.sort_unstable();
                ends.dedup();
                Some(
                    ends.into_iter()
                        .map(|x| Some(x.unwrap_or(n)))
                        .collect::<Vec<_>>(),
                )
            };
            match stack.last_mut() {
                None => return result,
                Some(parent) => {
                    if let Some(v) = result {
                        parent.3.extend(v);
                    }
                }
            }
        }
    }

    /// Every match that starts at `root` taken by element `idx`: the last nodes.
    fn from(&self, root: u32, idx: usize) -> Vec<u32> {
        let l = self.p.len();
        let mut j = if self.p[idx].quant == Quant::Star {
            0
        } else {
            idx + 1
        };
        let mut matches = vec![root];
        while j < l {
            let mut next = Vec::new();
            for &last in &matches {
                match self.p[j].quant {
                    Quant::One => {
                        next.extend(
                            self.kids(last)
                                .into_iter()
                                .filter(|&c| self.p[j].pred[c as usize]),
                        );
                    }
                    Quant::Star => {
                        let kids = self.kids(last);
                        if kids.is_empty() {
                            next.push(last);
                        }
                        for c in kids {
                            if let Some(v) = self.star(c, j) {
                                next.extend(v.into_iter().map(|x| x.unwrap_or(last)));
                            }
                        }
                    }
                }
            }
            next.dedup();
            if next.is_empty() {
                return Vec::new();
            }
            matches = next;
            j += 1;
        }
        matches
    }
}

/// Marks the nodes on any downward path that matches `pattern`.
pub fn match_paths(cct: &Cct, pattern: &[Elem]) -> Vec<bool> {
    let mut marked = vec![false; cct.len()];
    if pattern.is_empty() {
        return marked;
    }
    let m = Matcher { cct, p: pattern };
    let mut spans: Vec<(u32, u32)> = Vec::new();
    for n in 0..cct.len() as u32 {
        if pattern[0].quant == Quant::Star && pattern.len() > 1 && pattern[1].pred[n as usize] {
            spans.extend(m.from(n, 1).into_iter().map(|e| (n, e)));
        }
        if pattern[0].pred[n as usize] {
            spans.extend(m.from(n, 0).into_iter().map(|e| (n, e)));
        }
    }
    spans.sort_unstable();
    spans.dedup();
    for (start, end) in spans {
        let mut x = end;
        loop {
            marked[x as usize] = true;
            if x == start {
                break;
            }
            match cct.parent(x) {
                Some(p) => x = p,
                None => break,
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
            Elem {
                quant: Quant::Star,
                pred: all(&c),
            },
            Elem {
                quant: Quant::One,
                pred: named(&c, "b"),
            },
        ];
        assert_eq!(match_paths(&c, &p), [true, true, true, false, false]);
    }

    #[test]
    fn single_node_and_trailing_star() {
        let c = tree();
        let p = [Elem {
            quant: Quant::One,
            pred: named(&c, "a"),
        }];
        assert_eq!(match_paths(&c, &p), [false, true, false, false, false]);
        let p = [
            Elem {
                quant: Quant::One,
                pred: named(&c, "a"),
            },
            Elem {
                quant: Quant::Star,
                pred: all(&c),
            },
        ];
        assert_eq!(match_paths(&c, &p), [false, true, true, true, false]);
    }

    #[test]
    fn exact_chain() {
        let c = tree();
        let p = [
            Elem {
                quant: Quant::One,
                pred: named(&c, "a"),
            },
            Elem {
                quant: Quant::Star,
                pred: all(&c),
            },
            Elem {
                quant: Quant::One,
                pred: named(&c, "c"),
            },
        ];
        assert_eq!(match_paths(&c, &p), [false, true, true, true, false]);
        let p = [
            Elem {
                quant: Quant::One,
                pred: named(&c, "a"),
            },
            Elem {
                quant: Quant::One,
                pred: named(&c, "c"),
            },
        ];
        assert_eq!(match_paths(&c, &p), [false; 5]);
    }
}
