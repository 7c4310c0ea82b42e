//! Hatchet's query language, accepted verbatim.
//!
//! String dialect: `MATCH ("*")->(".", p) WHERE p."name" STARTS WITH "MPI_"`, with
//! compound queries `{MATCH ...} AND|OR|XOR {MATCH ...}`. Object dialect: a JSON list
//! such as `[{"name": "MPI_.*"}, "*"]`. Semantics follow Hatchet, gotchas included
//! (docs/commands.md): WHERE conditions are grouped per variable with `and` binding
//! tighter than `or`, and a variable's first connector is dropped; `=~` matches at the
//! start of the value; an unknown column is false; the object dialect's regexes must
//! match the whole value.

use regex::Regex;

use super::lexer::{lex, Cursor, Tok, Token};
use super::pattern::{match_paths, Elem, Quant};
use super::{QueryError, Tree};

#[derive(Debug, Clone, PartialEq)]
enum CondOp {
    Eq,
    Lt,
    Gt,
    Le,
    Ge,
    Starts,
    Ends,
    Contains,
    Regex,
    IsNan(bool),
    IsInf(bool),
    IsNone(bool),
}

#[derive(Debug, Clone, PartialEq)]
enum Cond {
    Leaf(bool),
    Column {
        column: String,
        op: CondOp,
        value: Option<Lit>,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Num(f64),
    Str(String),
}

#[derive(Debug, Clone)]
struct Clause {
    /// Connector before this condition within its variable (None for the first).
    or: bool,
    not: bool,
    cond: Cond,
}

#[derive(Debug, Clone)]
struct NodeSpec {
    quant: String,
    var: Option<String>,
}

#[derive(Debug, Clone)]
enum Query {
    Match {
        nodes: Vec<NodeSpec>,
        /// Conditions per variable, in order of appearance.
        conds: Vec<(String, Vec<Clause>)>,
    },
    And(Box<Query>, Box<Query>),
    Or(Box<Query>, Box<Query>),
    Xor(Box<Query>, Box<Query>),
}

/// True when the text is a Hatchet query rather than a grove expression.
pub fn is_hatchet_query(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('[')
        || t.starts_with('{')
        || t.get(..5).is_some_and(|w| w.eq_ignore_ascii_case("match"))
}

pub fn select(text: &str, t: &Tree) -> Result<Vec<bool>, QueryError> {
    match parse(text)? {
        Some(q) => select_parsed(&q, t),
        None => object::select(text, t),
    }
}

/// A string-dialect query, parsed once so that running it again does not parse it.
#[derive(Debug, Clone)]
pub struct Parsed(Query);

/// Parses a string-dialect query; `None` for the object dialect, whose predicates are
/// read against the tree's columns when it runs.
pub fn parse(text: &str) -> Result<Option<Parsed>, QueryError> {
    if text.trim_start().starts_with('[') {
        return Ok(None);
    }
    let toks = lex(text)?;
    super::limits::check_tokens(toks.len(), text.len())?;
    let mut c = Cursor::new(&toks, text.len());
    let q = compound(&mut c)?;
    if !c.at_end() {
        return Err(c.error_here("unexpected text after the query"));
    }
    Ok(Some(Parsed(q)))
}

pub fn select_parsed(q: &Parsed, t: &Tree) -> Result<Vec<bool>, QueryError> {
    eval(&q.0, t)
}

fn compound(c: &mut Cursor) -> Result<Query, QueryError> {
    let mut q = group(c)?;
    loop {
        q = if c.eat_kw("and") {
            Query::And(Box::new(q), Box::new(group(c)?))
        } else if c.eat_kw("or") {
            Query::Or(Box::new(q), Box::new(group(c)?))
        } else if c.eat_kw("xor") {
            Query::Xor(Box::new(q), Box::new(group(c)?))
        } else {
            return Ok(q);
        };
    }
}

fn group(c: &mut Cursor) -> Result<Query, QueryError> {
    if c.eat_sym("{") {
        c.descend()?;
        let q = compound(c)?;
        c.expect_sym("}")?;
        c.ascend();
        return Ok(q);
    }
    matcher(c)
}

fn matcher(c: &mut Cursor) -> Result<Query, QueryError> {
    if !c.eat_kw("match") {
        return Err(c.error_here("expected MATCH"));
    }
    let start = c.peek().map_or(c.end, |t| t.pos);
    let mut nodes = vec![node(c)?];
    while c.eat_sym("->") {
        nodes.push(node(c)?);
    }
    super::limits::check_path(nodes.iter().map(|n| n.quant.as_str())).map_err(|m| {
        let end = c.peek().map_or(c.end, |t| t.pos);
        QueryError::new(start, end.saturating_sub(start), m)
    })?;
    let mut conds: Vec<(String, Vec<Clause>)> = Vec::new();
    if c.eat_kw("where") {
        let mut first = true;
        loop {
            let or = if first {
                false
            } else if c.eat_kw("or") {
                true
            } else if c.eat_kw("and") {
                false
            } else {
                break;
            };
            first = false;
            let not = c.eat_kw("not");
            let (var, cond) = condition(c)?;
            if !nodes
                .iter()
                .any(|n| n.var.as_deref() == Some(var.0.as_str()))
            {
                return Err(QueryError::new(
                    var.1,
                    var.2,
                    format!("variable {} is not in the MATCH", var.0),
                ));
            }
            let entry = match conds.iter_mut().find(|(v, _)| *v == var.0) {
                Some(e) => e,
                None => {
                    conds.push((var.0.clone(), Vec::new()));
                    conds.last_mut().unwrap()
                }
            };
            // Hatchet drops the connector of a variable's first condition.
            let or = or && !entry.1.is_empty();
            entry.1.push(Clause { or, not, cond });
        }
    }
    Ok(Query::Match { nodes, conds })
}

fn node(c: &mut Cursor) -> Result<NodeSpec, QueryError> {
    c.expect_sym("(")?;
    let mut spec = NodeSpec {
        quant: ".".into(),
        var: None,
    };
    match c.advance() {
        Some(Token {
            tok: Tok::Str(q),
            pos,
            len,
        }) => {
            if !matches!(q.as_str(), "." | "*" | "+") {
                return Err(QueryError::new(
                    *pos,
                    *len,
                    "a quantifier is \".\", \"*\", \"+\" or a number",
                ));
            }
            spec.quant = q.clone();
        }
        Some(Token {
            tok: Tok::Number(k, None),
            pos,
            len,
        }) => {
            if k.fract() != 0.0 || *k < 0.0 {
                return Err(QueryError::new(
                    *pos,
                    *len,
                    "a count quantifier is a whole number",
                ));
            }
            if *k > super::limits::MAX_QUANTIFIER as f64 {
                return Err(QueryError::new(
                    *pos,
                    *len,
                    format!(
                        "count quantifier too large (limit: {})",
                        super::limits::MAX_QUANTIFIER
                    ),
                ));
            }
            spec.quant = format!("{}", *k as u64);
        }
        Some(Token {
            tok: Tok::Ident(v), ..
        }) => {
            spec.var = Some(v.clone());
            c.expect_sym(")")?;
            return Ok(spec);
        }
        Some(Token {
            tok: Tok::Sym(")"), ..
        }) => return Ok(spec),
        Some(t) => {
            return Err(QueryError::new(
                t.pos,
                t.len,
                "expected a quantifier or a variable",
            ))
        }
        None => return Err(c.error_here("expected a quantifier or a variable")),
    }
    if c.eat_sym(",") {
        match c.advance() {
            Some(Token {
                tok: Tok::Ident(v), ..
            }) => spec.var = Some(v.clone()),
            Some(t) => return Err(QueryError::new(t.pos, t.len, "expected a variable name")),
            None => return Err(c.error_here("expected a variable name")),
        }
    }
    c.expect_sym(")")?;
    Ok(spec)
}

type VarRef = (String, usize, usize);

fn condition(c: &mut Cursor) -> Result<(VarRef, Cond), QueryError> {
    let var = match c.advance() {
        Some(Token {
            tok: Tok::Ident(v),
            pos,
            len,
        }) => (v.clone(), *pos, *len),
        Some(t) => return Err(QueryError::new(t.pos, t.len, "expected a variable")),
        None => return Err(c.error_here("expected a condition")),
    };
    if c.eat_kw("is") {
        let not = c.eat_kw("not");
        if c.eat_kw("leaf") {
            return Ok((var, Cond::Leaf(!not)));
        }
        return Err(c.error_here("expected LEAF"));
    }
    c.expect_sym(".")?;
    let column = match c.advance() {
        Some(Token {
            tok: Tok::Str(s), ..
        }) => s.clone(),
        Some(Token {
            tok: Tok::Ident(s), ..
        }) => s.clone(),
        Some(t) => {
            return Err(QueryError::new(
                t.pos,
                t.len,
                "expected a quoted column name",
            ))
        }
        None => return Err(c.error_here("expected a column name")),
    };
    let op_at = c.peek().cloned();
    let op = if c.eat_sym("=") || c.eat_sym("==") {
        CondOp::Eq
    } else if c.eat_sym("<") {
        CondOp::Lt
    } else if c.eat_sym(">") {
        CondOp::Gt
    } else if c.eat_sym("<=") {
        CondOp::Le
    } else if c.eat_sym(">=") {
        CondOp::Ge
    } else if c.eat_sym("=~") {
        CondOp::Regex
    } else if c.eat_kw("starts") {
        expect_kw(c, "with")?;
        CondOp::Starts
    } else if c.eat_kw("ends") {
        expect_kw(c, "with")?;
        CondOp::Ends
    } else if c.eat_kw("contains") {
        CondOp::Contains
    } else if c.eat_kw("is") {
        let not = c.eat_kw("not");
        let op = if c.eat_kw("nan") {
            CondOp::IsNan(!not)
        } else if c.eat_kw("inf") {
            CondOp::IsInf(!not)
        } else if c.eat_kw("none") {
            CondOp::IsNone(!not)
        } else {
            return Err(c.error_here("expected NAN, INF or NONE"));
        };
        return Ok((
            var,
            Cond::Column {
                column,
                op,
                value: None,
            },
        ));
    } else {
        return Err(match op_at {
            Some(t) => QueryError::new(t.pos, t.len, "expected an operator"),
            None => c.error_here("expected an operator"),
        });
    };
    let value = match c.advance() {
        Some(Token {
            tok: Tok::Str(s), ..
        }) => Lit::Str(s.clone()),
        Some(Token {
            tok: Tok::Number(x, None),
            ..
        }) => Lit::Num(*x),
        Some(Token {
            tok: Tok::Sym("-"), ..
        }) => match c.advance() {
            Some(Token {
                tok: Tok::Number(x, None),
                ..
            }) => Lit::Num(-x),
            _ => return Err(c.error_here("expected a number")),
        },
        Some(t) => {
            return Err(QueryError::new(
                t.pos,
                t.len,
                "expected a string or a number",
            ))
        }
        None => return Err(c.error_here("expected a value")),
    };
    if matches!(op, CondOp::Regex) {
        if let Lit::Str(s) = &value {
            if let Err(m) = super::limits::regex(s) {
                let t = &c.toks[c.i - 1];
                return Err(QueryError::new(t.pos, t.len, m));
            }
        }
    }
    Ok((
        var,
        Cond::Column {
            column,
            op,
            value: Some(value),
        },
    ))
}

fn expect_kw(c: &mut Cursor, kw: &str) -> Result<(), QueryError> {
    if c.eat_kw(kw) {
        Ok(())
    } else {
        Err(c.error_here(format!("expected {}", kw.to_uppercase())))
    }
}

/// A column's value at a node: a metric number or an attribute's text.
enum Cell<'a> {
    Num(f64),
    Text(&'a str),
    Missing,
}

fn cell<'a>(t: &Tree<'a>, n: u32, column: &str) -> Cell<'a> {
    if let Some(v) = t.metrics.values(column) {
        return Cell::Num(v[n as usize]);
    }
    match t.cct.frame(n).attr(column) {
        Some(s) => Cell::Text(s),
        None => Cell::Missing,
    }
}

fn test(t: &Tree, n: u32, cond: &Cond, re: Option<&Regex>) -> bool {
    let Cond::Column { column, op, value } = cond else {
        let Cond::Leaf(want) = cond else {
            unreachable!()
        };
        return t.cct.has_children(n) != *want;
    };
    let c = cell(t, n, column);
    match (op, value, c) {
        (CondOp::IsNone(want), _, Cell::Missing) => *want,
        (CondOp::IsNone(want), _, _) => !*want,
        (CondOp::IsNan(want), _, Cell::Num(x)) => x.is_nan() == *want,
        (CondOp::IsInf(want), _, Cell::Num(x)) => x.is_infinite() == *want,
        (_, _, Cell::Missing) => false,
        (op, Some(Lit::Num(v)), Cell::Num(x)) => match op {
            CondOp::Eq => x == *v,
            CondOp::Lt => x < *v,
            CondOp::Gt => x > *v,
            CondOp::Le => x <= *v,
            CondOp::Ge => x >= *v,
            _ => false,
        },
        (op, Some(Lit::Str(s)), Cell::Text(x)) => match op {
            CondOp::Eq => x == s,
            CondOp::Starts => x.starts_with(s.as_str()),
            CondOp::Ends => x.ends_with(s.as_str()),
            CondOp::Contains => x.contains(s.as_str()),
            CondOp::Regex => re.is_some_and(|r| r.is_match(x)),
            _ => false,
        },
        // Text compared with a number (e.g. a numeric attribute).
        (op, Some(Lit::Num(v)), Cell::Text(x)) => x.trim().parse::<f64>().is_ok_and(|x| match op {
            CondOp::Eq => x == *v,
            CondOp::Lt => x < *v,
            CondOp::Gt => x > *v,
            CondOp::Le => x <= *v,
            CondOp::Ge => x >= *v,
            _ => false,
        }),
        _ => false,
    }
}

/// Hatchet checks each column's type before it evaluates a variable: an unknown column
/// makes the variable match nothing (even under OR), a type mismatch is an error.
fn check_types(t: &Tree, clauses: &[Clause]) -> Result<bool, String> {
    for cl in clauses {
        let Cond::Column { column, op, value } = &cl.cond else {
            continue;
        };
        let numeric = t.metrics.has(column);
        if !numeric && !t.has_attr(column) {
            return Ok(false);
        }
        let mismatch = match (op, value) {
            (CondOp::IsNan(_) | CondOp::IsInf(_), _) => !numeric,
            (CondOp::IsNone(_), _) => false,
            (CondOp::Starts | CondOp::Ends | CondOp::Contains | CondOp::Regex, _) => numeric,
            (_, Some(Lit::Num(_))) => !numeric,
            (_, Some(Lit::Str(_))) => numeric,
            (_, None) => false,
        };
        if mismatch {
            return Err(format!(
                "type mismatch in filter: {column:?} compared with the wrong kind of value"
            ));
        }
    }
    Ok(true)
}

/// Evaluates a variable's clauses as Python would: `a and b or c and d`.
fn var_pred(t: &Tree, clauses: &[Clause]) -> Vec<bool> {
    let res: Vec<Option<Regex>> = clauses
        .iter()
        .map(|cl| match &cl.cond {
            Cond::Column {
                op: CondOp::Regex,
                value: Some(Lit::Str(s)),
                ..
            } => {
                // Hatchet uses re.match: anchored at the start only.
                super::limits::regex(&format!("^(?:{s})")).ok()
            }
            _ => None,
        })
        .collect();
    (0..t.cct.len() as u32)
        .map(|n| {
            let mut any = false;
            let mut term = true;
            for (i, cl) in clauses.iter().enumerate() {
                if cl.or {
                    any |= term;
                    term = true;
                }
                let v = test(t, n, &cl.cond, res[i].as_ref()) != cl.not;
                term &= v;
            }
            any || term
        })
        .collect()
}

fn eval(q: &Query, t: &Tree) -> Result<Vec<bool>, QueryError> {
    Ok(match q {
        Query::And(a, b) => zip(eval(a, t)?, eval(b, t)?, |x, y| x && y),
        Query::Or(a, b) => zip(eval(a, t)?, eval(b, t)?, |x, y| x || y),
        Query::Xor(a, b) => zip(eval(a, t)?, eval(b, t)?, |x, y| x != y),
        Query::Match { nodes, conds } => {
            let n = t.cct.len();
            let mut pattern = Vec::new();
            for spec in nodes {
                let pred = match &spec.var {
                    Some(v) => match conds.iter().find(|(name, _)| name == v) {
                        Some((_, clauses)) => match check_types(t, &with_aliases(t, clauses)) {
                            Ok(true) => var_pred(t, &with_aliases(t, clauses)),
                            Ok(false) => vec![false; n],
                            Err(m) => return Err(QueryError::new(0, 0, m)),
                        },
                        None => vec![true; n],
                    },
                    None => vec![true; n],
                };
                push_quant(&mut pattern, &spec.quant, pred);
            }
            match_paths(t.cct, &pattern)
        }
    })
}

/// The clauses with Hatchet/Thicket metric names replaced by grove's columns
/// (`Avg time/rank` -> `Avg time/rank (inc)`, `model::metric_aliases`), where the name
/// is neither a column nor an attribute: notebooks' queries run as they are.
fn with_aliases(t: &Tree, clauses: &[Clause]) -> Vec<Clause> {
    clauses
        .iter()
        .map(|cl| {
            let mut cl = cl.clone();
            if let Cond::Column { column, .. } = &mut cl.cond {
                if let Some(real) = alias_of(t, column) {
                    *column = real;
                }
            }
            cl
        })
        .collect()
}

/// The grove column a Hatchet metric name stands for, when it is not one itself.
fn alias_of(t: &Tree, name: &str) -> Option<String> {
    if t.metrics.has(name) || name == "depth" {
        return None;
    }
    let real = t.metrics.resolve(name)?;
    (!t.has_attr(name)).then_some(real)
}

fn push_quant(pattern: &mut Vec<Elem>, quant: &str, pred: Vec<bool>) {
    match quant {
        "." => pattern.push(Elem {
            quant: Quant::One,
            pred,
        }),
        "*" => pattern.push(Elem {
            quant: Quant::Star,
            pred,
        }),
        "+" => {
            pattern.push(Elem {
                quant: Quant::One,
                pred: pred.clone(),
            });
            pattern.push(Elem {
                quant: Quant::Star,
                pred,
            });
        }
        k => {
            let k: usize = k.parse().unwrap_or(1);
            for _ in 0..k {
                pattern.push(Elem {
                    quant: Quant::One,
                    pred: pred.clone(),
                });
            }
        }
    }
}

fn zip(a: Vec<bool>, b: Vec<bool>, f: impl Fn(bool, bool) -> bool) -> Vec<bool> {
    a.into_iter().zip(b).map(|(x, y)| f(x, y)).collect()
}

/// The object dialect: `[{"name": "MPI_.*"}, "*", ("+", {"time (inc)": "> 10"})]`.
mod object {
    use super::*;
    use serde_json::Value;

    pub fn select(text: &str, t: &Tree) -> Result<Vec<bool>, QueryError> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            // serde_json reports line/column; turn them into a byte offset.
            let mut off = 0;
            for (i, line) in text.split('\n').enumerate() {
                if i + 1 == e.line() {
                    off += e.column().saturating_sub(1);
                    break;
                }
                off += line.len() + 1;
            }
            QueryError::new(off.min(text.len()), 1, format!("invalid query list: {e}"))
        })?;
        let items = v
            .as_array()
            .ok_or_else(|| QueryError::new(0, text.len(), "an object query is a JSON list"))?;
        let whole = |m: &str| QueryError::new(0, text.len(), m.to_string());
        let mut pattern = Vec::new();
        let mut quants = Vec::new();
        for item in items {
            let (quant, pred) = match item {
                Value::String(q) => (q.clone(), None),
                Value::Number(k) => (k.to_string(), None),
                Value::Object(_) => (".".to_string(), Some(item)),
                Value::Array(pair) if pair.len() == 2 => {
                    let q = match &pair[0] {
                        Value::String(q) => q.clone(),
                        Value::Number(k) => k.to_string(),
                        _ => {
                            return Err(whole(
                                "a (quantifier, predicate) pair starts with a quantifier",
                            ))
                        }
                    };
                    (q, Some(&pair[1]))
                }
                _ => return Err(whole("each element is a predicate, a quantifier or a pair")),
            };
            if !matches!(quant.as_str(), "." | "*" | "+") && quant.parse::<u64>().is_err() {
                return Err(whole(&format!("unknown quantifier {quant:?}")));
            }
            quants.push(quant.clone());
            crate::query::limits::check_path(quants.iter().map(|q| q.as_str()))
                .map_err(|m| whole(&m))?;
            let pred = match pred {
                Some(Value::Object(map)) => dict_pred(t, map).map_err(|m| whole(&m))?,
                Some(_) => return Err(whole("a predicate is a JSON object")),
                None => vec![true; t.cct.len()],
            };
            push_quant(&mut pattern, &quant, pred);
        }
        Ok(match_paths(t.cct, &pattern))
    }

    fn dict_pred(t: &Tree, map: &serde_json::Map<String, Value>) -> Result<Vec<bool>, String> {
        let n = t.cct.len();
        let mut out = vec![true; n];
        let depth = super::super::expr::depths(t);
        for (key, want) in map {
            // A Hatchet/Thicket metric name counts as grove's column.
            let key = &super::alias_of(t, key).unwrap_or_else(|| key.clone());
            let numeric = key == "depth" || t.metrics.has(key);
            let check: Box<dyn Fn(u32) -> bool> = if numeric {
                let value = |node: u32| -> f64 {
                    if key == "depth" {
                        depth[node as usize] as f64
                    } else {
                        t.metrics.get(key, node)
                    }
                };
                let tests: Vec<(String, f64)> = match want {
                    Value::Number(x) => vec![("==".into(), x.as_f64().unwrap_or(f64::NAN))],
                    Value::String(s) => vec![comparison(s)?],
                    Value::Array(a) => a
                        .iter()
                        .map(|x| {
                            x.as_str()
                                .ok_or("comparison lists hold strings".to_string())
                                .and_then(comparison)
                        })
                        .collect::<Result<_, _>>()?,
                    _ => return Err(format!("bad value for {key}")),
                };
                Box::new(move |node| {
                    let x = value(node);
                    tests.iter().all(|(op, v)| match op.as_str() {
                        "<" => x < *v,
                        ">" => x > *v,
                        "<=" => x <= *v,
                        ">=" => x >= *v,
                        "==" => x == *v,
                        _ => x != *v,
                    })
                })
            } else {
                let Value::String(pat) = want else {
                    return Err(format!("{key} is text: give a regular expression"));
                };
                // Hatchet runs re.match(pattern + "\Z"): anchored at the start, and at the
                // end only for the last top-level alternative ("ba|grault" matches "bar").
                let re = crate::query::limits::regex(&format!("^(?:{pat}\\z)"))
                    .map_err(|e| format!("{key}: {e}"))?;
                let key = key.clone();
                Box::new(move |node| t.attr(node, &key).is_some_and(|s| re.is_match(s)))
            };
            for (node, o) in out.iter_mut().enumerate() {
                *o = *o && check(node as u32);
            }
        }
        Ok(out)
    }

    fn comparison(s: &str) -> Result<(String, f64), String> {
        let s = s.trim();
        for op in ["<=", ">=", "==", "!=", "<>", "<", ">"] {
            if let Some(rest) = s.strip_prefix(op) {
                let v: f64 = rest
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad number in {s:?}"))?;
                return Ok((op.to_string(), v));
            }
        }
        Err(format!(
            "a numeric comparison starts with < > <= >= == != ({s:?})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cct, MetricTable};

    fn tree() -> (Cct, MetricTable) {
        let mut c = Cct::default();
        let m = c.child(None, "main", "function");
        let s = c.child(Some(m), "solve", "function");
        c.child(Some(s), "MPI_Allreduce", "function");
        c.child(Some(m), "MPI_Init", "function");
        let mut t = MetricTable::new(4);
        t.set("time", "", vec![1.0, 2.0, 3.0, 4.0]);
        t.derive_inclusive(&c, &["time"]);
        (c, t)
    }

    fn q(text: &str) -> Vec<bool> {
        let (c, m) = tree();
        select(
            text,
            &Tree {
                cct: &c,
                metrics: &m,
            },
        )
        .unwrap()
    }

    #[test]
    fn string_dialect() {
        assert_eq!(
            q(r#"MATCH ("*")->(".", p) WHERE p."name" STARTS WITH "MPI_""#),
            [true, true, true, true]
        );
        assert_eq!(
            q(r#"MATCH (".", p) WHERE p."name" STARTS WITH "MPI_""#),
            [false, false, true, true]
        );
        assert_eq!(
            q(r#"MATCH ("*", p) WHERE p IS LEAF"#),
            [false, false, true, true]
        );
        assert_eq!(
            q(r#"MATCH (p)->("*")->(q) WHERE p."name" = "solve" AND q."time" > 2.5"#),
            [false, true, true, false]
        );
        assert_eq!(
            q(r#"MATCH (".", p) WHERE p."name" =~ "MPI""#),
            [false, false, true, true]
        );
        assert_eq!(q(r#"MATCH (".", p) WHERE p."name" =~ "PI""#), [false; 4]);
        assert_eq!(q(r#"MATCH (".", p) WHERE p."nope" = 1"#), [false; 4]);
        assert_eq!(
            q(
                r#"{MATCH (".", p) WHERE p."time" >= 2} AND {MATCH (".", p) WHERE p."name" CONTAINS "MPI"}"#
            ),
            [false, false, true, true]
        );
        assert_eq!(
            q(r#"MATCH ("+", p) WHERE p."time (inc)" > 2"#),
            [true, true, true, true]
        );
        assert_eq!(q(r#"MATCH (2)"#), [true, true, true, true]);
        assert_eq!(
            q(r#"MATCH (".", p) WHERE NOT p."name" = "main" AND p."time" < 3"#),
            [false, true, false, false]
        );
        assert_eq!(
            q(r#"MATCH (".", p) WHERE p."name" = "main" OR p."time" > 3"#),
            [true, false, false, true]
        );
    }

    #[test]
    fn object_dialect() {
        assert_eq!(q(r#"[{"name": "MPI_.*"}]"#), [false, false, true, true]);
        assert_eq!(q(r#"[{"name": "MPI"}]"#), [false; 4]);
        assert_eq!(q(r#"[{"name": "MPI|solve"}]"#), [false, true, true, true]);
        assert_eq!(q(r#"[{"name": "solve"}, "*"]"#), [false, true, true, false]);
        assert_eq!(
            q(r#"[".", {"time (inc)": "> 3"}]"#),
            [true, true, false, true]
        );
        assert_eq!(
            q(r#"[["*", {"time": ["> 1", "< 4"]}]]"#),
            [false, true, true, false]
        );
    }

    #[test]
    fn errors() {
        let (c, m) = tree();
        let t = Tree {
            cct: &c,
            metrics: &m,
        };
        let e = select(r#"MATCH (".", p) WHERE x."name" = "a""#, &t).unwrap_err();
        assert_eq!(e.pos, 21);
        let e = select(r#"MATCH ("?")"#, &t).unwrap_err();
        assert_eq!(e.pos, 7);
        assert!(select(r#"[{"name": 3"#, &t).is_err());
        assert!(is_hatchet_query("MATCH (p)"));
        assert!(!is_hatchet_query("name == x"));
    }
}
