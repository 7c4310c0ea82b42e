//! `grove info`: the detected format, counts and metrics of an input.

use std::fmt::Write as _;

use grove::cli::InfoArgs;
use grove::model::{EventKind, Profile};

use super::{input, output};

pub fn run(args: InfoArgs) -> Result<(), String> {
    // A directory or a quoted glob is an ensemble here as everywhere.
    let p = input::load_inputs(std::slice::from_ref(&args.file), None)?;
    let r = output::text(&info_text(&p));
    super::leave(p);
    r
}

fn info_text(p: &Profile) -> String {
    let mut s = String::new();
    let src = &p.source;
    let _ = writeln!(
        s,
        "file:     {}",
        src.path
            .as_ref()
            .map(|x| x.display().to_string())
            .unwrap_or("demo".into())
    );
    let _ = writeln!(
        s,
        "format:   {}{} ({}){}",
        src.format.label(),
        if src.gzip { ", gzip" } else { "" },
        p.dialect,
        if grove::readers::is_partial(p) {
            ", partial: the input ends early (see the warnings)"
        } else {
            ""
        }
    );
    let _ = writeln!(s, "size:     {} bytes", src.size);
    let _ = writeln!(s, "nodes:    {}", p.cct.len());
    let _ = writeln!(s, "roots:    {}", p.cct.roots.len());
    if let Some(ev) = &p.events {
        let gpu: Vec<usize> = (0..ev.len())
            .filter(|&i| ev.kind[i].is_gpu_activity())
            .collect();
        let streams: std::collections::BTreeSet<(i64, i64)> =
            gpu.iter().map(|&i| (ev.device[i], ev.stream[i])).collect();
        let devices: std::collections::BTreeSet<i64> = streams.iter().map(|x| x.0).collect();
        let threads: std::collections::BTreeSet<(u32, u32)> = (0..ev.len())
            .filter(|&i| matches!(ev.kind[i], EventKind::Cpu | EventKind::Runtime))
            .map(|i| (ev.pid[i], ev.tid[i]))
            .collect();
        let count = |k: EventKind| ev.kind.iter().filter(|&&x| x == k).count();
        let gpu_ns: i64 = gpu.iter().map(|&i| ev.dur[i]).sum();
        let _ = writeln!(s, "events:   {}", ev.len());
        let _ = writeln!(
            s,
            "          cpu {} · runtime {} · kernel {} · memcpy {} · memset {} · instant {}",
            count(EventKind::Cpu),
            count(EventKind::Runtime),
            count(EventKind::Kernel),
            count(EventKind::Memcpy),
            count(EventKind::Memset),
            count(EventKind::Instant)
        );
        let _ = writeln!(s, "gpu time: {gpu_ns} ns");
        if let Some(r) = p.meta_value("rank") {
            let world = p.meta_value("distributedInfo.world_size").unwrap_or("?");
            let _ = writeln!(s, "rank:     {r} of {world}");
        }
        let _ = writeln!(s, "devices:  {}", devices.len());
        let _ = writeln!(s, "streams:  {}", streams.len());
        let _ = writeln!(s, "threads:  {}", threads.len());
    }
    let _ = writeln!(s, "metrics:");
    for m in p.metrics.names() {
        let u = p.metrics.unit(&m);
        let _ = writeln!(
            s,
            "  {m}{}",
            if u.is_empty() {
                String::new()
            } else {
                format!(" [{u}]")
            }
        );
    }
    if !p.meta.is_empty() {
        let _ = writeln!(s, "metadata:");
        for (k, v) in &p.meta {
            let _ = writeln!(s, "  {k}: {v}");
        }
    }
    for w in &p.warnings {
        let _ = writeln!(s, "warning:  {w}");
    }
    s
}
