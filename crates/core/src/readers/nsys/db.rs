//! The export as a database: its tables, and lenient reads of their rows.

use super::*;

/// An open export with its table names (lower case -> as written).
pub(super) struct Db {
    pub(super) conn: Connection,
    pub(super) tables: HashMap<String, String>,
}

/// A prepared selection: the SQL and the wanted columns the table lacks.
pub(super) struct Plan {
    pub(super) table: String,
    pub(super) sql: String,
    pub(super) missing: Vec<&'static str>,
}

impl Db {
    pub(super) fn open(path: &Path) -> Result<Db, String> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| format!("cannot open as an SQLite database: {}", one_line(&e)))?;
        let mut tables = HashMap::new();
        {
            let mut stmt = conn
                .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
                .map_err(|e| format!("cannot read the database schema: {}", one_line(&e)))?;
            let mut rows = stmt
                .query([])
                .map_err(|e| format!("cannot read the database schema: {}", one_line(&e)))?;
            while let Some(row) = rows
                .next()
                .map_err(|e| format!("cannot read the database schema: {}", one_line(&e)))?
            {
                if let Ok(ValueRef::Text(t)) = row.get_ref(0) {
                    let name = String::from_utf8_lossy(t).into_owned();
                    tables.insert(name.to_ascii_lowercase(), name);
                }
            }
        }
        Ok(Db { conn, tables })
    }

    pub(super) fn table(&self, name: &str) -> Option<&str> {
        self.tables
            .get(&name.to_ascii_lowercase())
            .map(|s| s.as_str())
    }

    /// Selects `wanted` from `table` by name, NULL for the columns it lacks; None when
    /// the table is missing.
    pub(super) fn plan(
        &self,
        table: &str,
        wanted: &[&'static str],
    ) -> Result<Option<Plan>, String> {
        let Some(real) = self.table(table) else {
            return Ok(None);
        };
        let mut have = HashSet::new();
        {
            let mut stmt = self
                .conn
                .prepare("SELECT name FROM pragma_table_info(?1)")
                .map_err(|e| format!("cannot read the columns of {real}: {}", one_line(&e)))?;
            let mut rows = stmt
                .query([real])
                .map_err(|e| format!("cannot read the columns of {real}: {}", one_line(&e)))?;
            while let Some(row) = rows
                .next()
                .map_err(|e| format!("cannot read the columns of {real}: {}", one_line(&e)))?
            {
                if let Ok(ValueRef::Text(t)) = row.get_ref(0) {
                    have.insert(String::from_utf8_lossy(t).to_ascii_lowercase());
                }
            }
        }
        let mut missing = Vec::new();
        let list: Vec<String> = wanted
            .iter()
            .map(|&c| {
                if have.contains(&c.to_ascii_lowercase()) {
                    format!("\"{c}\"")
                } else {
                    missing.push(c);
                    "NULL".to_string()
                }
            })
            .collect();
        Ok(Some(Plan {
            table: real.to_string(),
            sql: format!(
                "SELECT {} FROM \"{}\"",
                list.join(", "),
                real.replace('"', "\"\"")
            ),
            missing,
        }))
    }

    /// Runs a plan, calling `f` on every row (columns in the order wanted).
    pub(super) fn run(&self, plan: &Plan, mut f: impl FnMut(&Rec)) -> Result<(), String> {
        let err =
            |e: rusqlite::Error| format!("cannot read table {}: {}", plan.table, one_line(&e));
        let mut stmt = self.conn.prepare(&plan.sql).map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            f(&Rec { row });
        }
        Ok(())
    }

    /// A missing table gives no rows, without a warning.
    pub(super) fn scan(
        &self,
        table: &str,
        wanted: &[&'static str],
        f: impl FnMut(&Rec),
    ) -> Result<bool, String> {
        match self.plan(table, wanted)? {
            Some(p) => self.run(&p, f).map(|_| true),
            None => Ok(false),
        }
    }
}

/// SQLite's message on one short line. A damaged schema can put the rest of a
/// CREATE TABLE statement into the message (an unterminated token quotes it to the
/// end): only what precedes the first line break is kept, cut at 160 characters.
pub(super) fn one_line(e: &dyn std::fmt::Display) -> String {
    const MAX: usize = 160;
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("").trim_end();
    let cut = first.len() < text.trim_end().len();
    let mut out: String = first.chars().take(MAX).collect();
    if cut || out.len() < first.len() {
        out.push_str(" ...");
    }
    out
}

/// One row, read leniently: integers may come as reals or text, NULL is None.
pub(super) struct Rec<'a, 'b> {
    pub(super) row: &'a Row<'b>,
}

impl Rec<'_, '_> {
    pub(super) fn int(&self, i: usize) -> Option<i64> {
        match self.row.get_ref(i).ok()? {
            ValueRef::Integer(v) => Some(v),
            ValueRef::Real(f) if f.is_finite() => Some(f as i64),
            ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
            _ => None,
        }
    }

    pub(super) fn text(&self, i: usize) -> Option<String> {
        match self.row.get_ref(i).ok()? {
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Integer(v) => Some(v.to_string()),
            ValueRef::Real(f) => Some(f.to_string()),
            _ => None,
        }
    }

    /// A name column read as text: a StringIds id, or plain text.
    pub(super) fn name_text(&self, i: usize, strings: &HashMap<i64, String>) -> Option<String> {
        match self.row.get_ref(i).ok()? {
            ValueRef::Integer(id) => strings.get(&id).cloned(),
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            _ => None,
        }
        .filter(|s| !s.is_empty())
    }
}
