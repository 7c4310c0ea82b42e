//! Tracks: what `TrackDescriptor`s say (a thread's, a process's, a counter's, or a named
//! track under one of them), the slices still open on each, and at the end the lane of
//! the event table each track becomes: a thread track is its thread (pid, tid), any other
//! track a lane of its own named after the track (async slices, rocprofv3's GPU queues).

use std::collections::HashMap;

use super::proto::{ProcessDescriptor, ThreadDescriptor, TrackDescriptor};
use crate::model::events::EventKind;
use crate::model::intern::FxBuild;

/// What identifies a track: a descriptor's uuid, or a legacy event's thread or async id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Uuid(u64),
    /// A thread named by a legacy thread descriptor or `pid_override`/`tid_override`.
    Thread(i32, i64),
    /// A legacy async slice (`b`/`e`, `S`/`F`): its category and id.
    Async(u32, u64),
}

/// A slice whose end has not come yet.
#[derive(Debug, Clone, Copy)]
pub struct Open {
    pub name: u32,
    pub cat: u32,
    pub kind: EventKind,
    pub ts: i64,
    pub seq: u32,
    pub args: u32,
    pub correlation: i64,
    /// Its row when pushed at its begin (`push_begun`), else NONE_U32.
    pub row: u32,
}

pub struct Track {
    pub key: Key,
    pub desc: Option<TrackDescriptor>,
    pub open: Vec<Open>,
    /// The running value of an incremental counter.
    pub counter: f64,
    pub last_ts: i64,
    /// Holds GPU activity (rocprofv3's kernel dispatch and memory copy tracks).
    pub gpu: bool,
    pub events: u64,
}

#[derive(Default)]
pub struct Tracks {
    pub list: Vec<Track>,
    index: HashMap<Key, u32, FxBuild>,
    /// Processes and threads that legacy descriptor packets name.
    pub processes: HashMap<i32, ProcessDescriptor>,
    pub threads: HashMap<(i32, i64), String>,
    /// The last key asked for and its track: events come in runs on one track.
    last: Option<(Key, u32)>,
    /// The one asked for before it: counter values of two tracks (the SDK's common
    /// packets name each counter's track) alternate, and hashed a key each.
    before: Option<(Key, u32)>,
}

impl Tracks {
    #[inline]
    pub fn get(&mut self, key: Key) -> u32 {
        if let Some((k, i)) = self.last {
            if k == key {
                return i;
            }
        }
        if let Some((k, i)) = self.before {
            if k == key {
                self.before = self.last;
                self.last = Some((key, i));
                return i;
            }
        }
        self.before = self.last;
        if let Some(&i) = self.index.get(&key) {
            self.last = Some((key, i));
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(Track {
            key,
            desc: None,
            open: Vec::new(),
            counter: 0.0,
            last_ts: i64::MIN,
            gpu: false,
            events: 0,
        });
        self.index.insert(key, i);
        self.last = Some((key, i));
        i
    }

    pub fn describe(&mut self, t: TrackDescriptor) {
        let i = self.get(Key::Uuid(t.uuid.unwrap_or(0))) as usize;
        if let Some(p) = &t.process {
            if let Some(pid) = p.pid {
                let known = self.processes.entry(pid).or_default();
                merge_process(known, p);
            }
        }
        self.list[i].desc = Some(t);
    }

    pub fn legacy_thread(&mut self, t: &ThreadDescriptor) {
        if let Some(n) = t.thread_name.as_ref().filter(|n| !n.is_empty()) {
            self.threads
                .insert((t.pid.unwrap_or(0), t.tid.unwrap_or(0)), n.clone());
        }
    }

    pub fn legacy_process(&mut self, p: ProcessDescriptor) {
        if let Some(pid) = p.pid {
            merge_process(self.processes.entry(pid).or_default(), &p);
        }
    }

    /// The descriptor's name, whichever of its three name fields it uses.
    pub fn name(&self, i: usize) -> Option<&str> {
        let d = self.list[i].desc.as_ref()?;
        d.name
            .as_deref()
            .or(d.static_name.as_deref())
            .or(d.atrace_name.as_deref())
            .filter(|n| !n.is_empty())
    }

    fn parent(&self, i: usize) -> Option<usize> {
        let p = self.list[i].desc.as_ref()?.parent_uuid?;
        self.index.get(&Key::Uuid(p)).map(|&x| x as usize)
    }

    /// The nearest track, this one or an ancestor, with a thread or a process; at most
    /// 64 steps (a parent cycle in damaged input ends there).
    fn owner(&self, i: usize) -> Option<(i32, Option<i64>)> {
        let mut at = i;
        for _ in 0..64 {
            if let Some(d) = &self.list[at].desc {
                if let Some(t) = &d.thread {
                    return Some((t.pid.unwrap_or(0), Some(t.tid.unwrap_or(0))));
                }
                if let Some(p) = &d.process {
                    return Some((p.pid.unwrap_or(0), None));
                }
            }
            at = self.parent(at)?;
        }
        None
    }

    /// The lane of track `i`: (pid text, tid text, label). A thread track is its thread;
    /// any other track is a lane of its own under its process (if any), labelled with
    /// its name.
    pub fn lane(&self, i: usize) -> (String, String, Option<String>) {
        let own_thread = self.list[i].desc.as_ref().and_then(|d| d.thread.as_ref());
        if let Some(t) = own_thread {
            let (pid, tid) = (t.pid.unwrap_or(0), t.tid.unwrap_or(0));
            let label = t
                .thread_name
                .clone()
                .filter(|n| !n.is_empty())
                .or_else(|| self.name(i).map(str::to_string))
                .or_else(|| self.threads.get(&(pid, tid)).cloned());
            return (pid.to_string(), tid.to_string(), label);
        }
        match self.list[i].key {
            Key::Thread(pid, tid) => (
                pid.to_string(),
                tid.to_string(),
                self.threads.get(&(pid, tid)).cloned(),
            ),
            Key::Async(..) => (String::new(), format!("async {i}"), None),
            Key::Uuid(uuid) => {
                let pid = self
                    .owner(i)
                    .map(|(p, _)| p.to_string())
                    .unwrap_or_default();
                let label = match (self.name(i), &self.list[i].desc) {
                    (Some(n), _) => n.to_string(),
                    (None, Some(d)) if d.process.is_some() => "process-scoped slices".into(),
                    (None, Some(_)) => "unnamed track".into(),
                    // Events on track 0 without a descriptor: the SDK's global track.
                    (None, None) if uuid == 0 => "global track".into(),
                    (None, None) => format!("track {uuid} (no descriptor)"),
                };
                (pid, format!("track {i}"), Some(label))
            }
        }
    }

    /// The name a process is shown by: its name, else its command, else Chrome's
    /// process type.
    pub fn process_name(p: &ProcessDescriptor) -> Option<String> {
        if let Some(n) = p.process_name.as_ref().filter(|n| !n.is_empty()) {
            return Some(n.clone());
        }
        let cmd = p.cmdline.first()?;
        let exe = cmd.split_whitespace().next().unwrap_or(cmd);
        Some(exe.rsplit('/').next().unwrap_or(exe).to_string())
    }

    pub fn undescribed(&self) -> usize {
        self.list
            .iter()
            .filter(|t| matches!(t.key, Key::Uuid(u) if u != 0) && t.desc.is_none() && t.events > 0)
            .count()
    }
}

fn merge_process(known: &mut ProcessDescriptor, p: &ProcessDescriptor) {
    known.pid = p.pid;
    if p.process_name.as_ref().is_some_and(|n| !n.is_empty()) {
        known.process_name = p.process_name.clone();
    }
    if !p.cmdline.is_empty() {
        known.cmdline = p.cmdline.clone();
    }
}

/// rocprofv3's device lanes name their GPU: `COMPUTE AGENT [2] QUEUE [0] (GPU)`,
/// `COMPUTE GPU [0] QUEUE [1] GPU`, `COPY to AGENT [1] THREAD [0] (GPU)`: the first
/// bracketed number.
pub fn device_of(name: &str) -> Option<i64> {
    let open = name.find('[')?;
    let close = open + name[open..].find(']')?;
    name[open + 1..close].trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers() {
        assert_eq!(device_of("COMPUTE AGENT [2] QUEUE [0] (GPU)"), Some(2));
        assert_eq!(device_of("COPY to AGENT [1] THREAD [0] (GPU)"), Some(1));
        assert_eq!(device_of("COMPUTE GPU [0] QUEUE [1] GPU"), Some(0));
        assert_eq!(device_of("main"), None);
        assert_eq!(device_of("x ]["), None);
    }
}
