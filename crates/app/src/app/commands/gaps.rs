//! The idle-gap commands of the timeline: `gap next|prev [MIN]`, `gap at LANE TIME`
//! and `gaps [N] [--min DUR]`. Their handlers live with the timeline panel
//! (`app::panels::gaps`); this file reads and writes their text.

use std::fmt;

use crate::app::command::{format_time, parse_time, quote, Command, GapSpec, Input, ParseError};

/// Rows per stream that `gaps` lists when no count is given.
pub const DEFAULT_ROWS: usize = 10;

pub fn parse_gap(i: &Input) -> Result<Command, ParseError> {
    const MSG: &str = "expected next, prev or at";
    let dur = |t: &crate::app::command::Token| {
        parse_time(&t.text)
            .filter(|&d| d >= 0)
            .ok_or_else(|| Input::at(t, "expected a length such as 1ms"))
    };
    match i.args {
        [w, rest @ ..] if w.text == "next" || w.text == "prev" => {
            let min = match rest {
                [] => None,
                [m] => Some(dur(m)?),
                [_, t, ..] => return Err(Input::too_many(t)),
            };
            Ok(Command::Gap(GapSpec::Step(w.text == "next", min)))
        }
        [w, lane, t] if w.text == "at" => {
            let at = parse_time(&t.text).ok_or(Input::at(t, "expected a time such as 12.5ms"))?;
            Ok(Command::Gap(GapSpec::At(lane.text.clone(), at)))
        }
        [w, ..] if w.text == "at" => Err(i.missing("expected a lane and a time: gap at LANE TIME")),
        [t, ..] => Err(Input::at(t, MSG)),
        [] => Err(i.missing(MSG)),
    }
}

pub fn parse_gaps(i: &Input) -> Result<Command, ParseError> {
    let mut n = None;
    let mut min = None;
    let mut k = 0;
    while k < i.args.len() {
        let t = &i.args[k];
        if t.text == "--min" {
            let v = i
                .args
                .get(k + 1)
                .ok_or_else(|| i.missing("expected a length after --min, such as 100us"))?;
            min = Some(
                parse_time(&v.text)
                    .filter(|&d| d >= 0)
                    .ok_or_else(|| Input::at(v, "expected a length such as 100us"))?,
            );
            k += 2;
            continue;
        }
        match t.text.parse::<usize>() {
            Ok(v) if v > 0 && n.is_none() => n = Some(v),
            _ => return Err(Input::at(t, "expected a row count or --min LENGTH")),
        }
        k += 1;
    }
    Ok(Command::Gaps {
        n: n.unwrap_or(DEFAULT_ROWS),
        min,
    })
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::Gap(GapSpec::Step(fwd, min)) => {
            f.write_str(if *fwd { "gap next" } else { "gap prev" })?;
            if let Some(m) = min {
                write!(f, " {}", format_time(*m))?;
            }
            Ok(())
        }
        Command::Gap(GapSpec::At(lane, t)) => {
            write!(f, "gap at {} {}", quote(lane), format_time(*t))
        }
        Command::Gaps { n, min } => {
            write!(f, "gaps {n}")?;
            if let Some(m) = min {
                write!(f, " --min {}", format_time(*m))?;
            }
            Ok(())
        }
        _ => f.write_str(c.name()),
    }
}
