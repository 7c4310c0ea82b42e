//! `stats zero|present`: how an ensemble's statistics columns treat a node that a
//! member lacks (see `crate::ensemble::Stats`). The table is recomputed from the
//! per-member columns, so it works on a filtered tree as on the loaded one.

use std::fmt;

use crate::app::command::{Command, Input, ParseError};
use crate::app::{App, CmdError};
use crate::ensemble::{restat, Stats};

pub fn parse(i: &Input) -> Result<Command, ParseError> {
    match i.args {
        [v] => Stats::parse(&v.text)
            .map(Command::Stats)
            .ok_or_else(|| Input::at(v, "expected zero or present")),
        [_, t, ..] => Err(Input::too_many(t)),
        [] => Err(i.missing("usage: stats zero | present")),
    }
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::Stats(m) => write!(f, "stats {}", m.name()),
        _ => f.write_str(c.name()),
    }
}

impl App {
    pub(in crate::app) fn set_stats(&mut self, mode: Stats) -> Result<Option<Command>, CmdError> {
        let members = crate::app::compare::member_labels(self.original().1);
        if members.is_empty() {
            return Err("stats: this is not an ensemble (no statistics columns)".into());
        }
        // Both readers put a `summary` member (the sum over threads) in the ensemble.
        let hpc = matches!(
            self.profile.source.format,
            crate::model::Format::HpcToolkit | crate::model::Format::Cube
        );
        self.keep_original();
        restat(&mut self.profile.metrics, &members, hpc, mode);
        self.stats = mode;
        self.refresh_metric();
        self.resort();
        self.info(match mode {
            Stats::Zero => {
                "statistics: a node a profile lacks counts as 0 there (additive metrics)"
            }
            Stats::Present => "statistics: over the profiles that have the node",
        });
        Ok(Some(Command::Stats(mode)))
    }
}
