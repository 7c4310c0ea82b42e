use super::cycles::Cycles;
use super::edges::ROOT;
use super::*;
use crate::model::call_graph::Function as GraphFunction;
use crate::model::Frame;
use crate::transform::invert::invert;

/// main -> f -> g -> f -> h ; main -> g ; with self times 1, 2, 4, 8, 16, 32.
fn recursive() -> (Cct, MetricTable) {
    let mut c = Cct::default();
    let main = c.child(None, "main", "function");
    let f1 = c.child(Some(main), "f", "function");
    let g1 = c.child(Some(f1), "g", "function");
    let f2 = c.child(Some(g1), "f", "function");
    let _h = c.child(Some(f2), "h", "function");
    let _g2 = c.child(Some(main), "g", "function");
    let mut m = MetricTable::new(c.len());
    m.set("time", "ns", vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0]);
    m.set("count", "", vec![1.0, 1.0, 2.0, 3.0, 1.0, 5.0]);
    m.derive_inclusive(&c, &["time"]);
    (c, m)
}

fn by_name(t: &Functions, name: &str) -> usize {
    t.find(name)[0] as usize
}

#[test]
fn recursion_counts_once_per_path() {
    let (c, m) = recursive();
    let t = Functions::of_paths(&c, &m);
    assert_eq!(t.len(), 4);
    assert_eq!(
        t.metrics.len(),
        1,
        "count is the calls column, not a metric"
    );
    let f = by_name(&t, "f");
    let g = by_name(&t, "g");
    assert_eq!(t.self_cost[0][f], 10.0);
    // f's outer node only: 2 + 4 + 8 + 16.
    assert_eq!(t.inclusive[0][f], 30.0);
    // g: its node under f (4 + 8 + 16) and under main (32).
    assert_eq!(t.inclusive[0][g], 60.0);
    assert_eq!(t.totals[0], 63.0);
    assert_eq!(t.inclusive[0][by_name(&t, "main")], 63.0);
    assert_eq!(t.calls.as_ref().unwrap()[g], 7.0);
    assert_eq!(t.calls_name.as_deref(), Some("count"));
    let order = t.order(0, Column::Self_, false);
    assert_eq!(t.functions[order[0] as usize].name.as_ref(), "g");
    let order = t.order(0, Column::Name, false);
    assert_eq!(t.functions[order[0] as usize].name.as_ref(), "f");
}

#[test]
fn edges_carry_the_callee_inclusive_value() {
    let (c, m) = recursive();
    let t = Functions::of_paths(&c, &m);
    let (f, g) = (by_name(&t, "f") as u32, by_name(&t, "g") as u32);
    let main = by_name(&t, "main") as u32;
    let callers = t.callers(g);
    assert_eq!(callers.len(), 2);
    assert_eq!((callers[0].function, callers[0].value[0]), (f, 28.0));
    assert_eq!((callers[1].function, callers[1].value[0]), (main, 32.0));
    assert_eq!(callers[0].calls, 2.0);
    let callers = t.callers(f);
    assert_eq!((callers[0].function, callers[0].value[0]), (main, 30.0));
    assert_eq!((callers[1].function, callers[1].value[0]), (g, 24.0));
    let callees = t.callees(f);
    let h = by_name(&t, "h") as u32;
    assert_eq!(
        callees
            .iter()
            .map(|e| (e.function, e.value[0]))
            .collect::<Vec<_>>(),
        vec![(g, 28.0), (h, 16.0)]
    );
    assert_eq!(t.callers(main)[0].function, ROOT);
}

/// f -> f -> f: the edge f -> f counts its outermost call only.
#[test]
fn a_recursive_edge_counts_once() {
    let mut c = Cct::default();
    let a = c.child(None, "f", "function");
    let b = c.child(Some(a), "f", "function");
    let _ = c.child(Some(b), "f", "function");
    let mut m = MetricTable::new(3);
    m.set("time", "s", vec![1.0, 1.0, 1.0]);
    m.derive_inclusive(&c, &["time"]);
    let t = Functions::of_paths(&c, &m);
    assert_eq!((t.self_cost[0][0], t.inclusive[0][0]), (3.0, 3.0));
    let e = t.callees(0);
    assert_eq!((e.len(), e[0].value[0]), (1, 2.0));
}

#[test]
fn places_keep_functions_apart() {
    let mut c = Cct::default();
    let a = c.add_node(None, Frame::new("main", "function"));
    c.frame_mut(a).set_attr("module", "/bin/a");
    let b = c.add_node(None, Frame::new("main", "function"));
    c.frame_mut(b).set_attr("module", "/bin/b");
    let d = c.add_node(None, Frame::new("main", "function"));
    c.frame_mut(d).set_attr("module", "/bin/a");
    let mut m = MetricTable::new(3);
    m.set("time", "s", vec![1.0, 2.0, 4.0]);
    let t = Functions::of_paths(&c, &m);
    assert_eq!(t.len(), 2);
    assert_eq!(t.self_cost[0], vec![5.0, 2.0]);
    assert_eq!(t.functions[1].label(), "main [/bin/b]");
    assert_eq!(t.find("main").len(), 2);
    assert_eq!(t.find("main [/bin/b]"), vec![1]);
}

#[test]
fn a_call_graph_gives_its_own_figures() {
    let mut g = CallGraph::new(vec![("Ir".into(), String::new())]);
    let func = |n: &str, s: f64, i: f64| GraphFunction {
        frame: Frame::new(n, "function"),
        self_cost: vec![s],
        inclusive: vec![i],
        calls: 1.0,
    };
    let a = g.add_function(func("a", 1.0, 10.0));
    let b = g.add_function(func("b", 9.0, 9.0));
    g.add_call(a, b, 3.0, &[9.0]);
    let t = Functions::of_graph(&g);
    assert!(t.from_graph());
    assert_eq!(t.inclusive[0], vec![10.0, 9.0]);
    assert_eq!(t.totals, vec![10.0]);
    let e = t.callers(1);
    assert_eq!(
        (e[0].function, e[0].value.clone(), e[0].calls),
        (0, vec![9.0], 3.0)
    );
    assert_eq!(t.callees(0)[0].function, 1);
}

#[test]
fn inverted_roots_are_self_costs() {
    let (c, m) = recursive();
    let t = Functions::of_paths(&c, &m);
    let (inv, table) = invert(&c, &m).unwrap();
    let inc = table.values("time (inc)").unwrap();
    let mut roots: Vec<(String, f64)> = inv
        .roots
        .iter()
        .map(|&r| (inv.name(r).to_string(), inc[r as usize]))
        .collect();
    roots.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, v) in &roots {
        assert_eq!(*v, t.self_cost[0][by_name(&t, name)], "{name}");
    }
    // Largest first.
    assert_eq!(inv.name(inv.roots[0]), "g");
    // g <- main holds 32, g <- f <- main 4.
    let g = inv.roots[0];
    let kids: Vec<(String, f64)> = inv
        .children(g)
        .map(|k| (inv.name(k).to_string(), inc[k as usize]))
        .collect();
    assert_eq!(kids, vec![("main".into(), 32.0), ("f".into(), 4.0)]);
    // h <- f <- g <- f <- main, exclusive at the chain's end.
    let exc = table.values("time").unwrap();
    let total: f64 = exc.iter().sum();
    assert_eq!(total, 63.0);
    // Roots main, f, g, h; under f: main and g <- f <- main; under g: f <- main and
    // main; under h: f <- g <- f <- main.
    assert_eq!(inv.len(), 4 + 4 + 3 + 4);
}

#[test]
fn cycles_are_the_strongly_connected_functions() {
    // f -> g -> f is a cycle; main and h are outside it; a node of f under f is recursion.
    let (mut c, _) = recursive();
    let t = Functions::of_paths(&c, &recursive().1);
    let cy = t.cycles();
    let (f, g) = (by_name(&t, "f") as u32, by_name(&t, "g") as u32);
    let (main, h) = (by_name(&t, "main") as u32, by_name(&t, "h") as u32);
    assert_eq!(cy.members.len(), 1);
    let mut want = vec![f, g];
    want.sort_unstable();
    assert_eq!(cy.members[0], want);
    assert!(cy.loops(f, g) && cy.loops(g, f));
    assert!(!cy.loops(main, f) && !cy.loops(f, h));
    assert!(!cy.loops(f, f), "f never calls itself directly");
    assert_eq!(cy.cycle(main), Cycles::NONE);

    let h1 = (0..c.len() as u32).find(|&n| c.name(n) == "h").unwrap();
    let _ = c.child(Some(h1), "h", "function");
    let mut m = MetricTable::new(c.len());
    m.set("time", "ns", vec![1.0; c.len()]);
    m.derive_inclusive(&c, &["time"]);
    let t = Functions::of_paths(&c, &m);
    let h = by_name(&t, "h") as u32;
    assert!(t.cycles().loops(h, h), "h calls itself");
}

/// The indexed edges equal a walk of the whole tree that keeps, per other function, the
/// ends of the edge open on the path (the rule of the module), on random trees with
/// recursion through several functions.
#[test]
fn indexed_edges_equal_a_walk_of_the_tree() {
    use super::edges::Side;
    let mut seed = 7u64;
    let mut rnd = |k: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % k
    };
    for _ in 0..40 {
        let mut c = Cct::default();
        let names = ["a", "b", "c", "d", "e"];
        let mut nodes = vec![c.child(None, "main", "function")];
        for _ in 0..(20 + rnd(200)) {
            let p = nodes[rnd(nodes.len() as u64) as usize];
            let n = c.child(Some(p), names[rnd(5) as usize], "function");
            nodes.push(n);
        }
        if rnd(2) == 0 {
            let n = c.child(None, "b", "function");
            nodes.push(n);
        }
        let mut m = MetricTable::new(c.len());
        let vals: Vec<f64> = (0..c.len()).map(|_| rnd(100) as f64).collect();
        m.set("time", "ns", vals.clone());
        m.set("count", "", vals.iter().map(|v| v + 1.0).collect());
        m.derive_inclusive(&c, &["time"]);
        let t = Functions::of_paths(&c, &m);
        let Origin::Paths { of_node, inc, .. } = &t.origin else {
            unreachable!()
        };
        for f in 0..t.len() as u32 {
            for side in [Side::Callers, Side::Callees] {
                let mut want: Vec<(u32, f64, f64)> = Vec::new();
                let mut open = vec![0u32; t.len() + 1];
                walk(&c, |n, down| {
                    let other = match side {
                        Side::Callees => match c.parent(n) {
                            Some(p) if of_node[p as usize] == f => of_node[n as usize] as usize,
                            _ => return,
                        },
                        Side::Callers => {
                            if of_node[n as usize] != f {
                                return;
                            }
                            c.parent(n)
                                .map_or(t.len(), |p| of_node[p as usize] as usize)
                        }
                    };
                    if !down {
                        open[other] -= 1;
                        return;
                    }
                    let id = if other == t.len() { ROOT } else { other as u32 };
                    let at = match want.iter().position(|e| e.0 == id) {
                        Some(i) => i,
                        None => {
                            want.push((id, 0.0, 0.0));
                            want.len() - 1
                        }
                    };
                    if open[other] == 0 {
                        want[at].1 += inc[0][n as usize];
                    }
                    want[at].2 += vals[n as usize] + 1.0;
                    open[other] += 1;
                });
                let got: Vec<(u32, f64, f64)> = t
                    .edges(f, side)
                    .into_iter()
                    .map(|e| (e.function, e.value[0], e.calls))
                    .collect();
                assert_eq!(got, want, "function {f} {side:?}");
            }
        }
    }
}
