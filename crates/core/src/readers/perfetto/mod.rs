//! Perfetto's protobuf trace (`.pftrace`, `.perfetto-trace`, `.pb`; gzip too): the
//! `Trace { repeated TracePacket packet = 1; }` stream that the Perfetto SDK, Chrome's
//! tracing, Android's `perfetto`, rocprofv3 (`--output-format pftrace`), rocprof-sys and
//! Kokkos Tools write.
//!
//! Read: `TrackEvent`s (slice begin/end, instants, counters, flows, and the legacy
//! JSON phases Chrome still writes: complete `X`, instants, async `b`/`e` and `S`/`F`),
//! `TrackDescriptor`s with their process, thread and counter descriptors, the interned
//! event names, categories and debug-annotation names of each packet sequence
//! (incremental state: cleared by `SEQ_INCREMENTAL_STATE_CLEARED`, lost after a dropped
//! packet, when packets that `SEQ_NEEDS_INCREMENTAL_STATE` are skipped), the sequence's
//! defaults (`TracePacketDefaults`: default track, timestamp clock, extra counter tracks),
//! and clock snapshots, which bring every timestamp (incremental and sequence-scoped
//! clocks included) to the trace clock. Packets inside `compressed_packets` are read too.
//!
//! The slices become an event table as a Chrome JSON trace's would, so the tree
//! (`trace_cct::build`: slices nest per thread), the timeline and the GPU panels work
//! unchanged: a thread track is its thread's lane, any other track (async, process-
//! scoped, named) a lane of its own, counter tracks counter series. rocprofv3's kernel
//! dispatch and memory copy slices (categories `kernel_dispatch`, `memory_copy`) are GPU
//! activity on device lanes (the device from the track's name, `COMPUTE AGENT [2] ...`),
//! linked to the HIP/HSA call that launched them by their `corr_id` (or the flow).
//!
//! Every other packet kind (ftrace, process trees, heap profiles, ...) is counted by its
//! field number and named in a warning, never guessed at.

mod clocks;
mod events;
mod fast;
mod lanes;
mod packets;
mod proto;
mod tracks;
mod wire;

use std::io::BufRead;

use crate::model::hidden::hidden_warning;
use crate::model::{Format, Profile, Source};
use packets::Decoder;
use wire::{varint, Fields, Value};

pub struct Perfetto;

/// TracePacket fields grove knows, with the wire type each must have (0 varint, 2
/// length-delimited): a head whose first packet uses one of them, each with its right
/// type, is a Perfetto trace.
const KNOWN: &[(u32, u64)] = &[
    (2, 2),
    (3, 0),
    (5, 2),
    (6, 2),
    (8, 0),
    (10, 0),
    (11, 2),
    (12, 2),
    (13, 0),
    (33, 2),
    (35, 2),
    (36, 2),
    (41, 0),
    (42, 0),
    (43, 2),
    (44, 2),
    (45, 2),
    (50, 2),
    (58, 0),
    (59, 2),
    (60, 2),
    (69, 2),
    (79, 0),
    (87, 0),
    (89, 2),
];

/// Whether the head is a packet stream: field 1, length-delimited, whose packet (as far
/// as the head holds it) parses, uses at least one TracePacket field grove knows and
/// none with the wrong wire type. pprof (field 1 is a `ValueType` of varints) and
/// XSpace (a plane's name in field 2) fail this; text does too (no control bytes).
pub fn claims(head: &[u8]) -> bool {
    if head.first() != Some(&0x0a) {
        return false;
    }
    let Some((len, n)) = varint(&head[1..]) else {
        return false;
    };
    let start = 1 + n;
    let end = usize::try_from(len)
        .ok()
        .and_then(|l| start.checked_add(l))
        .unwrap_or(usize::MAX);
    let whole = end <= head.len();
    let packet = &head[start..end.min(head.len())];
    if packet.is_empty() || !head.iter().take(512).any(|&b| b < 0x20 && b != b'\n') {
        return false;
    }
    let mut known = false;
    let mut fields = Fields::new(packet);
    for (f, v) in &mut fields {
        let wt = match v {
            Value::Varint(_) => 0,
            Value::Fixed64(_) => 1,
            Value::Len(_) => 2,
            Value::Fixed32(_) => 5,
        };
        match KNOWN.iter().find(|(k, _)| *k == f) {
            Some(&(_, want)) if want == wt => known = true,
            Some(_) => return false,
            None => {}
        }
    }
    // A packet cut by the head's end may end on a partial field.
    known && (!fields.bad || !whole)
}

/// Names of the TracePacket fields (packet kinds) grove does not read, for warnings.
fn kind_name(field: u32) -> &'static str {
    match field {
        1 => "ftrace_events",
        2 => "process_tree",
        4 => "inode_file_map",
        5 => "chrome_events",
        7 => "sys_stats",
        9 => "process_stats",
        33 => "trace_config",
        34 => "ftrace_stats",
        35 => "trace_stats",
        36 => "synchronization_marker",
        37 => "profile_packet",
        38 => "battery",
        39 => "android_log",
        40 => "power_rails",
        45 => "system_info",
        46 => "trigger",
        47 => "packages_list",
        48 => "chrome_benchmark_metadata",
        49 => "perfetto_metatrace",
        51 => "chrome_metadata",
        52 => "gpu_counter_event",
        53 => "gpu_render_stage_event",
        54 => "streaming_profile_packet",
        57 => "graphics_frame_event",
        61 => "module_symbols",
        63 => "gpu_log",
        66 => "perf_sample",
        67 => "cpu_info",
        69 => "service_event",
        72 => "extension_descriptor",
        74 => "streaming_allocation",
        75 => "streaming_free",
        82 => "translation_table",
        89 => "trace_uuid",
        124 => "trace_provenance",
        126 => "trace_attributes",
        135 => "stack_sample",
        _ => "",
    }
}

/// A builtin clock's name (`BuiltinClock`), else its number.
fn clock_name(id: u32) -> String {
    let name = match id {
        1 => "REALTIME",
        2 => "REALTIME_COARSE",
        3 => "MONOTONIC",
        4 => "MONOTONIC_COARSE",
        5 => "MONOTONIC_RAW",
        6 => "BOOTTIME",
        9 => "TSC",
        10 => "PERF",
        _ => return id.to_string(),
    };
    name.into()
}

/// Packet kinds that describe the recording, not what ran: listed in the metadata,
/// not warned about.
const BOOKKEEPING: &[u32] = &[33, 35, 36, 45, 69, 72, 89, 124, 126];

impl super::Reader for Perfetto {
    fn name(&self) -> &'static str {
        "Perfetto protobuf trace"
    }

    fn format(&self) -> Format {
        Format::Perfetto
    }

    fn claims(&self, probe: &super::Probe) -> bool {
        !probe.is_dir && claims(probe.head)
    }

    fn read(&self, input: super::Input) -> Result<Vec<Profile>, String> {
        let (mut input, source) = input.into_stream()?;
        let mut p = read(&mut input, source)?;
        p.cct.finish();
        Ok(vec![p])
    }
}

/// Reads a whole trace. Errors are one line.
pub fn read(input: &mut dyn BufRead, source: Source) -> Result<Profile, String> {
    let mut d = Decoder::new();
    d.read_stream(input)?;
    if d.stats.packets == 0 {
        return Err("the Perfetto trace has no packet".into());
    }
    d.finish();
    let (meta, mut warnings) = report(&d);
    // The decoder's other state (sequences' interned names, tracks, flows) goes
    // before the tree is built, the load's peak: kept to the end of this function,
    // it lay under the tree's columns.
    let mut tr = std::mem::take(&mut d.tr);
    drop(d);
    warnings.splice(0..0, std::mem::take(&mut tr.warnings));
    let tree = super::trace_cct::build(&tr);
    tr.events.node = tree.node_of_event;
    tr.events.launch = tree.launch_of_event;
    warnings.extend(tree.warnings);
    Ok(Profile {
        call_graph: None,
        source,
        dialect: "Perfetto TrackEvent".into(),
        cct: tree.cct,
        metrics: tree.metrics,
        events: Some(tr.events),
        counters: Some(tr.counters),
        meta,
        warnings,
        default_metric: "time".into(),
    })
}

/// The metadata and the warnings: what was read, and everything skipped, counted.
fn report(d: &Decoder) -> (Vec<(String, String)>, Vec<String>) {
    let s = &d.stats;
    let mut meta = vec![
        ("packets".into(), s.packets.to_string()),
        ("track events".into(), s.track_events.to_string()),
        ("tracks".into(), d.tracks.list.len().to_string()),
        ("packet sequences".into(), d.seqs.len().to_string()),
        ("trace clock".into(), clock_name(d.clocks.trace_clock())),
    ];
    if !d.tr.flows.is_empty() {
        meta.push(("flows".into(), d.tr.flows.starts_listed().to_string()));
    }
    let kinds = |keep: &dyn Fn(u32) -> bool| -> Vec<String> {
        s.other
            .iter()
            .filter(|(f, _)| keep(**f))
            .map(|(f, n)| match kind_name(*f) {
                "" => format!("field {f} ×{n}"),
                k => format!("{k} (field {f}) ×{n}"),
            })
            .collect()
    };
    let book = kinds(&|f| BOOKKEEPING.contains(&f));
    if !book.is_empty() {
        meta.push((
            "packets about the recording (not read)".into(),
            book.join(", "),
        ));
    }
    let mut w = Vec::new();
    let data: u64 = s
        .other
        .iter()
        .filter(|(f, _)| !BOOKKEEPING.contains(f))
        .map(|(_, n)| n)
        .sum();
    if data > 0 {
        w.push(hidden_warning(
            format!(
                "{data} packet(s) of kinds grove does not read were skipped: {}",
                kinds(&|f| !BOOKKEEPING.contains(&f)).join(", ")
            ),
            data as f64 / s.packets.max(1) as f64,
        ));
    }
    let events = s.track_events.max(1) as f64;
    let mut hidden = |n: u64, what: String| {
        if n > 0 {
            w.push(hidden_warning(format!("{n} {what}"), n as f64 / events));
        }
    };
    hidden(s.needs_state, "packet(s) that need their sequence's interned data, lost with a dropped packet before them, were skipped (as trace_processor does)".into());
    hidden(
        s.bad_packets,
        "damaged packet(s) or message(s) were skipped".into(),
    );
    hidden(
        s.no_timestamp,
        "track event(s) without a timestamp were skipped".into(),
    );
    hidden(
        s.bad_time,
        "track event(s) with a timestamp beyond ±2^61 ns (damage) were skipped".into(),
    );
    hidden(
        s.unmatched_end,
        "slice end(s) without an open slice on their track were skipped".into(),
    );
    hidden(
        s.state_events,
        "state event(s) (TYPE_STATE) were skipped: grove has no state lanes".into(),
    );
    hidden(
        s.negative_dur,
        "complete event(s) with a negative duration were skipped".into(),
    );
    hidden(
        s.nested_compressed,
        "compressed packet(s) inside compressed packets were skipped".into(),
    );
    if !s.legacy_skipped.is_empty() {
        let n: u64 = s.legacy_skipped.values().sum();
        let phases: Vec<String> = s
            .legacy_skipped
            .iter()
            .map(|(p, n)| format!("'{p}' ×{n}"))
            .collect();
        hidden(
            n,
            format!(
                "legacy event(s) of phases grove does not read were skipped ({})",
                phases.join(", ")
            ),
        );
    }
    if s.not_counter_track > 0 {
        w.push(format!(
            "{} counter value(s) on a track that is not a counter track, or counter event(s) without a value, were skipped",
            s.not_counter_track
        ));
    }
    if s.unknown_iids > 0 {
        w.push(format!(
            "{} event(s) name an interned name or category their sequence never defined: shown as <unknown name> or without a category",
            s.unknown_iids
        ));
    }
    if s.unclosed > 0 {
        w.push(format!(
            "{} slice(s) never ended: they run to the end of the trace and count no time of their own",
            s.unclosed
        ));
    }
    if s.backwards > 0 {
        w.push(format!(
            "{} slice(s) begin or end before an earlier event of their track (events out of time order in the file): matched in file order",
            s.backwards
        ));
    }
    let undescribed = d.tracks.undescribed();
    if undescribed > 0 {
        w.push(format!(
            "{undescribed} track(s) have events but no TrackDescriptor: each is a lane named by its uuid"
        ));
    }
    for (clock, n) in &d.clocks.unlinked {
        w.push(format!(
            "{n} timestamp(s) in clock {} could not be brought to the trace clock {} (no clock snapshot links them): kept as they are",
            clock_name(*clock),
            clock_name(d.clocks.trace_clock())
        ));
    }
    (meta, w)
}

#[cfg(test)]
mod tests;
