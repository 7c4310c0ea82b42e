//! grove's filter expressions:
//! `time (inc) > 5% and name ~ "^Calc" or not (leaf or depth <= 3)`.
//! Metrics compare with units (`1.5ms`) and percentages of the total; attributes
//! (name, type, file, module, ...) compare as text: `== != ~ !~ starts ends contains`.

use regex::Regex;

use super::lexer::{lex, Cursor, Tok, Token};
use super::{convert_unit, QueryError, Tree};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
    Ne,
    Match,
    NotMatch,
    Starts,
    Ends,
    Contains,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Num(f64, Option<String>),
    Text(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Leaf,
    Cmp {
        field: String,
        op: Op,
        value: Value,
        /// Span of the field and of the value, for errors found when evaluating.
        field_span: (usize, usize),
        value_span: (usize, usize),
    },
}

pub fn parse(text: &str) -> Result<Expr, QueryError> {
    let toks = lex(text)?;
    super::limits::check_tokens(toks.len(), text.len())?;
    let mut c = Cursor::new(&toks, text.len());
    if c.at_end() {
        return Err(QueryError::new(0, text.len(), "expected an expression"));
    }
    let e = or(&mut c)?;
    if !c.at_end() {
        return Err(c.error_here("expected 'and', 'or' or the end of the expression"));
    }
    Ok(e)
}

fn or(c: &mut Cursor) -> Result<Expr, QueryError> {
    let mut e = and(c)?;
    while c.eat_kw("or") {
        e = Expr::Or(Box::new(e), Box::new(and(c)?));
    }
    Ok(e)
}

fn and(c: &mut Cursor) -> Result<Expr, QueryError> {
    let mut e = not(c)?;
    while c.eat_kw("and") {
        e = Expr::And(Box::new(e), Box::new(not(c)?));
    }
    Ok(e)
}

fn not(c: &mut Cursor) -> Result<Expr, QueryError> {
    if c.eat_kw("not") {
        c.descend()?;
        let e = not(c)?;
        c.ascend();
        return Ok(Expr::Not(Box::new(e)));
    }
    atom(c)
}

fn atom(c: &mut Cursor) -> Result<Expr, QueryError> {
    if c.eat_sym("(") {
        c.descend()?;
        let e = or(c)?;
        c.expect_sym(")")?;
        c.ascend();
        return Ok(e);
    }
    if c.is_kw("leaf") && !next_is_op(c, 1) {
        c.advance();
        return Ok(Expr::Leaf);
    }
    let (field, field_span) = field(c)?;
    let op_tok = c
        .peek()
        .ok_or_else(|| c.error_here("expected a comparison operator"))?;
    let op = match &op_tok.tok {
        Tok::Sym(">") => Op::Gt,
        Tok::Sym(">=") => Op::Ge,
        Tok::Sym("<") => Op::Lt,
        Tok::Sym("<=") => Op::Le,
        Tok::Sym("==") | Tok::Sym("=") => Op::Eq,
        Tok::Sym("!=") => Op::Ne,
        Tok::Sym("~") | Tok::Sym("=~") => Op::Match,
        Tok::Sym("!~") => Op::NotMatch,
        Tok::Ident(w) if w.eq_ignore_ascii_case("starts") => Op::Starts,
        Tok::Ident(w) if w.eq_ignore_ascii_case("ends") => Op::Ends,
        Tok::Ident(w) if w.eq_ignore_ascii_case("contains") => Op::Contains,
        _ => {
            return Err(c.error_here(
                "expected a comparison operator (> >= < <= == != ~ !~ starts ends contains)",
            ))
        }
    };
    c.advance();
    // Allow `starts with` / `ends with`.
    if matches!(op, Op::Starts | Op::Ends) {
        c.eat_kw("with");
    }
    let v = c
        .advance()
        .ok_or_else(|| c.error_here("expected a value"))?;
    let value = match &v.tok {
        Tok::Number(x, unit) => Value::Num(*x, unit.clone()),
        Tok::Str(s) => Value::Text(s.clone()),
        Tok::Ident(w) => Value::Text(w.clone()),
        Tok::Sym("-") => match c.advance() {
            Some(Token {
                tok: Tok::Number(x, unit),
                ..
            }) => Value::Num(-x, unit.clone()),
            _ => return Err(QueryError::new(v.pos, v.len, "expected a number after '-'")),
        },
        _ => {
            return Err(QueryError::new(
                v.pos,
                v.len,
                "expected a number or a string",
            ))
        }
    };
    Ok(Expr::Cmp {
        field,
        op,
        value,
        field_span,
        value_span: (v.pos, v.len),
    })
}

fn next_is_op(c: &Cursor, k: usize) -> bool {
    matches!(c.peek_at(k), Some(Token { tok: Tok::Sym(s), .. }) if matches!(*s, ">" | ">=" | "<" | "<=" | "==" | "=" | "!=" | "~" | "!~" | "=~"))
}

/// A field: a word (`time`, `gpu_time@run1`), a word followed by `(inc)`, or a quoted name.
pub fn field(c: &mut Cursor) -> Result<(String, (usize, usize)), QueryError> {
    let t = c
        .advance()
        .ok_or_else(|| c.error_here("expected a metric or attribute name"))?;
    let mut name = match &t.tok {
        Tok::Ident(w) => w.clone(),
        Tok::Str(s) => return Ok((s.clone(), (t.pos, t.len))),
        _ => {
            return Err(QueryError::new(
                t.pos,
                t.len,
                "expected a metric or attribute name",
            ))
        }
    };
    let mut end = t.pos + t.len;
    if c.is_sym("(")
        && matches!(c.peek_at(1), Some(Token { tok: Tok::Ident(w), .. }) if w == "inc")
        && matches!(
            c.peek_at(2),
            Some(Token {
                tok: Tok::Sym(")"),
                ..
            })
        )
    {
        c.advance();
        c.advance();
        let close = c.advance().unwrap();
        name.push_str(" (inc)");
        end = close.pos + close.len;
    }
    Ok((name, (t.pos, end - t.pos)))
}

enum Compiled<'a> {
    And(Box<Compiled<'a>>, Box<Compiled<'a>>),
    Or(Box<Compiled<'a>>, Box<Compiled<'a>>),
    Not(Box<Compiled<'a>>),
    Leaf,
    Num {
        col: &'a [f64],
        op: Op,
        v: f64,
    },
    Depth {
        op: Op,
        v: f64,
    },
    Text {
        key: String,
        op: Op,
        s: String,
        re: Option<Regex>,
    },
    AttrNum {
        key: String,
        op: Op,
        v: f64,
    },
}

fn num_op(op: Op, a: f64, b: f64) -> bool {
    match op {
        Op::Gt => a > b,
        Op::Ge => a >= b,
        Op::Lt => a < b,
        Op::Le => a <= b,
        Op::Eq => a == b,
        Op::Ne => a != b,
        _ => false,
    }
}

fn compile<'a>(e: &Expr, t: &Tree<'a>) -> Result<Compiled<'a>, QueryError> {
    Ok(match e {
        Expr::And(a, b) => Compiled::And(Box::new(compile(a, t)?), Box::new(compile(b, t)?)),
        Expr::Or(a, b) => Compiled::Or(Box::new(compile(a, t)?), Box::new(compile(b, t)?)),
        Expr::Not(a) => Compiled::Not(Box::new(compile(a, t)?)),
        Expr::Leaf => Compiled::Leaf,
        Expr::Cmp {
            field,
            op,
            value,
            field_span,
            value_span,
        } => {
            let ferr = |m: String| QueryError::new(field_span.0, field_span.1, m);
            let verr = |m: String| QueryError::new(value_span.0, value_span.1, m);
            let numeric_op = matches!(op, Op::Gt | Op::Ge | Op::Lt | Op::Le | Op::Eq | Op::Ne);
            // A Hatchet/Thicket name of a metric column counts as that column, unless
            // it names an attribute.
            let column = t
                .metrics
                .resolve(field)
                .filter(|c| c == field || (field != "depth" && !t.has_attr(field)));
            if let Some(col) = column.as_deref().and_then(|c| t.metrics.values(c)) {
                let field = column.as_deref().unwrap_or(field);
                if !numeric_op {
                    return Err(ferr(format!(
                        "{field} is a metric: compare it with > >= < <= == !="
                    )));
                }
                let v = match value {
                    Value::Num(x, None) => *x,
                    Value::Num(x, Some(u)) if u == "%" => x / 100.0 * t.total(field),
                    Value::Num(x, Some(u)) => {
                        let mu = t.metrics.unit(field);
                        convert_unit(*x, u, mu).ok_or_else(|| {
                            verr(if mu.is_empty() {
                                format!("{field} has no unit; write a plain number")
                            } else {
                                format!("unknown unit {u:?} for {field} (in {mu}): use ns us ms s min or %")
                            })
                        })?
                    }
                    Value::Text(_) => {
                        return Err(verr(format!(
                            "{field} is a metric: compare it with a number"
                        )))
                    }
                };
                return Ok(Compiled::Num { col, op: *op, v });
            }
            if field == "depth" {
                let Value::Num(v, None) = value else {
                    return Err(verr("depth compares with a whole number".into()));
                };
                if !numeric_op {
                    return Err(ferr(
                        "depth is a number: compare it with > >= < <= == !=".into(),
                    ));
                }
                return Ok(Compiled::Depth { op: *op, v: *v });
            }
            if !t.has_attr(field) {
                let mut known: Vec<String> = t.metrics.names();
                known.extend(["name", "type", "depth", "leaf"].map(String::from));
                return Err(ferr(format!(
                    "unknown field {field:?} (known: {})",
                    known.join(", ")
                )));
            }
            match (value, op) {
                (Value::Num(v, None), Op::Gt | Op::Ge | Op::Lt | Op::Le) => Compiled::AttrNum {
                    key: field.clone(),
                    op: *op,
                    v: *v,
                },
                (Value::Num(..), Op::Gt | Op::Ge | Op::Lt | Op::Le) => {
                    return Err(verr("units apply to metrics only".into()))
                }
                _ if !numeric_op || matches!(op, Op::Eq | Op::Ne) => {
                    let s = match value {
                        Value::Text(s) => s.clone(),
                        Value::Num(x, _) => {
                            let tok = &value_span;
                            let _ = tok;
                            if x.fract() == 0.0 {
                                format!("{}", *x as i64)
                            } else {
                                x.to_string()
                            }
                        }
                    };
                    let re = if matches!(op, Op::Match | Op::NotMatch) {
                        Some(super::limits::regex(&s).map_err(verr)?)
                    } else {
                        None
                    };
                    Compiled::Text {
                        key: field.clone(),
                        op: *op,
                        s,
                        re,
                    }
                }
                _ => {
                    return Err(ferr(format!(
                        "{field} is text: compare it with == != ~ !~ starts ends contains"
                    )))
                }
            }
        }
    })
}

/// Evaluates column by column: each comparison is one tight loop over a metric slice,
/// so a filter over a million nodes costs a few milliseconds.
fn eval(c: &Compiled, t: &Tree, depth: &mut Option<Vec<u32>>) -> Vec<bool> {
    let n = t.cct.len();
    match c {
        Compiled::And(a, b) => {
            let mut x = eval(a, t, depth);
            let y = eval(b, t, depth);
            x.iter_mut().zip(y).for_each(|(p, q)| *p &= q);
            x
        }
        Compiled::Or(a, b) => {
            let mut x = eval(a, t, depth);
            let y = eval(b, t, depth);
            x.iter_mut().zip(y).for_each(|(p, q)| *p |= q);
            x
        }
        Compiled::Not(a) => eval(a, t, depth).into_iter().map(|x| !x).collect(),
        Compiled::Leaf => (0..n as u32).map(|i| !t.cct.has_children(i)).collect(),
        Compiled::Num { col, op, v } => {
            let v = *v;
            match op {
                Op::Gt => col.iter().map(|&a| a > v).collect(),
                Op::Ge => col.iter().map(|&a| a >= v).collect(),
                Op::Lt => col.iter().map(|&a| a < v).collect(),
                Op::Le => col.iter().map(|&a| a <= v).collect(),
                Op::Eq => col.iter().map(|&a| a == v).collect(),
                _ => col.iter().map(|&a| a != v).collect(),
            }
        }
        Compiled::Depth { op, v } => {
            let d = depth.get_or_insert_with(|| t.cct.depths());
            d.iter().map(|&x| num_op(*op, x as f64, *v)).collect()
        }
        Compiled::AttrNum { key, op, v } => (0..n as u32)
            .map(|i| {
                t.attr(i, key)
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .is_some_and(|a| num_op(*op, a, *v))
            })
            .collect(),
        Compiled::Text { key, op, s, re } => (0..n as u32)
            .map(|i| {
                let Some(a) = t.attr(i, key) else {
                    return matches!(op, Op::Ne | Op::NotMatch);
                };
                match op {
                    Op::Eq => a == s,
                    Op::Ne => a != s,
                    Op::Match => re.as_ref().is_some_and(|r| r.is_match(a)),
                    Op::NotMatch => !re.as_ref().is_some_and(|r| r.is_match(a)),
                    Op::Starts => a.starts_with(s.as_str()),
                    Op::Ends => a.ends_with(s.as_str()),
                    Op::Contains => a.contains(s.as_str()),
                    _ => false,
                }
            })
            .collect(),
    }
}

/// Depth of every node (roots are 0).
/// The fields an expression compares, in order (for notes on the names it used).
pub fn fields(e: &Expr) -> Vec<&str> {
    match e {
        Expr::And(a, b) | Expr::Or(a, b) => {
            let mut v = fields(a);
            v.extend(fields(b));
            v
        }
        Expr::Not(a) => fields(a),
        Expr::Leaf => Vec::new(),
        Expr::Cmp { field, .. } => vec![field.as_str()],
    }
}

pub fn depths(t: &Tree) -> Vec<u32> {
    t.cct.depths()
}

/// The nodes an expression selects.
pub fn select(e: &Expr, t: &Tree) -> Result<Vec<bool>, QueryError> {
    let c = compile(e, t)?;
    Ok(eval(&c, t, &mut None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cct, MetricTable};

    fn tree() -> (Cct, MetricTable) {
        let mut c = Cct::default();
        let main = c.child(None, "main", "function");
        let a = c.child(Some(main), "CalcForce", "function");
        c.child(Some(a), "malloc", "function");
        c.child(Some(main), "MPI_Allreduce", "function");
        c.frame_mut(a).set_attr("file", "force.c");
        let mut m = MetricTable::new(4);
        m.set("time", "ns", vec![1e6, 2e6, 3e6, 4e6]);
        m.derive_inclusive(&c, &["time"]);
        m.set("count", "", vec![1.0, 10.0, 20.0, 1.0]);
        (c, m)
    }

    fn sel(q: &str) -> Vec<bool> {
        let (c, m) = tree();
        let t = Tree {
            cct: &c,
            metrics: &m,
        };
        select(&parse(q).unwrap(), &t).unwrap()
    }

    fn err(q: &str) -> QueryError {
        let (c, m) = tree();
        let t = Tree {
            cct: &c,
            metrics: &m,
        };
        parse(q)
            .and_then(|e| select(&e, &t).map(|_| ()))
            .unwrap_err()
    }

    #[test]
    fn comparisons() {
        assert_eq!(sel("time (inc) > 5%"), [true, true, true, true]);
        assert_eq!(sel("time (inc) > 50%"), [true, false, false, false]);
        assert_eq!(sel("time >= 2.5ms"), [false, false, true, true]);
        assert_eq!(sel("count >= 10"), [false, true, true, false]);
        assert_eq!(sel("name ~ \"^Calc\""), [false, true, false, false]);
        assert_eq!(
            sel("name !~ \"malloc\" and leaf"),
            [false, false, false, true]
        );
        assert_eq!(
            sel("name starts with MPI_ or depth >= 2"),
            [false, false, true, true]
        );
        assert_eq!(sel("not (name contains a)"), [false, false, false, true]);
        assert_eq!(sel("file == \"force.c\""), [false, true, false, false]);
        assert_eq!(
            sel("type == function and name ends \"loc\""),
            [false, false, true, false]
        );
        assert_eq!(sel("\"time (inc)\" < 4.5ms"), [false, false, true, true]);
    }

    #[test]
    fn errors_have_positions() {
        assert_eq!(err("tme > 3").pos, 0);
        assert_eq!(err("time > \"x\"").pos, 7);
        assert_eq!(err("time > 3 parsecs").pos, 9);
        assert_eq!(err("count > 3ms").pos, 8);
        assert_eq!(err("name ~ \"(\"").pos, 7);
        assert_eq!(err("(time > 3").pos, 9);
        assert_eq!(err("").pos, 0);
        assert_eq!(err("time ~ 3").pos, 0);
    }
}
