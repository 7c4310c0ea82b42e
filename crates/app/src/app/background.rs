//! The event table arriving behind a tree that is already on screen, with the GPU
//! index built from it (the timeline's lanes, the kernel model, the gaps): the
//! breakdowns and tables that need single events fill in when it arrives.
//!
//! Two loads take this path:
//! - a tree opened from grove's cache (`summary::cache`) comes without its event
//!   table; the full load runs on a thread ([`Pending::full_load`]);
//! - a cold open shows the tree as soon as the CCT and its metrics are built: the
//!   event table it already holds is moved to a thread that builds the GPU index
//!   ([`Pending::index`]), which on a large trace takes seconds.
//!
//! The tree does not change: a cache entry is the same tree, node for node, as the
//! cold load (both come from the same reader, and the summary keeps node order), so
//! the events' node ids hold and every command already applied stays valid.

use std::sync::mpsc::{Receiver, TryRecvError};

use super::panels::GpuState;
use super::{App, Level, Message};
use crate::gpu::classify::Categories;
use crate::model::events::{CounterTable, EventTable};
use crate::model::Profile;

/// What a background load hands over: the events, and the GPU index built from them
/// on the loading thread (so the event loop never stalls building it).
pub struct Events {
    pub events: Option<EventTable>,
    pub counters: Option<CounterTable>,
    /// The number of nodes of the tree the events point into (`EventTable::node`).
    pub nodes: usize,
    /// The GPU index of `events` with the categories it was built for.
    pub gpu: Option<GpuState>,
    /// A warning from work done on the same thread (writing the cache entry).
    pub warning: Option<String>,
    /// An ensemble's member traces (`members::load`), for its GPU panels.
    pub members: Option<Vec<super::members::MemberTrace>>,
}

impl Events {
    /// The events of `p` with their GPU index, built here (on the loading thread).
    pub fn indexed(p: Profile, categories: Categories) -> Events {
        let gpu = p
            .events
            .as_ref()
            .and_then(|ev| GpuState::new(ev, categories));
        Events {
            nodes: p.cct.len(),
            events: p.events,
            counters: p.counters,
            gpu,
            warning: None,
            members: None,
        }
    }
}

/// A load in flight: where its result arrives, and what it reads (for the status).
pub struct Pending {
    pub rx: Receiver<Result<Events, String>>,
    pub what: String,
    /// Why the events are not there yet, for the panels that wait for them
    /// ("the tree came from the cache").
    pub why: &'static str,
    /// Work not started yet: it starts at the first poll, after the first frame, so
    /// that it does not compete with that frame for the processor.
    pub start: Option<Box<dyn FnOnce() + Send>>,
}

impl Pending {
    /// The full load of a trace whose tree came from the cache, on a thread started
    /// after the first frame: started before it, the load competed with that frame for
    /// the processor and its first hundred megabytes were resident by then (issue 30).
    pub fn full_load(path: std::path::PathBuf, categories: Categories) -> Pending {
        let (tx, rx) = std::sync::mpsc::channel();
        let what = path.display().to_string();
        let start = move || {
            std::thread::spawn(move || {
                let r = crate::load::load_path(&path)
                    .map(|p| Events::indexed(p, categories))
                    .map_err(|e| e.to_string());
                // The app may have quit (and dropped the receiver) meanwhile.
                let _ = tx.send(r);
            });
        };
        Pending {
            rx,
            what,
            why: "the tree came from the cache",
            start: Some(Box::new(start)),
        }
    }

    /// A cold load's events taken out of `p` and indexed on a thread, so the tree
    /// shows before the GPU index is built; None when `p` has no events (nothing to
    /// wait for).
    pub fn index(p: &mut Profile, categories: Categories) -> Option<Pending> {
        p.events.as_ref()?;
        Pending::index_then(p, categories, || None)
    }

    /// `index`, with `after` (the cold load's cache write, `load::store_later`)
    /// running beside it; the events arrive when both are done, with its warning.
    pub fn index_then(
        p: &mut Profile,
        categories: Categories,
        after: impl FnOnce() -> Option<String> + Send + 'static,
    ) -> Option<Pending> {
        Pending::index_and_members(p, categories, after, None)
    }

    /// `index_then`, and when `members` is given (an ensemble of a few traces whose
    /// merged events are the timeline's, `members::plan`), the members' own traces
    /// read on the same thread for the kernel and summary panels.
    pub fn index_and_members(
        p: &mut Profile,
        categories: Categories,
        after: impl FnOnce() -> Option<String> + Send + 'static,
        members: Option<super::members::Plan>,
    ) -> Option<Pending> {
        let nodes = p.cct.len();
        let (tx, rx) = std::sync::mpsc::channel();
        let counters = p.counters.take();
        let what = p.source.label.clone();
        let Some(events) = p.events.take() else {
            // No events: only the cache write, whose warning must still be shown.
            let start = move || {
                std::thread::spawn(move || {
                    let warning = after();
                    let members = members.and_then(|m| m.load(&categories));
                    let _ = tx.send(Ok(Events {
                        events: None,
                        counters,
                        nodes,
                        gpu: None,
                        warning,
                        members,
                    }));
                });
            };
            return Some(Pending {
                rx,
                what,
                why: "writing grove's cache",
                start: Some(Box::new(start)),
            });
        };
        let start = move || {
            // A thread that cannot start drops the sender: the poll reports it.
            let _ = std::thread::Builder::new()
                .name("index".into())
                .spawn(move || {
                    // Both at once; the events arrive when both are done, with the
                    // cache write's warning.
                    let writer = std::thread::spawn(after);
                    let gpu = GpuState::new(&events, categories.clone());
                    let members = members.and_then(|m| m.load(&categories));
                    let warning = writer.join().unwrap_or_default();
                    let _ = tx.send(Ok(Events {
                        events: Some(events),
                        counters,
                        nodes,
                        gpu,
                        warning,
                        members,
                    }));
                });
        };
        Some(Pending {
            rx,
            what,
            why: "indexing the events",
            start: Some(Box::new(start)),
        })
    }
}

impl App {
    /// Whether the event table is still loading.
    pub fn loading(&self) -> bool {
        self.background.is_some()
    }

    /// Why the events are not there yet ("" when they are).
    pub fn loading_why(&self) -> &'static str {
        self.background.as_ref().map(|p| p.why).unwrap_or_default()
    }

    /// What the panels waiting for the events say meanwhile.
    pub fn loading_note(&self) -> String {
        match &self.background {
            Some(p) => format!("loading the events ({})…", p.why),
            None => String::new(),
        }
    }

    /// Takes the background load's result if it has arrived; true when the view changed.
    pub fn poll_background(&mut self) -> bool {
        let Some(p) = &mut self.background else {
            return false;
        };
        if let Some(start) = p.start.take() {
            start();
        }
        let got = match p.rx.try_recv() {
            Ok(r) => r,
            Err(TryRecvError::Empty) => return false,
            Err(TryRecvError::Disconnected) => Err("the loading thread stopped".to_string()),
        };
        let Some(p) = self.background.take() else {
            return false;
        };
        match got {
            Ok(full) if full.nodes == self.original().0.len() => {
                self.profile.events = full.events;
                self.profile.counters = full.counters;
                self.gpu = full.gpu;
                if let Some(g) = &self.gpu {
                    self.kernels.categories = Some(g.model.categories.clone());
                }
                if let Some(m) = full.members {
                    self.member_traces = Some(m);
                }
                self.summary.clear();
                self.refresh_kernels();
                if self.panel.is(&super::panels::timeline::Timeline) {
                    self.initial_window();
                }
                if let Some(text) = full.warning {
                    self.message = Some(Message {
                        level: Level::Warning,
                        text,
                        caret: None,
                    });
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
