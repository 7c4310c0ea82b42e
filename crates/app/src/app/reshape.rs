//! What the reshaping and file commands build on: installing a rebuilt tree, the row
//! rules (hide, prune, limit, focus), selecting nodes, sourcing scripts, saving the
//! session and exporting. The commands themselves are in `commands::reshape` and
//! `commands::session`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::command::{Parsed, Selector};
use super::commands::query_error;
use super::{paths, App, CmdError, Level, Message};
use crate::export::formats::Format;
use crate::model::PreOrder;
use crate::query::{cypher, expr, Tree};
use crate::session;
use crate::transform::{derive, Rebuilt};

impl App {
    pub(super) fn tree_ref(&self) -> Tree<'_> {
        Tree {
            cct: &self.profile.cct,
            metrics: &self.profile.metrics,
        }
    }

    /// Nodes a filter (an expression parsed once, or a Hatchet query) selects in the
    /// current tree.
    pub(super) fn select(
        &self,
        query: &Parsed<Selector>,
        at: usize,
        whole: &str,
    ) -> Result<Vec<bool>, CmdError> {
        let t = self.tree_ref();
        let r = match &query.value {
            Selector::Expr(e) => expr::select(e, &t),
            Selector::Hatchet(Some(q)) => cypher::select_parsed(q, &t),
            Selector::Hatchet(None) => cypher::select(&query.text, &t),
        };
        r.map_err(|e| query_error(e, whole.to_string(), at))
    }

    /// Installs a rebuilt tree, keeping folds, the selection and derived metrics.
    pub(super) fn install(&mut self, r: Rebuilt, matched_old: Option<&[bool]>) {
        let keep = self.tree.selected().map(|n| self.path_of(n));
        let open_old = &self.tree.open;
        let open: Vec<bool> = r.origin.iter().map(|&o| open_old[o as usize]).collect();
        self.matched =
            matched_old.map(|m| Arc::new(r.origin.iter().map(|&o| m[o as usize]).collect()));
        self.keep_original();
        let old_cct = std::mem::replace(&mut self.profile.cct, r.cct);
        let old_metrics = std::mem::replace(&mut self.profile.metrics, r.metrics);
        drop(old_metrics);
        // Undo keeps the tree a command replaced (app::undo); else freeing a
        // million-node tree costs tens of milliseconds: not on the keystroke.
        if self.keep_displaced && self.displaced.is_none() {
            self.displaced = Some(old_cct);
        } else {
            drop_elsewhere(old_cct);
        }
        for (name, e) in self.derived.in_order() {
            let _ = derive::derive(&mut self.profile.metrics, &name, &e);
        }
        // resort() below builds the pre-order index.
        self.tree = super::tree_state::TreeState::new(&self.profile.cct, PreOrder::default());
        self.tree.open = Arc::new(open);
        for root in self.profile.cct.root_ids() {
            self.tree.set_open(root, true);
        }
        self.resort();
        self.refresh_metric();
        self.search = None;
        let target = keep
            .and_then(|p| paths::resolve(&self.profile.cct, &p).ok())
            .or_else(|| self.profile.cct.root_ids().first().copied());
        if let Some(n) = target {
            self.tree.reveal(n);
        }
        self.refresh_marks();
    }

    /// After a filter the kept tree is what the user asked to see: open it (all of it
    /// when small, else down to the first matches).
    pub(super) fn open_results(&mut self) {
        let n = self.profile.cct.len();
        if n <= 20_000 {
            Arc::make_mut(&mut self.tree.open).fill(true);
        } else {
            let firsts: Vec<u32> = match &self.matched {
                Some(m) => (0..n as u32)
                    .filter(|&x| m[x as usize])
                    .take(1000)
                    .collect(),
                None => Vec::new(),
            };
            for x in firsts {
                let mut p = self.profile.cct.parent(x);
                while let Some(q) = p {
                    self.tree.set_open(q, true);
                    p = self.profile.cct.parent(q);
                }
            }
        }
        self.tree.rebuild();
    }

    /// Resolves the row rules (hide, prune, limit, focus) against the current tree.
    pub(super) fn refresh_rules(&mut self) {
        // The flame graph's layout skips hidden subtrees and merges pruned nodes.
        self.flame.clear();
        let n = self.profile.cct.len();
        // The row weights, left out until a rule reads them (`refresh_metric`).
        if self.rules.read_weights() && self.tree.rules.weight.len() != n {
            let col = self.inclusive_column();
            self.tree.rules.weight = self.profile.metrics.column(&col).unwrap_or_default();
        }
        let mut hidden = vec![false; n];
        for p in &self.rules.hidden {
            if let Ok(x) = paths::resolve(&self.profile.cct, p) {
                hidden[x as usize] = true;
            }
        }
        let mut unpruned = vec![false; n];
        for p in &self.rules.unpruned {
            if let Ok(x) = paths::resolve(&self.profile.cct, p) {
                unpruned[x as usize] = true;
            }
        }
        let mut below: Option<Vec<bool>> = None;
        if let Some(e) = &self.rules.prune {
            if let Ok(sel) = expr::select(&e.value, &self.tree_ref()) {
                below = Some(sel);
            }
        }
        if let Some(pct) = self.rules.limit {
            let cut = pct / 100.0 * self.total;
            let w = &self.tree.rules.weight;
            let lim: Vec<bool> = (0..n).map(|i| w.get(i).is_some_and(|v| *v < cut)).collect();
            below = Some(match below {
                Some(b) => b.iter().zip(&lim).map(|(a, b)| *a || *b).collect(),
                None => lim,
            });
        }
        let focus = self
            .rules
            .focus
            .as_ref()
            .and_then(|p| paths::resolve(&self.profile.cct, p).ok());
        let r = &mut self.tree.rules;
        r.hidden = Arc::new(hidden);
        r.unpruned = Arc::new(unpruned);
        r.below = below.map(Arc::new);
        r.focus = focus;
        self.tree.rebuild();
    }

    pub(super) fn resolve_path(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        }
    }

    /// Runs every command of a session or command file; stops at the first failure
    /// with its line number.
    pub fn source(&mut self, path: &Path) -> Result<(), CmdError> {
        // A file that sources itself (or a cycle) must stop, not overflow the stack, and
        // say so once, naming the cycle.
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(at) = self.sourcing.iter().position(|p| *p == key) {
            let chain: Vec<String> = self.sourcing[at..]
                .iter()
                .chain(std::iter::once(&key))
                .map(|p| p.display().to_string())
                .collect();
            self.error_located = true;
            return Err(CmdError::plain(format!(
                "{}: sources itself ({})",
                path.display(),
                chain.join(" > ")
            )));
        }
        if self.sourcing.len() >= 16 {
            self.error_located = true;
            return Err(CmdError::plain(format!(
                "{}: source nested more than 16 deep",
                path.display()
            )));
        }
        let script = session::read(path).map_err(CmdError::plain)?;
        self.sourcing.push(key);
        let r = self.run_script(&script, &path.display().to_string(), None);
        self.sourcing.pop();
        r
    }

    /// Runs a script's commands (all, or the first `until`).
    pub fn run_script(
        &mut self,
        script: &session::Script,
        name: &str,
        until: Option<usize>,
    ) -> Result<(), CmdError> {
        for (i, (line, cmd)) in script.commands.iter().enumerate() {
            if until.is_some_and(|u| i >= u) {
                break;
            }
            self.error_located = false;
            if let Err(e) = self.run(cmd) {
                // An error from a file this one sources already says where it is.
                let msg = if std::mem::take(&mut self.error_located) {
                    e.to_string()
                } else {
                    format!("{name}: line {line}: {e}")
                };
                self.error_located = true;
                self.message = Some(Message {
                    level: Level::Error,
                    text: msg.clone(),
                    caret: None,
                });
                return Err(CmdError::plain(msg));
            }
        }
        for w in &script.warnings {
            self.message = Some(Message {
                level: Level::Warning,
                text: format!("{name}: {w}"),
                caret: None,
            });
        }
        Ok(())
    }

    /// The session header for the current inputs and terminal.
    pub fn session_header(&self) -> session::Header {
        let inputs = match &self.profile.source.path {
            Some(p) => session::input_of(p).ok().into_iter().collect(),
            // An ensemble of several inputs: each with its label, in member order.
            None => {
                let members = super::compare::member_labels(&self.profile.metrics);
                let files: Vec<(String, &str)> = members
                    .iter()
                    .filter_map(|l| {
                        let f = self.profile.meta_value(&format!("{l}.file"))?;
                        (!f.is_empty()).then(|| (l.clone(), f))
                    })
                    .collect();
                let mut out: Vec<session::Input> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                for (l, f) in &files {
                    if !seen.insert(*f) {
                        continue;
                    }
                    // A file that holds several members (ranks) keeps its own labels.
                    let single = files.iter().filter(|(_, g)| g == f).count() == 1;
                    if let Ok(mut i) = session::input_of(Path::new(f)) {
                        i.label = single.then(|| l.clone());
                        out.push(i);
                    }
                }
                out
            }
        };
        session::Header {
            format: session::FORMAT.into(),
            version: session::VERSION,
            tool_version: env!("CARGO_PKG_VERSION").into(),
            created: session::now_rfc3339(),
            inputs,
            term: session::Term {
                cols: self.term.0,
                rows: self.term.1,
            },
        }
    }

    pub(super) fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut w = session::Writer::create(path, &self.session_header())?;
        for c in &self.log {
            w.append(c)?;
        }
        Ok(())
    }

    /// Positions of the current tree as exported: in the current order, inside the
    /// focus, without hidden subtrees.
    pub fn export_positions(&self) -> Vec<u32> {
        let po = &self.tree.po;
        let r = &self.tree.rules;
        let (mut p, stop) = match r.focus {
            Some(f) => {
                let fp = po.pos[f as usize];
                (fp, po.end[fp as usize])
            }
            None => (0, po.len() as u32),
        };
        let mut out = Vec::new();
        while p < stop {
            let n = po.node[p as usize];
            if r.hidden.get(n as usize).copied().unwrap_or(false) {
                p = po.end[p as usize];
                continue;
            }
            out.push(p);
            p += 1;
        }
        out
    }

    pub fn export_to<W: std::io::Write>(&self, format: Format, out: &mut W) -> std::io::Result<()> {
        self.export_to_depth(format, out, None)
    }

    /// The exported rows down to `depth` levels below the (focused) roots.
    pub fn export_positions_to(&self, depth: Option<usize>) -> Vec<u32> {
        let mut positions = self.export_positions();
        if let Some(d) = depth {
            let po = &self.tree.po;
            let base = positions
                .iter()
                .map(|&p| po.depth[p as usize])
                .min()
                .unwrap_or(0) as usize;
            positions.retain(|&p| po.depth[p as usize] as usize - base <= d);
        }
        positions
    }

    /// Writes the current tree, down to `depth` levels below its (focused) roots.
    pub fn export_to_depth<W: std::io::Write>(
        &self,
        format: Format,
        out: &mut W,
        depth: Option<usize>,
    ) -> std::io::Result<()> {
        let positions = self.export_positions_to(depth);
        let tree = crate::export::formats::Tree {
            profile: &self.profile,
            po: &self.tree.po,
            positions: &positions,
            focus: self.tree.rules.focus,
            metric: &self.metric,
        };
        crate::export::formats::write_tree(format, &tree, out)
    }

    pub(super) fn export(&self, format: Format, path: &Path) -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        self.export_to(format, &mut f)?;
        std::io::Write::flush(&mut f)
    }
}

/// Drops a large value on a short-lived thread, so the frame that replaced it does not
/// wait for its memory to be freed. Small values are dropped here.
pub(super) fn drop_elsewhere(old: crate::model::Cct) {
    if old.len() < 50_000 {
        return;
    }
    // When no thread can be had, spawn drops the closure, and the value, right here.
    let _ = std::thread::Builder::new()
        .name("grove-drop".into())
        .spawn(move || drop(old));
}
