//! Comparing profiles: heatmap, diff, meta. Their handlers live with the heatmap
//! state (`app::compare`); this file reads and writes their text.

use std::fmt;

use super::Log;
use crate::app::command::{quote, Command, Input, ParseError};

pub fn parse_heatmap(i: &Input) -> Result<Command, ParseError> {
    const MSG: &str = "expected norm MODE, sort or column next|prev";
    match i.args {
        [t, v] if t.text == "norm" => match v.text.as_str() {
            "row" | "column" | "global" | "zscore" | "next" => {
                Ok(Command::HeatmapNorm(v.text.clone()))
            }
            _ => Err(Input::at(v, "expected row, column, global, zscore or next")),
        },
        [t] if t.text == "sort" => Ok(Command::HeatmapSort),
        [t, v] if t.text == "column" && (v.text == "next" || v.text == "prev") => {
            Ok(Command::HeatmapColumn(v.text == "next"))
        }
        [t, ..] => Err(Input::at(t, MSG)),
        [] => Err(i.missing(MSG)),
    }
}

/// Moving the column cursor is navigation; the other forms change the view.
pub fn heatmap_log(c: &Command) -> Log {
    match c {
        Command::HeatmapColumn(_) => Log::Nav,
        _ => Log::View,
    }
}

pub fn parse_diff(i: &Input) -> Result<Command, ParseError> {
    match i.args {
        [a, b] => Ok(Command::Diff(a.text.clone(), b.text.clone())),
        [_, _, t, ..] => Err(Input::too_many(t)),
        _ => Err(i.missing("usage: diff A B (two ensemble labels)")),
    }
}

pub fn parse_meta(i: &Input) -> Result<Command, ParseError> {
    const USAGE: &str = "usage: meta KEY = VALUE | KEY ~ REGEX | off";
    match i.args {
        [t] if t.text == "off" => Ok(Command::MetaFilter(None)),
        [] => Err(i.missing(USAGE)),
        _ => {
            let (e, at) = i.raw_rest();
            if !(e.contains('=') || e.contains('~')) {
                return Err(ParseError {
                    pos: at,
                    len: e.len(),
                    msg: USAGE.into(),
                });
            }
            Ok(Command::MetaFilter(Some(e.to_string())))
        }
    }
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::HeatmapNorm(m) => write!(f, "heatmap norm {m}"),
        Command::HeatmapSort => f.write_str("heatmap sort"),
        Command::HeatmapColumn(next) => {
            write!(f, "heatmap column {}", if *next { "next" } else { "prev" })
        }
        Command::Diff(a, b) => write!(f, "diff {} {}", quote(a), quote(b)),
        Command::MetaFilter(None) => f.write_str("meta off"),
        Command::MetaFilter(Some(e)) => write!(f, "meta {e}"),
        _ => f.write_str(c.name()),
    }
}
