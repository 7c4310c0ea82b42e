//! The folding state of the CCT view: which nodes are open, the visible rows (computed
//! from the pre-order index by jumping over closed subtrees), the cursor and scroll.

use crate::model::{Cct, PreOrder, NO_NODE};

#[derive(Debug, Clone, Default)]
pub struct TreeState {
    pub po: PreOrder,
    /// Open flag per node id (survives re-sorting).
    pub open: Vec<bool>,
    /// Visible rows as pre-order positions.
    pub visible: Vec<u32>,
    pub cursor: usize,
    pub offset: usize,
}

impl TreeState {
    pub fn new(cct: &Cct, po: PreOrder) -> TreeState {
        let mut t = TreeState {
            open: vec![false; cct.len()],
            po,
            ..Default::default()
        };
        t.rebuild();
        t
    }

    /// Recomputes the visible rows: O(visible rows), closed subtrees are skipped whole.
    pub fn rebuild(&mut self) {
        let keep = self.selected();
        self.visible.clear();
        let n = self.po.len() as u32;
        let mut p = 0u32;
        while p < n {
            self.visible.push(p);
            let node = self.po.node[p as usize];
            p = if self.open[node as usize] {
                p + 1
            } else {
                self.po.end[p as usize]
            };
        }
        if let Some(node) = keep {
            self.reveal(node);
        }
        self.cursor = self.cursor.min(self.visible.len().saturating_sub(1));
    }

    /// Swaps in a new pre-order (after a sort) and keeps the selected node.
    pub fn reorder(&mut self, po: PreOrder) {
        let keep = self.selected();
        self.po = po;
        self.visible.clear();
        self.cursor = 0;
        self.rebuild();
        if let Some(n) = keep {
            self.reveal(n);
        }
    }

    pub fn selected(&self) -> Option<u32> {
        self.visible
            .get(self.cursor)
            .map(|&p| self.po.node[p as usize])
    }

    pub fn selected_pos(&self) -> Option<u32> {
        self.visible.get(self.cursor).copied()
    }

    pub fn is_open(&self, node: u32) -> bool {
        self.open[node as usize]
    }

    /// Opens every ancestor of `node` and moves the cursor to it.
    pub fn reveal(&mut self, node: u32) {
        let mut changed = false;
        let mut p = self.po.parent[self.po.pos[node as usize] as usize];
        while p != NO_NODE {
            let n = self.po.node[p as usize];
            if !self.open[n as usize] {
                self.open[n as usize] = true;
                changed = true;
            }
            p = self.po.parent[p as usize];
        }
        if changed {
            self.visible.clear();
            let n = self.po.len() as u32;
            let mut q = 0u32;
            while q < n {
                self.visible.push(q);
                let nd = self.po.node[q as usize];
                q = if self.open[nd as usize] {
                    q + 1
                } else {
                    self.po.end[q as usize]
                };
            }
        }
        let pos = self.po.pos[node as usize];
        if let Ok(i) = self.visible.binary_search(&pos) {
            self.cursor = i;
        }
    }

    pub fn set_open(&mut self, node: u32, open: bool) {
        self.open[node as usize] = open;
    }

    /// Opens or closes a node and all its descendants.
    pub fn set_subtree(&mut self, node: u32, open: bool) {
        let p = self.po.pos[node as usize] as usize;
        for q in p..self.po.end[p] as usize {
            self.open[self.po.node[q] as usize] = open;
        }
    }

    pub fn children(&self, node: u32) -> Vec<u32> {
        let p = self.po.pos[node as usize];
        self.po
            .child_positions(p)
            .map(|c| self.po.node[c as usize])
            .collect()
    }

    pub fn parent(&self, node: u32) -> Option<u32> {
        match self.po.parent[self.po.pos[node as usize] as usize] {
            NO_NODE => None,
            p => Some(self.po.node[p as usize]),
        }
    }

    /// Moves the cursor by `delta` rows, clamped.
    pub fn move_by(&mut self, delta: isize) {
        if self.visible.is_empty() {
            return;
        }
        let max = self.visible.len() as isize - 1;
        self.cursor = (self.cursor as isize + delta).clamp(0, max) as usize;
    }

    /// Keeps the cursor on screen with a small margin, scrolling as little as possible.
    pub fn scroll_into_view(&mut self, height: usize) {
        if height == 0 {
            return;
        }
        let margin = if height > 8 { 2 } else { 0 };
        if self.cursor < self.offset + margin {
            self.offset = self.cursor.saturating_sub(margin);
        } else if self.cursor + margin >= self.offset + height {
            self.offset = (self.cursor + margin + 1).saturating_sub(height);
        }
        let max_off = self.visible.len().saturating_sub(height);
        self.offset = self.offset.min(max_off);
    }
}
