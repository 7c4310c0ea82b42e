//! Commands that reshape the tree or the rows shown: filter, squash, prune, unprune,
//! hide, show, compose, group-by, derive, focus, unfocus, limit. Expressions are
//! parsed here, once; the parsed form is what runs and what undo replays.

use std::fmt;

use crate::app::command::{quote, write_opt, Command, Input, ParseError, Parsed, Selector};
use crate::app::{paths, App, CmdError};
use crate::query::{cypher, expr, QueryError};
use crate::transform::{self, derive, groupby};

fn from_query(e: QueryError, at: usize) -> ParseError {
    ParseError {
        pos: e.pos + at,
        len: e.len,
        msg: e.msg,
    }
}

/// An error found while running an expression, with the command text to underline.
pub fn query_error(e: QueryError, text: String, at: usize) -> CmdError {
    CmdError {
        msg: e.msg.clone(),
        caret: Some((text, e.pos + at, e.len.max(1))),
    }
}

pub fn parse_filter(i: &Input) -> Result<Command, ParseError> {
    let (mut text, mut at) = i.raw_rest();
    let mut squash = false;
    if let Some(r) = text.strip_prefix("--squash") {
        if r.is_empty() || r.starts_with(char::is_whitespace) {
            squash = true;
            let trimmed = r.trim_start();
            at += text.len() - trimmed.len();
            text = trimmed;
        }
    }
    if text.is_empty() {
        return Err(i.missing("expected an expression or a Hatchet query"));
    }
    let value = if cypher::is_hatchet_query(text) {
        Selector::Hatchet(cypher::parse(text).ok().flatten())
    } else {
        Selector::Expr(expr::parse(text).map_err(|e| from_query(e, at))?)
    };
    Ok(Command::Filter {
        squash,
        query: Parsed {
            text: text.to_string(),
            at,
            value,
        },
    })
}

pub fn parse_prune(i: &Input) -> Result<Command, ParseError> {
    let (text, at) = i.raw_rest();
    if text == "off" {
        return Ok(Command::PruneOff);
    }
    match expr::parse(text) {
        Ok(value @ expr::Expr::Cmp { .. }) => Ok(Command::Prune(Parsed {
            text: text.to_string(),
            at,
            value,
        })),
        Ok(_) => Err(ParseError {
            pos: at,
            len: text.len(),
            msg: "prune takes one comparison: METRIC < VALUE".into(),
        }),
        Err(e) => Err(from_query(e, at)),
    }
}

pub fn parse_derive(i: &Input) -> Result<Command, ParseError> {
    let (text, at) = i.raw_rest();
    let value = derive::parse_definition(text).map_err(|e| from_query(e, at))?;
    Ok(Command::Derive(Parsed {
        text: text.to_string(),
        at,
        value,
    }))
}

pub fn parse_compose(i: &Input) -> Result<Command, ParseError> {
    let args = i.args;
    let as_at = args.iter().rposition(|t| t.text == "as" && !t.quoted);
    match as_at {
        Some(k) if k >= 1 && k + 2 == args.len() => Ok(Command::Compose {
            names: args[..k].iter().map(|t| t.text.clone()).collect(),
            new: args[k + 1].text.clone(),
        }),
        _ => Err(ParseError {
            pos: i.head.pos,
            len: i.text.len() - i.head.pos,
            msg: "usage: compose NAME1 NAME2 ... as NEW".into(),
        }),
    }
}

pub fn parse_limit(i: &Input) -> Result<Command, ParseError> {
    const MSG: &str = "expected a percentage such as 1% (or off)";
    match i.args {
        [t] if t.text == "off" => Ok(Command::Limit(None)),
        [t] => {
            let v = t.text.strip_suffix('%').and_then(|x| x.parse::<f64>().ok());
            match v {
                Some(v) if (0.0..=100.0).contains(&v) => Ok(Command::Limit(Some(v))),
                _ => Err(Input::at(t, MSG)),
            }
        }
        [_, t, ..] => Err(Input::too_many(t)),
        [] => Err(i.missing(MSG)),
    }
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::Filter { squash, query } => {
            write!(
                f,
                "filter {}{query}",
                if *squash { "--squash " } else { "" }
            )
        }
        Command::Prune(e) => write!(f, "prune {e}"),
        Command::PruneOff => f.write_str("prune off"),
        Command::Unprune(p) | Command::Hide(p) | Command::Show(p) | Command::GroupBy(p) => {
            write!(f, "{} {}", c.name(), quote(p))
        }
        Command::Compose { names, new } => {
            let names: Vec<String> = names.iter().map(|n| quote(n)).collect();
            write!(f, "compose {} as {}", names.join(" "), quote(new))
        }
        Command::Derive(d) => write!(f, "derive {d}"),
        Command::Focus(p) => write_opt(f, "focus", p),
        Command::Limit(None) => f.write_str("limit off"),
        Command::Limit(Some(v)) => write!(f, "limit {v}%"),
        _ => f.write_str(c.name()),
    }
}

impl App {
    pub(super) fn reshape(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let whole = cmd.to_string();
        match &cmd {
            Command::Filter { squash, query } => {
                self.filter(*squash, query, &whole)?;
            }
            Command::Squash => {
                let Some(m) = self.matched.clone() else {
                    return Err("squash follows a filter: there is nothing to squash".into());
                };
                let r = transform::rebuild(
                    &self.profile.cct,
                    &self.profile.metrics,
                    &m,
                    &|_| None,
                    true,
                    true,
                );
                self.install(r, None);
                self.refresh_rules();
                self.info(format!("squashed to {} nodes", self.profile.cct.len()));
            }
            Command::Invert => {
                self.invert()?;
            }
            Command::Compose { names, new } => {
                self.compose(names, new)?;
            }
            Command::GroupBy(attr) => {
                if !self.tree_ref().has_attr(attr) {
                    return Err(format!("no node has the attribute {attr:?}").into());
                }
                let r = groupby::group_by(&self.profile.cct, &self.profile.metrics, attr);
                self.install(r, None);
                self.refresh_rules();
            }
            Command::Derive(d) => {
                let at = whole.len() - d.text.len();
                let (name, e) = &d.value;
                self.keep_original();
                let made = derive::derive(&mut self.profile.metrics, name, e)
                    .map_err(|e| query_error(e, whole.clone(), at))?;
                self.derived.set(name.clone(), e.clone());
                self.refresh_metric();
                self.info(format!("new metric: {}", made.join(", ")));
            }
            Command::Prune(e) => {
                let at = whole.len() - e.text.len();
                let sel = expr::select(&e.value, &self.tree_ref())
                    .map_err(|x| query_error(x, whole.clone(), at))?;
                self.rules.prune = Some(e.clone());
                self.refresh_rules();
                self.info(format!(
                    "{} nodes pruned",
                    sel.iter().filter(|x| **x).count()
                ));
            }
            Command::PruneOff => {
                self.rules.prune = None;
                self.rules.unpruned.clear();
                self.refresh_rules();
            }
            Command::Unprune(p) | Command::Hide(p) | Command::Show(p) => {
                return self.path_rule(&cmd, p).map(Some);
            }
            Command::Focus(p) => {
                let n = self.target(p)?;
                let canonical = self.path_of(n);
                self.rules.focus = Some(canonical.clone());
                self.tree.set_open(n, true);
                self.refresh_rules();
                self.tree.reveal(n);
                return Ok(Some(Command::Focus(Some(canonical))));
            }
            Command::Unfocus => {
                self.rules.focus = None;
                self.refresh_rules();
            }
            Command::Limit(v) => {
                self.rules.limit = *v;
                self.refresh_rules();
            }
            other => return Err(format!("{other} is not a reshaping command").into()),
        }
        Ok(Some(cmd))
    }

    /// `filter` (`squash`: `filter squash`): keeps the nodes `query` matches, with
    /// their ancestors, or squashes the tree to them.
    fn filter(
        &mut self,
        squash: bool,
        query: &Parsed<Selector>,
        whole: &str,
    ) -> Result<(), CmdError> {
        let at = whole.len() - query.text.len();
        let matched = self.select(query, at, whole)?;
        let count = matched.iter().filter(|m| **m).count();
        if count == 0 {
            return Err(CmdError {
                msg: "no node matches; the tree is unchanged".into(),
                caret: Some((whole.to_string(), at, query.text.len())),
            });
        }
        let r = if squash {
            transform::rebuild(
                &self.profile.cct,
                &self.profile.metrics,
                &matched,
                &|_| None,
                true,
                true,
            )
        } else {
            let keep = transform::with_ancestors(&self.profile.cct, &matched);
            transform::subset(&self.profile.cct, &self.profile.metrics, &keep)
        };
        let before = self.profile.cct.len();
        self.install(r, (!squash).then_some(&matched[..]));
        self.open_results();
        self.refresh_rules();
        self.info(format!(
            "{count} of {before} nodes match; {} shown",
            self.profile.cct.len()
        ));
        Ok(())
    }

    /// `invert`: the bottom-up tree.
    fn invert(&mut self) -> Result<(), CmdError> {
        let (cct, metrics) = transform::invert::invert(&self.profile.cct, &self.profile.metrics)
            .map_err(CmdError::plain)?;
        let roots = cct.root_ids().len();
        let n = cct.len();
        // An inverted node stands for many nodes of the old tree: none's open
        // state carries over, and every node starts closed.
        let origin = vec![0; n];
        self.install(
            transform::Rebuilt {
                cct,
                metrics,
                origin,
            },
            None,
        );
        std::sync::Arc::make_mut(&mut self.tree.open).fill(false);
        self.refresh_rules();
        self.info(format!(
            "bottom-up tree: {roots} functions with self cost, {n} nodes; undo to go back"
        ));
        Ok(())
    }

    /// `compose NAMES as NEW`: the nodes named any of `names` renamed to `new`.
    fn compose(&mut self, names: &[String], new: &str) -> Result<(), CmdError> {
        let cct = &self.profile.cct;
        let hits = (0..cct.len() as u32)
            .filter(|&n| names.iter().any(|x| x == cct.name(n)))
            .count();
        if hits == 0 {
            return Err(format!("no node is named {}", names.join(" or ")).into());
        }
        let rename = |n: u32| -> Option<crate::model::Frame> {
            names
                .iter()
                .any(|x| x == cct.name(n))
                .then(|| crate::model::Frame::new(new, "composed"))
        };
        let keep = vec![true; cct.len()];
        let r = transform::rebuild(cct, &self.profile.metrics, &keep, &rename, true, true);
        self.install(r, None);
        self.refresh_rules();
        self.info(format!("{hits} nodes composed into {new}"));
        Ok(())
    }

    /// `unprune`, `hide` or `show` of the node at path `p`: the command as it is kept,
    /// with the node's canonical path.
    fn path_rule(&mut self, cmd: &Command, p: &str) -> Result<Command, CmdError> {
        let n = paths::resolve(&self.profile.cct, p).map_err(CmdError::plain)?;
        let canonical = self.path_of(n);
        match cmd {
            Command::Unprune(_) => self.rules.unpruned.push(canonical.clone()),
            Command::Hide(_) => self.rules.hidden.push(canonical.clone()),
            _ => {
                let before = self.rules.hidden.len();
                let cct = &self.profile.cct;
                self.view
                    .rules
                    .hidden
                    .retain(|h| paths::resolve(cct, h).map(|x| x != n).unwrap_or(true));
                if before == self.rules.hidden.len() {
                    return Err(format!("{canonical} is not hidden").into());
                }
            }
        }
        self.refresh_rules();
        Ok(match cmd {
            Command::Unprune(_) => Command::Unprune(canonical),
            Command::Hide(_) => Command::Hide(canonical),
            _ => Command::Show(canonical),
        })
    }
}
