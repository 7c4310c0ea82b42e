//! Which columns a query can read, from its text: every identifier it writes (bare
//! words, "quoted" and `backticked` names), or all of them when it selects `*`. The
//! wide tables (`events`, `kernels`) build only those columns, so a group-by over the
//! names never makes the other dozen (issue 31: opening the tables adds at most 25% to
//! the loaded trace's memory). Over-reading is harmless (a word that is a column's
//! name but means something else builds that column); under-reading would fail the
//! query, so anything that may expand to columns (`*`, `columns(...)`) means all.

use std::collections::HashSet;

/// The columns a query may read.
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    All,
    /// Identifiers, lower-cased (polars matches names as written; the lower case
    /// over-reads a little, never under-reads).
    Named(HashSet<String>),
}

impl Need {
    pub fn of(sql: &str) -> Need {
        let b = sql.as_bytes();
        let mut words = HashSet::new();
        let mut prev_word = String::new();
        let mut prev_char = b' ';
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c == b'"' || c == b'`' {
                let end = find_close(b, i + 1, c);
                words.insert(
                    sql[i + 1..end]
                        .replace(
                            if c == b'"' { "\"\"" } else { "``" },
                            if c == b'"' { "\"" } else { "`" },
                        )
                        .to_lowercase(),
                );
                prev_word.clear();
                prev_char = c;
                i = (end + 1).min(b.len());
                continue;
            }
            if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                let w = sql[start..i].to_lowercase();
                if w == "columns" {
                    return Need::All; // polars' COLUMNS('regex') selects by pattern
                }
                prev_word.clone_from(&w);
                words.insert(w);
                prev_char = b'a';
                continue;
            }
            if c == b'*' && is_wildcard(b, i, prev_char, &prev_word) {
                return Need::All;
            }
            if !c.is_ascii_whitespace() {
                prev_char = c;
                prev_word.clear();
            }
            i += 1;
        }
        Need::Named(words)
    }

    pub fn wants(&self, column: &str) -> bool {
        match self {
            Need::All => true,
            Need::Named(w) => w.contains(&column.to_lowercase()),
        }
    }
}

fn find_close(b: &[u8], mut i: usize, q: u8) -> usize {
    while i < b.len() {
        if b[i] == q {
            if b.get(i + 1) == Some(&q) {
                i += 2; // a doubled quote is the quote itself
                continue;
            }
            return i;
        }
        i += 1;
    }
    b.len()
}

/// `*` as a column wildcard (`select *`, `t.*`, `select a, *`), not `count(*)` or a
/// product.
fn is_wildcard(b: &[u8], i: usize, prev_char: u8, prev_word: &str) -> bool {
    let next = b[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
    if prev_char == b'(' && next == Some(&b')') {
        return false; // count(*)
    }
    matches!(prev_char, b',' | b'.' | b'(') || matches!(prev_word, "select" | "distinct" | "all")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(sql: &str) -> Vec<String> {
        match Need::of(sql) {
            Need::All => vec!["*".into()],
            Need::Named(w) => {
                let mut v: Vec<String> = w.into_iter().collect();
                v.sort();
                v
            }
        }
    }

    #[test]
    fn identifiers_and_wildcards() {
        assert_eq!(
            named(r#"select name, count(*), sum("Duration") from events group by name"#),
            ["by", "count", "duration", "events", "from", "group", "name", "select", "sum"]
        );
        assert_eq!(named("select * from events"), ["*"]);
        assert_eq!(named("select e.* from events e"), ["*"]);
        assert_eq!(named("select distinct * from kernels"), ["*"]);
        assert_eq!(
            named("select count(*) from kernels"),
            ["count", "from", "kernels", "select"]
        );
        assert_eq!(
            named("select 2 * start as s from kernels"),
            ["as", "from", "kernels", "s", "select", "start"]
        );
        assert_eq!(
            named(r#"select "args.a""b" from events"#),
            ["args.a\"b", "events", "from", "select"]
        );
        assert!(Need::of("select columns('^s.*$') from events").wants("x"));
    }
}
