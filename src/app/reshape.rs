//! Commands that reshape the tree or what the rows show: filter, squash, compose,
//! group-by, derive, prune, hide, focus, limit; and the file commands source, export
//! and save.

use std::path::{Path, PathBuf};

use super::command::{Command, ExportFormat};
use super::{paths, App, CmdError, Level, Message};
use crate::model::PreOrder;
use crate::query::{cypher, expr, QueryError, Tree};
use crate::session;
use crate::transform::{self, derive, groupby, Rebuilt};

/// Commands that Esc (`pop-filter`) can take back.
pub fn is_filter_like(cmd: &str) -> bool {
    let mut words = cmd.split_whitespace();
    let head = words.next().unwrap_or("");
    let off = words.next() == Some("off") && words.next().is_none();
    matches!(
        head,
        "filter" | "squash" | "prune" | "limit" | "focus" | "hide"
    ) && !off
}

fn query_error(e: QueryError, text: String, at: usize) -> CmdError {
    CmdError {
        msg: e.msg.clone(),
        caret: Some((text, e.pos + at, e.len.max(1))),
    }
}

impl App {
    fn tree_ref(&self) -> Tree<'_> {
        Tree {
            cct: &self.profile.cct,
            metrics: &self.profile.metrics,
        }
    }

    /// Nodes a filter expression or Hatchet query selects in the current tree.
    fn select(&self, text: &str, at: usize, whole: &str) -> Result<Vec<bool>, CmdError> {
        let t = self.tree_ref();
        let r = if cypher::is_hatchet_query(text) {
            cypher::select(text, &t)
        } else {
            expr::parse(text).and_then(|e| expr::select(&e, &t))
        };
        r.map_err(|e| query_error(e, whole.to_string(), at))
    }

    /// Installs a rebuilt tree, keeping folds, the selection and derived metrics.
    fn install(&mut self, r: Rebuilt, matched_old: Option<&[bool]>) {
        let keep = self.tree.selected().map(|n| self.path_of(n));
        let open_old = self.tree.open.clone();
        let open: Vec<bool> = r.origin.iter().map(|&o| open_old[o as usize]).collect();
        self.matched = matched_old.map(|m| r.origin.iter().map(|&o| m[o as usize]).collect());
        let old_cct = std::mem::replace(&mut self.profile.cct, r.cct);
        let old_metrics = std::mem::replace(&mut self.profile.metrics, r.metrics);
        // Freeing a million-node tree costs tens of milliseconds: not on the keystroke.
        drop_elsewhere((old_cct, old_metrics));
        for (name, e) in self.derived.clone() {
            let _ = derive::derive(&mut self.profile.metrics, &name, &e);
        }
        // resort() below builds the pre-order index.
        self.tree = super::tree_state::TreeState::new(&self.profile.cct, PreOrder::default());
        self.tree.open = open;
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
    fn open_results(&mut self) {
        let n = self.profile.cct.len();
        if n <= 20_000 {
            self.tree.open.iter_mut().for_each(|o| *o = true);
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
        let n = self.profile.cct.len();
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
            if let Ok(sel) = expr::parse(e).and_then(|e| expr::select(&e, &self.tree_ref())) {
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
        r.hidden = hidden;
        r.unpruned = unpruned;
        r.below = below;
        r.focus = focus;
        self.tree.rebuild();
    }

    pub(super) fn reshape(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let whole = cmd.to_string();
        match &cmd {
            Command::Filter { squash, expr, .. } => {
                let at = whole.len() - expr.len();
                let matched = self.select(expr, at, &whole)?;
                let count = matched.iter().filter(|m| **m).count();
                if count == 0 {
                    return Err(CmdError {
                        msg: "no node matches; the tree is unchanged".into(),
                        caret: Some((whole.clone(), at, expr.len())),
                    });
                }
                let r = if *squash {
                    transform::rebuild(
                        &self.profile.cct,
                        &self.profile.metrics,
                        &matched,
                        &|_| None,
                        true,
                        true,
                    )
                } else {
                    let keep = transform::with_ancestors(&self.profile.cct, &matched);
                    transform::rebuild(
                        &self.profile.cct,
                        &self.profile.metrics,
                        &keep,
                        &|_| None,
                        false,
                        false,
                    )
                };
                let before = self.profile.cct.len();
                self.install(r, (!*squash).then_some(&matched[..]));
                self.open_results();
                self.refresh_rules();
                self.info(format!(
                    "{count} of {before} nodes match; {} shown",
                    self.profile.cct.len()
                ));
            }
            Command::Squash => {
                let Some(m) = self.matched.clone() else {
                    return Err("squash follows a filter: there is nothing to squash".into());
                };
                let r = transform::rebuild(
                    &self.profile.cct,
                    &self.profile.metrics,
                    &m,
                    &|_| None,
                    true,
                    true,
                );
                self.install(r, None);
                self.refresh_rules();
                self.info(format!("squashed to {} nodes", self.profile.cct.len()));
            }
            Command::Compose { names, new } => {
                let cct = &self.profile.cct;
                let hits = (0..cct.len() as u32)
                    .filter(|&n| names.iter().any(|x| x == cct.name(n)))
                    .count();
                if hits == 0 {
                    return Err(format!("no node is named {}", names.join(" or ")).into());
                }
                let rename = |n: u32| -> Option<crate::model::Frame> {
                    names
                        .iter()
                        .any(|x| x == cct.name(n))
                        .then(|| crate::model::Frame::new(new, "composed"))
                };
                let keep = vec![true; cct.len()];
                let r = transform::rebuild(cct, &self.profile.metrics, &keep, &rename, true, true);
                self.install(r, None);
                self.refresh_rules();
                self.info(format!("{hits} nodes composed into {new}"));
            }
            Command::GroupBy(attr) => {
                let t = self.tree_ref();
                if !t.has_attr(attr) {
                    return Err(format!("no node has the attribute {attr:?}").into());
                }
                let r = groupby::group_by(&self.profile.cct, &self.profile.metrics, attr);
                self.install(r, None);
                self.refresh_rules();
            }
            Command::Derive { def, .. } => {
                let at = whole.len() - def.len();
                let (name, e) =
                    derive::parse_definition(def).map_err(|e| query_error(e, whole.clone(), at))?;
                let made = derive::derive(&mut self.profile.metrics, &name, &e)
                    .map_err(|e| query_error(e, whole.clone(), at))?;
                self.derived.retain(|(n, _)| *n != name);
                self.derived.push((name, e));
                self.refresh_metric();
                self.info(format!("new metric: {}", made.join(", ")));
            }
            Command::Prune { expr: e, .. } => {
                let at = whole.len() - e.len();
                let sel = self.select(e, at, &whole)?;
                self.rules.prune = Some(e.clone());
                self.refresh_rules();
                self.info(format!(
                    "{} nodes pruned",
                    sel.iter().filter(|x| **x).count()
                ));
            }
            Command::PruneOff => {
                self.rules.prune = None;
                self.rules.unpruned.clear();
                self.refresh_rules();
            }
            Command::Unprune(p) | Command::Hide(p) | Command::Show(p) => {
                let n = paths::resolve(&self.profile.cct, p).map_err(CmdError::plain)?;
                let canonical = self.path_of(n);
                match &cmd {
                    Command::Unprune(_) => self.rules.unpruned.push(canonical.clone()),
                    Command::Hide(_) => self.rules.hidden.push(canonical.clone()),
                    _ => {
                        let before = self.rules.hidden.len();
                        let cct = &self.profile.cct;
                        self.rules
                            .hidden
                            .retain(|h| paths::resolve(cct, h).map(|x| x != n).unwrap_or(true));
                        if before == self.rules.hidden.len() {
                            return Err(format!("{canonical} is not hidden").into());
                        }
                    }
                }
                self.refresh_rules();
                return Ok(Some(match cmd {
                    Command::Unprune(_) => Command::Unprune(canonical),
                    Command::Hide(_) => Command::Hide(canonical),
                    _ => Command::Show(canonical),
                }));
            }
            Command::Focus(p) => {
                let n = self.target(p)?;
                let canonical = self.path_of(n);
                self.rules.focus = Some(canonical.clone());
                self.tree.set_open(n, true);
                self.refresh_rules();
                self.tree.reveal(n);
                return Ok(Some(Command::Focus(Some(canonical))));
            }
            Command::Unfocus => {
                self.rules.focus = None;
                self.refresh_rules();
            }
            Command::Limit(v) => {
                self.rules.limit = *v;
                self.refresh_rules();
            }
            Command::Source(file) => {
                self.source(&self.resolve_path(file))?;
                return Ok(None);
            }
            Command::Export { format, path } => {
                let p = self.resolve_path(path);
                self.export(*format, &p)
                    .map_err(|e| CmdError::plain(format!("{}: {e}", p.display())))?;
                self.info(format!("wrote {}", p.display()));
                return Ok(None);
            }
            Command::Save(path) => {
                let p = self.resolve_path(path);
                self.save(&p)
                    .map_err(|e| CmdError::plain(format!("{}: {e}", p.display())))?;
                self.info(format!("saved the session to {}", p.display()));
                return Ok(None);
            }
            other => return Err(format!("{other} is not a reshaping command").into()),
        }
        Ok(Some(cmd))
    }

    fn resolve_path(&self, p: &str) -> PathBuf {
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
        // A file that sources itself (or a cycle) must stop, not overflow the stack.
        if self.source_depth >= 16 {
            return Err(CmdError::plain(format!(
                "{}: source nested more than 16 deep",
                path.display()
            )));
        }
        let script = session::read(path).map_err(CmdError::plain)?;
        self.source_depth += 1;
        let r = self.run_script(&script, &path.display().to_string(), None);
        self.source_depth -= 1;
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
            if let Err(e) = self.run(cmd) {
                let msg = format!("{name}: line {line}: {e}");
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

    fn save(&self, path: &Path) -> std::io::Result<()> {
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

    pub fn export_to<W: std::io::Write>(
        &self,
        format: ExportFormat,
        out: &mut W,
    ) -> std::io::Result<()> {
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
        format: ExportFormat,
        out: &mut W,
        depth: Option<usize>,
    ) -> std::io::Result<()> {
        let positions = self.export_positions_to(depth);
        let po = &self.tree.po;
        let p = &self.profile;
        match format {
            ExportFormat::Json => crate::export::json::write(out, p, po, &positions),
            ExportFormat::Hatchet => {
                let keep: std::collections::HashSet<u32> =
                    positions.iter().map(|&x| po.node[x as usize]).collect();
                let roots: Vec<u32> = match self.tree.rules.focus {
                    Some(f) => vec![f],
                    None => po
                        .root_positions()
                        .map(|r| po.node[r as usize])
                        .filter(|n| keep.contains(n))
                        .collect(),
                };
                let kids = |n: u32| -> Vec<u32> {
                    po.child_positions(po.pos[n as usize])
                        .map(|c| po.node[c as usize])
                        .filter(|c| keep.contains(c))
                        .collect()
                };
                crate::export::hatchet::write(out, &p.cct, &p.metrics, &roots, &kids)
            }
            ExportFormat::Csv => crate::export::csv::write(out, p, po, &positions),
            ExportFormat::Parquet => crate::export::parquet::write(out, p, po, &positions)
                .map_err(|e| std::io::Error::other(format!("parquet: {e}"))),
            ExportFormat::Folded => {
                let exc = p.metrics.values(&self.metric).unwrap_or(&[]);
                crate::export::folded::write(
                    out,
                    &p.cct,
                    exc,
                    positions.iter().map(|&x| po.node[x as usize]),
                )
            }
        }
    }

    fn export(&self, format: ExportFormat, path: &Path) -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        self.export_to(format, &mut f)?;
        std::io::Write::flush(&mut f)
    }
}

/// Drops a large value on a short-lived thread, so the frame that replaced it does not
/// wait for its memory to be freed. Small values are dropped here.
fn drop_elsewhere(old: (crate::model::Cct, crate::model::MetricTable)) {
    if old.0.len() < 50_000 {
        return;
    }
    // When no thread can be had, spawn drops the closure, and the value, right here.
    let _ = std::thread::Builder::new()
        .name("grove-drop".into())
        .spawn(move || drop(old));
}
