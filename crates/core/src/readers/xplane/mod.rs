//! TensorFlow/JAX XPlane: the `XSpace` protobuf (`*.xplane.pb`) that TensorBoard's
//! profiler, XProf and `jax.profiler` write.
//!
//! An XSpace holds planes: `/host:CPU` (one line per host thread, TraceMe events) and
//! one `/device:GPU:N` (or TPU) per device, whose lines are streams (`Stream #134
//! (Compute)`) plus lines the profiler derives from them (`TensorFlow Ops`, `XLA Ops`,
//! `Steps`, ...). Every event names an event metadata (its name) and carries stats
//! whose names are stat metadata; a `ref` stat's value is another stat metadata's name.
//!
//! The planes become an event table as a Kineto trace's would (host lines are CPU
//! threads, device streams are GPU lanes with `device` = N and `stream` = the line id),
//! so the tree, the kernel chart and the timeline work as for Kineto; the CCT comes from
//! `trace_cct::build`. Device events are kernels, or copies/sets when their names say
//! so (`MemcpyH2D`, `Memset`); their stats are kept as args (`tf_op`, `hlo_op`,
//! `hlo_module`, `kernel_details`, ...). Kernels whose launch is not in the file are
//! grouped under their framework op (`tf_op`, else TensorFlow's `level 0` annotation
//! up to its first `#`) and XLA op (`hlo_op`). Derived lines repeat the stream events
//! and are kept as GPU annotation rows of the timeline, out of the tree. Host events
//! named like CUDA/HIP API calls with a `correlation_id` stat are runtime calls, so the
//! kernels they launched hang under them.

pub mod proto;

use std::collections::HashMap;
use std::io::BufRead;

use prost::Message;

use super::chrome::ChromeTrace;
use crate::model::args::ArgValue;
use crate::model::events::{EventKind, EventTable, NONE_I64};
use crate::model::hidden::hidden_warning;
use crate::model::{CounterTable, Format, Profile, Source};
use proto::{Value, XEvent, XPlane, XSpace};

/// Names of the lines a profiler derives from a device's streams (tsl's
/// `xplane_schema`): they repeat stream time, so they stay out of the tree.
const DERIVED_LINES: &[&str] = &[
    "Steps",
    "TensorFlow Ops",
    "TensorFlow Name Scope",
    "XLA Ops",
    "XLA Modules",
    "Framework Ops",
    "Framework Name Scope",
    "Source code",
    "XLA TraceMe",
    "Launch Stats",
    "SparseCore Steps",
    "SparseCore XLA Ops",
    "SparseCore XLA Modules",
];

pub struct XPlaneReader;

fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &x) in b.iter().enumerate().take(10) {
        v |= u64::from(x & 0x7f) << (7 * i);
        if x < 0x80 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Whether the head is an XSpace: field 1 (a plane), whose first fields are an
/// optional varint id (field 1) and a name (field 2) that starts like a plane name.
pub fn looks_like_xspace(head: &[u8]) -> bool {
    if head.first() != Some(&0x0a) {
        return false;
    }
    let Some((_, used)) = varint(&head[1..]) else {
        return false;
    };
    let mut i = 1 + used;
    if head.get(i) == Some(&0x08) {
        let Some((_, used)) = varint(&head[i + 1..]) else {
            return false;
        };
        i += 1 + used;
    }
    if head.get(i) != Some(&0x12) {
        return false;
    }
    let Some((len, used)) = varint(&head[i + 1..]) else {
        return false;
    };
    let start = i + 1 + used;
    let name = &head[start..head.len().min(start + len as usize)];
    [
        &b"/host:"[..],
        b"/device:",
        b"/task:",
        b"Task Environment",
        b"/custom:",
    ]
    .iter()
    .any(|p| name.starts_with(p) || (name.len() < p.len() && p.starts_with(name)))
}

impl super::Reader for XPlaneReader {
    fn name(&self) -> &'static str {
        "TensorFlow/JAX XPlane (.xplane.pb)"
    }

    fn format(&self) -> Format {
        Format::XPlane
    }

    /// `.xplane.pb` files that start with a plane, or any input whose first plane is
    /// named like a host or device plane.
    fn claims(&self, probe: &super::Probe) -> bool {
        if probe.is_dir {
            return false;
        }
        let named = probe.name.ends_with(".xplane.pb") || probe.name.ends_with(".xplane.pb.gz");
        (named && probe.head.first() == Some(&0x0a)) || looks_like_xspace(probe.head)
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let (mut input, source) = input.into_stream()?;
        let mut p = read(&mut input, source)?;
        p.cct.finish();
        Ok(vec![p])
    }
}

/// The device number of a plane named `/device:GPU:3` (None for host planes).
fn device_of(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("/device:")?;
    let (_, n) = rest.rsplit_once(':')?;
    n.trim().parse().ok()
}

/// Whether a host event is a GPU API call (it may launch device work).
fn is_runtime_call(name: &str) -> bool {
    let upper_after = |p: &str| {
        name.strip_prefix(p)
            .and_then(|r| r.chars().next())
            .is_some_and(|c| c.is_ascii_uppercase())
    };
    upper_after("cu") || upper_after("cuda") || upper_after("hip") || upper_after("nccl")
}

fn device_kind(name: &str) -> EventKind {
    let n = name.trim_start();
    if n.starts_with("Memcpy") || n.starts_with("memcpy") {
        EventKind::Memcpy
    } else if n.starts_with("Memset") || n.starts_with("memset") {
        EventKind::Memset
    } else {
        EventKind::Kernel
    }
}

/// Reads a whole XSpace. Errors are one line.
pub fn read(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    let mut bytes = Vec::new();
    let mut warnings = Vec::new();
    if let Err(e) = input.read_to_end(&mut bytes) {
        if bytes.is_empty() {
            return Err(format!("cannot read: {e}"));
        }
        warnings.push(format!(
            "the input ends early ({e}); the profile may be partial"
        ));
    }
    let space = XSpace::decode(&bytes[..]).map_err(|e| format!("not an XSpace protobuf: {e}"))?;
    drop(bytes);
    if space.planes.is_empty() {
        return Err("the XSpace has no plane".into());
    }
    let mut tr = ChromeTrace {
        kineto: false,
        ..ChromeTrace::default()
    };
    let mut meta: Vec<(String, String)> = Vec::new();
    for h in &space.hostnames {
        meta.push(("hostname".into(), h.clone()));
    }
    for e in &space.errors {
        warnings.push(format!("the profiler recorded an error: {e}"));
    }
    for w in &space.warnings {
        warnings.push(format!("the profiler recorded a warning: {w}"));
    }
    let mut counts = Counts::default();
    for plane in &space.planes {
        read_plane(plane, &mut tr, &mut meta, &mut counts);
    }
    counts.warn(&mut warnings, tr.events.len());
    if !counts.derived.is_empty() {
        // Kept as timeline rows, not in the tree: say so rather than drop them quietly.
        meta.push((
            "derived lines (timeline only)".into(),
            counts.derived.join(", "),
        ));
    }
    let tree = super::trace_cct::build(&tr);
    tr.events.node = tree.node_of_event;
    tr.events.launch = tree.launch_of_event;
    warnings.extend(tree.warnings);
    let planes: Vec<&str> = space.planes.iter().map(|p| p.name.as_str()).collect();
    meta.insert(0, ("planes".into(), planes.join(", ")));
    Ok(Profile {
        call_graph: None,
        source,
        dialect: "XSpace (TensorFlow/JAX profiler)".into(),
        cct: tree.cct,
        metrics: tree.metrics,
        events: Some(tr.events),
        counters: Some(CounterTable::default()),
        meta,
        warnings,
        default_metric: "time".into(),
    })
}

/// What was skipped or guessed, for the warnings.
#[derive(Default)]
struct Counts {
    aggregated: u64,
    unknown_metadata: u64,
    negative: u64,
    derived: Vec<String>,
}

impl Counts {
    /// `kept`: the events read into the table, for the share the skipped ones hide.
    fn warn(&self, w: &mut Vec<String>, kept: usize) {
        let share =
            |skipped: u64| skipped as f64 / (kept as u64 + self.aggregated + self.negative) as f64;
        if self.aggregated > 0 {
            w.push(hidden_warning(
                format!(
                    "{} aggregated event(s) (num_occurrences, no time) were skipped",
                    self.aggregated
                ),
                share(self.aggregated),
            ));
        }
        if self.unknown_metadata > 0 {
            w.push(format!(
                "{} event(s) name an event metadata id the plane lacks: shown as <unknown event N>",
                self.unknown_metadata
            ));
        }
        if self.negative > 0 {
            w.push(hidden_warning(
                format!(
                    "{} event(s) with a negative offset or duration were skipped",
                    self.negative
                ),
                share(self.negative),
            ));
        }
    }
}

fn read_plane(
    plane: &XPlane,
    tr: &mut ChromeTrace,
    meta: &mut Vec<(String, String)>,
    counts: &mut Counts,
) {
    let device = device_of(&plane.name);
    plane_meta(plane, meta);
    if plane.lines.is_empty() {
        return;
    }
    let pid_text = match device {
        Some(d) => d.to_string(),
        None => plane.name.clone(),
    };
    let s = &mut tr.events.strings;
    let pid = s.intern(&pid_text);
    let cats = [
        s.intern("kernel"),
        s.intern("gpu_memcpy"),
        s.intern("gpu_memset"),
        s.intern("gpu_user_annotation"),
        s.intern("trace_me"),
        s.intern("cuda_runtime"),
    ];
    if device.is_some() {
        tr.process_names.insert(pid, plane.name.clone());
    }
    let mut names: HashMap<i64, u32> = HashMap::new();
    for line in &plane.lines {
        let label = if line.display_name.is_empty() {
            &line.name
        } else {
            &line.display_name
        };
        let derived = device.is_some() && DERIVED_LINES.contains(&line.name.as_str());
        if derived && !counts.derived.contains(&line.name) {
            counts.derived.push(line.name.clone());
        }
        let tid = if device.is_some() && !derived {
            tr.events.strings.intern(&format!("stream {}", line.id))
        } else {
            tr.events.strings.intern(&line.id.to_string())
        };
        tr.thread_names.insert((pid, tid), label.clone());
        for e in &line.events {
            let Some(off) = e.offset_ps else {
                counts.aggregated += 1;
                continue;
            };
            if off < 0 || e.duration_ps < 0 {
                counts.negative += 1;
                continue;
            }
            let name = *names.entry(e.metadata_id).or_insert_with(|| {
                let text = match plane.event_metadata.get(&e.metadata_id) {
                    Some(m) if !m.name.is_empty() => m.name.clone(),
                    Some(m) => m.display_name.clone(),
                    None => format!("<unknown event {}>", e.metadata_id),
                };
                tr.events.strings.intern(&text)
            });
            if !plane.event_metadata.contains_key(&e.metadata_id) {
                counts.unknown_metadata += 1;
            }
            let ts = line.timestamp_ns.saturating_add(off / 1000);
            let dur = e.duration_ps / 1000;
            let event_name = tr.events.strings.resolve(name).to_string();
            let (kind, cat) = match device {
                Some(_) if derived => (EventKind::GpuAnnotation, cats[3]),
                Some(_) => match device_kind(&event_name) {
                    EventKind::Memcpy => (EventKind::Memcpy, cats[1]),
                    EventKind::Memset => (EventKind::Memset, cats[2]),
                    k => (k, cats[0]),
                },
                None if is_runtime_call(&event_name) => (EventKind::Runtime, cats[5]),
                None => (EventKind::Cpu, cats[4]),
            };
            let i = tr.events.push(name, cat, kind, ts, dur, pid, tid);
            let ev = &mut tr.events;
            let stats = event_stats(plane, e, ev, device.is_some());
            if let Some(c) = stats.correlation {
                ev.correlation[i] = c;
            }
            if let Some(d) = device {
                ev.device[i] = d;
                if !derived {
                    ev.stream[i] = line.id;
                }
                if !stats.has_tf_op {
                    // TensorFlow 2.x puts the op in the `level 0` annotation:
                    // `scope/op:Type#shape=...#`.
                    let level0 = stats.level0;
                    if let Some(op) = level0.and_then(|l| l.split('#').next().map(str::to_string)) {
                        if !op.is_empty() {
                            let v = ev.arg_store.str_value(&op);
                            ev.arg_store.push("tf_op", v);
                        }
                    }
                }
                ev.args[i] = ev.arg_store.finish();
            } else {
                ev.device[i] = NONE_I64;
            }
        }
    }
}

/// The name of stat metadata `id` ("" when the plane lacks it).
fn stat_name(plane: &XPlane, id: i64) -> &str {
    plane
        .stat_metadata
        .get(&id)
        .map(|m| m.name.as_str())
        .unwrap_or("")
}

/// Plane stats (device properties) are metadata.
fn plane_meta(plane: &XPlane, meta: &mut Vec<(String, String)>) {
    for s in &plane.stats {
        let v = match &s.value {
            Some(Value::Double(d)) => d.to_string(),
            Some(Value::Uint64(u)) => u.to_string(),
            Some(Value::Int64(i)) => i.to_string(),
            Some(Value::Str(t)) => t.clone(),
            Some(Value::Ref(r)) => stat_name(plane, *r as i64).to_string(),
            Some(Value::Bytes(b)) => format!("<{} bytes>", b.len()),
            None => continue,
        };
        meta.push((
            format!("{} {}", plane.name, stat_name(plane, s.metadata_id)),
            v,
        ));
    }
}

/// What an event's stats say beyond its args.
struct EventStats {
    correlation: Option<i64>,
    /// The `level 0` annotation.
    level0: Option<String>,
    has_tf_op: bool,
}

/// An event's stats: its correlation id, and on a device its args (pushed to the arg
/// store, not yet finished).
fn event_stats(plane: &XPlane, e: &XEvent, ev: &mut EventTable, on_device: bool) -> EventStats {
    let mut out = EventStats {
        correlation: None,
        level0: None,
        has_tf_op: false,
    };
    for st in &e.stats {
        let key = stat_name(plane, st.metadata_id);
        if key == "correlation_id" {
            out.correlation = match &st.value {
                Some(Value::Uint64(u)) => Some(*u as i64),
                Some(Value::Int64(v)) => Some(*v),
                _ => None,
            };
            continue;
        }
        if !on_device || key.is_empty() {
            continue;
        }
        let v = match &st.value {
            Some(Value::Double(d)) => ArgValue::Float(*d),
            Some(Value::Uint64(u)) => match i64::try_from(*u) {
                Ok(x) => ArgValue::Int(x),
                Err(_) => ArgValue::UInt(*u),
            },
            Some(Value::Int64(x)) => ArgValue::Int(*x),
            Some(Value::Str(t)) => ev.arg_store.str_value(t),
            Some(Value::Ref(r)) => {
                let t = stat_name(plane, *r as i64);
                ev.arg_store.str_value(t)
            }
            Some(Value::Bytes(b)) => ev.arg_store.str_value(&format!("<{} bytes>", b.len())),
            None => continue,
        };
        if key == "level 0" {
            out.level0 = Some(ev.arg_store.text(v).into_owned());
        }
        out.has_tf_op |= key == "tf_op";
        ev.arg_store.push(key, v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::*;

    fn stat(id: i64, v: Value) -> XStat {
        XStat {
            metadata_id: id,
            value: Some(v),
        }
    }

    /// A two-plane XSpace: a host thread launching a kernel, a device stream running it.
    pub fn tiny() -> Vec<u8> {
        let mut host = XPlane {
            id: 1,
            name: "/host:CPU".into(),
            ..Default::default()
        };
        host.event_metadata.insert(
            1,
            XEventMetadata {
                id: 1,
                name: "train_step".into(),
                ..Default::default()
            },
        );
        host.event_metadata.insert(
            2,
            XEventMetadata {
                id: 2,
                name: "cuLaunchKernel".into(),
                ..Default::default()
            },
        );
        host.stat_metadata.insert(
            1,
            XStatMetadata {
                id: 1,
                name: "correlation_id".into(),
                ..Default::default()
            },
        );
        host.lines.push(XLine {
            id: 7,
            name: "python3".into(),
            timestamp_ns: 1_000,
            events: vec![
                XEvent {
                    metadata_id: 1,
                    offset_ps: Some(0),
                    duration_ps: 10_000_000,
                    ..Default::default()
                },
                XEvent {
                    metadata_id: 2,
                    offset_ps: Some(1_000_000),
                    duration_ps: 2_000_000,
                    stats: vec![stat(1, Value::Uint64(42))],
                    ..Default::default()
                },
            ],
            ..Default::default()
        });
        let mut gpu = XPlane {
            id: 2,
            name: "/device:GPU:0".into(),
            ..Default::default()
        };
        gpu.event_metadata.insert(
            1,
            XEventMetadata {
                id: 1,
                name: "fusion_kernel".into(),
                ..Default::default()
            },
        );
        for (id, name) in [(1, "correlation_id"), (2, "hlo_op"), (3, "tf_op")] {
            gpu.stat_metadata.insert(
                id,
                XStatMetadata {
                    id,
                    name: name.into(),
                    ..Default::default()
                },
            );
        }
        gpu.lines.push(XLine {
            id: 13,
            name: "Stream #13(Compute)".into(),
            timestamp_ns: 1_000,
            events: vec![
                XEvent {
                    metadata_id: 1,
                    offset_ps: Some(4_000_000),
                    duration_ps: 3_000_000,
                    stats: vec![
                        stat(1, Value::Uint64(42)),
                        stat(2, Value::Str("fusion.1".into())),
                        stat(3, Value::Str("jit(f)/dot_general".into())),
                    ],
                    ..Default::default()
                },
                XEvent {
                    metadata_id: 1,
                    offset_ps: Some(8_000_000),
                    duration_ps: 1_000_000,
                    stats: vec![stat(2, Value::Str("fusion.2".into()))],
                    ..Default::default()
                },
                XEvent {
                    metadata_id: 1,
                    num_occurrences: Some(3),
                    duration_ps: 1_000_000,
                    ..Default::default()
                },
            ],
            ..Default::default()
        });
        XSpace {
            planes: vec![host, gpu],
            hostnames: vec!["h".into()],
            ..Default::default()
        }
        .encode_to_vec()
    }

    fn source() -> Source {
        Source {
            path: None,
            format: Format::XPlane,
            size: 0,
            gzip: false,
            label: "t".into(),
        }
    }

    #[test]
    fn host_and_device_planes() {
        let bytes = tiny();
        assert!(looks_like_xspace(&bytes));
        assert!(!looks_like_xspace(b"\x0a\x02\x08\x01"));
        let p = read(&mut &bytes[..], source()).unwrap();
        let ev = p.events.as_ref().unwrap();
        assert_eq!(ev.len(), 4, "the aggregated event is skipped");
        assert!(p.warnings.iter().any(|w| w.contains("1 aggregated event")));
        let k = (0..ev.len())
            .find(|&i| ev.kind[i] == EventKind::Kernel)
            .unwrap();
        assert_eq!((ev.ts[k], ev.dur[k]), (5_000, 3_000));
        assert_eq!((ev.device[k], ev.stream[k]), (0, 13));
        // The launched kernel hangs under its launch; the other under its XLA op.
        let launch = ev.launch[k] as usize;
        assert_eq!(ev.name_of(launch), "cuLaunchKernel");
        let path: Vec<&str> = p
            .cct
            .path(ev.node[k])
            .iter()
            .map(|&n| p.cct.name(n))
            .collect();
        assert_eq!(
            path,
            ["python3", "train_step", "cuLaunchKernel", "fusion_kernel"]
        );
        let f = p.cct.frame(ev.node[k]);
        assert_eq!(f.attr("hlo_op"), Some("fusion.1"));
        assert_eq!(f.attr("tf_op"), Some("jit(f)/dot_general"));
        let names: Vec<&str> = (0..p.cct.len() as u32).map(|n| p.cct.name(n)).collect();
        assert!(names.contains(&"fusion.2"), "{names:?}");
    }

    #[test]
    fn bad_bytes_are_errors() {
        let bytes = tiny();
        assert!(read(&mut &bytes[..bytes.len() / 2], source()).is_err());
        assert!(read(&mut &b""[..], source()).is_err());
    }
}
