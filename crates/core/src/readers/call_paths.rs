//! A call-path tree unfolded from a call graph (`model::call_graph`), as KCachegrind's
//! call tree and gprof's call-graph assumption do. The graph holds each function's
//! exact figures; the tree's are estimates, and the profile says so
//! (`CallGraph::estimated_paths`):
//!
//! * Each node has a budget per metric. A function's weight W(F) is its self cost plus
//!   the cost of its calls to other functions.
//! * Roots are the functions no other function calls, in graph order, with budget W(F);
//!   then each function whose callers pay less than half its weight (callgrind's
//!   `clone`: starting a thread costs the caller 36 Ir, the thread runs for millions),
//!   with the unpaid rest; then functions only reached from a cycle no root reaches
//!   (the heaviest first, with a warning).
//! * A node of F with budget B hands its callees B split in proportion to F's self cost and the costs of its call edges
//!   (largest remainders when the file's figures are whole numbers, so the parts are
//!   whole and add up to B exactly); a callee's budget is never more than its own weight.
//! * Recursion and cycles are cut where they close: a callee already on the path is
//!   not expanded again, and a function calling itself is not an edge.
//! * Each function's self cost is then split over its nodes in proportion to their
//!   budgets (largest remainders again), so every function keeps exactly its own self
//!   cost and the tree's totals are the file's. Inclusive values are summed from the
//!   self values, so a child never exceeds its parent.

use crate::model::call_graph::CallGraph;
use crate::model::Cct;

/// A guard against call-path explosion on huge graphs: past it, paths stop growing.
pub const MAX_NODES: usize = 2_000_000;

/// Below this every whole number is exact in an f64.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// The unfolded tree: each node's function and budgets.
pub struct Paths {
    pub cct: Cct,
    /// The function (graph node index) of each tree node.
    pub func: Vec<u32>,
    /// `budget[m][node]`: the node's estimated share of its function's weight.
    budget: Vec<Vec<f64>>,
    /// Whether metric m's figures are all whole numbers (then so are the tree's).
    pub integer: Vec<bool>,
    /// Whether the tree hit `MAX_NODES`.
    pub capped: bool,
    /// Calls not expanded because the callee was already on the path.
    pub cut: u64,
    /// Functions that became roots because only a cycle no root reaches calls them.
    pub cycle_roots: usize,
}

fn whole(v: f64) -> bool {
    (0.0..EXACT).contains(&v) && v.fract() == 0.0
}

/// Splits `total` in proportion to `weights`: plain shares, or whole parts by largest
/// remainders when `integer` and `total` is whole (ties to the earlier weight), so the
/// parts add up to `total` exactly. Weights summing to zero give zeros.
pub fn apportion(total: f64, weights: &[f64], integer: bool) -> Vec<f64> {
    let sum: f64 = weights.iter().sum();
    if sum <= 0.0 || total <= 0.0 || weights.iter().any(|w| *w < 0.0) {
        return vec![0.0; weights.len()];
    }
    if !integer || !whole(total) {
        return weights.iter().map(|w| total * w / sum).collect();
    }
    if whole(sum) && weights.iter().all(|w| whole(*w)) {
        return exact_parts(total as u128, weights, sum as u128);
    }
    // Fractional weights (seconds, percents) apportioning a whole count.
    let quotas: Vec<f64> = weights.iter().map(|w| total * w / sum).collect();
    let mut parts: Vec<f64> = quotas.iter().map(|q| q.floor()).collect();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (quotas[a] - parts[a], quotas[b] - parts[b]);
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    let mut left = total - parts.iter().sum::<f64>();
    // Rounding may leave the floors a unit over or under the total.
    for &i in order.iter().cycle().take(4 * order.len()) {
        if left >= 1.0 {
            parts[i] += 1.0;
            left -= 1.0;
        } else if left <= -1.0 && parts[i] >= 1.0 {
            parts[i] -= 1.0;
            left += 1.0;
        }
    }
    parts
}

/// Largest remainders in exact integer arithmetic.
fn exact_parts(t: u128, weights: &[f64], s: u128) -> Vec<f64> {
    let mut parts: Vec<u128> = Vec::with_capacity(weights.len());
    let mut rems: Vec<(u128, usize)> = Vec::with_capacity(weights.len());
    for (i, w) in weights.iter().enumerate() {
        let x = t * (*w as u128);
        parts.push(x / s);
        rems.push((x % s, i));
    }
    let given: u128 = parts.iter().sum();
    let left = (t - given.min(t)) as usize;
    rems.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in rems.iter().take(left) {
        parts[i] += 1;
    }
    parts.into_iter().map(|p| p as f64).collect()
}

/// Each function's calls to other functions, by callee index (a deterministic order).
fn out_edges(g: &CallGraph) -> Vec<Vec<(u32, Vec<f64>)>> {
    let n = g.len();
    let ne = g.metrics.len();
    (0..n)
        .map(|f| {
            let mut out: Vec<(u32, Vec<f64>)> = g
                .callees(f)
                .filter(|(c, _)| *c != f)
                .map(|(c, call)| {
                    let mut cost = call.cost.clone();
                    cost.resize(ne, 0.0);
                    (c as u32, cost)
                })
                .collect();
            out.sort_by_key(|(c, _)| *c);
            out
        })
        .collect()
}

/// What the walk from each root reads: the out-edges, each function's split weights
/// `[self, call...]` per metric, and their sums W(F).
struct Walk {
    out: Vec<Vec<(u32, Vec<f64>)>>,
    weights: Vec<Vec<Vec<f64>>>,
    w: Vec<Vec<f64>>,
    frames: Vec<crate::model::cct::FrameId>,
    on_path: Vec<bool>,
    seen: Vec<bool>,
}

/// Unfolds the graph into call paths with each node's budgets; all nodes of a function
/// share its frame.
pub fn unfold(g: &CallGraph) -> Paths {
    let (n, ne) = (g.len(), g.metrics.len());
    let out = out_edges(g);
    // What the file gives in whole numbers (instructions, misses, pprof's whole ms)
    // splits in whole numbers; pstats' seconds and gprof2dot's percents never do.
    let integer: Vec<bool> = (0..ne)
        .map(|m| {
            !matches!(g.metrics[m].1.as_str(), "s" | "%")
                && (0..n).all(|f| whole(g.function(f).self_cost[m]))
                && out.iter().flatten().all(|(_, c)| whole(c[m]))
        })
        .collect();
    let weights: Vec<Vec<Vec<f64>>> = (0..n)
        .map(|f| {
            (0..ne)
                .map(|m| {
                    std::iter::once(g.function(f).self_cost[m])
                        .chain(out[f].iter().map(|(_, c)| c[m]))
                        .collect()
                })
                .collect()
        })
        .collect();
    let w: Vec<Vec<f64>> = weights
        .iter()
        .map(|ws| ws.iter().map(|x| x.iter().sum()).collect())
        .collect();
    // What other functions' calls pay into each function.
    let mut paid = vec![vec![0.0; ne]; n];
    let mut called = vec![false; n];
    for o in &out {
        for (c, cost) in o {
            called[*c as usize] = true;
            for (x, y) in paid[*c as usize].iter_mut().zip(cost) {
                *x += y;
            }
        }
    }
    let mut cct = Cct::default();
    let frames = (0..n)
        .map(|f| cct.shared_frame(g.function(f).frame.clone()))
        .collect();
    let mut p = Paths {
        cct,
        func: Vec::new(),
        budget: vec![Vec::new(); ne],
        integer,
        capped: false,
        cut: 0,
        cycle_roots: 0,
    };
    let mut walk = Walk {
        out,
        weights,
        w,
        frames,
        on_path: vec![false; n],
        seen: vec![false; n],
    };
    // Roots: the functions no other function calls, with their whole weight.
    for f in (0..n).filter(|&f| !called[f]) {
        let b = walk.w[f].clone();
        grow(&mut p, &mut walk, f, b);
    }
    // Functions whose callers pay less than half their weight (`clone`, whose call
    // costs the caller 36 Ir while the thread it starts runs for millions): the rest
    // starts a root of its own, else it would be squeezed under the small call.
    let unpaid: Vec<Vec<f64>> = (0..n)
        .map(|f| {
            (0..ne)
                .map(|m| (walk.w[f][m] - paid[f][m]).max(0.0))
                .collect()
        })
        .collect();
    let entries: Vec<usize> = (0..n)
        .filter(|&f| called[f] && ne > 0 && unpaid[f][0] * 2.0 > walk.w[f][0])
        .collect();
    for f in entries {
        grow(&mut p, &mut walk, f, unpaid[f].clone());
    }
    // Functions only reached from a cycle no root reaches: the heaviest first.
    let mut rest: Vec<usize> = (0..n).filter(|&f| !walk.seen[f]).collect();
    let w0: Vec<f64> = (0..n)
        .map(|f| walk.w[f].first().copied().unwrap_or(0.0))
        .collect();
    rest.sort_by(|&a, &b| w0[b].total_cmp(&w0[a]).then(a.cmp(&b)));
    for f in rest {
        if !walk.seen[f] {
            p.cycle_roots += 1;
            let b = walk.w[f].clone();
            grow(&mut p, &mut walk, f, b);
        }
    }
    p
}

/// Adds the call paths from root `r` with budget `b`, depth first (an explicit stack:
/// call chains can be deep).
fn grow(p: &mut Paths, walk: &mut Walk, r: usize, b: Vec<f64>) {
    enum Step {
        Enter(u32, Option<u32>, Vec<f64>),
        Exit(u32),
    }
    let ne = b.len();
    let mut stack = vec![Step::Enter(r as u32, None, b)];
    while let Some(step) = stack.pop() {
        let (f, parent, b) = match step {
            Step::Exit(f) => {
                walk.on_path[f as usize] = false;
                continue;
            }
            Step::Enter(f, parent, b) => (f, parent, b),
        };
        let fu = f as usize;
        let node = p.cct.add_shared(parent, walk.frames[fu]);
        p.func.push(f);
        walk.seen[fu] = true;
        walk.on_path[fu] = true;
        stack.push(Step::Exit(f));
        if p.cct.len() >= MAX_NODES {
            p.capped = true;
        } else {
            let parts: Vec<Vec<f64>> = (0..ne)
                .map(|m| apportion(b[m], &walk.weights[fu][m], p.integer[m]))
                .collect();
            for (i, (callee, _)) in walk.out[fu].iter().enumerate().rev() {
                let cu = *callee as usize;
                if walk.on_path[cu] {
                    p.cut += 1;
                    continue;
                }
                let cb = (0..ne).map(|m| parts[m][i + 1].min(walk.w[cu][m]));
                stack.push(Step::Enter(*callee, Some(node), cb.collect()));
            }
        }
        for (col, x) in p.budget.iter_mut().zip(b) {
            col.push(x);
        }
    }
}

/// The warnings an unfolding owes: where it cut the tree short, where it made roots.
pub fn warn(p: &Paths, warnings: &mut Vec<String>) {
    if p.cycle_roots > 0 {
        warnings.push(format!(
            "{} function(s) are only called from within a cycle; each became a root",
            p.cycle_roots
        ));
    }
    if p.capped {
        warnings.push(format!(
            "the call graph unfolds into more than {MAX_NODES} call paths; deeper paths were cut"
        ));
    }
}

impl Paths {
    /// Splits one figure per function over the function's nodes in proportion to the
    /// nodes' budgets of metric `m` (equally where they are all zero); whole numbers
    /// stay whole.
    pub fn spread(&self, per_func: &[f64], m: usize) -> Vec<f64> {
        let integer = per_func
            .iter()
            .filter(|v| !v.is_nan())
            .all(|v| whole(v.abs()));
        self.spread_as(per_func, m, integer)
    }

    /// `spread`, in whole numbers when `integer`.
    fn spread_as(&self, per_func: &[f64], m: usize, integer: bool) -> Vec<f64> {
        let nf = per_func.len();
        let mut nodes: Vec<Vec<u32>> = vec![Vec::new(); nf];
        for (node, &f) in self.func.iter().enumerate() {
            nodes[f as usize].push(node as u32);
        }
        let mut out = vec![0.0; self.func.len()];
        for (f, ns) in nodes.iter().enumerate() {
            let v = per_func[f];
            if ns.is_empty() || v == 0.0 {
                continue;
            }
            let mut w: Vec<f64> = match self.budget.get(m) {
                Some(b) => ns.iter().map(|&n| b[n as usize]).collect(),
                None => vec![1.0; ns.len()],
            };
            if w.iter().sum::<f64>() <= 0.0 {
                w = vec![1.0; ns.len()];
            }
            let parts = if v < 0.0 {
                apportion(-v, &w, integer).into_iter().map(|x| -x).collect()
            } else {
                apportion(v, &w, integer)
            };
            for (&n, x) in ns.iter().zip(parts) {
                out[n as usize] = x;
            }
        }
        out
    }

    /// Each node's estimated self cost of metric m.
    pub fn exclusive(&self, g: &CallGraph, m: usize) -> Vec<f64> {
        let per_func: Vec<f64> = (0..g.len()).map(|f| g.function(f).self_cost[m]).collect();
        // Whole only when the metric is (seconds that happen to be whole stay seconds).
        self.spread_as(&per_func, m, self.integer[m])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::call_graph::Function;

    #[test]
    fn largest_remainders_are_whole_and_exact() {
        assert_eq!(apportion(10.0, &[1.0, 1.0, 1.0], true), vec![4.0, 3.0, 3.0]);
        assert_eq!(apportion(7.0, &[0.0, 5.0, 2.0], true), vec![0.0, 5.0, 2.0]);
        assert_eq!(apportion(3.0, &[0.0, 0.0], true), vec![0.0, 0.0]);
        assert_eq!(apportion(5.0, &[0.1, 0.2, 0.2], true), vec![1.0, 2.0, 2.0]);
        let p = apportion(1.0, &[1.0, 3.0], false);
        assert_eq!(p, vec![0.25, 0.75]);
        let big = apportion(1_238_977_669.0, &[3.0, 7.0, 11.0], true);
        assert_eq!(big.iter().sum::<f64>(), 1_238_977_669.0);
        assert!(big.iter().all(|x| x.fract() == 0.0));
    }

    fn graph(funcs: &[(&str, f64)], calls: &[(usize, usize, f64)]) -> CallGraph {
        let mut g = CallGraph::new(vec![("Ir".into(), String::new())]);
        for (n, s) in funcs {
            g.add_function(Function {
                frame: crate::model::Frame::new(n, "function"),
                self_cost: vec![*s],
                inclusive: vec![0.0],
                calls: f64::NAN,
            });
        }
        for &(a, b, c) in calls {
            g.add_call((a as u32).into(), (b as u32).into(), 1.0, &[c]);
        }
        g
    }

    #[test]
    fn shared_callee_is_split_in_whole_numbers() {
        // main calls a and b; both call c (c's 7 self split 3:4 by the edge costs).
        let g = graph(
            &[("main", 1.0), ("a", 2.0), ("b", 2.0), ("c", 7.0)],
            &[(0, 1, 5.0), (0, 2, 6.0), (1, 3, 3.0), (2, 3, 4.0)],
        );
        let p = unfold(&g);
        assert_eq!(p.func, vec![0, 1, 3, 2, 3]);
        let ex = p.exclusive(&g, 0);
        assert_eq!(ex, vec![1.0, 2.0, 3.0, 2.0, 4.0]);
    }

    #[test]
    fn cycles_are_cut_and_self_totals_hold() {
        // main -> a -> b -> a (a cycle), a -> a (recursion, not an edge).
        let g = graph(
            &[("main", 10.0), ("a", 20.0), ("b", 10.0)],
            &[(0, 1, 60.0), (1, 2, 40.0), (2, 1, 30.0), (1, 1, 25.0)],
        );
        let p = unfold(&g);
        assert_eq!(p.cct.len(), 3);
        assert_eq!(p.cut, 1);
        assert_eq!(p.exclusive(&g, 0).iter().sum::<f64>(), 40.0);
    }
}
