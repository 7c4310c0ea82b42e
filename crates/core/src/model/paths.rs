//! Node paths: how commands and session files name nodes (never by internal id).
//! `main/solve/MPI_Allreduce`; `\/` escapes a slash inside a name; `#k` picks the k-th
//! (from 0) of same-named siblings and is written only when siblings share a name.

use crate::model::{Cct, NO_NODE};

fn escape(name: &str) -> String {
    name.replace('\\', "\\\\").replace('/', "\\/")
}

fn siblings(cct: &Cct, node: u32) -> Vec<u32> {
    match cct.parent(node) {
        Some(p) => cct.children(p).collect(),
        None => cct.root_ids(),
    }
}

pub fn path_of(cct: &Cct, node: u32) -> String {
    let mut parts = Vec::new();
    for n in cct.path(node) {
        let name = cct.name(n);
        let same: Vec<u32> = siblings(cct, n)
            .into_iter()
            .filter(|&s| cct.name(s) == name)
            .collect();
        let mut seg = escape(name);
        if same.len() > 1 {
            let k = same.iter().position(|&s| s == n).unwrap_or(0);
            seg.push_str(&format!("#{k}"));
        }
        parts.push(seg);
    }
    parts.join("/")
}

/// `path_of` of every node, in id order, in one pass: each node's segment is named
/// once among its siblings (a parent with 100,000 children made `path_of` per node
/// quadratic). The same text as `path_of` gives.
pub fn all_paths(cct: &Cct) -> Vec<String> {
    paths_of_range(cct, 0..cct.len() as u32, &sibling_numbers(cct))
}

/// Each node's sibling number for its path segment: 0 when no sibling shares its name,
/// k + 1 for `#k`. Four bytes a node where `all_paths` holds every path: a writer that
/// makes paths a batch of nodes at a time (`path_numbered`) keeps only these.
pub fn sibling_numbers(cct: &Cct) -> Vec<u32> {
    let mut num = vec![0u32; cct.len()];
    let mut number = |group: Vec<u32>| {
        let mut total: std::collections::HashMap<&str, u32> = Default::default();
        for &c in &group {
            *total.entry(cct.name(c)).or_default() += 1;
        }
        let mut seen: std::collections::HashMap<&str, u32> = Default::default();
        for &c in &group {
            let name = cct.name(c);
            if total[name] > 1 {
                let k = seen.entry(name).or_default();
                num[c as usize] = *k + 1;
                *k += 1;
            }
        }
    };
    number(cct.root_ids());
    for p in 0..cct.len() as u32 {
        if cct.has_children(p) {
            number(cct.children(p).collect());
        }
    }
    num
}

/// `path_of` from the numbers `sibling_numbers` gives.
pub fn path_numbered(cct: &Cct, node: u32, numbers: &[u32]) -> String {
    let mut out = String::new();
    for (i, n) in cct.path(node).into_iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        push_segment(&mut out, cct, n, numbers);
    }
    out
}

/// Appends node `n`'s path segment (its escaped name, `#k` when siblings share it).
pub fn push_segment(out: &mut String, cct: &Cct, n: u32, numbers: &[u32]) {
    let name = cct.name(n);
    if name.contains(['\\', '/']) {
        out.push_str(&escape(name));
    } else {
        out.push_str(name);
    }
    if numbers[n as usize] > 0 {
        use std::fmt::Write;
        let _ = write!(out, "#{}", numbers[n as usize] - 1);
    }
}

/// The paths of the nodes `at` (ids in order), made from their parents' paths where
/// the parent is in the range (parents have smaller ids), by a walk up otherwise: one
/// string a node, as `all_paths` makes, for a range at a time.
pub fn paths_of_range(cct: &Cct, at: std::ops::Range<u32>, numbers: &[u32]) -> Vec<String> {
    let start = at.start;
    let mut out: Vec<String> = Vec::with_capacity(at.len());
    for n in at {
        let mut path = match cct.parent(n) {
            Some(p) if p >= start && p < n => {
                let mut s = out[(p - start) as usize].clone();
                s.push('/');
                s
            }
            Some(p) => {
                let mut s = path_numbered(cct, p, numbers);
                s.push('/');
                s
            }
            None => String::new(),
        };
        push_segment(&mut path, cct, n, numbers);
        out.push(path);
    }
    out
}

/// The paths of `nodes`, in their order: `path_of` each for a few nodes, one
/// `all_paths` pass for many (exports write every node of a tree).
pub fn paths_for(cct: &Cct, nodes: &[u32]) -> Vec<String> {
    if nodes.len() <= 256 {
        return nodes.iter().map(|&n| path_of(cct, n)).collect();
    }
    let mut all = all_paths(cct);
    nodes
        .iter()
        .map(|&n| std::mem::take(&mut all[n as usize]))
        .collect()
}

fn split(path: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    parts.last_mut().unwrap().push(n);
                }
            }
            '/' => parts.push(String::new()),
            c => parts.last_mut().unwrap().push(c),
        }
    }
    parts
}

pub fn resolve(cct: &Cct, path: &str) -> Result<u32, String> {
    // A trailing slash (left by Tab completion) names the same node.
    let path = match path.strip_suffix('/') {
        Some(p) if !p.ends_with('\\') => p,
        _ => path,
    };
    let mut level = cct.root_ids();
    let mut found = NO_NODE;
    for seg in split(path) {
        let exact: Vec<u32> = level
            .iter()
            .copied()
            .filter(|&n| cct.name(n) == seg)
            .collect();
        let pick = if let Some(&n) = exact.first() {
            n
        } else {
            let (base, k) = match seg.rfind('#') {
                Some(i) => (&seg[..i], seg[i + 1..].parse::<usize>().ok()),
                None => (seg.as_str(), None),
            };
            let same: Vec<u32> = level
                .iter()
                .copied()
                .filter(|&n| cct.name(n) == base)
                .collect();
            match k.and_then(|k| same.get(k)) {
                Some(&n) => n,
                None => {
                    return Err(format!("no node {seg:?} in path {path:?}"));
                }
            }
        };
        found = pick;
        level = cct.children(pick).collect();
    }
    if found == NO_NODE {
        return Err("empty path".into());
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip() {
        let mut c = Cct::default();
        let r = c.child(None, "thread 1 (python)", "thread");
        let a = c.child(Some(r), "ProfilerStep#2", "user_annotation");
        let k1 = c.child(Some(a), "k/1", "kernel");
        let d1 = c.child(Some(a), "dup", "cpu_op");
        let d2 = c.child(Some(a), "dup", "cuda_runtime");
        for n in [r, a, k1, d1, d2] {
            let p = path_of(&c, n);
            assert_eq!(resolve(&c, &p).unwrap(), n, "{p}");
        }
        assert_eq!(path_of(&c, d2), "thread 1 (python)/ProfilerStep#2/dup#1");
        assert_eq!(path_of(&c, k1), "thread 1 (python)/ProfilerStep#2/k\\/1");
        assert!(resolve(&c, "nope").is_err());
    }

    #[test]
    fn all_paths_are_path_of_each() {
        let mut c = Cct::default();
        let r = c.child(None, "main", "thread");
        let _r2 = c.child(None, "main", "thread");
        let a = c.child(Some(r), "a/b", "function");
        for _ in 0..3 {
            let d = c.child(Some(a), "dup", "function");
            c.child(Some(d), "leaf", "function");
        }
        c.child(Some(a), "solo", "function");
        let all = all_paths(&c);
        assert_eq!(all.len(), c.len());
        let numbers = sibling_numbers(&c);
        for n in 0..c.len() as u32 {
            assert_eq!(path_numbered(&c, n, &numbers), all[n as usize]);
        }
        for a in 0..c.len() as u32 {
            for b in a..=c.len() as u32 {
                assert_eq!(
                    paths_of_range(&c, a..b, &numbers),
                    all[a as usize..b as usize]
                );
            }
        }
        for n in 0..c.len() as u32 {
            assert_eq!(all[n as usize], path_of(&c, n), "node {n}");
        }
    }
}
