//! Undo checkpoints: what is needed to step back over one applied command without
//! replaying the others from the loaded tree. Before a view-changing command runs,
//! the view state is kept (the pre-order, the flags per node, the tree's rows and the
//! metric columns are shared, not copied); a command that replaces the tree hands
//! over the old tree instead of freeing it.
//! Undo and pop-filter put checkpoints back in stack order, so a checkpoint that kept
//! no tree finds the right one in place. Checkpoints are bounded by a memory budget;
//! once the oldest are dropped, undoing that far falls back to replaying.
//!
//! A `derive` only adds columns (or replaces one of its own name): its checkpoint keeps
//! the table's width and the columns it replaces, not a copy of the table, so 10,000
//! derives cost linear time and memory (each copy held every earlier derived column).

use super::command::Command;
use super::commands::Log;
use super::panels::ViewState;
use super::tree_state::TreeState;
use super::{App, CmdError};
use crate::model::{Cct, MetricTable};
use std::sync::Arc;

/// Default bound on the memory the checkpoints hold (the loaded tree is kept apart).
pub const UNDO_BUDGET: usize = 1 << 30;

/// The state before one command: the profile's tree and metrics, and the view.
pub struct Checkpoint {
    /// The tree the command replaced; None when it kept the tree (then the tree in
    /// place when this checkpoint is restored, in stack order, is the right one).
    cct: Option<Cct>,
    metrics: Metrics,
    view: ViewState,
    /// Memory this checkpoint holds on its own (shared parts not counted).
    bytes: usize,
}

/// The metric table before a command.
enum Metrics {
    /// A copy of the whole table (its columns shared).
    Whole(MetricTable),
    /// The table now, less the columns after `width`, with `replaced` put back
    /// (name, unit, column): what a `derive` changed.
    Added {
        width: usize,
        replaced: Vec<(String, String, std::sync::Arc<Vec<f64>>)>,
    },
}

/// Approximate heap bytes of a tree: frames, petgraph's node and edge records, the
/// side tables and the pre-order index that went with it.
fn cct_bytes(c: &Cct) -> usize {
    let attrs: usize = (0..c.len() as u32)
        .map(|n| c.frame(n).attrs.len() * 32)
        .sum();
    c.len() * (std::mem::size_of::<crate::model::Frame>() + 88) + attrs
}

/// Heap bytes that a checkpoint's view (`kept`) holds on its own once its command has
/// run (`now`): the arrays of a flag per node, the tree's rows, the kernel table's
/// rows and the search's matches are shared with the view they were cloned from, so
/// only those the command replaced count. A zoom or a pan replaces none of them, so
/// its checkpoint is the view's small fields alone whatever the size of the tree, and
/// the budget is spent on what undo really keeps.
fn own_bytes(kept: &ViewState, now: &ViewState) -> usize {
    fn alone<T>(a: &Arc<Vec<T>>, b: Option<&Arc<Vec<T>>>) -> usize {
        match b {
            Some(b) if Arc::ptr_eq(a, b) => 0,
            _ => a.len() * std::mem::size_of::<T>(),
        }
    }
    fn alone_opt<T>(a: &Option<Arc<Vec<T>>>, b: &Option<Arc<Vec<T>>>) -> usize {
        a.as_ref().map_or(0, |a| alone(a, b.as_ref()))
    }
    let (t, n): (&TreeState, &TreeState) = (&kept.tree, &now.tree);
    alone(&t.open, Some(&n.open))
        + alone(&t.visible, Some(&n.visible))
        + alone(&t.rules.hidden, Some(&n.rules.hidden))
        + alone(&t.rules.unpruned, Some(&n.rules.unpruned))
        + alone_opt(&t.rules.below, &n.rules.below)
        + alone_opt(&kept.matched, &now.matched)
        + alone_opt(&kept.kernel_marks, &now.kernel_marks)
        + match Arc::ptr_eq(&kept.kernels.rows, &now.kernels.rows) {
            true => 0,
            false => kept
                .kernels
                .rows
                .iter()
                .map(|r| 64 + r.instances.len() * 4)
                .sum(),
        }
        + kept.search.as_ref().map_or(0, |s| {
            alone(&s.matches, now.search.as_ref().map(|n| &n.matches))
        })
}

impl App {
    /// The view state as it is now (before `cmd` runs).
    fn checkpoint(&self, cmd: &Command) -> Checkpoint {
        // Cheap: the per-node arrays are shared (`own_bytes` counts them once the
        // command has run and replaced some).
        let view = self.view.clone();
        let m = &self.profile.metrics;
        let metrics = match cmd {
            Command::Derive(d) => {
                let name = &d.value.0;
                let replaced = [name.clone(), crate::model::metrics::inclusive_name(name)]
                    .into_iter()
                    .filter_map(|n| {
                        let col = m.column(&n)?;
                        let unit = m.unit(&n).to_string();
                        Some((n, unit, col))
                    })
                    .collect();
                Metrics::Added {
                    width: m.width(),
                    replaced,
                }
            }
            _ => Metrics::Whole(m.clone()),
        };
        // The view's small fields and the metric table's names: what every checkpoint
        // holds, so that even steps that share everything are bounded by the budget.
        let bytes = std::mem::size_of::<Checkpoint>() + m.width() * 64;
        Checkpoint {
            cct: None,
            metrics,
            view,
            bytes,
        }
    }

    /// Puts a checkpoint's state back.
    fn restore(&mut self, c: Checkpoint) {
        self.keep_original();
        if let Some(cct) = c.cct {
            let old = std::mem::replace(&mut self.profile.cct, cct);
            super::reshape::drop_elsewhere(old);
        }
        match c.metrics {
            Metrics::Whole(m) => self.profile.metrics = m,
            Metrics::Added { width, replaced } => {
                let m = &mut self.profile.metrics;
                m.truncate(width);
                for (name, unit, col) in replaced {
                    m.put(&name, &unit, col);
                }
            }
        }
        self.view = c.view;
        // The heatmap's columns are derived again from the metric table put back above
        // (cheap beside a restore), as they always were.
        self.view.heatmap.clear();
        self.view.flame.clear();
    }

    /// Applies a view-changing command and pushes it on the undo stack with the
    /// checkpoint taken before it. Returns the canonical command.
    pub(super) fn apply_undoable(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let mut cp = self.checkpoint(&cmd);
        self.keep_displaced = true;
        let r = self.apply(cmd);
        self.keep_displaced = false;
        let displaced = self.displaced.take();
        let logged = r?;
        if let Some(l) = logged.as_ref().filter(|l| matches!(l.log(), Log::View)) {
            cp.bytes += own_bytes(&cp.view, &self.view);
            if let Some(old) = displaced {
                cp.bytes += cct_bytes(&old) + self.profile.metrics.width() * old.len() * 8;
                cp.cct = Some(old);
            }
            self.undo_bytes += cp.bytes;
            self.applied.push(l.clone());
            self.checkpoints.push(Some(cp));
            self.trim_checkpoints();
        } else if let Some(old) = displaced {
            super::reshape::drop_elsewhere(old);
        }
        Ok(logged)
    }

    /// Drops the oldest checkpoints while over the budget; the latest is always kept,
    /// so stepping back once never replays.
    fn trim_checkpoints(&mut self) {
        let last = self.checkpoints.len().saturating_sub(1);
        for i in 0..last {
            if self.undo_bytes <= self.undo_budget {
                break;
            }
            if let Some(c) = self.checkpoints[i].take() {
                self.undo_bytes -= c.bytes;
                if let Some(cct) = c.cct {
                    super::reshape::drop_elsewhere(cct);
                }
            }
        }
    }

    /// Pops the last applied command with its checkpoint. Returns the command and
    /// whether its checkpoint was there (and has been restored).
    fn pop_applied(&mut self) -> Option<(Command, bool)> {
        let cmd = self.applied.pop()?;
        match self.checkpoints.pop().flatten() {
            Some(c) => {
                self.undo_bytes -= c.bytes;
                self.restore(c);
                Some((cmd, true))
            }
            None => Some((cmd, false)),
        }
    }

    /// Steps back over the last applied command: from its checkpoint when kept, else
    /// by replaying the rest from the loaded tree.
    pub(super) fn undo_last(&mut self) -> Result<Command, CmdError> {
        let Some((last, restored)) = self.pop_applied() else {
            return Err("nothing to undo".into());
        };
        // A checkpoint puts back the cursor and folds too; a replay keeps the node
        // under the cursor.
        if !restored {
            self.replay_applied()?;
        }
        Ok(last)
    }

    /// Removes applied command `i`: the checkpoints above it are put back in stack
    /// order and the commands after it applied again; without them, replays.
    pub(super) fn remove_applied(&mut self, i: usize) -> Result<Command, CmdError> {
        if self.checkpoints[i..].iter().all(Option::is_some) {
            let mut later = Vec::new();
            while self.applied.len() > i + 1 {
                if let Some((c, _)) = self.pop_applied() {
                    later.push(c);
                }
            }
            let (removed, _) = self.pop_applied().ok_or("nothing to remove")?;
            let mut result = Ok(());
            for c in later.into_iter().rev() {
                let text = c.to_string();
                if let Err(e) = self.apply_undoable(c) {
                    result = Err(CmdError::plain(format!("replaying {text:?}: {}", e.msg)));
                    break;
                }
            }
            return result.map(|_| removed);
        }
        let removed = self.applied.remove(i);
        self.clear_checkpoints_from(i);
        self.replay_applied()?;
        Ok(removed)
    }

    /// Forgets the checkpoints from `i` on (the commands they preceded now apply to
    /// another state); the stack keeps one slot per applied command.
    pub(super) fn clear_checkpoints_from(&mut self, i: usize) {
        for c in self
            .checkpoints
            .drain(i.min(self.checkpoints.len())..)
            .flatten()
        {
            self.undo_bytes -= c.bytes;
            if let Some(cct) = c.cct {
                super::reshape::drop_elsewhere(cct);
            }
        }
        self.checkpoints.resize_with(self.applied.len(), || None);
    }
}
