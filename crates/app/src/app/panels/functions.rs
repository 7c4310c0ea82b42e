//! The functions panel: every function once, merged over its call sites
//! (`transform::functions`), sorted by a column; the selected function's callers and
//! callees with the value along each edge; Enter on one selects it in the table, and
//! `functions tree` opens the tree filtered to every call path of the function.
//!
//! The table is built once per change of the current tree (its pre-order's address)
//! and the metric, and its order once per sort column, each kept in a `Memo`; a
//! selected function's edges are kept the same way, so a frame costs the rows drawn.

use std::sync::Arc;

use super::super::command::{Command, FunctionsCmd, PanelMove};
use super::super::{App, CmdError};
use super::memo::Memo;
use super::PanelId;
use crate::transform::functions::cycles::Cycles;
use crate::transform::functions::edges::{Edge, ROOT};
use crate::transform::functions::{Column, Functions as FnTable};

/// The sort columns `functions sort next` goes round, in order.
pub const SORTS: [&str; 4] = ["self", "inclusive", "calls", "name"];

/// Where up/down and Enter act.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    #[default]
    Table,
    Callers,
    Callees,
}

/// The table of the current tree and the index of the panel's metric in it.
pub struct Table {
    pub fns: FnTable,
    pub metric: usize,
}

/// The selected function's callers and callees, largest first by the panel's metric.
pub struct Edges {
    pub callers: Vec<Edge>,
    pub callees: Vec<Edge>,
}

/// What the table depends on: the current tree (its pre-order's address), the
/// metric and the number of metric columns (`derive` adds one without a new tree).
type TableKey = (usize, String, usize);

#[derive(Clone, Default)]
pub struct FunctionsView {
    /// The sort column, an index of `SORTS`.
    pub sort: usize,
    /// The row of the table under the cursor, and the first row on screen.
    pub cursor: usize,
    pub offset: usize,
    pub focus: Focus,
    /// The row under the cursor in the callers or callees list.
    pub edge_cursor: usize,
    /// Callers above and callees below the function (a small call graph), rather than
    /// side by side.
    pub graph: bool,
    table: Memo<TableKey, Table>,
    /// Keyed by the table's key, the sort and the search text (`/`): typing filters the
    /// list.
    order: Memo<(TableKey, usize, Option<String>), Vec<u32>>,
    edges: Memo<(TableKey, u32), Edges>,
    cycles: Memo<TableKey, Cycles>,
}

impl FunctionsView {
    /// Forgets the derived table (the metrics changed).
    pub fn clear(&self) {
        self.table.clear();
        self.order.clear();
        self.edges.clear();
        self.cycles.clear();
    }
}

/// Rows of the table in a panel `h` rows high (a title and the column header above
/// it); the rest goes to the callers and callees (none below 10 rows).
pub fn table_rows(h: u16) -> u16 {
    if h < 10 {
        h.saturating_sub(2)
    } else {
        (h - 2) * 3 / 5
    }
}

/// The table's rows on screen: the panel is a row taller than the tree's page.
fn shown_rows(page: usize) -> usize {
    (table_rows(page.saturating_add(1).min(u16::MAX as usize) as u16) as usize).max(1)
}

fn column(sort: usize) -> Column {
    match SORTS[sort % SORTS.len()] {
        "inclusive" => Column::Inclusive,
        "calls" => Column::Calls,
        "name" => Column::Name,
        _ => Column::Self_,
    }
}

impl App {
    fn functions_key(&self) -> TableKey {
        (
            Arc::as_ptr(&self.tree.po) as usize,
            self.metric.clone(),
            self.profile.metrics.names().len(),
        )
    }

    /// The functions table of the current tree.
    pub fn functions_table(&self) -> Arc<Table> {
        let key = self.functions_key();
        self.functions.table.get(&key, || {
            let fns = FnTable::of_profile(&self.profile);
            let p = &self.profile;
            let resolved = p
                .metrics
                .resolve(&self.metric)
                .unwrap_or_else(|| self.metric.clone());
            let metric = fns
                .metric(&resolved)
                .or_else(|| fns.metric(&p.default_metric))
                .unwrap_or(0);
            Table { fns, metric }
        })
    }

    /// The functions in the order of the sort column; while a search is on (`/`), only
    /// those whose name holds its text.
    pub fn functions_order(&self) -> Arc<Vec<u32>> {
        let find = self.search.as_ref().map(|s| s.text.clone());
        let key = (self.functions_key(), self.functions.sort, find);
        self.functions.order.get(&key, || {
            let t = self.functions_table();
            if t.fns.metrics.is_empty() {
                return Vec::new();
            }
            let mut order = t.fns.order(t.metric, column(key.1), false);
            if let Some(text) = &key.2 {
                // The tree search's rule: smart case, a part of the name.
                let sensitive = text.chars().any(|c| c.is_uppercase());
                let needle = text.to_lowercase();
                order.retain(|&f| {
                    let name = &t.fns.functions[f as usize].name;
                    if sensitive {
                        name.contains(text.as_str())
                    } else {
                        name.to_lowercase().contains(&needle)
                    }
                });
            }
            order
        })
    }

    /// The table's cursor, within the rows shown (a search may have cut them).
    pub fn functions_cursor(&self) -> usize {
        let n = self.functions_order().len();
        self.functions.cursor.min(n.saturating_sub(1))
    }

    /// The function under the table's cursor.
    pub fn functions_selected(&self) -> Option<u32> {
        self.functions_order().get(self.functions_cursor()).copied()
    }

    /// The callers and callees of the selected function.
    pub fn functions_edges(&self) -> Option<Arc<Edges>> {
        let f = self.functions_selected()?;
        let key = (self.functions_key(), f);
        Some(self.functions.edges.get(&key, || {
            let t = self.functions_table();
            let m = t.metric;
            let by_value = |mut e: Vec<Edge>| {
                e.sort_by(|a, b| {
                    let v = |x: &Edge| x.value.get(m).copied().unwrap_or(0.0);
                    v(b).total_cmp(&v(a)).then(a.function.cmp(&b.function))
                });
                e
            };
            Edges {
                callers: by_value(t.fns.callers(f)),
                callees: by_value(t.fns.callees(f)),
            }
        }))
    }

    /// The cycles of the current table's function graph.
    pub fn functions_cycles(&self) -> Arc<Cycles> {
        let key = self.functions_key();
        self.functions
            .cycles
            .get(&key, || self.functions_table().fns.cycles())
    }

    /// The length of the focused list.
    fn functions_len(&self) -> usize {
        match self.functions.focus {
            Focus::Table => self.functions_order().len(),
            side => self
                .functions_edges()
                .map(|e| match side {
                    Focus::Callers => e.callers.len(),
                    _ => e.callees.len(),
                })
                .unwrap_or(0),
        }
    }

    fn functions_move(&mut self, delta: isize) {
        let n = self.functions_len();
        let page = shown_rows(self.page);
        let v = &mut self.view.functions;
        let at = if v.focus == Focus::Table {
            &mut v.cursor
        } else {
            &mut v.edge_cursor
        };
        *at = (*at as isize)
            .saturating_add(delta)
            .clamp(0, n.saturating_sub(1) as isize) as usize;
        if v.focus == Focus::Table {
            v.edge_cursor = 0;
            if v.cursor < v.offset {
                v.offset = v.cursor;
            } else if v.cursor >= v.offset + page {
                v.offset = v.cursor + 1 - page;
            }
        }
    }

    /// Puts the table's cursor on function `f`; false when the search hides it.
    fn functions_goto(&mut self, f: u32) -> bool {
        let order = self.functions_order();
        let Some(row) = order.iter().position(|&g| g == f) else {
            return false;
        };
        let page = shown_rows(self.page);
        let v = &mut self.view.functions;
        v.cursor = row;
        v.edge_cursor = 0;
        v.focus = Focus::Table;
        if v.cursor < v.offset || v.cursor >= v.offset + page {
            v.offset = v.cursor.saturating_sub(page / 2);
        }
        true
    }

    /// The filter that keeps every call path of function `f` (by its name).
    pub fn functions_filter(&self, f: u32) -> String {
        let t = self.functions_table();
        let name = t.fns.functions[f as usize]
            .name
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        format!("filter name == \"{name}\"")
    }

    pub(crate) fn functions_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let Command::Functions(f) = cmd else {
            return Err(format!("{cmd} is not a functions command").into());
        };
        match &f {
            FunctionsCmd::Sort(c) => {
                let keep = self.functions_selected();
                let v = &mut self.view.functions;
                v.sort = match c.as_str() {
                    "next" => (v.sort + 1) % SORTS.len(),
                    c => SORTS.iter().position(|s| *s == c).unwrap_or(v.sort),
                };
                if let Some(g) = keep {
                    self.functions_goto(g);
                }
                let s = SORTS[self.functions.sort].to_string();
                Ok(Some(Command::Functions(FunctionsCmd::Sort(s))))
            }
            FunctionsCmd::Focus(s) => {
                let v = &mut self.view.functions;
                v.focus = match (s.as_str(), v.focus) {
                    ("table", _) | ("next", Focus::Callees) => Focus::Table,
                    ("callers", _) | ("next", Focus::Table) => Focus::Callers,
                    _ => Focus::Callees,
                };
                v.edge_cursor = 0;
                Ok(Some(Command::Functions(f)))
            }
            FunctionsCmd::Enter => {
                let focus = self.functions.focus;
                if focus == Focus::Table {
                    self.view.functions.focus = Focus::Callers;
                    self.view.functions.edge_cursor = 0;
                    return Ok(Some(Command::Functions(f)));
                }
                let Some(e) = self.functions_edges() else {
                    return Err("no function is selected".into());
                };
                let list = if focus == Focus::Callers {
                    &e.callers
                } else {
                    &e.callees
                };
                let Some(edge) = list.get(self.functions.edge_cursor) else {
                    return Err("the list is empty".into());
                };
                if edge.function == ROOT {
                    return Err("(root) is the top of the call paths, not a function".into());
                }
                if !self.functions_goto(edge.function) {
                    let t = self.functions_table();
                    let name = t.fns.functions[edge.function as usize].label();
                    return Err(format!("{name} is not in the list: the search hides it").into());
                }
                Ok(Some(Command::Functions(f)))
            }
            FunctionsCmd::Graph => {
                self.view.functions.graph = !self.view.functions.graph;
                Ok(Some(Command::Functions(f)))
            }
            FunctionsCmd::Tree => {
                let Some(g) = self.functions_selected() else {
                    return Err("no function is selected".into());
                };
                // Through `update`, so the filter and the switch are logged and undone
                // as the commands they are.
                let filter = Command::parse(&self.functions_filter(g)).map_err(|e| e.msg)?;
                self.update(filter)?;
                self.update(Command::Panel(PanelMove::To(PanelId::of(
                    &super::tree::Tree,
                ))))?;
                Ok(None)
            }
        }
    }
}

/// The functions panel: its state `ViewState::functions`; up and down move the cursor
/// of the focused list.
pub struct Functions;

impl super::Panel for Functions {
    fn usable(&self, app: &App) -> bool {
        !app.profile.metrics.names().is_empty()
    }

    fn open(&self, app: &mut App) -> Result<(), CmdError> {
        if app.profile.metrics.names().is_empty() {
            return Err("this profile has no metric to list functions by".into());
        }
        Ok(())
    }

    fn move_cursor(&self, app: &mut App, delta: isize) -> bool {
        app.functions_move(delta);
        true
    }

    fn scroll_table(&self, _: &mut App, _: i64) -> bool {
        false
    }

    /// The sort and the cursor are view state: a replay starts them afresh.
    fn reset(&self, _: &mut super::ViewState, _: &mut super::ViewState) {}

    fn position(&self, app: &App) -> (usize, usize) {
        let n = app.functions_len();
        let v = &app.view.functions;
        let at = if v.focus == Focus::Table {
            v.cursor
        } else {
            v.edge_cursor
        };
        ((at + 1).min(n), n)
    }
}
