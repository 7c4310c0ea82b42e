//! The SQL results panel (issue 31): `sql QUERY` runs a query over the loaded trace's
//! tables (`crate::sql`, docs/sql.md) and shows the answer here, a table to scroll
//! and sort. Enter on a row goes to what it names (a node to the tree, an event to the
//! timeline, a function to the functions panel) and `sql filter` turns the answer's
//! nodes into an ordinary `filter`, all through `App::update`, so they are logged,
//! undone and replayed as themselves.
//!
//! The tables are those of the trace as loaded (`App::original`'s tree, whose node ids
//! the events carry), built when a query first names them and kept in a `Memo` until
//! the events arrive or the tree is reloaded.

use std::sync::{Arc, Mutex};

use polars::prelude::{AnyValue, DataFrame, SortMultipleOptions};

use super::super::command::{Command, Input, PanelMove, ParseError, ZoomSpec};
use super::super::{App, CmdError};
use super::memo::Memo;
use super::PanelId;
use crate::model::events::NONE_U32;
use crate::model::EventKind;
use crate::sql::{Member, Tables};

/// What `sql` does.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlCmd {
    /// Run a query and show its answer.
    Query(String),
    /// Sort the answer by a column (`next` names the one after the current), largest
    /// first unless `asc`; `reverse` flips the current sort.
    Sort(String, bool),
    /// Go to what the row under the cursor names.
    Open,
    /// Keep the nodes the answer names (an ordinary `filter`).
    Filter,
}

/// An answer: the query, its rows and the table it read first (what an `id` names).
pub struct Answer {
    pub query: String,
    pub df: DataFrame,
    pub from: Option<String>,
}

#[derive(Clone, Default)]
pub struct SqlView {
    pub answer: Option<Arc<Answer>>,
    /// The sort: a column name, descending when true.
    pub sort: Option<(String, bool)>,
    pub cursor: usize,
    pub offset: usize,
    /// The first column on screen (`scroll table N`).
    pub column: usize,
    /// The tables built so far, for the tree they were built from.
    tables: Memo<(usize, usize), Mutex<Tables>>,
}

/// `sql QUERY | sort COLUMN|next [asc|desc] | sort reverse | open | filter`.
pub fn parse(i: &Input) -> Result<Command, ParseError> {
    let (text, _) = i.raw_rest();
    let c = match i.args {
        [w] if w.text == "open" => SqlCmd::Open,
        [w] if w.text == "filter" => SqlCmd::Filter,
        [w, c] if w.text == "sort" && c.text == "reverse" => SqlCmd::Sort(String::new(), true),
        [w, c] if w.text == "sort" => SqlCmd::Sort(c.text.clone(), true),
        [w, c, d] if w.text == "sort" && (d.text == "asc" || d.text == "desc") => {
            SqlCmd::Sort(c.text.clone(), d.text == "desc")
        }
        [] => return Err(i.missing(
            "expected a query (tables: nodes, functions, events, kernels, lanes, steps, counters, profiles)",
        )),
        _ => SqlCmd::Query(text.to_string()),
    };
    Ok(Command::Sql(c))
}

pub fn print(c: &Command, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    let Command::Sql(c) = c else {
        return Ok(());
    };
    match c {
        SqlCmd::Query(q) => write!(f, "sql {q}"),
        SqlCmd::Sort(c, _) if c.is_empty() => f.write_str("sql sort reverse"),
        SqlCmd::Sort(c, desc) => write!(
            f,
            "sql sort {} {}",
            super::super::command::quote(c),
            if *desc { "desc" } else { "asc" }
        ),
        SqlCmd::Open => f.write_str("sql open"),
        SqlCmd::Filter => f.write_str("sql filter"),
    }
}

/// A query changes what is shown; moving through the answer does not; `open` and
/// `filter` log the commands they run, not themselves.
pub fn log(c: &Command) -> super::super::commands::Log {
    use super::super::commands::Log;
    match c {
        Command::Sql(SqlCmd::Query(_) | SqlCmd::Sort(..)) => Log::View,
        _ => Log::Ui,
    }
}

/// A cell of the answer, or None past its end or for null.
fn cell<'a>(df: &'a DataFrame, row: usize, name: &str) -> Option<AnyValue<'a>> {
    let v = df.column(name).ok()?.get(row).ok()?;
    (!matches!(v, AnyValue::Null)).then_some(v)
}

fn as_u32(v: &AnyValue<'_>) -> Option<u32> {
    v.extract::<u32>()
}

/// What a row of the answer names.
enum Target {
    Node(u32),
    Path(String),
    Event(u32),
    Function(String),
}

impl App {
    /// The tables of the loaded trace, kept for the next query.
    fn sql_tables(&self) -> Arc<Mutex<Tables>> {
        let cct = self.original().0;
        let events = self.profile.events.as_ref().map_or(0, |e| e.len());
        let key = (cct as *const _ as usize, events);
        self.sql.tables.get(&key, || Mutex::new(Tables::default()))
    }

    fn run_sql(&self, query: &str) -> Result<DataFrame, CmdError> {
        let named = polars::sql::extract_table_identifiers(query, false, true).unwrap_or_default();
        let wants_events = named.iter().any(|t| {
            matches!(
                t.as_str(),
                "events" | "kernels" | "lanes" | "steps" | "counters"
            )
        });
        if wants_events && self.loading() {
            return Err(CmdError::plain(format!(
                "the trace's events are still loading ({})",
                self.loading_why()
            )));
        }
        let members = [Member {
            label: self.profile.source.label.clone(),
            profile: &self.profile,
            tree: Some(self.original()),
        }];
        let cats = self
            .kernels
            .categories
            .clone()
            .unwrap_or_else(crate::gpu::classify::Categories::builtin);
        let tables = self.sql_tables();
        let mut t = tables.lock().unwrap_or_else(|e| e.into_inner());
        t.query(&members, &cats, query).map_err(|e| {
            let text = format!("sql {query}");
            let caret = e
                .column
                .filter(|_| e.line == Some(1))
                .map(|c| (text, 4 + c.saturating_sub(1), 1));
            CmdError {
                msg: format!("sql: {}", e.message),
                caret,
            }
        })
    }

    /// The answer's rows sorted as the panel's sort says.
    fn sorted(&self, df: DataFrame) -> Result<DataFrame, CmdError> {
        let Some((col, desc)) = &self.sql.sort else {
            return Ok(df);
        };
        if df.column(col).is_err() {
            return Ok(df);
        }
        df.sort(
            [col.as_str()],
            SortMultipleOptions::default()
                .with_order_descending(*desc)
                .with_nulls_last(true)
                .with_maintain_order(true),
        )
        .map_err(|e| CmdError::plain(format!("sql sort: {e}")))
    }

    pub(crate) fn sql_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let Command::Sql(c) = cmd else {
            return Err(format!("{cmd} is not an sql command").into());
        };
        match c {
            SqlCmd::Query(q) => {
                let df = self.run_sql(&q)?;
                let from = polars::sql::extract_table_identifiers(&q, false, false)
                    .ok()
                    .and_then(|t| t.into_iter().next());
                self.view.sql.sort = None;
                let v = &mut self.view.sql;
                v.answer = Some(Arc::new(Answer {
                    query: q.clone(),
                    df,
                    from,
                }));
                v.cursor = 0;
                v.offset = 0;
                v.column = 0;
                let rows = self.sql_rows();
                self.info(format!("sql: {rows} rows"));
                self.view.panel = PanelId::of(&Sql);
                Ok(Some(Command::Sql(SqlCmd::Query(q))))
            }
            SqlCmd::Sort(col, desc) => {
                let a = self.sql.answer.clone().ok_or("no query yet: sql QUERY")?;
                let names: Vec<String> =
                    a.df.columns()
                        .iter()
                        .map(|c| c.name().to_string())
                        .collect();
                let (col, desc) = match (col.as_str(), &self.sql.sort) {
                    ("", Some((c, d))) => (c.clone(), !d),
                    ("", None) => (names.first().cloned().unwrap_or_default(), false),
                    ("next", cur) => {
                        let at = cur
                            .as_ref()
                            .and_then(|(c, _)| names.iter().position(|n| n == c));
                        let next = at.map_or(0, |i| (i + 1) % names.len().max(1));
                        (names.get(next).cloned().unwrap_or_default(), true)
                    }
                    (c, _) if names.iter().any(|n| n == c) => (c.to_string(), desc),
                    (c, _) => {
                        return Err(
                            format!("no column {c:?} (columns: {})", names.join(", ")).into()
                        )
                    }
                };
                self.view.sql.sort = Some((col.clone(), desc));
                let df = self.sorted(a.df.clone())?;
                self.view.sql.answer = Some(Arc::new(Answer {
                    query: a.query.clone(),
                    df,
                    from: a.from.clone(),
                }));
                self.view.sql.cursor = 0;
                self.view.sql.offset = 0;
                Ok(Some(Command::Sql(SqlCmd::Sort(col, desc))))
            }
            SqlCmd::Open => {
                self.sql_open()?;
                Ok(None)
            }
            SqlCmd::Filter => {
                let text = self.sql_filter_text()?;
                let filter = Command::parse(&text).map_err(|e| e.msg)?;
                self.update(filter)?;
                self.update(Command::Panel(PanelMove::To(PanelId::of(
                    &super::tree::Tree,
                ))))?;
                Ok(None)
            }
        }
    }

    /// Rows in the answer.
    pub fn sql_rows(&self) -> usize {
        self.sql.answer.as_ref().map_or(0, |a| a.df.height())
    }

    /// What the row under the cursor names: a `node` column, a `path`, an `event`, a
    /// `function`; else the `id` (or for `functions` the `name`) of the table the
    /// query read first.
    fn sql_target(&self) -> Result<Target, CmdError> {
        let a = self.sql.answer.as_ref().ok_or("no query yet: sql QUERY")?;
        let (df, r) = (&a.df, self.sql.cursor);
        if r >= df.height() {
            return Err("the answer has no rows".into());
        }
        if let Some(n) = cell(df, r, "node").as_ref().and_then(as_u32) {
            return Ok(Target::Node(n));
        }
        if let Some(p) = cell(df, r, "path") {
            return Ok(Target::Path(crate::sql::write::cell_text(&p)));
        }
        if let Some(e) = cell(df, r, "event").as_ref().and_then(as_u32) {
            return Ok(Target::Event(e));
        }
        if let Some(f) = cell(df, r, "function") {
            return Ok(Target::Function(crate::sql::write::cell_text(&f)));
        }
        let id = cell(df, r, "id").as_ref().and_then(as_u32);
        match (a.from.as_deref(), id) {
            (Some("nodes"), Some(n)) => Ok(Target::Node(n)),
            (Some("events" | "kernels" | "steps"), Some(e)) => Ok(Target::Event(e)),
            (Some("functions"), _) if cell(df, r, "name").is_some() => Ok(Target::Function(
                crate::sql::write::cell_text(&cell(df, r, "name").unwrap_or(AnyValue::Null)),
            )),
            _ => Err("this row names nothing to go to: give it a node, path, event or function column (or an id of nodes, events, kernels or steps)".into()),
        }
    }

    fn sql_open(&mut self) -> Result<(), CmdError> {
        let tree_panel = PanelId::of(&super::tree::Tree);
        match self.sql_target()? {
            Target::Node(n) => {
                let cct = self.original().0;
                if n as usize >= cct.len() {
                    return Err(format!("no node {n} in the loaded tree").into());
                }
                let path = crate::model::paths::path_of(cct, n);
                self.sql_goto_path(&path, tree_panel)
            }
            Target::Path(p) => self.sql_goto_path(&p, tree_panel),
            Target::Event(e) => self.sql_goto_event(e),
            Target::Function(name) => self.sql_goto_function(&name),
        }
    }

    fn sql_goto_path(&mut self, path: &str, panel: PanelId) -> Result<(), CmdError> {
        let select = Command::parse(&format!("select {}", super::super::command::quote(path)))
            .map_err(|e| e.msg)?;
        self.update(Command::Panel(PanelMove::To(panel)))?;
        self.update(select)?;
        Ok(())
    }

    /// The timeline framed on event `e`, its lane under the cursor, it selected.
    fn sql_goto_event(&mut self, e: u32) -> Result<(), CmdError> {
        let ev = self
            .profile
            .events
            .as_ref()
            .ok_or("this profile has no events")?;
        let i = e as usize;
        if i >= ev.len() {
            return Err(format!("no event {e}").into());
        }
        let (ts, dur, kind) = (ev.ts[i], ev.dur[i].max(1), ev.kind[i]);
        let (gpu_key, cpu_key) = ((ev.device[i], ev.stream[i]), (ev.pid[i], ev.tid[i]));
        let g = self.need_timeline()?;
        let lane = if kind.is_gpu_activity() {
            g.model
                .lanes
                .iter()
                .position(|l| (l.device, l.stream) == gpu_key)
        } else if matches!(kind, EventKind::Cpu | EventKind::Runtime) {
            g.cpu(ev)
                .keys
                .iter()
                .position(|k| *k == cpu_key)
                .map(|c| g.lanes.len() + c)
        } else {
            None
        };
        let lane = lane.ok_or("the timeline draws no lane for this event's kind")?;
        let (origin, cpu) = (g.origin, lane >= g.lanes.len() && !g.lanes.is_empty());
        self.update(Command::Panel(PanelMove::To(PanelId::of(
            &super::timeline::Timeline,
        ))))?;
        if cpu && !self.timeline.show_cpu {
            self.update(Command::Lanes(true))?;
        }
        let (a, b) = (ts - dur / 10 - 1, ts + dur + dur / 10 + 1);
        self.update(Command::Zoom(ZoomSpec::Window(a - origin, b - origin)))?;
        let t = &mut self.view.timeline;
        t.lane = lane;
        t.cursor_t = ts;
        t.selected = Some(e).filter(|&e| e != NONE_U32);
        Ok(())
    }

    fn sql_goto_function(&mut self, name: &str) -> Result<(), CmdError> {
        self.update(Command::Panel(PanelMove::To(PanelId::of(
            &super::functions::Functions,
        ))))?;
        let t = self.functions_table();
        let Some(&f) = t.fns.find(name).first() else {
            return Err(format!("no function {name:?} in the functions panel").into());
        };
        let order = self.functions_order();
        let row = order
            .iter()
            .position(|&g| g == f)
            .ok_or_else(|| format!("{name} is not in the list: the search hides it"))?;
        let v = &mut self.view.functions;
        v.cursor = row;
        v.offset = row.saturating_sub(self.page / 4);
        Ok(())
    }

    /// The filter that keeps the answer's nodes (its `node` column, else `id` over
    /// `nodes`): each by name and depth, so the tree keeps them and their ancestors
    /// (a node elsewhere with the same name at the same depth is kept too).
    fn sql_filter_text(&self) -> Result<String, CmdError> {
        let a = self.sql.answer.as_ref().ok_or("no query yet: sql QUERY")?;
        let col = if a.df.column("node").is_ok() {
            "node"
        } else if a.from.as_deref() == Some("nodes") && a.df.column("id").is_ok() {
            "id"
        } else {
            return Err("the answer has no node column (select node, or id from nodes)".into());
        };
        let cct = self.original().0;
        let mut seen = std::collections::BTreeSet::new();
        for r in 0..a.df.height() {
            if let Some(n) = cell(&a.df, r, col).as_ref().and_then(as_u32) {
                if (n as usize) < cct.len() {
                    seen.insert((cct.name(n).to_string(), cct.depth(n)));
                }
            }
        }
        if seen.is_empty() {
            return Err("the answer names no node".into());
        }
        const MOST: usize = 200;
        if seen.len() > MOST {
            return Err(format!(
                "the answer names {} distinct nodes; a filter takes at most {MOST} (add a limit)",
                seen.len()
            )
            .into());
        }
        let parts: Vec<String> = seen
            .iter()
            .map(|(name, d)| {
                let q = name.replace('\\', "\\\\").replace('"', "\\\"");
                format!("(name == \"{q}\" and depth == {d})")
            })
            .collect();
        Ok(format!("filter {}", parts.join(" or ")))
    }

    fn sql_move(&mut self, delta: isize) {
        let n = self.sql_rows();
        let page = self.page.max(1);
        let v = &mut self.view.sql;
        v.cursor = (v.cursor as isize)
            .saturating_add(delta)
            .clamp(0, n.saturating_sub(1) as isize) as usize;
        if v.cursor < v.offset {
            v.offset = v.cursor;
        } else if v.cursor >= v.offset + page {
            v.offset = v.cursor + 1 - page;
        }
    }
}

/// The SQL results panel: its state `ViewState::sql`.
pub struct Sql;

impl super::Panel for Sql {
    /// Every profile has tables (`nodes` at least); before a query the panel says
    /// how to run one.
    fn usable(&self, _: &App) -> bool {
        true
    }

    fn open(&self, _: &mut App) -> Result<(), CmdError> {
        Ok(())
    }

    fn move_cursor(&self, app: &mut App, delta: isize) -> bool {
        app.sql_move(delta);
        true
    }

    fn scroll_table(&self, app: &mut App, by: i64) -> bool {
        let cols = app.sql.answer.as_ref().map_or(0, |a| a.df.width());
        let v = &mut app.view.sql;
        v.column = (v.column as i64 + by).clamp(0, cols.saturating_sub(1) as i64) as usize;
        true
    }

    /// The answer is view state: a replay runs the query again.
    fn reset(&self, _: &mut super::ViewState, _: &mut super::ViewState) {}
}
