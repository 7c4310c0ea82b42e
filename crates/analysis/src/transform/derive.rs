//! `derive NAME = EXPR`: a new metric column from arithmetic on metric columns
//! (+ - * / parentheses, numbers, min, max, abs, log, and nz: a missing value as
//! zero), evaluated with polars kernels.
//! When every column used is exclusive with an inclusive partner, `NAME (inc)` is
//! derived from the inclusive columns too, so the new metric heats and sorts like
//! the others.

use polars::prelude::*;

use crate::model::metrics::{base_of_inclusive, inclusive_name};
use crate::model::MetricTable;
use crate::query::lexer::{lex, Cursor, Tok, Token};
use crate::query::QueryError;

#[derive(Debug, Clone, PartialEq)]
pub enum Arith {
    Num(f64),
    Col(String, (usize, usize)),
    Neg(Box<Arith>),
    Bin(char, Box<Arith>, Box<Arith>),
    Call(String, Vec<Arith>),
}

/// Parses `NAME = EXPR`, returning the name and the expression.
pub fn parse_definition(text: &str) -> Result<(String, Arith), QueryError> {
    let toks = lex(text)?;
    crate::query::limits::check_tokens(toks.len(), text.len())?;
    let mut c = Cursor::new(&toks, text.len());
    let (name, _) = crate::query::expr::field(&mut c)?;
    c.expect_sym("=")?;
    if c.at_end() {
        return Err(c.error_here("expected an expression after '='"));
    }
    let e = sum(&mut c)?;
    if !c.at_end() {
        return Err(c.error_here("expected an operator (+ - * /) or the end"));
    }
    Ok((name, e))
}

fn sum(c: &mut Cursor) -> Result<Arith, QueryError> {
    let mut e = product(c)?;
    loop {
        if c.eat_sym("+") {
            e = Arith::Bin('+', Box::new(e), Box::new(product(c)?));
        } else if c.eat_sym("-") {
            e = Arith::Bin('-', Box::new(e), Box::new(product(c)?));
        } else {
            return Ok(e);
        }
    }
}

fn product(c: &mut Cursor) -> Result<Arith, QueryError> {
    let mut e = unary(c)?;
    loop {
        if c.eat_sym("*") {
            e = Arith::Bin('*', Box::new(e), Box::new(unary(c)?));
        } else if c.eat_sym("/") {
            e = Arith::Bin('/', Box::new(e), Box::new(unary(c)?));
        } else {
            return Ok(e);
        }
    }
}

fn unary(c: &mut Cursor) -> Result<Arith, QueryError> {
    if c.eat_sym("-") {
        c.descend()?;
        let e = unary(c)?;
        c.ascend();
        return Ok(Arith::Neg(Box::new(e)));
    }
    if c.eat_sym("(") {
        c.descend()?;
        let e = sum(c)?;
        c.expect_sym(")")?;
        c.ascend();
        return Ok(e);
    }
    match c.peek() {
        Some(Token {
            tok: Tok::Number(x, None),
            ..
        }) => {
            c.advance();
            Ok(Arith::Num(*x))
        }
        Some(Token {
            tok: Tok::Number(_, Some(_)),
            pos,
            len,
        }) => Err(QueryError::new(
            *pos,
            *len,
            "derive works on plain numbers (no units)",
        )),
        Some(Token {
            tok: Tok::Ident(f),
            pos,
            len,
        }) if matches!(f.as_str(), "min" | "max" | "abs" | "log" | "nz")
            && matches!(
                c.peek_at(1),
                Some(Token {
                    tok: Tok::Sym("("),
                    ..
                })
            ) =>
        {
            let (f, pos, len) = (f.clone(), *pos, *len);
            c.advance();
            c.advance();
            c.descend()?;
            let mut args = vec![sum(c)?];
            while c.eat_sym(",") {
                args.push(sum(c)?);
            }
            c.expect_sym(")")?;
            c.ascend();
            let want = if f == "min" || f == "max" { 2 } else { 1 };
            if args.len() != want {
                return Err(QueryError::new(
                    pos,
                    len,
                    format!("{f} takes {want} argument(s)"),
                ));
            }
            Ok(Arith::Call(f, args))
        }
        Some(_) => {
            let (name, span) = crate::query::expr::field(c)?;
            Ok(Arith::Col(name, span))
        }
        None => Err(c.error_here("expected a number, a metric or '('")),
    }
}

fn columns(e: &Arith, out: &mut Vec<(String, (usize, usize))>) {
    match e {
        Arith::Num(_) => {}
        Arith::Col(n, s) => out.push((n.clone(), *s)),
        Arith::Neg(a) => columns(a, out),
        Arith::Bin(_, a, b) => {
            columns(a, out);
            columns(b, out);
        }
        Arith::Call(_, args) => args.iter().for_each(|a| columns(a, out)),
    }
}

enum Val {
    Num(f64),
    Col(Float64Chunked),
}

fn eval(e: &Arith, t: &MetricTable, inclusive: bool, rows: usize) -> Val {
    let to_col = |v: Val| -> Float64Chunked {
        match v {
            Val::Col(c) => c,
            Val::Num(x) => Float64Chunked::full("c".into(), x, rows),
        }
    };
    match e {
        Arith::Num(x) => Val::Num(*x),
        Arith::Col(n, _) => {
            let name = if inclusive {
                inclusive_name(n)
            } else {
                n.clone()
            };
            let v = t.values(&name).unwrap_or(&[]);
            Val::Col(Float64Chunked::from_slice("c".into(), v))
        }
        Arith::Neg(a) => match eval(a, t, inclusive, rows) {
            Val::Num(x) => Val::Num(-x),
            Val::Col(c) => Val::Col(c.apply_values(|x| -x)),
        },
        Arith::Bin(op, a, b) => {
            let (a, b) = (eval(a, t, inclusive, rows), eval(b, t, inclusive, rows));
            let f = |x: f64, y: f64| match op {
                '+' => x + y,
                '-' => x - y,
                '*' => x * y,
                _ => x / y,
            };
            match (a, b) {
                (Val::Num(x), Val::Num(y)) => Val::Num(f(x, y)),
                (Val::Col(c), Val::Num(y)) => Val::Col(match op {
                    '+' => &c + y,
                    '-' => &c - y,
                    '*' => &c * y,
                    _ => &c / y,
                }),
                (Val::Num(x), Val::Col(c)) => Val::Col(c.apply_values(|y| f(x, y))),
                (Val::Col(c), Val::Col(d)) => Val::Col(match op {
                    '+' => &c + &d,
                    '-' => &c - &d,
                    '*' => &c * &d,
                    _ => &c / &d,
                }),
            }
        }
        Arith::Call(f, args) => {
            let mut vals: Vec<Float64Chunked> = args
                .iter()
                .map(|a| to_col(eval(a, t, inclusive, rows)))
                .collect();
            let a = vals.remove(0);
            Val::Col(match f.as_str() {
                "abs" => a.apply_values(f64::abs),
                "log" => a.apply_values(f64::ln),
                // A node missing from a profile has NaN there; a difference wants it as
                // zero (Hatchet's `sub` on unified trees fills the same).
                "nz" => a.apply_values(|x| if x.is_nan() { 0.0 } else { x }),
                "min" => arity::binary_elementwise_values(&a, &vals[0], |x: f64, y: f64| x.min(y)),
                _ => arity::binary_elementwise_values(&a, &vals[0], |x: f64, y: f64| x.max(y)),
            })
        }
    }
}

/// The values of a result, NaN for null (no value), array by array: the per-value
/// iterator of a chunked column (an Option each) cost more than the arithmetic.
fn materialise(v: Val, rows: usize) -> Vec<f64> {
    match v {
        Val::Num(x) => vec![x; rows],
        Val::Col(c) => {
            let mut out = Vec::with_capacity(c.len());
            for a in c.downcast_iter() {
                match a.validity().filter(|v| v.unset_bits() > 0) {
                    None => out.extend_from_slice(a.values()),
                    Some(valid) => {
                        out.extend(a.values().iter().zip(valid.iter()).map(|(&x, ok)| {
                            if ok {
                                x
                            } else {
                                f64::NAN
                            }
                        }))
                    }
                }
            }
            out
        }
    }
}

/// The expression with every column that is not one of the table's, but that a
/// Hatchet/Thicket name stands for, renamed to grove's column.
fn with_aliases(e: &Arith, table: &MetricTable) -> Arith {
    match e {
        Arith::Col(n, span) if !table.has(n) => match table.resolve(n) {
            Some(real) => Arith::Col(real, *span),
            None => e.clone(),
        },
        Arith::Num(_) | Arith::Col(..) => e.clone(),
        Arith::Neg(a) => Arith::Neg(Box::new(with_aliases(a, table))),
        Arith::Bin(op, a, b) => Arith::Bin(
            *op,
            Box::new(with_aliases(a, table)),
            Box::new(with_aliases(b, table)),
        ),
        Arith::Call(f, args) => Arith::Call(
            f.clone(),
            args.iter().map(|a| with_aliases(a, table)).collect(),
        ),
    }
}

/// Adds the derived column(s) to the table; errors point at unknown metrics.
pub fn derive(table: &mut MetricTable, name: &str, e: &Arith) -> Result<Vec<String>, QueryError> {
    if name == "name" || name == "type" || name == "depth" {
        return Err(QueryError::new(
            0,
            name.len(),
            format!("{name} is reserved"),
        ));
    }
    // Hatchet's and Thicket's names of metric columns work here too (`Avg time/rank`
    // is `Avg time/rank (inc)`), as in every command (`model::metric_aliases`).
    let e = &with_aliases(e, table);
    let mut cols = Vec::new();
    columns(e, &mut cols);
    for (c, (pos, len)) in &cols {
        if !table.has(c) {
            return Err(QueryError::new(*pos, *len, {
                let names = table.names();
                let hint =
                    crate::present::suggest::did_you_mean(c, names.iter().map(String::as_str));
                format!("unknown metric {c:?}{hint} (metrics: {})", names.join(", "))
            }));
        }
    }
    let rows = table.rows();
    let exc = materialise(eval(e, table, false, rows), rows);
    // The unit survives when every column used shares one and only + - combine them.
    let units: Vec<&str> = cols.iter().map(|(c, _)| table.unit(c)).collect();
    let unit = if !units.is_empty() && units.iter().all(|u| *u == units[0]) && additive(e) {
        units[0].to_string()
    } else {
        String::new()
    };
    let both = !cols.is_empty()
        && cols
            .iter()
            .all(|(c, _)| base_of_inclusive(c).is_none() && table.has(&inclusive_name(c)))
        && base_of_inclusive(name).is_none();
    let mut made = vec![name.to_string()];
    if both {
        let inc = materialise(eval(e, table, true, rows), rows);
        table.set(name, &unit, exc);
        table.set(&inclusive_name(name), &unit, inc);
        made.push(inclusive_name(name));
    } else {
        table.set(name, &unit, exc);
    }
    Ok(made)
}

/// True when the expression only adds, subtracts, negates or picks (min/max/abs) its
/// columns: its values sum over nodes like the columns do, so a share of the total
/// means something (a ratio's does not).
pub fn additive(e: &Arith) -> bool {
    match e {
        Arith::Num(_) | Arith::Col(..) => true,
        Arith::Neg(a) => additive(a),
        Arith::Bin(op, a, b) => matches!(op, '+' | '-') && additive(a) && additive(b),
        Arith::Call(f, args) => {
            matches!(f.as_str(), "min" | "max" | "abs" | "nz") && args.iter().all(additive)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> MetricTable {
        let mut t = MetricTable::new(3);
        t.set("time", "ns", vec![1.0, 2.0, 4.0]);
        t.set("time (inc)", "ns", vec![7.0, 6.0, 4.0]);
        t.set("gpu_time", "ns", vec![0.0, 1.0, 8.0]);
        t.set("gpu_time (inc)", "ns", vec![9.0, 9.0, 8.0]);
        t
    }

    #[test]
    fn arithmetic() {
        let mut t = table();
        let (n, e) = parse_definition("ratio = gpu_time / time").unwrap();
        assert_eq!(
            derive(&mut t, &n, &e).unwrap(),
            vec!["ratio", "ratio (inc)"]
        );
        assert_eq!(t.values("ratio").unwrap(), &[0.0, 0.5, 2.0]);
        assert_eq!(t.values("ratio (inc)").unwrap(), &[9.0 / 7.0, 1.5, 2.0]);
        assert_eq!(t.unit("ratio"), "");
        let (n, e) = parse_definition("x = max(time, gpu_time) - -1 + abs(0 - 2) * 2").unwrap();
        derive(&mut t, &n, &e).unwrap();
        assert_eq!(t.values("x").unwrap(), &[6.0, 7.0, 13.0]);
        let (n, e) = parse_definition("l = log(time (inc)) + min(1, 2)").unwrap();
        derive(&mut t, &n, &e).unwrap();
        assert!((t.values("l").unwrap()[2] - (4f64.ln() + 1.0)).abs() < 1e-12);
        let (n, e) = parse_definition("s = time + gpu_time").unwrap();
        derive(&mut t, &n, &e).unwrap();
        assert_eq!(t.unit("s"), "ns");
    }

    #[test]
    fn nz_counts_a_missing_value_as_zero() {
        let mut t = MetricTable::new(3);
        t.set("a", "ns", vec![5.0, f64::NAN, 2.0]);
        t.set("b", "ns", vec![1.0, 3.0, f64::NAN]);
        let (n, e) = parse_definition("d = nz(a) - nz(b)").unwrap();
        derive(&mut t, &n, &e).unwrap();
        assert_eq!(t.values("d").unwrap(), &[4.0, -3.0, 2.0]);
        assert_eq!(t.unit("d"), "ns");
    }

    #[test]
    fn results_read_array_by_array() {
        // Several arrays, with and without nulls: the values as the per-value
        // iterator gives them, NaN for null.
        let mut c: Float64Chunked = [Some(1.0), None, Some(f64::NAN), Some(-0.0)]
            .into_iter()
            .collect();
        c.append(&Float64Chunked::from_slice("c".into(), &[2.5, 3.5]))
            .unwrap();
        c.append(&[None, Some(4.0)].into_iter().collect()).unwrap();
        let want: Vec<u64> = c.iter().map(|x| x.unwrap_or(f64::NAN).to_bits()).collect();
        let got: Vec<u64> = materialise(Val::Col(c), 8)
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn errors() {
        let mut t = table();
        let (n, e) = parse_definition("r = gpu_time / tme").unwrap();
        assert_eq!(derive(&mut t, &n, &e).unwrap_err().pos, 15);
        assert_eq!(parse_definition("r gpu_time").unwrap_err().pos, 2);
        assert_eq!(parse_definition("r = (time").unwrap_err().pos, 9);
        assert_eq!(parse_definition("r = min(time)").unwrap_err().pos, 4);
        assert_eq!(parse_definition("r = 3ms").unwrap_err().pos, 4);
    }
}
