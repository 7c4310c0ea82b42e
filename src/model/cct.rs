//! The calling context tree: petgraph holds the structure; a derived pre-order index
//! (parent, depth, subtree end per position) makes every view walk O(rows on screen).

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::Direction;
use std::collections::HashMap;
use std::sync::Arc;

pub const NO_NODE: u32 = u32::MAX;

/// What a node stands for. `kind` is Hatchet's frame `type` (function, kernel, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    // Shared strings: rebuilding or cloning a million-node tree (filters, undo) copies
    // pointers, not text.
    pub name: Arc<str>,
    pub kind: Arc<str>,
    /// Other frame and node attributes in insertion order: file, line, module, kernel args.
    pub attrs: Vec<(Arc<str>, Arc<str>)>,
}

impl Frame {
    pub fn new(name: &str, kind: &str) -> Frame {
        Frame {
            name: name.into(),
            kind: kind.into(),
            attrs: Vec::new(),
        }
    }

    pub fn attr(&self, key: &str) -> Option<&str> {
        match key {
            "name" => Some(&self.name),
            "type" | "kind" => Some(&self.kind),
            _ => self
                .attrs
                .iter()
                .find(|(k, _)| &**k == key)
                .map(|(_, v)| &**v),
        }
    }

    pub fn set_attr(&mut self, key: &str, value: &str) {
        match self.attrs.iter_mut().find(|(k, _)| &**k == key) {
            Some((_, v)) => *v = value.into(),
            None => self.attrs.push((key.into(), value.into())),
        }
    }
}

#[derive(Debug, Default, Clone)]
pub struct Cct {
    pub graph: DiGraph<Frame, ()>,
    pub roots: Vec<NodeIndex>,
    /// Parent of each node (a tree: one parent at most), indexed by node index.
    parent: Vec<u32>,
    /// Children in insertion (data) order as linked lists (petgraph iterates neighbours
    /// newest first); flat arrays keep clones of big trees to a few memcpys.
    first_child: Vec<u32>,
    last_child: Vec<u32>,
    next_sibling: Vec<u32>,
    /// (parent or NO_NODE, name, kind) -> child: merges instances that share a call path.
    by_path: HashMap<(u32, Arc<str>, Arc<str>), u32, super::intern::FxBuild>,
}

impl Cct {
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }

    pub fn frame(&self, n: u32) -> &Frame {
        &self.graph[NodeIndex::new(n as usize)]
    }

    pub fn frame_mut(&mut self, n: u32) -> &mut Frame {
        &mut self.graph[NodeIndex::new(n as usize)]
    }

    pub fn name(&self, n: u32) -> &str {
        &self.frame(n).name
    }

    pub fn parent(&self, n: u32) -> Option<u32> {
        match self.parent[n as usize] {
            NO_NODE => None,
            p => Some(p),
        }
    }

    pub fn children(&self, n: u32) -> Children<'_> {
        Children {
            cct: self,
            next: self.first_child[n as usize],
        }
    }

    pub fn has_children(&self, n: u32) -> bool {
        self.first_child[n as usize] != NO_NODE
    }

    pub fn root_ids(&self) -> Vec<u32> {
        self.roots.iter().map(|r| r.index() as u32).collect()
    }

    /// Adds a node without merging (Hatchet literal nodes keep their identity). A parent
    /// always exists before its children, so parents have smaller ids: passes in id
    /// order see parents first.
    pub fn add_node(&mut self, parent: Option<u32>, frame: Frame) -> u32 {
        let idx = self.graph.add_node(frame);
        let id = idx.index() as u32;
        self.parent.push(parent.unwrap_or(NO_NODE));
        self.first_child.push(NO_NODE);
        self.last_child.push(NO_NODE);
        self.next_sibling.push(NO_NODE);
        match parent {
            Some(p) => {
                self.graph.add_edge(NodeIndex::new(p as usize), idx, ());
                let p = p as usize;
                match self.last_child[p] {
                    NO_NODE => self.first_child[p] = id,
                    last => self.next_sibling[last as usize] = id,
                }
                self.last_child[p] = id;
            }
            None => self.roots.push(idx),
        }
        id
    }

    /// Returns the child of `parent` with this name and kind, creating it if needed:
    /// instances that share a call path become one node.
    pub fn child(&mut self, parent: Option<u32>, name: &str, kind: &str) -> u32 {
        let key = (parent.unwrap_or(NO_NODE), Arc::from(name), Arc::from(kind));
        if let Some(&n) = self.by_path.get(&key) {
            return n;
        }
        let n = self.add_node(parent, Frame::new(name, kind));
        self.by_path.insert(key, n);
        n
    }

    /// Drops the path index used while building: the tree is read-only from here on,
    /// and clones (undo keeps the loaded tree) get cheaper.
    pub fn finish(&mut self) {
        self.by_path = HashMap::default();
    }

    /// Depth of every node (roots are 0), in one pass over ids.
    pub fn depths(&self) -> Vec<u32> {
        let mut d = vec![0u32; self.len()];
        for n in 0..self.len() as u32 {
            if let Some(p) = self.parent(n) {
                d[n as usize] = d[p as usize] + 1;
            }
        }
        d
    }

    pub fn depth(&self, mut n: u32) -> usize {
        let mut d = 0;
        while let Some(p) = self.parent(n) {
            d += 1;
            n = p;
        }
        d
    }

    /// Names from the root down to `n`.
    pub fn path(&self, n: u32) -> Vec<u32> {
        let mut p = vec![n];
        let mut cur = n;
        while let Some(up) = self.parent(cur) {
            p.push(up);
            cur = up;
        }
        p.reverse();
        p
    }

    /// Check that petgraph and the side tables agree (used by tests).
    pub fn check(&self) -> bool {
        self.graph.node_indices().all(|i| {
            let n = i.index() as u32;
            let ps: Vec<_> = self
                .graph
                .neighbors_directed(i, Direction::Incoming)
                .collect();
            match self.parent(n) {
                None => ps.is_empty(),
                Some(p) => ps == [NodeIndex::new(p as usize)],
            }
        })
    }
}

/// The children of a node, in insertion order.
pub struct Children<'a> {
    cct: &'a Cct,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.next == NO_NODE {
            return None;
        }
        let n = self.next;
        self.next = self.cct.next_sibling[n as usize];
        Some(n)
    }
}

/// Pre-order positions of every node under a given child order.
#[derive(Debug, Default, Clone)]
pub struct PreOrder {
    /// position -> node
    pub node: Vec<u32>,
    /// node -> position
    pub pos: Vec<u32>,
    /// position -> depth
    pub depth: Vec<u16>,
    /// position -> one past the position of the last descendant
    pub end: Vec<u32>,
    /// position -> parent position (NO_NODE for roots)
    pub parent: Vec<u32>,
}

impl PreOrder {
    /// Builds the index; `order` sorts each sibling list (roots included) in place.
    pub fn build(cct: &Cct, mut order: impl FnMut(&mut Vec<u32>)) -> PreOrder {
        let n = cct.len();
        let mut po = PreOrder {
            node: Vec::with_capacity(n),
            pos: vec![NO_NODE; n],
            depth: Vec::with_capacity(n),
            end: Vec::with_capacity(n),
            parent: Vec::with_capacity(n),
        };
        let mut roots = cct.root_ids();
        order(&mut roots);
        // Explicit stack: real CCTs can be thousands deep (recursion).
        let mut stack: Vec<(u32, u16, u32)> =
            roots.iter().rev().map(|&r| (r, 0u16, NO_NODE)).collect();
        let mut open: Vec<u32> = Vec::new();
        let mut kids = Vec::new();
        while let Some((node, depth, parent_pos)) = stack.pop() {
            // Close finished subtrees: every open position deeper than or level with us.
            while let Some(&top) = open.last() {
                if po.depth[top as usize] >= depth {
                    po.end[top as usize] = po.node.len() as u32;
                    open.pop();
                } else {
                    break;
                }
            }
            let p = po.node.len() as u32;
            po.node.push(node);
            po.pos[node as usize] = p;
            po.depth.push(depth);
            po.end.push(NO_NODE);
            po.parent.push(parent_pos);
            open.push(p);
            kids.clear();
            kids.extend(cct.children(node));
            order(&mut kids);
            for &c in kids.iter().rev() {
                stack.push((c, depth.saturating_add(1), p));
            }
        }
        let total = po.node.len() as u32;
        for p in open {
            po.end[p as usize] = total;
        }
        po
    }

    pub fn len(&self) -> usize {
        self.node.len()
    }

    pub fn is_empty(&self) -> bool {
        self.node.is_empty()
    }

    pub fn has_children(&self, pos: u32) -> bool {
        self.end[pos as usize] > pos + 1
    }

    /// Positions of the direct children of `pos`.
    pub fn child_positions(&self, pos: u32) -> ChildIter<'_> {
        ChildIter {
            po: self,
            next: pos + 1,
            end: self.end[pos as usize],
        }
    }

    pub fn root_positions(&self) -> ChildIter<'_> {
        ChildIter {
            po: self,
            next: 0,
            end: self.len() as u32,
        }
    }
}

pub struct ChildIter<'a> {
    po: &'a PreOrder,
    next: u32,
    end: u32,
}

impl Iterator for ChildIter<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.next >= self.end {
            return None;
        }
        let p = self.next;
        self.next = self.po.end[p as usize];
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preorder_and_merge() {
        let mut c = Cct::default();
        let main = c.child(None, "main", "function");
        let a = c.child(Some(main), "a", "function");
        let b = c.child(Some(main), "b", "function");
        let a2 = c.child(Some(main), "a", "function");
        assert_eq!(a, a2);
        let x = c.child(Some(a), "x", "function");
        let other = c.child(None, "other", "function");
        assert!(c.check());
        let po = PreOrder::build(&c, |_| {});
        assert_eq!(po.node, vec![main, a, x, b, other]);
        assert_eq!(po.end, vec![4, 3, 3, 4, 5]);
        assert_eq!(po.depth, vec![0, 1, 2, 1, 0]);
        assert_eq!(po.child_positions(0).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(po.root_positions().collect::<Vec<_>>(), vec![0, 4]);
        // Reverse sibling order.
        let po = PreOrder::build(&c, |v| v.reverse());
        assert_eq!(po.node, vec![other, main, b, a, x]);
        assert_eq!(c.path(x), vec![main, a, x]);
    }
}
