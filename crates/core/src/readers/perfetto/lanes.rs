//! The end of a read: slices still open are closed at the trace's end (and marked
//! unended, as the Chrome reader does), every track becomes its lane (its pid and tid
//! columns were the track's index until now), GPU tracks become device lanes with a
//! device and stream, counter samples get their track's name, and flows their ends.

use std::collections::{HashMap, HashSet};

use super::packets::Decoder;
use super::tracks::{device_of, Tracks};
use crate::model::events::Sparse;
use crate::model::intern::FxBuild;
use crate::readers::chrome::Flows;

/// Each track's lane: interned pid and tid, and for GPU tracks the device and stream.
struct Lane {
    pid: u32,
    tid: u32,
    gpu: Option<(i64, i64)>,
}

impl Decoder {
    pub fn finish(&mut self) {
        self.close_open();
        // Rows were pushed with their track as their pid alone (`push_own`).
        self.tr.events.tid = self.tr.events.pid.clone();
        self.tr.events.fill_optional();
        let lanes = self.lanes();
        let ev = &mut self.tr.events;
        let n = ev.len();
        // GPU rows on GPU tracks take their device and stream; every other row none.
        let (mut device, mut stream) = (Sparse::new(), Sparse::new());
        for &r in &self.gpu_lane_rows {
            let r = r as usize;
            if let Some((d, s)) = lanes[ev.tid[r] as usize].gpu {
                device.resize_none(r);
                device.push(d);
                stream.resize_none(r);
                stream.push(s);
            }
        }
        device.resize_none(n);
        stream.resize_none(n);
        (ev.device, ev.stream) = (device, stream);
        // The pid and tid columns hold each row's track: its lane's, by distinct value.
        let lane = |t: u32| lanes.get(t as usize);
        ev.pid.map_values(|t| lane(t).map_or(t, |l| l.pid));
        ev.tid.map_values(|t| lane(t).map_or(t, |l| l.tid));
        self.gpu_lane_rows = Vec::new();
        self.name_counters(&lanes);
        self.link_flows(&lanes);
        self.tr.events.shrink_to_fit();
        self.tr.counters.shrink_to_fit();
        // The columns' earlier, smaller blocks (left as each grew) lie free in glibc's
        // heap, touched: handed back before the tree adds its columns at the load's
        // peak (issue 29).
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only releases free memory of the allocator's arenas.
        unsafe {
            libc::malloc_trim(0);
        }
    }

    /// Slices whose end is not in the file run to the trace's end and count no time of
    /// their own (`ChromeTrace::unended`); trace_processor leaves them open (dur -1).
    fn close_open(&mut self) {
        let end = self.max_ts;
        let mut open = Vec::new();
        for (i, t) in self.tracks.list.iter_mut().enumerate() {
            open.extend(t.open.drain(..).map(|o| (i as u32, o)));
        }
        open.sort_by_key(|(_, o)| o.seq);
        for (track, o) in open {
            self.stats.unclosed += 1;
            self.tr.unended.push(o.seq);
            self.end(track, o, end.saturating_sub(o.ts).max(0));
        }
    }

    fn lanes(&mut self) -> Vec<Lane> {
        let strings = &mut self.tr.events.strings;
        let tracks = &self.tracks;
        // GPU tracks are numbered as streams per device, in track order.
        let mut streams: HashMap<i64, i64, FxBuild> = HashMap::default();
        let mut out = Vec::with_capacity(tracks.list.len());
        for (i, t) in tracks.list.iter().enumerate() {
            if t.gpu {
                let name = tracks.name(i).unwrap_or("GPU track").to_string();
                let d = device_of(&name).unwrap_or(0);
                let next = streams.entry(d).or_default();
                let s = *next;
                *next += 1;
                let (pid, tid) = (
                    strings.intern(&d.to_string()),
                    strings.intern(&format!("stream {s}")),
                );
                self.tr.thread_names.insert((pid, tid), name);
                self.tr
                    .process_names
                    .entry(pid)
                    .or_insert_with(|| format!("GPU {d}"));
                out.push(Lane {
                    pid,
                    tid,
                    gpu: Some((d, s)),
                });
                continue;
            }
            let (p, th, label) = tracks.lane(i);
            let (pid, tid) = (strings.intern(&p), strings.intern(&th));
            if let Some(l) = label {
                self.tr.thread_names.insert((pid, tid), l);
            }
            out.push(Lane {
                pid,
                tid,
                gpu: None,
            });
        }
        for (pid, d) in &tracks.processes {
            if let Some(n) = Tracks::process_name(d) {
                let id = strings.intern(&pid.to_string());
                self.tr.process_names.insert(id, n);
            }
        }
        out
    }

    /// Counter samples: named after their track, in their lane's process.
    fn name_counters(&mut self, lanes: &[Lane]) {
        let c = &mut self.tr.counters;
        let strings = &mut self.tr.events.strings;
        let mut names: HashMap<u32, (u32, u32), FxBuild> = HashMap::default();
        for k in 0..c.name.len() {
            let i = c.name[k] as usize;
            let (name, series) = *names.entry(i as u32).or_insert_with(|| {
                let name = self.tracks.name(i).unwrap_or("counter").to_string();
                // The thread or process the counter belongs to, when it has a parent.
                let owner = self.tracks.list[i]
                    .desc
                    .as_ref()
                    .and_then(|d| d.parent_uuid)
                    .and_then(|_| self.tr.thread_names.get(&(lanes[i].pid, lanes[i].tid)))
                    .cloned()
                    .unwrap_or_else(|| name.clone());
                (strings.intern(&name), strings.intern(&owner))
            });
            c.name[k] = name;
            c.series[k] = series;
            c.pid[k] = lanes[i].pid;
        }
    }

    /// Flows (`flow_ids`): the first event that names an id starts it, the later ones
    /// end it, as Chrome JSON `s`/`f` pairs do; GPU activity without a correlation finds
    /// its launch through them.
    fn link_flows(&mut self, lanes: &[Lane]) {
        let mut seen: HashSet<i64, FxBuild> = HashSet::default();
        let mut starts = Vec::new();
        let mut ends = Vec::new();
        for &(id, track, ts) in &self.flows {
            let l = &lanes[track as usize];
            let id = id as i64;
            if seen.insert(id) {
                starts.push((id, (l.pid, l.tid, ts)));
            } else {
                ends.push(((l.pid, l.tid, ts), id));
            }
        }
        self.tr.flows = Flows::from_lists(starts, ends);
        self.flows = Vec::new();
    }
}
