//! Property test of the command and query parsers: random input built from the
//! languages' own tokens never panics, and every error points inside the input.

use grove::app::command::Command;
use grove::model::{Cct, MetricTable};
use grove::query::{cypher, expr, Tree};
use grove::transform::derive;

mod common;
use common::Rng;

const TOKENS: &[&str] = &[
    "filter",
    "--squash",
    "prune",
    "derive",
    "sort",
    "metric",
    "compose",
    "as",
    "limit",
    "export",
    "MATCH",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "IS",
    "LEAF",
    "STARTS",
    "WITH",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "->",
    ".",
    ",",
    "\"*\"",
    "\".\"",
    "\"+\"",
    "p",
    "p.\"name\"",
    "p.\"time\"",
    "=",
    "==",
    "!=",
    "<",
    ">",
    "<=",
    ">=",
    "~",
    "!~",
    "=~",
    "and",
    "or",
    "not",
    "leaf",
    "depth",
    "name",
    "type",
    "time",
    "time (inc)",
    "(inc)",
    "gpu_time",
    "count",
    "1",
    "1.5ms",
    "5%",
    "-3",
    "2e3",
    "\"x\"",
    "\"^a.*\"",
    "\"(\"",
    "'q'",
    "min(",
    "max(",
    "abs(",
    "log(",
    "+",
    "-",
    "*",
    "/",
    "x",
    "=",
    "\\",
    "\"",
    "µs",
    "{\"name\": \"a\"}",
    "\"*\",",
    "[\".\"",
    "#",
    ":",
    "off",
    "1%",
    " ",
    "  ",
];

fn tree() -> (Cct, MetricTable) {
    let mut c = Cct::default();
    let m = c.child(None, "main", "function");
    let a = c.child(Some(m), "a", "function");
    c.child(Some(a), "b", "kernel");
    let mut t = MetricTable::new(3);
    t.set("time", "ns", vec![1.0, 2.0, 3.0]);
    t.derive_inclusive(&c, &["time"]);
    t.set("count", "", vec![1.0, 1.0, 2.0]);
    (c, t)
}

#[test]
fn random_input_never_panics_and_errors_have_positions() {
    let (c, m) = tree();
    let t = Tree {
        cct: &c,
        metrics: &m,
    };
    let mut rng = Rng(0x853c49e6748fea9b);
    for _ in 0..20_000 {
        let n = 1 + rng.next() % 9;
        let text: String = (0..n)
            .map(|_| rng.pick(TOKENS))
            .collect::<Vec<_>>()
            .join(" ");
        let text = if rng.next().is_multiple_of(4) {
            // Cut in the middle of a token, on a char boundary.
            let mut cut = (rng.next() as usize) % (text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text[..cut].to_string()
        } else {
            text
        };
        if let Err(e) = Command::parse(&text) {
            assert!(e.pos <= text.len(), "{text:?}: {e:?}");
        }
        match expr::parse(&text) {
            Ok(e) => {
                let _ = expr::select(&e, &t);
            }
            Err(e) => assert!(e.pos <= text.len(), "{text:?}: {e:?}"),
        }
        if let Err(e) = cypher::select(&text, &t) {
            assert!(e.pos <= text.len(), "{text:?}: {e:?}");
        }
        match derive::parse_definition(&text) {
            Ok((name, def)) => {
                let mut m2 = m.clone();
                if let Err(e) = derive::derive(&mut m2, &name, &def) {
                    assert!(e.pos <= text.len(), "{text:?}: {e:?}");
                }
            }
            Err(e) => assert!(e.pos <= text.len(), "{text:?}: {e:?}"),
        }
    }
}
