//! SQL over a profile (issue 31): polars' SQL front end over tables grove builds from
//! the model under fixed names (`nodes`, `functions`, `events`, `kernels`, `lanes`,
//! `steps`, `profiles`; docs/sql.md). A table is built the first time a query names
//! it and kept in [`Tables`] for the next query, so a query over `nodes` never walks
//! the events. The shell's `grove sql` and the TUI's `:sql` both come through here.

mod events;
mod nodes;
mod others;
pub mod write;

use std::collections::HashMap;

use polars::prelude::*;
use polars::sql::SQLContext;

use crate::gpu::classify::Categories;
use crate::model::{Cct, MetricTable, Profile};

/// The tables every input exposes, under these names.
pub const TABLES: [&str; 7] = [
    "nodes",
    "functions",
    "events",
    "kernels",
    "lanes",
    "steps",
    "profiles",
];

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
/// columns). `clear` when the inputs change (a filter makes a new tree).
#[derive(Clone, Default)]
pub struct Tables {
    built: HashMap<&'static str, DataFrame>,
}

impl Tables {
    pub fn clear(&mut self) {
        self.built.clear();
    }

    /// Which tables are built (for tests and the memory figures).
    pub fn built(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self.built.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Builds the tables `sql` names that are not built yet; returns the names the
    /// query uses for them (as written) with their table.
    pub fn prepare(
        &mut self,
        members: &[Member<'_>],
        cats: &Categories,
        sql: &str,
    ) -> Result<Vec<(String, &'static str)>, SqlError> {
        if sql.trim().is_empty() {
            return Err(SqlError::plain(format!(
                "empty query (tables: {})",
                TABLES.join(", ")
            )));
        }
        let named = polars::sql::extract_table_identifiers(sql, false, true)
            .map_err(|e| SqlError::of_polars(&e))?;
        let mut out = Vec::new();
        for name in named {
            let Some(&table) = TABLES.iter().find(|t| t.eq_ignore_ascii_case(&name)) else {
                continue; // a CTE's name, or unknown: polars says which
            };
            if !self.built.contains_key(table) {
                let df = build(table, members, cats).map_err(SqlError::plain)?;
                self.built.insert(table, df);
            }
            out.push((name, table));
        }
        Ok(out)
    }

    /// Runs `sql` over `members`, building the tables it names first.
    pub fn query(
        &mut self,
        members: &[Member<'_>],
        cats: &Categories,
        sql: &str,
    ) -> Result<DataFrame, SqlError> {
        let named = self.prepare(members, cats, sql)?;
        let mut ctx = SQLContext::new();
        for (name, table) in named {
            ctx.register(&name, self.built[table].clone().lazy());
        }
        let lf = ctx.execute(sql).map_err(|e| SqlError::of_polars(&e))?;
        lf.collect().map_err(|e| SqlError::of_polars(&e))
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
fn build(table: &str, members: &[Member<'_>], cats: &Categories) -> Result<DataFrame, String> {
    let many = members.len() > 1;
    let mut frames = Vec::with_capacity(members.len());
    for (i, m) in members.iter().enumerate() {
        let mut df = match table {
            "nodes" => nodes::table(m.tree()),
            "functions" => others::functions(m.profile, m.tree()),
            "events" => events::events(m.profile),
            "kernels" => events::kernels(m.profile, cats),
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
