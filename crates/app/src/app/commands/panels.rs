//! The panels and GPU views: panel, kernels, select-kernel, zoom, pan, lanes,
//! next-kernel, prev-kernel, goto-launch. Their handlers live with the panel state
//! (`app::panels`); this file reads and writes their text.

use std::fmt;

use crate::app::command::{
    format_time, parse_time, quote, Command, FlameCmd, FunctionsCmd, Input, KernelsSpec, PanelMove,
    ParseError, Token, ZoomSpec,
};
use crate::app::panels::{expected_panel, PanelId};

pub fn parse_panel(i: &Input) -> Result<Command, ParseError> {
    match i.args {
        [t] => Ok(Command::Panel(match t.text.as_str() {
            "next" => PanelMove::Next,
            "prev" => PanelMove::Prev,
            w => match PanelId::parse(w) {
                Some(p) => PanelMove::To(p),
                None => return Err(Input::at(t, expected_panel())),
            },
        })),
        [_, t, ..] => Err(Input::too_many(t)),
        [] => Err(i.missing("expected a panel")),
    }
}

pub fn parse_flame(i: &Input) -> Result<Command, ParseError> {
    const MSG: &str = "expected zoom [PATH], out, flip, colour BY, left or right";
    let f = match i.args {
        [w, a] if w.text == "colour" || w.text == "color" => match a.text.as_str() {
            "heat" | "kind" | "module" | "next" => FlameCmd::Colour(a.text.clone()),
            _ => return Err(Input::at(a, "expected heat, kind, module or next")),
        },
        [w] if w.text == "colour" || w.text == "color" => {
            return Err(i.missing("expected heat, kind, module or next"))
        }
        [w, _, t, ..] if w.text == "colour" || w.text == "color" => return Err(Input::too_many(t)),
        [w, ..] if w.text == "zoom" => {
            let rest = &i.args[1..];
            FlameCmd::Zoom(match rest {
                [] => None,
                [p] => Some(p.text.clone()),
                [first, ..] => Some(i.text[first.pos..].trim_end().to_string()),
            })
        }
        _ => match i.word(&["out", "flip", "left", "right"], MSG)? {
            "out" => FlameCmd::Out,
            "flip" => FlameCmd::Flip,
            "left" => FlameCmd::Left,
            _ => FlameCmd::Right,
        },
    };
    Ok(Command::Flame(f))
}

pub fn parse_functions(i: &Input) -> Result<Command, ParseError> {
    const MSG: &str = "expected sort COLUMN, focus SIDE, enter, tree or graph";
    let f = match i.args {
        [w] if w.text == "enter" => FunctionsCmd::Enter,
        [w] if w.text == "tree" => FunctionsCmd::Tree,
        [w] if w.text == "graph" => FunctionsCmd::Graph,
        [w, a] if w.text == "sort" => match a.text.as_str() {
            "next" | "self" | "inclusive" | "calls" | "name" => FunctionsCmd::Sort(a.text.clone()),
            _ => {
                return Err(Input::at(
                    a,
                    "expected next, self, inclusive, calls or name",
                ))
            }
        },
        [w, a] if w.text == "focus" => match a.text.as_str() {
            "next" | "table" | "callers" | "callees" => FunctionsCmd::Focus(a.text.clone()),
            _ => return Err(Input::at(a, "expected next, table, callers or callees")),
        },
        [w] if w.text == "sort" || w.text == "focus" => return Err(i.missing(MSG)),
        [w, ..]
            if matches!(
                w.text.as_str(),
                "enter" | "tree" | "graph" | "sort" | "focus"
            ) =>
        {
            return Err(Input::too_many(&i.args[i.args.len() - 1]))
        }
        [t, ..] => return Err(Input::at(t, MSG)),
        [] => return Err(i.missing(MSG)),
    };
    Ok(Command::Functions(f))
}

pub fn parse_kernels(i: &Input) -> Result<Command, ParseError> {
    let args = i.args;
    let mut spec = KernelsSpec::default();
    let mut k = 0;
    while k < args.len() {
        let key = &args[k];
        let val = args.get(k + 1);
        let bad = |t: Option<&Token>, m: &str| Input::at(t.unwrap_or(key), m);
        match key.text.as_str() {
            "all" => {
                spec.top = Some(None);
                k += 1;
                continue;
            }
            "top" => match val.map(|v| v.text.parse::<usize>()) {
                Some(Ok(n)) => spec.top = Some(Some(n)),
                _ => return Err(bad(val, "expected a row count after top")),
            },
            "by" => match val.map(|v| v.text.as_str()) {
                Some(b @ ("total" | "mean" | "count" | "next")) => spec.by = Some(b.to_string()),
                _ => return Err(bad(val, "expected total, mean, count or next")),
            },
            "memory" => match val.map(|v| v.text.as_str()) {
                Some("on") => spec.memory = Some(true),
                Some("off") => spec.memory = Some(false),
                _ => return Err(bad(val, "expected on or off")),
            },
            "group" => match val.map(|v| v.text.as_str()) {
                Some("name") => spec.by_category = Some(false),
                Some("category") => spec.by_category = Some(true),
                _ => return Err(bad(val, "expected name or category")),
            },
            _ => return Err(bad(None, "expected top, all, by, memory or group")),
        }
        k += 2;
    }
    Ok(Command::Kernels(spec))
}

pub fn parse_summary(i: &Input) -> Result<Command, ParseError> {
    match i.word(
        &["charts", "tables", "toggle"],
        "expected charts, tables or toggle",
    )? {
        "charts" => Ok(Command::Summary(Some(false))),
        "tables" => Ok(Command::Summary(Some(true))),
        _ => Ok(Command::Summary(None)),
    }
}

pub fn parse_select_kernel(i: &Input) -> Result<Command, ParseError> {
    Ok(Command::SelectKernel(match i.args {
        [] => None,
        _ => Some(i.rest("a kernel name")?),
    }))
}

pub fn parse_zoom(i: &Input) -> Result<Command, ParseError> {
    const MSG: &str = "expected in, out, fit, kernel or START END";
    match i.args {
        [t] => Ok(Command::Zoom(match t.text.as_str() {
            "in" => ZoomSpec::In,
            "out" => ZoomSpec::Out,
            "fit" => ZoomSpec::Fit,
            "kernel" => ZoomSpec::Kernel,
            _ => return Err(Input::at(t, MSG)),
        })),
        [a, b] => {
            let ta = parse_time(&a.text).ok_or(Input::at(a, "expected a time such as 12.5ms"))?;
            let tb = parse_time(&b.text).ok_or(Input::at(b, "expected a time such as 14ms"))?;
            if tb <= ta {
                return Err(Input::at(b, "the end must come after the start"));
            }
            Ok(Command::Zoom(ZoomSpec::Window(ta, tb)))
        }
        [_, _, t, ..] => Err(Input::too_many(t)),
        [] => Err(i.missing(MSG)),
    }
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::Panel(PanelMove::To(p)) => write!(f, "panel {}", p.name()),
        Command::Panel(PanelMove::Next) => f.write_str("panel next"),
        Command::Panel(PanelMove::Prev) => f.write_str("panel prev"),
        Command::Kernels(k) => {
            f.write_str("kernels")?;
            match k.top {
                Some(Some(n)) => write!(f, " top {n}")?,
                Some(None) => f.write_str(" all")?,
                None => {}
            }
            if let Some(b) = &k.by {
                write!(f, " by {b}")?;
            }
            if let Some(m) = k.memory {
                write!(f, " memory {}", if m { "on" } else { "off" })?;
            }
            if let Some(c) = k.by_category {
                write!(f, " group {}", if c { "category" } else { "name" })?;
            }
            Ok(())
        }
        Command::SelectKernel(Some(n)) => write!(f, "select-kernel {}", quote(n)),
        Command::Summary(t) => f.write_str(match t {
            Some(true) => "summary tables",
            Some(false) => "summary charts",
            None => "summary toggle",
        }),
        Command::Zoom(ZoomSpec::Window(a, b)) => {
            write!(f, "zoom {} {}", format_time(*a), format_time(*b))
        }
        Command::Zoom(z) => f.write_str(match z {
            ZoomSpec::In => "zoom in",
            ZoomSpec::Out => "zoom out",
            ZoomSpec::Fit => "zoom fit",
            _ => "zoom kernel",
        }),
        Command::Flame(FlameCmd::Zoom(Some(p))) => write!(f, "flame zoom {}", quote(p)),
        Command::Flame(FlameCmd::Colour(c)) => write!(f, "flame colour {c}"),
        Command::Flame(x) => f.write_str(match x {
            FlameCmd::Zoom(_) => "flame zoom",
            FlameCmd::Out => "flame out",
            FlameCmd::Flip => "flame flip",
            FlameCmd::Colour(_) => "flame colour",
            FlameCmd::Left => "flame left",
            FlameCmd::Right => "flame right",
        }),
        Command::Functions(x) => match x {
            FunctionsCmd::Sort(c) => write!(f, "functions sort {c}"),
            FunctionsCmd::Focus(s) => write!(f, "functions focus {s}"),
            FunctionsCmd::Enter => f.write_str("functions enter"),
            FunctionsCmd::Tree => f.write_str("functions tree"),
            FunctionsCmd::Graph => f.write_str("functions graph"),
        },
        Command::Pan(right) => write!(f, "pan {}", if *right { "right" } else { "left" }),
        Command::Lanes(all) => f.write_str(if *all { "lanes all" } else { "lanes gpu" }),
        _ => f.write_str(c.name()),
    }
}
