//! SQL over a profile (issue 31): polars' SQL front end over tables grove builds from
//! the model under fixed names (`nodes`, `functions`, `events`, `kernels`, `lanes`,
//! `steps`, `profiles`; docs/sql.md). A table is built the first time a query names
//! it and kept in [`Tables`] for the next query, so a query over `nodes` never walks
//! the events. The shell's `grove sql` and the TUI's `:sql` both come through here.

mod args;
mod events;
mod need;
mod nodes;
mod others;
pub mod summaries;
mod wide;
pub mod write;

use std::collections::{HashMap, HashSet};

use polars::prelude::*;
use polars::sql::SQLContext;

use crate::gpu::classify::Categories;
use crate::model::{Cct, MetricTable, Profile};

/// The tables every input exposes, under these names.
pub const TABLES: [&str; 8] = [
    "nodes",
    "functions",
    "events",
    "kernels",
    "lanes",
    "steps",
    "counters",
    "profiles",
];

/// The tables built column by column, only the columns a query names (`wide.rs`).
const WIDE: [&str; 2] = ["events", "kernels"];

/// The grove tables `sql` names (a CTE or an unknown name is left out).
pub fn named_tables(sql: &str) -> Result<Vec<&'static str>, SqlError> {
    Ok(Tables::named(sql)?.into_iter().map(|(_, t)| t).collect())
}

/// One input the tables are built from: an ensemble's member, or the one profile.
pub struct Member<'a> {
    pub label: String,
    pub profile: &'a Profile,
    /// The tree and metrics to read instead of the profile's: the TUI's loaded tree,
    /// which the events' node ids point into, while the profile holds a filtered one.
    pub tree: Option<(&'a Cct, &'a MetricTable)>,
}

impl<'a> Member<'a> {
    /// A member read whole from its profile.
    pub fn of(label: impl Into<String>, profile: &'a Profile) -> Member<'a> {
        Member {
            label: label.into(),
            profile,
            tree: None,
        }
    }

    fn tree(&self) -> (&'a Cct, &'a MetricTable) {
        self.tree
            .unwrap_or((&self.profile.cct, &self.profile.metrics))
    }
}

/// Why a query gave no answer: polars' message on one line, and the 1-based column in
/// the query where its parser stopped, when it says.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlError {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl SqlError {
    fn plain(message: impl Into<String>) -> SqlError {
        SqlError {
            message: message.into(),
            line: None,
            column: None,
        }
    }

    /// polars' error as one line, with the position its SQL parser gives ("... at
    /// Line: 1, Column: 8") taken out of the text into `line`/`column`.
    fn of_polars(e: &PolarsError) -> SqlError {
        let text = e.to_string();
        let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let re = regex::Regex::new(r"\s*at Line: (\d+), Column: (\d+)").expect("fixed regex");
        match re.captures(&one_line) {
            Some(c) => SqlError {
                line: c[1].parse().ok(),
                column: c[2].parse().ok(),
                message: re.replace(&one_line, "").into_owned(),
            },
            None => SqlError::plain(one_line),
        }
    }
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (Some(1), Some(c)) => write!(f, "sql: column {c}: {}", self.message),
            (Some(l), Some(c)) => write!(f, "sql: line {l}, column {c}: {}", self.message),
            _ => write!(f, "sql: {}", self.message),
        }
    }
}

/// The tables built so far for one set of inputs (cheap to clone: polars shares the
/// columns). `clear` when the inputs change (a filter makes a new tree). `events` and
/// `kernels` hold the columns queries have named so far; the others are whole.
#[derive(Clone, Default)]
pub struct Tables {
    built: HashMap<&'static str, DataFrame>,
    /// Tables given whole from outside (a directory of summaries' kernel tables).
    preset: HashSet<&'static str>,
}

impl Tables {
    pub fn clear(&mut self) {
        self.built.clear();
        self.preset.clear();
    }

    /// Which tables are built, wholly or in part (for tests and the memory figures).
    pub fn built(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self.built.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// The columns of `table` built so far.
    pub fn columns(&self, table: &str) -> Vec<String> {
        self.built.get(table).map_or(Vec::new(), |df| {
            df.get_column_names()
                .iter()
                .map(|c| c.to_string())
                .collect()
        })
    }

    /// Gives `table` whole, to be used instead of building it from the members.
    pub fn preset(&mut self, table: &'static str, df: DataFrame) {
        self.built.insert(table, df);
        self.preset.insert(table);
    }

    /// The tables `sql` names, with the names the query uses for them (as written).
    fn named(sql: &str) -> Result<Vec<(String, &'static str)>, SqlError> {
        if sql.trim().is_empty() {
            return Err(SqlError::plain(format!(
                "empty query (tables: {})",
                TABLES.join(", ")
            )));
        }
        let named = polars::sql::extract_table_identifiers(sql, false, true)
            .map_err(|e| SqlError::of_polars(&e))?;
        Ok(named
            .into_iter()
            .filter_map(|name| {
                // Else a CTE's name, or unknown: polars says which.
                let t = TABLES.iter().find(|t| t.eq_ignore_ascii_case(&name))?;
                Some((name, *t))
            })
            .collect())
    }

    /// Builds what `sql` needs of the tables it names and is not built yet (of
    /// `events`, the columns it would lend are built only with `owned`).
    pub fn prepare(
        &mut self,
        members: &[Member<'_>],
        cats: &Categories,
        sql: &str,
    ) -> Result<Vec<(String, &'static str)>, SqlError> {
        self.prepare_with(members, cats, sql, false)
    }

    fn prepare_with(
        &mut self,
        members: &[Member<'_>],
        cats: &Categories,
        sql: &str,
        owned: bool,
    ) -> Result<Vec<(String, &'static str)>, SqlError> {
        let named = Self::named(sql)?;
        let need = need::Need::of(sql);
        for (_, table) in &named {
            if self.preset.contains(table) {
                continue;
            }
            if WIDE.contains(table) {
                let (h, cols) = self.wide_columns(table, members, cats, &need, owned)?;
                // Rows without columns yet (`select count(*) from events`) still
                // have a height.
                let df = self
                    .built
                    .entry(table)
                    .or_insert_with(|| DataFrame::empty_with_height(h));
                for c in cols {
                    df.with_column(c)
                        .map_err(|e| SqlError::plain(e.to_string()))?;
                }
            } else if !self.built.contains_key(table) {
                let df = build(table, members).map_err(SqlError::plain)?;
                self.built.insert(table, df);
            }
        }
        Ok(named)
    }

    /// The columns of a wide table the query needs and that are not built yet.
    fn wide_columns(
        &self,
        table: &str,
        members: &[Member<'_>],
        cats: &Categories,
        need: &need::Need,
        owned: bool,
    ) -> Result<(usize, Vec<Column>), SqlError> {
        let have = self.columns(table);
        let rows = wide::rows(table, members, cats)?;
        let lend = !owned && wide::lends(table, members);
        let todo: Vec<String> = wide::names(&rows, members.len() > 1, need)
            .into_iter()
            .filter(|c| need.wants(c) && !have.contains(c))
            .filter(|c| !(lend && wide::lend_names().contains(&c.as_str())))
            .collect();
        let mut out = Vec::new();
        for c in todo {
            let col = wide::column(&rows, members, &c)
                .map_err(|e| SqlError::plain(format!("{table}.{c}: {e}")))?;
            out.extend(col);
        }
        Ok((rows.iter().map(|r| r.len()).sum(), out))
    }

    /// The frame a query sees for `table`: a wide table's columns it needs, in the
    /// table's order, with `start`/`duration` of a lone member's `events` lent into
    /// `lent` unless `owned`; the whole table otherwise.
    fn frame(
        &self,
        table: &'static str,
        members: &[Member<'_>],
        need: &need::Need,
        owned: bool,
        lent: &mut Vec<Int64Chunked>,
    ) -> PolarsResult<DataFrame> {
        let df = self.built.get(table).cloned().unwrap_or_default();
        if !WIDE.contains(&table) || self.preset.contains(table) {
            return Ok(df);
        }
        let mut cols: Vec<Column> = df
            .columns()
            .iter()
            .filter(|c| need.wants(c.name()))
            .cloned()
            .collect();
        if !owned && wide::lends(table, members) {
            if let Ok(Some(ev)) = events::events_of(members[0].profile) {
                for name in wide::lend_names() {
                    // Not when an owned copy is built already (an earlier answer kept
                    // a lent column).
                    if need.wants(name) && !cols.iter().any(|c| c.name() == name) {
                        // SAFETY: `query` holds the handle pushed to `lent`, drops
                        // every other holder before `ev`'s borrow ends and answers
                        // with owned columns when one is left (`wide::lent_alone`).
                        if let Some(ca) = unsafe { wide::lend(ev, name) } {
                            cols.push(ca.clone().into_column());
                            lent.push(ca);
                        }
                    }
                }
            }
        }
        let h = df.height();
        cols.sort_by_key(|c| wide::place(c.name()));
        DataFrame::new(h, cols)
    }

    /// Runs `sql` over `members`, building what it needs of the tables it names first.
    pub fn query(
        &mut self,
        members: &[Member<'_>],
        cats: &Categories,
        sql: &str,
    ) -> Result<DataFrame, SqlError> {
        let (df, lent) = self.run(members, cats, sql, false)?;
        if lent.iter().all(wide::lent_alone) {
            return Ok(df);
        }
        // The answer shares a lent column (`select start from events`): answer again
        // from owned copies, so that nothing outlives the borrow.
        drop(df);
        Ok(self.run(members, cats, sql, true)?.0)
    }

    fn run(
        &mut self,
        members: &[Member<'_>],
        cats: &Categories,
        sql: &str,
        owned: bool,
    ) -> Result<(DataFrame, Vec<Int64Chunked>), SqlError> {
        let named = self.prepare_with(members, cats, sql, owned)?;
        let need = need::Need::of(sql);
        let mut lent = Vec::new();
        let answer = {
            let mut ctx = SQLContext::new();
            for (name, table) in named {
                match self.frame(table, members, &need, owned, &mut lent) {
                    Ok(df) => ctx.register(&name, df.lazy()),
                    Err(e) => return Err(SqlError::plain(format!("{table}: {e}"))),
                }
            }
            ctx.execute(sql).and_then(|lf| lf.collect())
        };
        answer
            .map(|df| (df, lent))
            .map_err(|e| SqlError::of_polars(&e))
    }

    /// The rows and polars' estimate of the bytes of each table built (for the
    /// memory figures).
    pub fn sizes(&self) -> Vec<(&'static str, usize, usize)> {
        let mut v: Vec<_> = self
            .built
            .iter()
            .map(|(t, df)| (*t, df.height(), df.estimated_size()))
            .collect();
        v.sort_unstable();
        v
    }
}

/// One table over every member: each member's rows, with a `profile` column first when
/// there are several (members whose columns differ get nulls where they lack one).
fn build(table: &str, members: &[Member<'_>]) -> Result<DataFrame, String> {
    let many = members.len() > 1;
    let mut frames = Vec::with_capacity(members.len());
    for (i, m) in members.iter().enumerate() {
        let mut df = match table {
            "nodes" => nodes::table(m.tree()),
            "functions" => others::functions(m.profile, m.tree()),
            "counters" => events::counters(m.profile),
            "lanes" => events::lanes(m.profile),
            "steps" => events::steps(m.profile),
            _ => others::profiles(m, i),
        }
        .map_err(|e| format!("{table} of {}: {e}", m.label))?;
        if many && table != "profiles" {
            let label = Column::new("profile".into(), vec![m.label.as_str(); df.height()]);
            df.insert_column(0, label).map_err(|e| e.to_string())?;
        }
        frames.push(df);
    }
    stack(frames).map_err(|e| format!("{table}: {e}"))
}

/// Stacks frames whose columns may differ (ensemble members with different metrics):
/// the union of the columns in first-seen order, nulls where a frame lacks one.
fn stack(frames: Vec<DataFrame>) -> PolarsResult<DataFrame> {
    let mut names: Vec<(PlSmallStr, DataType)> = Vec::new();
    for df in &frames {
        for c in df.columns() {
            if !names.iter().any(|(n, _)| n == c.name()) {
                names.push((c.name().clone(), c.dtype().clone()));
            }
        }
    }
    let mut out: Option<DataFrame> = None;
    for df in frames {
        let h = df.height();
        let cols: Vec<Column> = names
            .iter()
            .map(|(n, t)| match df.column(n.as_str()) {
                Ok(c) => c.cast(t),
                Err(_) => Ok(Column::full_null(n.clone(), h, t)),
            })
            .collect::<PolarsResult<_>>()?;
        let df = DataFrame::new(h, cols)?;
        match &mut out {
            None => out = Some(df),
            Some(o) => {
                o.vstack_mut_owned(df)?;
            }
        }
    }
    let mut df = out.unwrap_or_default();
    df.rechunk_mut();
    Ok(df)
}

#[cfg(test)]
mod tests;
