//! A tree opened from grove's cache (`summary::cache`) comes without its event table;
//! the full load runs on a thread and its events join the app when they arrive. The
//! tree does not change: a cache entry is the same tree, node for node, as the cold
//! load (both come from the same reader, and the summary keeps node order), so the
//! events' node ids hold and every command already applied stays valid.

use std::sync::mpsc::{Receiver, TryRecvError};

use super::{App, Level, Message};
use crate::model::Profile;

/// A load in flight: where its result arrives, and what it reads (for the status).
pub struct Pending {
    pub rx: Receiver<Result<Profile, String>>,
    pub what: String,
    pub categories: crate::gpu::classify::Categories,
}

impl App {
    /// Whether the event table is still loading.
    pub fn loading(&self) -> bool {
        self.background.is_some()
    }

    /// Takes the background load's result if it has arrived; true when the view changed.
    pub fn poll_background(&mut self) -> bool {
        let Some(p) = &self.background else {
            return false;
        };
        let got = match p.rx.try_recv() {
            Ok(r) => r,
            Err(TryRecvError::Empty) => return false,
            Err(TryRecvError::Disconnected) => Err("the loading thread stopped".to_string()),
        };
        let Some(p) = self.background.take() else {
            return false;
        };
        match got {
            Ok(full) if full.cct.len() == self.original().0.len() => {
                self.profile.events = full.events;
                self.profile.counters = full.counters;
                self.set_categories(p.categories);
                if self.panel == super::command::PanelChoice::Timeline {
                    self.initial_window();
                }
            }
            Ok(_) => {
                self.message = Some(Message {
                    level: Level::Warning,
                    text: format!(
                        "{}: the trace no longer matches its cached tree; reopen it (or use --no-cache)",
                        p.what
                    ),
                    caret: None,
                });
            }
            Err(e) => {
                self.message = Some(Message {
                    level: Level::Error,
                    text: format!("{}: loading the events failed: {e}", p.what),
                    caret: None,
                });
            }
        }
        true
    }
}
