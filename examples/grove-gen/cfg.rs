//! Configuration: the command line.

use crate::helpers::*;

pub(crate) const USAGE: &str = "\
usage: grove-gen [options] -o OUT(.json|.json.gz)

options:
  --steps N            ProfilerSteps to record (default 3; ignored with --target-size)
  --layers N           transformer layers (default 4)
  --streams N          CUDA streams per device: compute, NCCL, copy, then side streams (default 3)
  --devices N          GPUs driven by this process; layers are split across them (default 1)
  --rank R             distributed rank (default 0)
  --world W            world size; all-reduces are simulated when W > 1 (default 1)
  --seed S             PRNG seed (default 1)
  --target-size SIZE   keep adding steps until the uncompressed output reaches SIZE
                       (bytes, or with a unit: 300MB, 1GB, 512MiB)
  --forward-only       inference trace: no backward pass, no optimizer
  --summary-json FILE  also write the totals as JSON
  -o, --output OUT     output path; a .gz suffix gzip-compresses";

// ---------------------------------------------------------------------------
// Configuration.
// ---------------------------------------------------------------------------
pub(crate) struct Cfg {
    pub(crate) steps: u64,
    pub(crate) layers: u64,
    pub(crate) streams: usize,
    pub(crate) devices: usize,
    pub(crate) rank: u64,
    pub(crate) world: u64,
    pub(crate) seed: u64,
    pub(crate) target: Option<u64>,
    pub(crate) forward_only: bool,
    pub(crate) out: String,
    pub(crate) summary: Option<String>,
}

pub(crate) fn parse_args() -> Result<Cfg, String> {
    let mut cfg = Cfg {
        steps: 3,
        layers: 4,
        streams: 3,
        devices: 1,
        rank: 0,
        world: 1,
        seed: 1,
        target: None,
        forward_only: false,
        out: String::new(),
        summary: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        // Accept both `--flag value` and `--flag=value`.
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let num = |name: &str, v: String| -> Result<u64, String> {
            v.parse::<u64>()
                .map_err(|_| format!("{name}: not a number: {v:?}"))
        };
        match flag.as_str() {
            "--steps" => cfg.steps = num(&flag, value(&flag)?)?,
            "--layers" => cfg.layers = num(&flag, value(&flag)?)?,
            "--streams" => cfg.streams = num(&flag, value(&flag)?)? as usize,
            "--devices" => cfg.devices = num(&flag, value(&flag)?)? as usize,
            "--rank" => cfg.rank = num(&flag, value(&flag)?)?,
            "--world" => cfg.world = num(&flag, value(&flag)?)?,
            "--seed" => cfg.seed = num(&flag, value(&flag)?)?,
            "--target-size" => cfg.target = Some(parse_size(&value(&flag)?)?),
            "--summary-json" => cfg.summary = Some(value(&flag)?),
            "--forward-only" => cfg.forward_only = true,
            "-o" | "--output" => cfg.out = value(&flag)?,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if cfg.out.is_empty() {
        return Err("missing -o OUT".into());
    }
    if cfg.layers == 0 || cfg.streams == 0 || cfg.devices == 0 || cfg.world == 0 {
        return Err("--layers, --streams, --devices and --world must be at least 1".into());
    }
    if cfg.rank >= cfg.world {
        return Err("--rank must be below --world".into());
    }
    if cfg.devices > cfg.layers as usize {
        return Err("--devices cannot exceed --layers (layers are split across devices)".into());
    }
    Ok(cfg)
}
