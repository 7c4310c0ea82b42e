//! The traces of an ensemble's members, for the kernel and summary panels.
//!
//! An ensemble keeps its members' trees, not their events (the events of every rank
//! at once would not fit), so two traces opened together (`grove base.json
//! test.json`) had no kernel table: the panel said "no GPU activity" of two traces
//! full of kernels. A small ensemble of traces (at most `MAX_MEMBERS`) now reads its
//! members' events again on a thread behind the first frame (as a tree opened from the
//! cache does, `background`), keeps each member's event table with its GPU model, and
//! the kernel panel shows the members' tables side by side
//! (`gpu::kernels::side_by_side`: a profile column), the summary panel each member's
//! breakdowns. A larger ensemble says to open one of its members alone.

use std::path::PathBuf;

use super::background::{Events, Pending};
use crate::gpu::classify::Categories;
use crate::gpu::GpuModel;
use crate::model::Profile;

/// The most members whose events an ensemble reads for its GPU panels: comparing runs
/// side by side, not every rank of a job (whose events would not fit).
pub const MAX_MEMBERS: usize = 8;

/// Whether profiles of a format may hold GPU activity in their events: only those are
/// read again for an ensemble's GPU panels.
pub fn records_devices(f: crate::model::Format) -> bool {
    use crate::model::Format as F;
    matches!(
        f,
        F::ChromeTrace
            | F::NsightSqlite
            | F::XPlane
            | F::Rocprof
            | F::PlaidML
            | F::Perfetto
            | F::HpcToolkit
    )
}

/// One member's trace: its label in the ensemble, the profile as loaded (events
/// included) and the GPU model of its events.
pub struct MemberTrace {
    pub label: String,
    pub profile: Profile,
    pub model: GpuModel,
}

impl std::fmt::Debug for MemberTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemberTrace({})", self.label)
    }
}

/// The member traces of the inputs `files` of an ensemble labelled `labels` (in member
/// order: one file per member, or inputs that expand to them in that order): those
/// with GPU activity, possibly none. None when they cannot all be read: more than
/// `MAX_MEMBERS` members, inputs that do not load one profile each, or a member read
/// as a level of detail (low-memory mode), whose single events are not there.
pub fn load(files: &[PathBuf], labels: &[String], cats: &Categories) -> Option<Vec<MemberTrace>> {
    if labels.len() < 2 || labels.len() > MAX_MEMBERS {
        return None;
    }
    let files = crate::load::expand_inputs(files).ok()?;
    if files.len() != labels.len() {
        return None;
    }
    let mut out = Vec::new();
    for (f, label) in files.iter().zip(labels) {
        let p = crate::load::load_path(f).ok()?;
        let Some(ev) = p.events.as_ref() else {
            continue;
        };
        if ev.lod.is_some() {
            return None;
        }
        let model = GpuModel::new(ev, cats.clone());
        if !model.activities.is_empty() {
            out.push(MemberTrace {
                label: label.clone(),
                profile: p,
                model,
            });
        }
    }
    Some(out)
}

/// The member traces an ensemble reads for its GPU panels: each member's file and label.
#[derive(Clone)]
pub struct Plan {
    files: Vec<PathBuf>,
    labels: Vec<String>,
}

impl Plan {
    /// The plan for `p` opened from `files`; None when `p` is not an ensemble of 2 to
    /// `MAX_MEMBERS` traces of a format with GPU activity, or holds one trace's events.
    pub fn of(files: Vec<PathBuf>, p: &Profile) -> Option<Plan> {
        // A trace's own events serve its GPU panels; an ensemble's merged events (kept
        // for the timeline) are several traces', so the members are read for those.
        let merged = p.events.as_ref().is_some_and(|e| e.members.len() > 1);
        if (p.events.is_some() && !merged)
            || !records_devices(p.source.format)
            || crate::memory::low_memory()
        {
            return None;
        }
        let labels = super::compare::member_labels(&p.metrics);
        if labels.len() < 2 || labels.len() > MAX_MEMBERS {
            return None;
        }
        // Each member's file, as the ensemble's metadata records it (`LABEL.file`):
        // the members in label order whatever order the inputs expand to.
        let recorded: Option<Vec<PathBuf>> = labels
            .iter()
            .map(|l| {
                p.meta_value(&format!("{l}.file"))
                    .filter(|f| !f.is_empty())
                    .map(PathBuf::from)
            })
            .collect();
        let files = recorded.unwrap_or(files);
        Some(Plan { files, labels })
    }

    /// Reads the members' traces (`load`).
    pub fn load(self, cats: &Categories) -> Option<Vec<MemberTrace>> {
        load(&self.files, &self.labels, cats)
    }
}

impl Pending {
    /// The member traces of an ensemble without events of its own (`Plan`), read on
    /// a thread behind the first frame; None when there is nothing to read.
    pub fn members(files: Vec<PathBuf>, p: &Profile, categories: Categories) -> Option<Pending> {
        if p.events.is_some() {
            return None;
        }
        let plan = Plan::of(files, p)?;
        let nodes = p.cct.len();
        let (tx, rx) = std::sync::mpsc::channel();
        let start = move || {
            let _ = std::thread::Builder::new()
                .name("members".into())
                .spawn(move || {
                    let members = plan.load(&categories);
                    let _ = tx.send(Ok(Events {
                        events: None,
                        counters: None,
                        nodes,
                        gpu: None,
                        warning: None,
                        members,
                    }));
                });
        };
        Some(Pending {
            rx,
            what: p.source.label.clone(),
            why: "reading the members' traces",
            start: Some(Box::new(start)),
        })
    }
}

impl super::App {
    /// The member traces read (none before they are, or for one profile).
    pub fn members(&self) -> &[MemberTrace] {
        self.member_traces.as_deref().unwrap_or_default()
    }

    /// Gives the app its members' traces (from `load`, or the background load): the
    /// kernel and summary panels show them.
    pub fn set_members(&mut self, members: Vec<MemberTrace>) {
        self.member_traces = Some(members);
        self.summary.clear();
        self.refresh_kernels();
    }
}
