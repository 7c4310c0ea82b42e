//! The undo stack and files: undo, redo, reset, pop-filter, source, export, save.
//! The stack holds parsed commands and, next to them, checkpoints (`app::undo`):
//! undo and pop-filter put the view back from those; past what the memory budget
//! kept, they rebuild it from the loaded tree by applying the parsed commands again.

use std::fmt;

use crate::app::command::{quote, Command, Input, ParseError};
use crate::app::panels::PANELS;
use crate::app::{paths, App, CmdError};
use crate::export::formats;

pub fn parse_export(i: &Input) -> Result<Command, ParseError> {
    match i.args {
        [f, p] => {
            // The formats with a tree writer; any other is refused, naming those.
            let Some(format) = formats::Format::named(&f.text).filter(|f| f.spec().tree.is_some())
            else {
                let names = formats::list(formats::exportable().map(|s| s.name));
                return Err(Input::at(f, format!("expected {names}")));
            };
            Ok(Command::Export {
                format,
                path: p.text.clone(),
            })
        }
        [_, _, t, ..] => Err(Input::too_many(t)),
        _ => Err(i.missing(format!("usage: export {} FILE", formats::EXPORT_NAMES))),
    }
}

pub fn print(c: &Command, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Command::Source(p) | Command::Save(p) => write!(f, "{} {}", c.name(), quote(p)),
        Command::Export { format, path } => {
            write!(f, "export {} {}", format.name(), quote(path))
        }
        _ => f.write_str(c.name()),
    }
}

impl App {
    pub(super) fn session_command(&mut self, cmd: Command) -> Result<Option<Command>, CmdError> {
        let logged = cmd.clone();
        match cmd {
            Command::Undo => {
                let last = self.undo_last()?;
                let text = last.to_string();
                self.redo.push(last);
                self.info(format!("undid: {text}"));
            }
            Command::Redo => {
                let Some(next) = self.redo.pop() else {
                    return Err("nothing to redo".into());
                };
                let text = next.to_string();
                if self.replaying {
                    self.apply(next)?;
                } else {
                    self.apply_undoable(next)?;
                }
                self.info(format!("redid: {text}"));
            }
            Command::Reset => {
                self.applied.clear();
                self.redo.clear();
                self.clear_checkpoints_from(0);
                self.replay_applied()?;
                self.info("back to the tree as loaded");
            }
            Command::PopFilter => {
                let Some(i) = self.applied.iter().rposition(Command::is_filter_like) else {
                    return Err("no filter to pop".into());
                };
                let popped = self.remove_applied(i)?;
                self.info(format!("popped: {popped}"));
            }
            Command::Source(file) => {
                self.source(&self.resolve_path(&file))?;
                return Ok(None);
            }
            Command::Export { format, path } => {
                let p = self.resolve_path(&path);
                self.export(format, &p)
                    .map_err(|e| CmdError::plain(format!("{}: {e}", p.display())))?;
                self.info(format!("wrote {}", p.display()));
                return Ok(None);
            }
            Command::Save(path) => {
                let p = self.resolve_path(&path);
                self.save(&p)
                    .map_err(|e| CmdError::plain(format!("{}: {e}", p.display())))?;
                self.info(format!("saved the session to {}", p.display()));
                return Ok(None);
            }
            other => return Err(format!("{other} is not a session command").into()),
        }
        Ok(Some(logged))
    }

    /// Rebuilds the view from the loaded tree by re-applying `applied` (reset, and
    /// undo past the checkpoints the memory budget kept).
    pub(in crate::app) fn replay_applied(&mut self) -> Result<(), CmdError> {
        let keep = self.tree.selected().map(|n| self.path_of(n));
        let (cct, metrics) = {
            let (c, m) = self.original();
            (c.clone(), m.clone())
        };
        crate::app::reshape::drop_elsewhere(std::mem::replace(&mut self.profile.cct, cct));
        self.profile.metrics = metrics;
        // The view starts afresh; each panel carries over what is not view state.
        let mut was = std::mem::take(&mut self.view);
        for p in PANELS {
            p.reset(&mut was, &mut self.view);
        }
        self.default_markers();
        self.refresh_kernels();
        self.initial_view();
        self.replaying = true;
        let cmds = self.applied.clone();
        let mut result = Ok(());
        for c in cmds {
            let text = c.to_string();
            if let Err(e) = self.apply(c) {
                result = Err(CmdError::plain(format!("replaying {text:?}: {}", e.msg)));
                break;
            }
        }
        self.replaying = false;
        if let Some(p) = keep {
            if let Ok(n) = paths::resolve(&self.profile.cct, &p) {
                self.tree.reveal(n);
            }
        }
        result
    }
}
