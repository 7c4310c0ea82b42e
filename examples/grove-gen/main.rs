//! `grove-gen`: a deterministic generator of realistic PyTorch profiler traces.
//!
//! It simulates a data-parallel (DDP) fp16 transformer training loop (or
//! just its forward pass, for inference) and writes what `torch.profiler` + Kineto would have written for it:
//! a Chrome Trace Event JSON document in the current Kineto dialect, byte for
//! byte in Kineto's layout (its multi-line event formatting, its key order,
//! `ts`/`dur` as microseconds with a three-digit nanosecond fraction relative
//! to `baseTimeNanoseconds`, process/thread metadata at the end, the "Trace"
//! span and "Record Window End" instant last).
//!
//! The file is written streaming: only one ProfilerStep's events are buffered
//! at a time, so multi-gigabyte benchmark inputs cost no more memory than a
//! small one. All times are integer nanoseconds; floats never touch them, so
//! the totals printed at the end are exact and tests can compare a reader's
//! sums against them.
//!
//! Deliberately standalone: no `grove::` imports, so a broken reader can never
//! influence the data it is tested with. An example rather than a binary so that
//! `cargo install` leaves it out: `cargo run --release --example grove-gen -- ARGS`.
//!
//! The modules follow the generator's own seams: `catalogue` (model sizes, device
//! properties, kernels), `helpers`, `cfg` (the command line), `out` (Kineto's event
//! layout), `state` (the simulation and `Gen`), and `Gen`'s methods by phase: `cpu`
//! and `gpu` timelines, the `step` (forward), `backward` (with the all-reduce and
//! optimizer), and `write` (flushing a step, header, footer).

mod backward;
mod catalogue;
mod cfg;
mod cpu;
mod gpu;
mod helpers;
mod out;
mod state;
mod step;
mod write;

use std::fs::File;
use std::io::{self, BufWriter};
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::cfg::*;
use crate::out::*;
use crate::state::*;

fn run(cfg: Cfg) -> Result<(), String> {
    let t_start = Instant::now();
    let file = File::create(&cfg.out).map_err(|e| format!("{}: {e}", cfg.out))?;
    let buffered = BufWriter::with_capacity(1 << 20, file);
    let w = if cfg.out.ends_with(".gz") {
        Sink::Gz(Box::new(GzEncoder::new(buffered, Compression::default())))
    } else {
        Sink::Plain(buffered)
    };
    let out = Out {
        w,
        buf: String::with_capacity(1 << 17),
        flushed: 0,
        stats: Stats::default(),
    };
    let mut g = Gen::new(cfg, out);
    let io_err = |e: io::Error| format!("write failed: {e}");

    g.header();
    g.prelude();
    let mut n = g.first_step;
    loop {
        g.step(n).map_err(io_err)?;
        n += 1;
        let done = match g.cfg.target {
            Some(target) => g.out.bytes() >= target,
            None => n - g.first_step >= g.cfg.steps,
        };
        if done {
            break;
        }
    }
    g.footer().map_err(io_err)?;
    let bytes = g.out.bytes();
    let Gen { cfg, out, .. } = g;
    let Out { w, stats: s, .. } = out;
    w.finish().map_err(io_err)?;

    let gpu = s.kernels + s.memcpy + s.memset;
    let secs = t_start.elapsed().as_secs_f64();
    eprintln!(
        "grove-gen: {} events ({} kernels, {} memcpy, {} memset = {} gpu activities, gpu_time_ns={}; {} cpu_ops, {} runtime; {} unattributed gpu activities, {} ns), {} steps, {} bytes uncompressed -> {} in {:.2}s ({:.1} MB/s)",
        s.events, s.kernels, s.memcpy, s.memset, gpu, s.gpu_time_ns, s.cpu_ops, s.runtime,
        s.unattributed, s.unattributed_ns, s.steps, bytes, cfg.out, secs,
        bytes as f64 / 1e6 / secs.max(1e-9)
    );
    if let Some(path) = &cfg.summary {
        // Written by hand rather than with serde_json::json! so the keys keep
        // this order (serde_json sorts them without its preserve_order feature).
        let fields = [
            ("events", s.events),
            ("gpu_activities", gpu),
            ("kernels", s.kernels),
            ("memcpy", s.memcpy),
            ("memset", s.memset),
            ("gpu_time_ns", s.gpu_time_ns),
            ("cpu_ops", s.cpu_ops),
            ("runtime", s.runtime),
            ("unattributed_gpu_activities", s.unattributed),
            ("unattributed_gpu_time_ns", s.unattributed_ns),
            ("user_annotations", s.user_annotations),
            ("gpu_user_annotations", s.gpu_user_annotations),
            ("flows", s.flows),
            ("steps", s.steps),
            ("bytes", bytes),
        ];
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("  \"{k}\": {v}"))
            .collect();
        let text = format!("{{\n{}\n}}\n", body.join(",\n"));
        std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}

fn main() {
    let cfg = match parse_args() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("grove-gen: {e}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(cfg) {
        eprintln!("grove-gen: {e}");
        std::process::exit(1);
    }
}
