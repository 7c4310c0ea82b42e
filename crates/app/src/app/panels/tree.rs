//! The folding state of the CCT view: which nodes are open, the visible rows (computed
//! from the pre-order index by jumping over closed subtrees), the cursor and scroll.
//! Pruned siblings collapse into one aggregate row; hidden subtrees and everything
//! outside the focus are skipped.

use std::sync::Arc;

use crate::model::{Cct, PreOrder, NO_NODE};

/// One screen row: a node, or `more` pruned siblings starting at `pos`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub pos: u32,
    pub more: u32,
    /// Sum of the primary inclusive metric over an aggregate's nodes.
    pub total: f64,
}

impl Row {
    pub fn is_node(&self) -> bool {
        self.more == 0
    }
}

/// What the rows leave out, resolved to node ids of the current tree. The arrays of a
/// flag per node are shared (`Arc`) like the pre-order: an undo checkpoint clones the
/// view before every view command (a timeline zoom too), and copying a byte per node
/// made that step cost O(nodes), not O(screen) (issue 30).
#[derive(Debug, Clone, Default)]
pub struct RowRules {
    /// Subtrees elided by `hide`.
    pub hidden: Arc<Vec<bool>>,
    /// Nodes under the prune or limit threshold.
    pub below: Option<Arc<Vec<bool>>>,
    /// Parents whose pruned children are shown anyway (`unprune`).
    pub unpruned: Arc<Vec<bool>>,
    pub focus: Option<u32>,
    /// Primary inclusive metric per node (aggregate totals): the metric table's own
    /// column, shared rather than copied each time the tree or the metric changes.
    pub weight: Arc<Vec<f64>>,
}

#[derive(Debug, Clone, Default)]
pub struct TreeState {
    /// Shared: undo checkpoints keep the view state of every step, and only sorting
    /// or reshaping makes a new pre-order.
    pub po: Arc<PreOrder>,
    /// Open flag per node id (survives re-sorting). Shared, copied on the first fold
    /// after a checkpoint took it (`Arc::make_mut`), not by every checkpoint.
    pub open: Arc<Vec<bool>>,
    /// Shared like `open`: only a fold, a rule or a new order replaces it.
    pub visible: Arc<Vec<Row>>,
    pub cursor: usize,
    pub offset: usize,
    pub rules: RowRules,
}

impl TreeState {
    pub fn new(cct: &Cct, po: PreOrder) -> TreeState {
        let mut t = TreeState {
            open: Arc::new(vec![false; cct.len()]),
            po: Arc::new(po),
            ..Default::default()
        };
        t.rebuild();
        t
    }

    fn hidden(&self, node: u32) -> bool {
        self.rules
            .hidden
            .get(node as usize)
            .copied()
            .unwrap_or(false)
    }

    fn below(&self, node: u32) -> bool {
        self.rules
            .below
            .as_ref()
            .is_some_and(|b| b.get(node as usize).copied().unwrap_or(false))
    }

    fn unpruned(&self, parent_pos: u32) -> bool {
        parent_pos != NO_NODE
            && self
                .rules
                .unpruned
                .get(self.po.node[parent_pos as usize] as usize)
                .copied()
                .unwrap_or(false)
    }

    fn compute_rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let (mut p, stop) = match self.rules.focus {
            Some(f) => {
                let fp = self.po.pos[f as usize];
                (fp, self.po.end[fp as usize])
            }
            None => (0, self.po.len() as u32),
        };
        while p < stop {
            let node = self.po.node[p as usize];
            if self.hidden(node) {
                p = self.po.end[p as usize];
                continue;
            }
            let parent = self.po.parent(p);
            let is_focus_root = self.rules.focus == Some(node);
            if !is_focus_root && self.below(node) && !self.unpruned(parent) {
                // A run of pruned siblings becomes one row.
                let sib_end = if parent == NO_NODE || is_focus_root {
                    stop
                } else {
                    self.po.end[parent as usize].min(stop)
                };
                let mut q = p;
                let mut count = 0;
                let mut total = 0.0;
                while q < sib_end {
                    let n = self.po.node[q as usize];
                    if self.hidden(n) {
                        q = self.po.end[q as usize];
                        continue;
                    }
                    if !self.below(n) {
                        break;
                    }
                    count += 1;
                    let w = self
                        .rules
                        .weight
                        .get(n as usize)
                        .copied()
                        .unwrap_or(f64::NAN);
                    if w.is_finite() {
                        total += w;
                    }
                    q = self.po.end[q as usize];
                }
                rows.push(Row {
                    pos: p,
                    more: count,
                    total,
                });
                p = q;
                continue;
            }
            rows.push(Row {
                pos: p,
                more: 0,
                total: 0.0,
            });
            p = if self.open[node as usize] {
                p + 1
            } else {
                self.po.end[p as usize]
            };
        }
        rows
    }

    /// Recomputes the visible rows: O(visible rows), closed subtrees are skipped whole.
    pub fn rebuild(&mut self) {
        let keep = self.selected();
        self.visible = Arc::new(self.compute_rows());
        if let Some(node) = keep {
            self.settle_on(node);
        }
        self.cursor = self.cursor.min(self.visible.len().saturating_sub(1));
    }

    /// Puts the cursor on `node`, or on its nearest visible ancestor when a fold now
    /// hides it — without reopening anything.
    fn settle_on(&mut self, node: u32) {
        let mut pos = self.po.pos[node as usize];
        loop {
            match self.row_index(pos) {
                Ok(i) => {
                    self.cursor = i;
                    return;
                }
                Err(i) if i > 0 && !self.visible[i - 1].is_node() => {
                    let r = self.visible[i - 1];
                    // Inside an aggregate row only when it covers this sibling run.
                    if self.po.parent(r.pos) == self.po.parent(pos) {
                        self.cursor = i - 1;
                        return;
                    }
                }
                Err(_) => {}
            }
            match self.po.parent(pos) {
                NO_NODE => return,
                p => pos = p,
            }
        }
    }

    /// Swaps in a new pre-order (after a sort) and keeps the selected node.
    pub fn reorder(&mut self, po: PreOrder) {
        self.reorder_shared(Arc::new(po))
    }

    /// `reorder` with a pre-order shared with others (a saved order's).
    pub fn reorder_shared(&mut self, po: Arc<PreOrder>) {
        let keep = self.selected();
        self.po = po;
        self.cursor = 0;
        self.visible = Arc::new(self.compute_rows());
        if let Some(n) = keep {
            self.settle_on(n);
        }
    }

    pub fn row(&self) -> Option<Row> {
        self.visible.get(self.cursor).copied()
    }

    /// The node under the cursor; on an aggregate row, its first node.
    pub fn selected(&self) -> Option<u32> {
        self.row().map(|r| self.po.node[r.pos as usize])
    }

    pub fn selected_pos(&self) -> Option<u32> {
        self.row().map(|r| r.pos)
    }

    pub fn is_open(&self, node: u32) -> bool {
        self.open[node as usize]
    }

    fn row_index(&self, pos: u32) -> Result<usize, usize> {
        self.visible.binary_search_by_key(&pos, |r| r.pos)
    }

    /// Opens every ancestor of `node` and moves the cursor to it (or to the aggregate
    /// row that holds it).
    pub fn reveal(&mut self, node: u32) {
        let Some(&pos) = self.po.pos.get(node as usize) else {
            return;
        };
        let mut changed = false;
        let mut p = self.po.parent(pos);
        while p != NO_NODE {
            let n = self.po.node[p as usize];
            if !self.open[n as usize] {
                Arc::make_mut(&mut self.open)[n as usize] = true;
                changed = true;
            }
            p = self.po.parent(p);
        }
        if changed {
            self.visible = Arc::new(self.compute_rows());
        }
        match self.row_index(pos) {
            Ok(i) => self.cursor = i,
            Err(i) if i > 0 && !self.visible[i - 1].is_node() => self.cursor = i - 1,
            Err(_) => {}
        }
    }

    pub fn set_open(&mut self, node: u32, open: bool) {
        // Written only when it changes, so a fold that changes nothing copies nothing.
        if self.open[node as usize] != open {
            Arc::make_mut(&mut self.open)[node as usize] = open;
        }
    }

    /// Opens or closes a node and all its descendants.
    pub fn set_subtree(&mut self, node: u32, open: bool) {
        let p = self.po.pos[node as usize] as usize;
        let flags = Arc::make_mut(&mut self.open);
        for q in p..self.po.end[p] as usize {
            flags[self.po.node[q] as usize] = open;
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
        match self.po.parent(self.po.pos[node as usize]) {
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

/// The tree panel: the CCT, its state `ViewState::tree`. Up and down move the tree's
/// cursor, which every panel shares.
pub struct Tree;

impl super::Panel for Tree {
    fn usable(&self, _: &crate::app::App) -> bool {
        true
    }

    fn open(&self, _: &mut crate::app::App) -> Result<(), crate::app::CmdError> {
        Ok(())
    }

    fn move_cursor(&self, _: &mut crate::app::App, _: isize) -> bool {
        false
    }

    fn scroll_table(&self, _: &mut crate::app::App, _: i64) -> bool {
        false
    }

    /// The tree's view is rebuilt by the replay (`App::initial_view`).
    fn reset(&self, _: &mut super::ViewState, _: &mut super::ViewState) {}
}
