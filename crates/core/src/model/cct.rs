//! The calling context tree: nodes in flat arrays indexed by u32 id (frames, parent and
//! child links); a derived pre-order index (parent, depth, subtree end per position)
//! makes every view walk O(rows on screen).
//!
//! Memory (issue 16): a node is five u32s: its frame slot and four links; there is no
//! per-node graph record. Nodes that stand for the same frame (a trace's thousands of
//! `cudaLaunchKernel` calls, kernels with one launch configuration) can point at one
//! shared slot; `frame_mut` gives a node that shares its slot a copy of its own first,
//! so a change never reaches another node. The arrays sit behind one `Arc`, so cloning
//! a tree (undo and reset keep the loaded one) shares them until one copy changes.
//! petgraph builds a graph of the tree on demand (`to_graph`) where one is wanted.

use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;
use std::sync::Arc;

pub use super::attrs::{Attr, Attrs};
use super::intern::FxBuild;
pub use super::lent::Col;
use std::sync::OnceLock;

pub const NO_NODE: u32 = u32::MAX;

/// What a node stands for. `kind` is Hatchet's frame `type` (function, kernel, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    // Shared strings: rebuilding or cloning a million-node tree (filters, undo) copies
    // pointers, not text.
    pub name: Arc<str>,
    pub kind: Arc<str>,
    /// Other frame and node attributes in insertion order: file, line, module, kernel args.
    pub attrs: Attrs,
}

impl Frame {
    pub fn new(name: &str, kind: &str) -> Frame {
        Frame {
            name: name.into(),
            kind: kind.into(),
            attrs: Attrs::new(),
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

/// A frame slot that many nodes may share (`Cct::shared_frame`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameId(u32);

impl FrameId {
    /// The slot's number (below 2^31): a builder's key for the frame.
    pub fn id(self) -> u32 {
        self.0
    }
}

/// Marks a slot id as shared: `frame_mut` copies such a slot before changing it.
const SHARED: u32 = 1 << 31;

/// The parent links: a vector of the tree's own while nodes are added, shared once a
/// metric column reads them too (`Cct::shared_parents`), so that the tree and the
/// column hold one copy and a clone of the tree's arrays does not copy them.
#[derive(Debug, Clone)]
enum Parents {
    Own(Vec<u32>),
    Shared(Arc<Vec<u32>>),
}

impl Default for Parents {
    fn default() -> Parents {
        Parents::Own(Vec::new())
    }
}

impl std::ops::Deref for Parents {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        match self {
            Parents::Own(v) => v,
            Parents::Shared(v) => v,
        }
    }
}

impl Parents {
    /// The links shared from here on (their spare capacity given back first).
    fn share(&mut self) -> Arc<Vec<u32>> {
        if let Parents::Own(p) = self {
            p.shrink_to_fit();
            *self = Parents::Shared(Arc::new(std::mem::take(p)));
        }
        match self {
            Parents::Shared(p) => p.clone(),
            Parents::Own(_) => unreachable!("made shared above"),
        }
    }

    /// The links for changing: shared ones are taken back (copied if another holder
    /// still reads them).
    fn own(&mut self) -> &mut Vec<u32> {
        if let Parents::Shared(a) = self {
            let v = Arc::try_unwrap(std::mem::take(a)).unwrap_or_else(|a| (*a).clone());
            *self = Parents::Own(v);
        }
        match self {
            Parents::Own(v) => v,
            Parents::Shared(_) => unreachable!("taken back above"),
        }
    }
}

/// The per-node arrays, all indexed by node id (`frames` by slot).
#[derive(Debug, Default, Clone)]
struct Nodes {
    frames: Vec<Frame>,
    /// The frame slot of each node, SHARED set when other nodes may use it too.
    slot: Vec<u32>,
    /// Parent of each node (a tree: one parent at most).
    parent: Parents,
    /// Children in insertion (data) order as linked lists; flat arrays keep copies of
    /// big trees to a few memcpys.
    first_child: Vec<u32>,
    last_child: Vec<u32>,
    next_sibling: Vec<u32>,
}

#[derive(Debug, Default, Clone)]
pub struct Cct {
    nodes: Arc<Nodes>,
    /// The pre-order saved with this tree in the cache, or set once by whoever sorts it
    /// first that way (`SavedOrder`). Shared by clones, which share the nodes; any
    /// change to the nodes starts a fresh, empty cell.
    saved: Arc<OnceLock<SavedOrder>>,
    /// Root node ids in insertion order.
    pub roots: Vec<u32>,
    /// (parent or NO_NODE, name id, kind id) -> child: merges instances that share a
    /// call path. Ids come from `texts`, so a lookup neither allocates nor keeps a copy
    /// of the text per node.
    by_path: HashMap<(u32, u32, u32), u32, FxBuild>,
    texts: Texts,
    /// (name id, kind id) -> the shared slot of that plain frame, for `child`.
    plain: HashMap<(u32, u32), FrameId, FxBuild>,
}

/// Names and kinds seen by `Cct::child`, one shared string each (frames point at it).
#[derive(Debug, Default, Clone)]
struct Texts {
    ids: HashMap<Arc<str>, u32, FxBuild>,
    text: Vec<Arc<str>>,
}

impl Texts {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.text.len() as u32;
        let a: Arc<str> = s.into();
        self.text.push(a.clone());
        self.ids.insert(a, id);
        id
    }
}

impl Cct {
    /// Before any change to the nodes, and when the tree is shown in another order: a
    /// saved order no longer holds or is no longer worth its memory (a fresh cell, so
    /// clones that keep the old nodes keep theirs).
    pub fn forget_order(&mut self) {
        if self.saved.get().is_some() {
            self.saved = Default::default();
        }
    }

    /// The pre-order this tree was saved with (`SavedOrder`), if any.
    pub fn saved_order(&self) -> Option<&SavedOrder> {
        self.saved.get()
    }

    /// Records the order this tree is shown in first, for the cache to save; the first
    /// one recorded stays (the tree does not change while it lives).
    pub fn save_order(&self, o: SavedOrder) {
        let _ = self.saved.set(o);
    }

    pub fn len(&self) -> usize {
        self.nodes.slot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.slot.is_empty()
    }

    pub fn frame(&self, n: u32) -> &Frame {
        &self.nodes.frames[(self.nodes.slot[n as usize] & !SHARED) as usize]
    }

    /// A node's frame for changing. A tree that shares its arrays with a clone copies
    /// them first, and a node that shares its frame slot gets a copy of its own.
    pub fn frame_mut(&mut self, n: u32) -> &mut Frame {
        self.forget_order();
        let nodes = Arc::make_mut(&mut self.nodes);
        let s = nodes.slot[n as usize];
        let own = if s & SHARED != 0 {
            let copy = nodes.frames[(s & !SHARED) as usize].clone();
            let own = Nodes::new_slot(&mut nodes.frames, copy);
            nodes.slot[n as usize] = own;
            own
        } else {
            s
        };
        &mut nodes.frames[own as usize]
    }

    /// A frame slot for nodes to share (`add_shared`, `set_frame`): a reader that knows
    /// many nodes have equal frames stores the frame once.
    pub fn shared_frame(&mut self, frame: Frame) -> FrameId {
        self.forget_order();
        let nodes = Arc::make_mut(&mut self.nodes);
        FrameId(Nodes::new_slot(&mut nodes.frames, frame))
    }

    /// Points a node at a shared frame slot instead of its own frame.
    pub fn set_frame(&mut self, n: u32, frame: FrameId) {
        self.forget_order();
        let nodes = Arc::make_mut(&mut self.nodes);
        nodes.slot[n as usize] = frame.0 | SHARED;
    }

    /// Applies `change` to every frame once (a shared slot once for all its nodes):
    /// passes that rewrite frames by their content alone (demangling) keep the sharing.
    pub fn rewrite_frames(&mut self, mut change: impl FnMut(&mut Frame)) {
        self.forget_order();
        for f in &mut Arc::make_mut(&mut self.nodes).frames {
            change(f);
        }
    }

    /// Every frame slot once (a shared slot once for all its nodes; a slot no node
    /// points at any more may be among them): a pass that looks at frames by their
    /// content alone reads thousands of slots instead of a big trace's million nodes.
    pub fn frames(&self) -> impl Iterator<Item = &Frame> {
        self.nodes.frames.iter()
    }

    pub fn name(&self, n: u32) -> &str {
        &self.frame(n).name
    }

    /// The number of a node's frame slot, shared or not: nodes with one slot have one
    /// frame, so a pass that keys nodes by their frame looks each slot up once.
    pub fn frame_slot(&self, n: u32) -> u32 {
        self.nodes.slot[n as usize] & !SHARED
    }

    /// How many frame slots there are (`frame_slot` is below it).
    pub fn slot_count(&self) -> usize {
        self.nodes.frames.len()
    }

    pub fn parent(&self, n: u32) -> Option<u32> {
        match self.nodes.parent[n as usize] {
            NO_NODE => None,
            p => Some(p),
        }
    }

    pub fn children(&self, n: u32) -> Children<'_> {
        Children {
            nodes: &self.nodes,
            next: self.nodes.first_child[n as usize],
        }
    }

    pub fn has_children(&self, n: u32) -> bool {
        self.nodes.first_child[n as usize] != NO_NODE
    }

    pub fn root_ids(&self) -> Vec<u32> {
        self.roots.clone()
    }

    /// Room for `additional` more nodes without growing the arrays again (a reader that
    /// knows its node count saves the doubling's spare capacity).
    pub fn reserve(&mut self, additional: usize) {
        self.forget_order();
        let nodes = Arc::make_mut(&mut self.nodes);
        nodes.frames.reserve_exact(additional);
        nodes.slot.reserve_exact(additional);
        nodes.parent.own().reserve_exact(additional);
        nodes.first_child.reserve_exact(additional);
        nodes.last_child.reserve_exact(additional);
        nodes.next_sibling.reserve_exact(additional);
    }

    /// Adds a node without merging (Hatchet literal nodes keep their identity). A parent
    /// always exists before its children, so parents have smaller ids: passes in id
    /// order see parents first.
    pub fn add_node(&mut self, parent: Option<u32>, frame: Frame) -> u32 {
        self.forget_order();
        let nodes = Arc::make_mut(&mut self.nodes);
        let s = Nodes::new_slot(&mut nodes.frames, frame);
        self.push_node(parent, s)
    }

    /// Adds a node whose frame is a shared slot (see `shared_frame`).
    pub fn add_shared(&mut self, parent: Option<u32>, frame: FrameId) -> u32 {
        self.push_node(parent, frame.0 | SHARED)
    }

    fn push_node(&mut self, parent: Option<u32>, slot: u32) -> u32 {
        self.grow().push(parent, slot)
    }

    /// The arrays for adding many nodes (`Grow`): a builder that adds a node per event
    /// takes them once, where `add_shared` makes sure per node that no clone shares
    /// them (an atomic compare-exchange each time).
    pub fn grow(&mut self) -> Grow<'_> {
        self.forget_order();
        let nodes = Arc::make_mut(&mut self.nodes);
        if nodes.last_child.len() < nodes.slot.len() {
            nodes.relink_last_children();
        }
        Grow {
            nodes,
            roots: &mut self.roots,
        }
    }

    /// Returns the child of `parent` with this name and kind, creating it if needed:
    /// instances that share a call path become one node.
    pub fn child(&mut self, parent: Option<u32>, name: &str, kind: &str) -> u32 {
        let (name_id, kind_id) = (self.texts.id(name), self.texts.id(kind));
        let key = (parent.unwrap_or(NO_NODE), name_id, kind_id);
        if let Some(&n) = self.by_path.get(&key) {
            return n;
        }
        let frame = match self.plain.get(&(name_id, kind_id)) {
            Some(&f) => f,
            None => {
                let f = self.shared_frame(Frame {
                    name: self.texts.text[name_id as usize].clone(),
                    kind: self.texts.text[kind_id as usize].clone(),
                    attrs: Attrs::new(),
                });
                self.plain.insert((name_id, kind_id), f);
                f
            }
        };
        let n = self.add_shared(parent, frame);
        self.by_path.insert(key, n);
        n
    }

    /// The tree of the nodes with `keep[n]`, each under its nearest kept ancestor (one
    /// with none becomes a root), and the old id of each new node: a filter's tree.
    /// New ids follow the old order, so every child list keeps its order. Built in one
    /// pass over the old nodes into arrays of the final size, where adding the nodes one
    /// by one grew six arrays and gave every node a frame of its own; nodes that shared
    /// a frame slot share one here too (a trace's kernels and runtime calls), an own
    /// frame is copied.
    pub fn subset(&self, keep: &[bool]) -> (Cct, Vec<u32>) {
        let old = &*self.nodes;
        let count = keep[..self.len()].iter().filter(|&&k| k).count();
        let mut parent = Vec::with_capacity(count);
        let mut nodes = Nodes {
            frames: Vec::new(),
            slot: Vec::with_capacity(count),
            parent: Parents::default(),
            first_child: vec![NO_NODE; count],
            last_child: vec![NO_NODE; count],
            next_sibling: vec![NO_NODE; count],
        };
        let mut origin = Vec::with_capacity(count);
        let mut roots = Vec::new();
        // Per old node: its new id when kept, else its nearest kept ancestor's new id.
        // Parents have smaller ids than their children, so one pass in id order sees
        // every parent first.
        let mut near = vec![NO_NODE; self.len()];
        // Old shared slot -> new shared slot (made when the first shared slot is met).
        let mut shared: Vec<u32> = Vec::new();
        // The old slot of each new slot: frames are copied once their number is known.
        let mut from: Vec<u32> = Vec::with_capacity(count);
        for o in 0..self.len() {
            let up = match old.parent[o] {
                NO_NODE => NO_NODE,
                p => near[p as usize],
            };
            if !keep[o] {
                near[o] = up;
                continue;
            }
            let id = origin.len() as u32;
            near[o] = id;
            origin.push(o as u32);
            let s = old.slot[o];
            let slot = if s & SHARED == 0 {
                from.push(s);
                from.len() as u32 - 1
            } else {
                if shared.is_empty() {
                    shared = vec![NO_NODE; old.frames.len()];
                }
                let i = (s & !SHARED) as usize;
                if shared[i] == NO_NODE {
                    shared[i] = from.len() as u32;
                    from.push(i as u32);
                }
                shared[i] | SHARED
            };
            nodes.slot.push(slot);
            parent.push(up);
            if up == NO_NODE {
                roots.push(id);
            } else {
                nodes.link_child(up, id);
            }
        }
        nodes.frames = from
            .iter()
            .map(|&s| old.frames[s as usize].clone())
            .collect();
        nodes.parent = Parents::Own(parent);
        let cct = Cct {
            nodes: Arc::new(nodes),
            roots,
            ..Cct::default()
        };
        (cct, origin)
    }

    /// A tree from its parent links: node n has `parent[n]` (NO_NODE for a root, a
    /// smaller id otherwise) and the shared frame `frames[frame_of[n]]`; children keep
    /// the order of their ids. The child lists are linked in one backward pass, for a
    /// builder that makes millions of nodes (the inverted tree), where adding them one
    /// by one links each under its parent's last child, a scattered write per node.
    /// Without last-child links (`release_last_children`).
    pub fn from_parents(frames: Vec<Frame>, frame_of: Vec<u32>, parent: Vec<u32>) -> Cct {
        let n = parent.len();
        assert_eq!(frame_of.len(), n, "a frame per node");
        assert!(frames.len() < SHARED as usize, "fewer than 2^31 frames");
        let links = || {
            let mut v = Vec::with_capacity(n);
            crate::memory::prefer_huge_pages(&mut v);
            v.resize(n, NO_NODE);
            v
        };
        let (mut first_child, mut next_sibling) = (links(), links());
        let mut roots = Vec::new();
        for c in (0..n).rev() {
            match parent[c] {
                NO_NODE => roots.push(c as u32),
                p => {
                    assert!((p as usize) < c, "a parent before its children");
                    next_sibling[c] = first_child[p as usize];
                    first_child[p as usize] = c as u32;
                }
            }
        }
        roots.reverse();
        let mut slot = frame_of;
        for s in &mut slot {
            assert!((*s as usize) < frames.len(), "a frame of the list");
            *s |= SHARED;
        }
        Cct {
            nodes: Arc::new(Nodes {
                frames,
                slot,
                parent: Parents::Own(parent),
                first_child,
                last_child: Vec::new(),
                next_sibling,
            }),
            roots,
            ..Cct::default()
        }
    }

    /// Gives back the last-child links, which only adding nodes uses: a reader that is
    /// done adding frees a u32 per node before it makes the metric columns (issue 16:
    /// the load's peak). Adding a node later makes them again.
    pub fn release_last_children(&mut self) {
        if let Some(nodes) = Arc::get_mut(&mut self.nodes) {
            nodes.last_child = Vec::new();
        }
    }

    /// The parent links, shared: a metric column kept as the residual of its inclusive
    /// partner reads them to make its values (`MetricTable::derive_inclusive_residual`).
    /// The tree keeps reading them where they are; adding a node later copies them
    /// first if they are still shared.
    pub fn shared_parents(&mut self) -> Arc<Vec<u32>> {
        Arc::make_mut(&mut self.nodes).parent.share()
    }

    /// The parent links when they are shared (after `finish` or `shared_parents`).
    pub fn parent_links(&self) -> Option<Arc<Vec<u32>>> {
        match &self.nodes.parent {
            Parents::Shared(p) => Some(p.clone()),
            Parents::Own(_) => None,
        }
    }

    /// Drops the path index used while building: the tree is read-only from here on,
    /// and clones (undo keeps the loaded tree) get cheaper. The arrays give back the
    /// spare capacity their doubling left.
    pub fn finish(&mut self) {
        self.by_path = HashMap::default();
        self.texts = Texts::default();
        self.plain = HashMap::default();
        if let Some(nodes) = Arc::get_mut(&mut self.nodes) {
            nodes.frames.shrink_to_fit();
            nodes.slot.shrink_to_fit();
            // Shared from here on: a pre-order reads its parents through them.
            nodes.parent.share();
            nodes.first_child.shrink_to_fit();
            nodes.last_child.shrink_to_fit();
            nodes.next_sibling.shrink_to_fit();
        }
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

    /// The tree as a petgraph graph (node weights are node ids, edges point from parent
    /// to child, children in insertion order), built on demand.
    pub fn to_graph(&self) -> DiGraph<u32, ()> {
        let mut g = DiGraph::with_capacity(self.len(), self.len());
        for n in 0..self.len() as u32 {
            g.add_node(n);
        }
        for n in 0..self.len() as u32 {
            for c in self.children(n) {
                g.add_edge(NodeIndex::new(n as usize), NodeIndex::new(c as usize), ());
            }
        }
        g
    }

    /// Check that the parent array, the child lists and the roots agree, and that they
    /// make a forest (used by tests).
    pub fn check(&self) -> bool {
        let g = self.to_graph();
        let parents_agree = g.node_indices().all(|i| {
            let ps: Vec<_> = g
                .neighbors_directed(i, petgraph::Direction::Incoming)
                .collect();
            match self.parent(i.index() as u32) {
                None => ps.is_empty() && self.roots.contains(&(i.index() as u32)),
                Some(p) => ps == [NodeIndex::new(p as usize)],
            }
        });
        parents_agree
            && self.roots.iter().all(|&r| self.parent(r).is_none())
            && !petgraph::algo::is_cyclic_directed(&g)
    }
}

impl Nodes {
    /// Appends node `id` to `parent`'s child list (its links already in the arrays).
    #[inline]
    fn link_child(&mut self, parent: u32, id: u32) {
        let p = parent as usize;
        match self.last_child[p] {
            NO_NODE => self.first_child[p] = id,
            last => self.next_sibling[last as usize] = id,
        }
        self.last_child[p] = id;
    }

    /// The last-child links again from the child lists (after `release_last_children`).
    fn relink_last_children(&mut self) {
        let mut last = vec![NO_NODE; self.slot.len()];
        for (p, l) in last.iter_mut().enumerate() {
            let mut c = self.first_child[p];
            while c != NO_NODE {
                *l = c;
                c = self.next_sibling[c as usize];
            }
        }
        self.last_child = last;
    }

    fn new_slot(frames: &mut Vec<Frame>, frame: Frame) -> u32 {
        let s = frames.len() as u32;
        assert!(s < SHARED, "a tree holds fewer than 2^31 frames");
        frames.push(frame);
        s
    }
}

/// A tree's arrays held for adding nodes (`Cct::grow`): the node-adding calls of `Cct`
/// without its per-call checks. Ids and links are what `Cct::add_shared` would give.
pub struct Grow<'a> {
    nodes: &'a mut Nodes,
    roots: &'a mut Vec<u32>,
}

impl Grow<'_> {
    pub fn len(&self) -> usize {
        self.nodes.slot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.slot.is_empty()
    }

    pub fn frame(&self, n: u32) -> &Frame {
        &self.nodes.frames[(self.nodes.slot[n as usize] & !SHARED) as usize]
    }

    /// The number of a node's frame slot (`FrameId::id`), shared or not.
    pub fn frame_slot(&self, n: u32) -> u32 {
        self.nodes.slot[n as usize] & !SHARED
    }

    pub fn children(&self, n: u32) -> Children<'_> {
        Children {
            nodes: self.nodes,
            next: self.nodes.first_child[n as usize],
        }
    }

    /// As `Cct::shared_frame`.
    pub fn shared_frame(&mut self, frame: Frame) -> FrameId {
        FrameId(Nodes::new_slot(&mut self.nodes.frames, frame))
    }

    /// As `Cct::set_frame`.
    pub fn set_frame(&mut self, n: u32, frame: FrameId) {
        self.nodes.slot[n as usize] = frame.0 | SHARED;
    }

    /// As `Cct::add_shared`.
    pub fn add_shared(&mut self, parent: Option<u32>, frame: FrameId) -> u32 {
        self.push(parent, frame.0 | SHARED)
    }

    fn push(&mut self, parent: Option<u32>, slot: u32) -> u32 {
        let nodes = &mut *self.nodes;
        let id = nodes.slot.len() as u32;
        assert!(id != NO_NODE, "a tree holds fewer than 2^32 - 1 nodes");
        nodes.slot.push(slot);
        nodes.parent.own().push(parent.unwrap_or(NO_NODE));
        nodes.first_child.push(NO_NODE);
        nodes.last_child.push(NO_NODE);
        nodes.next_sibling.push(NO_NODE);
        match parent {
            Some(p) => nodes.link_child(p, id),
            None => self.roots.push(id),
        }
        id
    }
}

/// The children of a node, in insertion order.
pub struct Children<'a> {
    nodes: &'a Nodes,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.next == NO_NODE {
            return None;
        }
        let n = self.next;
        self.next = self.nodes.next_sibling[n as usize];
        Some(n)
    }
}

/// Pre-order positions of every node under a given child order.
#[derive(Debug, Default, Clone)]
pub struct PreOrder {
    /// position -> node
    pub node: Col<u32>,
    /// node -> position
    pub pos: Col<u32>,
    /// position -> depth
    pub depth: Col<u16>,
    /// position -> one past the position of the last descendant
    pub end: Col<u32>,
    /// position -> parent position (NO_NODE for roots): read with `parent`.
    pub parent: ParentPos,
}

/// Where a pre-order finds a position's parent.
#[derive(Debug, Clone)]
pub enum ParentPos {
    /// A column of parent positions (a saved order mapped from the cache).
    Col(Col<u32>),
    /// The tree's own parent links, shared (`Cct::finish` shares them): the parent's
    /// position is `pos[links[node[p]]]`, two reads where a column cost 4 bytes a node
    /// (10 MB on a 2.5M-node tree: issue 30, the TUI's memory).
    Links(Arc<Vec<u32>>),
}

impl Default for ParentPos {
    fn default() -> ParentPos {
        ParentPos::Col(Col::default())
    }
}

/// The pre-order a tree was saved with in the cache (`summary::tree_file`): children by
/// `column`, descending, as the TUI opens a tree, with that column's range of finite
/// values (the heat scale). A warm open shows it without sorting or reading the column.
#[derive(Debug, Clone)]
pub struct SavedOrder {
    pub column: String,
    pub min: f64,
    pub max: f64,
    pub po: Arc<PreOrder>,
}

/// A pre-order's columns while `build` fills them.
struct Building {
    node: Vec<u32>,
    pos: Vec<u32>,
    depth: Vec<u16>,
    end: Vec<u32>,
    /// Parent positions, made only when the tree's links are not shared.
    parent: Option<Vec<u32>>,
}

impl PreOrder {
    /// Builds the index; `order` sorts each sibling list (roots included) in place.
    pub fn build(cct: &Cct, mut order: impl FnMut(&mut Vec<u32>)) -> PreOrder {
        let n = cct.len();
        let links = cct.parent_links();
        let mut po = Building {
            node: Vec::with_capacity(n),
            pos: vec![NO_NODE; n],
            depth: Vec::with_capacity(n),
            end: Vec::with_capacity(n),
            parent: links.is_none().then(|| Vec::with_capacity(n)),
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
            if let Some(parent) = &mut po.parent {
                parent.push(parent_pos);
            }
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
        PreOrder {
            node: po.node.into(),
            pos: po.pos.into(),
            depth: po.depth.into(),
            end: po.end.into(),
            parent: match links {
                Some(links) => ParentPos::Links(links),
                None => ParentPos::Col(po.parent.unwrap_or_default().into()),
            },
        }
    }

    /// Children by the values of a metric column (NaN lowest), ties by node id: the
    /// TUI's metric sort, and the order the cache saves (`SavedOrder`), which must be
    /// the same.
    pub fn by_metric(cct: &Cct, vals: &[f64], descending: bool) -> PreOrder {
        let key = |n: u32| {
            let v = vals.get(n as usize).copied().unwrap_or(f64::NAN);
            if v.is_nan() {
                f64::NEG_INFINITY
            } else {
                v
            }
        };
        PreOrder::build(cct, |v| {
            v.sort_unstable_by(|&a, &b| {
                let o = key(a).total_cmp(&key(b));
                let o = if descending { o.reverse() } else { o };
                o.then(a.cmp(&b))
            })
        })
    }

    pub fn len(&self) -> usize {
        self.node.len()
    }

    pub fn is_empty(&self) -> bool {
        self.node.is_empty()
    }

    /// The position of `pos`'s parent (NO_NODE for a root).
    #[inline]
    pub fn parent(&self, pos: u32) -> u32 {
        match &self.parent {
            ParentPos::Col(c) => c[pos as usize],
            ParentPos::Links(links) => match links[self.node[pos as usize] as usize] {
                NO_NODE => NO_NODE,
                up => self.pos[up as usize],
            },
        }
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

    /// `from_parents` gives the tree adding the nodes one by one gives, and nodes can
    /// be added to it afterwards.
    #[test]
    fn from_parents_is_adding_one_by_one() {
        let parent = vec![NO_NODE, 0, 0, 1, NO_NODE, 3, 1, 4];
        let frame_of = vec![0, 1, 2, 1, 0, 2, 2, 1];
        let frames = vec![
            Frame::new("a", "f"),
            Frame::new("b", "f"),
            Frame::new("c", "f"),
        ];
        let mut one = Cct::default();
        let ids: Vec<FrameId> = frames.iter().map(|f| one.shared_frame(f.clone())).collect();
        for (&p, &f) in parent.iter().zip(&frame_of) {
            one.add_shared((p != NO_NODE).then_some(p), ids[f as usize]);
        }
        let mut bulk = Cct::from_parents(frames, frame_of, parent);
        assert!(bulk.check());
        assert_eq!(bulk.roots, one.roots);
        for n in 0..one.len() as u32 {
            assert_eq!(bulk.frame(n), one.frame(n));
            assert_eq!(bulk.parent(n), one.parent(n));
            assert_eq!(
                bulk.children(n).collect::<Vec<_>>(),
                one.children(n).collect::<Vec<_>>()
            );
        }
        let x = bulk.child(Some(1), "x", "f");
        assert_eq!(bulk.children(1).last(), Some(x));
        bulk.frame_mut(3).name = "renamed".into();
        assert_eq!(bulk.name(1), "b");
    }

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
        // Clones share the nodes until one of them changes.
        let mut d = c.clone();
        d.frame_mut(x).set_attr("line", "3");
        assert_eq!(c.frame(x).attr("line"), None);
        assert_eq!(d.frame(x).attr("line"), Some("3"));
        assert!(Arc::ptr_eq(&c.frame(a).kind, &c.frame(b).kind));
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

    #[test]
    fn shared_frames_copy_on_change() {
        let mut c = Cct::default();
        let main = c.child(None, "main", "function");
        let b = c.child(Some(main), "b", "function");
        let x = c.child(Some(b), "x", "function");
        let y = c.child(Some(main), "x", "function");
        assert!(std::ptr::eq(c.frame(x), c.frame(y)));
        c.frame_mut(x).set_attr("line", "3");
        assert_eq!(c.frame(y).attr("line"), None);
        // Nodes that share a frame slot: a change to one reaches no other.
        let f = c.shared_frame(Frame::new("k", "kernel"));
        let k1 = c.add_shared(Some(b), f);
        let k2 = c.add_shared(Some(x), f);
        assert!(std::ptr::eq(c.frame(k1), c.frame(k2)));
        c.frame_mut(k1).set_attr("grid", "[1, 1, 1]");
        assert_eq!(c.frame(k1).attr("grid"), Some("[1, 1, 1]"));
        assert_eq!(c.frame(k2).attr("grid"), None);
        c.set_frame(k1, f);
        assert_eq!(c.frame(k1), c.frame(k2));
        // Adding after the last-child links were given back appends in order still.
        c.release_last_children();
        let y2 = c.add_node(Some(b), Frame::new("y2", "function"));
        assert_eq!(c.children(b).collect::<Vec<_>>(), vec![x, k1, y2]);
        c.rewrite_frames(|f| f.name = f.name.to_uppercase().into());
        assert_eq!((c.name(k2), c.name(main)), ("K", "MAIN"));
        assert!(c.check());
    }
}
