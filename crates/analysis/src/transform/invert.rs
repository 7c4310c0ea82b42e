//! The bottom-up (inverted) tree (issue 26, `grove tree --inverted`): its roots are the
//! functions with self cost, the children of a node the functions that called it, and
//! a node of the chain F <- G <- ... <- R holds, per metric, the self cost of F spent on
//! the call paths that end in `R > ... > G > F`. It is an ordinary `Cct` and
//! `MetricTable`, so every writer prints it:
//!
//! * the exclusive column of a node is the self cost of the paths whose whole call
//!   chain it is (R a root of the original tree); the inclusive column sums its subtree,
//!   so a root's inclusive value is its function's self cost (the functions table's),
//!   and the roots add up to the profile's total;
//! * functions are identified as in the functions table (`functions::identity`), and
//!   each node keeps the frame (attributes included) of its function's first node;
//! * recursion is not folded: `F <- F <- main` is a chain of its own, as in `perf
//!   report --no-children`;
//! * children are ordered by the first metric's inclusive value, largest first.
//!
//! Its size is about the tree's nodes times their mean depth (each node with self cost
//! is the end of a chain of its own), so it is made without a hash map (`Chains`).

use super::functions::{columns, identify, Columns};
use crate::model::metrics::{base_of_inclusive, inclusive_name};
use crate::model::{Cct, MetricTable, Profile, NO_NODE};

/// Past this many nodes the inverted tree is refused (a tree of N nodes inverts to
/// about N times its mean depth).
pub const MAX_NODES: usize = 1 << 28;

/// The inverted tree of a tree and its metric table.
pub fn invert(cct: &Cct, metrics: &MetricTable) -> Result<(Cct, MetricTable), String> {
    let (of_node, _, first) = identify(cct);
    let cols = columns(cct, metrics);
    if cols.is_empty() {
        return Err("no metric to invert the tree by".into());
    }
    let chains = Chains::build(cct, &of_node, &cols)?;
    // One shared frame per function: its first node's, attributes included.
    let frames = first.iter().map(|&n| cct.frame(n).clone()).collect();
    let out = Cct::from_parents(frames, chains.func, chains.up);
    let (exc, inc) = (chains.exc, chains.inc);
    let mut table = MetricTable::new(out.len());
    for ((c, exc), inc) in cols.iter().zip(exc).zip(inc) {
        // An inclusive-only metric (`X (inc)`) gets its exclusive column `X` here.
        let (exc_name, inc_name) = match base_of_inclusive(&c.name) {
            Some(b) => (b, c.name.clone()),
            None => (c.name.clone(), inclusive_name(&c.name)),
        };
        table.set(&exc_name, &c.unit, exc);
        table.set(&inc_name, &c.unit, inc);
    }
    Ok((out, table))
}

/// The inverted tree's nodes in the order they are made (parents first): each one's
/// parent and function, and its values per metric.
struct Chains {
    up: Vec<u32>,
    func: Vec<u32>,
    exc: Vec<Vec<f64>>,
    inc: Vec<Vec<f64>>,
}

/// Buffers reused for every group (a deep random tree has millions of groups of one
/// cursor).
#[derive(Default)]
struct Scratch {
    /// Children of the group: function, first metric's sum, cursors going on up.
    kids: Vec<(u32, f64, usize)>,
    /// The child of each cursor of the group.
    slot_of: Vec<u32>,
    /// The parent of each cursor's node and its function (`Up`), read once.
    up_of: Vec<u64>,
    order: Vec<u32>,
    id_of: Vec<u32>,
    fill: Vec<usize>,
}

/// One depth's cursors, grouped by inverted node. A cursor is a node of the original
/// tree on its way up: the ancestor its chain has reached (`at`), that node's function,
/// and the self cost per metric it carries (`vals`, `nm` per cursor): carried rather
/// than looked up, since after a few depths the cursors' origins are scattered over the
/// tree and each lookup would miss the cache.
struct Depth {
    at: Vec<u32>,
    func: Vec<u32>,
    vals: Vec<f64>,
    /// (inverted node or NO_NODE, first cursor, end).
    groups: Vec<(u32, usize, usize)>,
}

impl Depth {
    fn with_capacity(n: usize, nm: usize) -> Depth {
        Depth {
            at: Vec::with_capacity(n),
            func: Vec::with_capacity(n),
            vals: Vec::with_capacity(n * nm),
            groups: Vec::new(),
        }
    }
}

/// Each node's parent and the parent's function in one word (`NO_NODE` parent: a
/// root), so a step up reads one place.
fn ups(cct: &Cct, of_node: &[u32]) -> Vec<u64> {
    (0..cct.len() as u32)
        .map(|n| match cct.parent(n) {
            Some(p) => (p as u64) << 32 | of_node[p as usize] as u64,
            None => (NO_NODE as u64) << 32,
        })
        .collect()
}

/// Whether node n has self cost in some metric: only such nodes end a chain.
fn has_self(cols: &[Columns], n: usize) -> bool {
    cols.iter().any(|c| c.exc[n] != 0.0 && !c.exc[n].is_nan())
}

/// The sum of the chains' lengths (depth + 1 of each node with self cost): the most
/// nodes the inverted tree can have.
fn chain_bound(cct: &Cct, cols: &[Columns]) -> usize {
    let depths = cct.depths();
    (0..cct.len())
        .filter(|&n| has_self(cols, n))
        .map(|n| depths[n] as usize + 1)
        .sum()
}

impl Chains {
    /// Made one depth at a time: the cursors of an inverted node (contiguous) are
    /// grouped by the function of the node they have reached, each group a child, the
    /// children ordered by the first metric's value, largest first (ties in order of
    /// first appearance); then each cursor steps up to its parent, and one without a
    /// parent ends its chain there. A stamp per function stands in for a hash map, and
    /// the next depth's cursors are put in place by counts, so each step up a chain
    /// costs a few array reads.
    fn build(cct: &Cct, of_node: &[u32], cols: &[Columns]) -> Result<Chains, String> {
        let nf = of_node.iter().map(|&f| f as usize + 1).max().unwrap_or(0);
        let nm = cols.len();
        let mut ch = Chains {
            up: Vec::new(),
            func: Vec::new(),
            exc: vec![Vec::new(); nm],
            inc: vec![Vec::new(); nm],
        };
        let up = ups(cct, of_node);
        // At most a node per step up each chain: reserved at once, the columns are not
        // copied as they grow (pages never written are never faulted in).
        let bound = chain_bound(cct, cols).min(MAX_NODES + 1);
        ch.up.reserve(bound);
        ch.func.reserve(bound);
        crate::memory::prefer_huge_pages(&mut ch.up);
        crate::memory::prefer_huge_pages(&mut ch.func);
        for col in ch.exc.iter_mut().chain(ch.inc.iter_mut()) {
            col.reserve(bound);
            crate::memory::prefer_huge_pages(col);
        }
        // The roots' depth: every node with self cost, in one group under no node.
        let mut d = Depth::with_capacity(cct.len(), nm);
        for (n, &f) in of_node.iter().enumerate() {
            if has_self(cols, n) {
                d.at.push(n as u32);
                d.func.push(f);
                let v = cols.iter().map(|c| c.exc[n]);
                d.vals.extend(v.map(|v| if v.is_nan() { 0.0 } else { v }));
            }
        }
        d.groups.push((NO_NODE, 0, d.at.len()));
        let mut next = Depth::with_capacity(d.at.len(), nm);
        let mut stamp = vec![u32::MAX; nf];
        let mut local = vec![0u32; nf];
        let mut sc = Scratch::default();
        let mut g_no = 0u32;
        while !d.groups.is_empty() {
            next.at.clear();
            next.func.clear();
            next.vals.clear();
            next.groups.clear();
            for &(parent, lo, hi) in &d.groups {
                if hi - lo == 1 {
                    // Most groups of a deep tree: one cursor, one child.
                    ch.single(parent, &d, lo, up[d.at[lo] as usize], &mut next);
                    continue;
                }
                sc.kids.clear();
                sc.slot_of.clear();
                sc.up_of.clear();
                for i in lo..hi {
                    let f = d.func[i] as usize;
                    if stamp[f] != g_no {
                        stamp[f] = g_no;
                        local[f] = sc.kids.len() as u32;
                        sc.kids.push((f as u32, 0.0, 0));
                    }
                    let k = &mut sc.kids[local[f] as usize];
                    k.1 += d.vals[i * nm];
                    let u = up[d.at[i] as usize];
                    if (u >> 32) as u32 != NO_NODE {
                        k.2 += 1;
                    }
                    sc.up_of.push(u);
                    sc.slot_of.push(local[f]);
                }
                g_no = g_no.wrapping_add(1);
                ch.group(parent, &mut sc, &mut next)?;
                ch.step(&d, (lo, hi), &mut sc, &mut next);
            }
            std::mem::swap(&mut d, &mut next);
        }
        Ok(ch)
    }

    /// A node of function f under `parent` (NO_NODE: a root).
    fn add(&mut self, parent: u32, f: u32) -> u32 {
        let id = self.up.len() as u32;
        self.up.push(parent);
        self.func.push(f);
        id
    }

    /// The one child of a group of one cursor, and the cursor's step up.
    fn single(&mut self, parent: u32, d: &Depth, i: usize, u: u64, next: &mut Depth) {
        let nm = self.exc.len();
        let id = self.add(parent, d.func[i]);
        let vals = &d.vals[i * nm..(i + 1) * nm];
        let above = (u >> 32) as u32;
        for (m, &v) in vals.iter().enumerate() {
            self.inc[m].push(v);
            self.exc[m].push(if above == NO_NODE { v } else { 0.0 });
        }
        if above != NO_NODE {
            let at = next.at.len();
            next.groups.push((id, at, at + 1));
            next.at.push(above);
            next.func.push(u as u32);
            next.vals.extend_from_slice(vals);
        }
    }

    /// Makes the children of one group, largest first, and sets out where their
    /// cursors go in the next depth.
    fn group(&mut self, parent: u32, sc: &mut Scratch, next: &mut Depth) -> Result<(), String> {
        let kids = &sc.kids;
        sc.order.clear();
        sc.order.extend(0..kids.len() as u32);
        if kids.len() > 1 {
            sc.order.sort_by(|&a, &b| {
                kids[b as usize]
                    .1
                    .total_cmp(&kids[a as usize].1)
                    .then(a.cmp(&b))
            });
        }
        sc.id_of.clear();
        sc.id_of.resize(kids.len(), 0);
        sc.fill.clear();
        sc.fill.resize(kids.len(), 0);
        let mut at = next.at.len();
        for &k in &sc.order {
            let (f, _, going) = kids[k as usize];
            let id = self.add(parent, f);
            sc.id_of[k as usize] = id;
            sc.fill[k as usize] = at;
            if going > 0 {
                next.groups.push((id, at, at + going));
            }
            at += going;
        }
        if self.up.len() > MAX_NODES {
            return Err(format!(
                "the inverted tree would have over {MAX_NODES} nodes; filter the tree first"
            ));
        }
        let nm = self.exc.len();
        next.at.resize(at, 0);
        next.func.resize(at, 0);
        next.vals.resize(at * nm, 0.0);
        for m in 0..nm {
            self.exc[m].resize(self.up.len(), 0.0);
            self.inc[m].resize(self.up.len(), 0.0);
        }
        Ok(())
    }

    /// Adds each cursor's self cost to its child, and moves it up to its parent in the
    /// next depth (or ends its chain at the child).
    fn step(&mut self, d: &Depth, (lo, hi): (usize, usize), sc: &mut Scratch, next: &mut Depth) {
        let nm = self.exc.len();
        for (j, i) in (lo..hi).enumerate() {
            let k = sc.slot_of[j] as usize;
            let id = sc.id_of[k] as usize;
            let u = sc.up_of[j];
            let vals = &d.vals[i * nm..(i + 1) * nm];
            let parent = (u >> 32) as u32;
            for (m, &v) in vals.iter().enumerate() {
                self.inc[m][id] += v;
                if parent == NO_NODE {
                    self.exc[m][id] += v;
                }
            }
            if parent != NO_NODE {
                let at = sc.fill[k];
                next.at[at] = parent;
                next.func[at] = u as u32;
                next.vals[at * nm..(at + 1) * nm].copy_from_slice(vals);
                sc.fill[k] += 1;
            }
        }
    }
}

/// The profile with its tree inverted: the events and counters (which name nodes of the
/// tree) are dropped; the call graph stays, so a tree unfolded from one is still marked
/// estimated.
pub fn invert_profile(mut p: Profile) -> Result<Profile, String> {
    let (cct, metrics) = invert(&p.cct, &p.metrics)?;
    // The default metric stays the exclusive column (an inclusive-only one's is made
    // here), so folded stacks of the inverted tree count each path once; `grove tree
    // --inverted` shows the inclusive column by default.
    let base = base_of_inclusive(&p.default_metric).unwrap_or(p.default_metric.clone());
    if metrics.has(&base) {
        p.default_metric = base;
    } else if let Some(first) = metrics.base_metrics().into_iter().next() {
        p.default_metric = first;
    }
    p.cct = cct;
    p.metrics = metrics;
    p.events = None;
    p.counters = None;
    Ok(p)
}
