//! Legacy rocprof's Chrome trace JSON (`rocprof --hip-trace/--hsa-trace/--sys-trace`,
//! written by rocprof's `tblextr.py` through `sqlitedb.py`): slices carry no `cat`, so
//! the lane says what an event is. rocprof numbers its lanes (pids) and labels each with
//! a `process_name` metadata event: 0 "Markers and Ranges" (rocTX), 1 "COPY" (async
//! copies), 2 "CPU HIP API", 3 "CPU HSA API", 6+n "GPU<n>" (kernels of GPU n),
//! 6+n+512 "GPU Barriers<n>". Kernel slices carry the `results.csv` columns as string
//! args (`gpu-id`, `queue-id`, `BeginNs`, ...); HIP-traced ops add `stream-id`.
//! Their `ts`/`dur` are whole microseconds; `BeginNs`/`EndNs` give the nanoseconds.
//!
//! The Chrome reader asks [`lane_kind`] for each uncategorised slice once it has seen
//! one of these labels, and calls [`place_lanes`] after parsing to set each GPU
//! activity's device and stream.

use crate::model::events::{EventKind, NONE_I64};
use crate::readers::chrome::ChromeTrace;

/// The labels only rocprof writes (the GPU ones could be anyone's).
pub fn is_rocprof_label(name: &str) -> bool {
    matches!(name, "COPY" | "CPU HIP API" | "CPU HSA API") || barrier_device(name).is_some()
}

fn gpu_device(name: &str) -> Option<i64> {
    name.strip_prefix("GPU")?.parse().ok()
}

fn barrier_device(name: &str) -> Option<i64> {
    name.strip_prefix("GPU Barriers")?.parse().ok()
}

/// What an uncategorised slice on a lane with this label is.
pub fn lane_kind(label: Option<&str>) -> EventKind {
    match label {
        Some(l) if gpu_device(l).is_some() => EventKind::Kernel,
        Some(l) if barrier_device(l).is_some() => EventKind::GpuAnnotation,
        Some("COPY") => EventKind::Memcpy,
        Some("CPU HIP API" | "CPU HSA API") => EventKind::Runtime,
        _ => EventKind::Cpu,
    }
}

/// Device and stream of each GPU-lane event: the device from the lane label, the
/// stream from the args (`stream-id` of HIP-traced ops, else `queue-id`), else the tid.
pub fn place_lanes(tr: &mut ChromeTrace) {
    let ev = &mut tr.events;
    let mut exact = 0u64;
    for i in 0..ev.len() {
        if !ev.kind[i].on_gpu_lane() {
            continue;
        }
        let label = tr.process_names.get(&ev.pid[i]).map(String::as_str);
        let device = label.and_then(|l| gpu_device(l).or_else(|| barrier_device(l)));
        let arg = |key: &str| -> Option<i64> {
            let a = ev.args_of(i)?;
            let v = a.get(key)?;
            let t = a.text(v);
            t.trim().parse().ok()
        };
        let device = device.or_else(|| arg("dev-id")).or_else(|| arg("gpu-id"));
        let stream = arg("stream-id")
            .or_else(|| arg("queue-id"))
            .or_else(|| ev.strings.resolve(ev.tid[i]).trim().parse().ok());
        // `ts`/`dur` are whole µs; the args keep rocprof's ns. Use those when they are
        // the same instant (not rebased with ROCP_JSON_REBASE), so kernel totals match
        // rocprof's own stats exactly.
        let ns = (arg("BeginNs"), arg("EndNs"));
        ev.device[i] = device.unwrap_or(NONE_I64);
        ev.stream[i] = stream.unwrap_or(NONE_I64);
        if let (Some(b), Some(e)) = ns {
            let same_us = b.checked_sub(ev.ts[i]).is_some_and(|d| d.abs() < 1000);
            // Bounded like the reader's own times: a damaged arg must not overflow sums.
            match e.checked_sub(b) {
                Some(d) if same_us && (0..1 << 61).contains(&d) => {
                    ev.ts[i] = b;
                    ev.dur[i] = d;
                    exact += 1;
                }
                _ => {}
            }
        }
    }
    if exact > 0 {
        tr.meta.push((
            "device times".into(),
            format!("{exact} GPU activities timed in ns from their BeginNs/EndNs args"),
        ));
    }
}
