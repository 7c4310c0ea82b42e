//! Simulation state: threads, streams, devices, the autograd tape and the generator.

use std::borrow::Cow;

use crate::catalogue::*;
use crate::cfg::*;
use crate::helpers::*;
use crate::out::*;

// ---------------------------------------------------------------------------
// Simulation state.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Cat {
    CpuOp,
    UserAnnotation,
}

pub(crate) struct CpuEv {
    pub(crate) cat: Cat,
    pub(crate) name: Cow<'static, str>,
    pub(crate) thread: usize,
    pub(crate) ts: u64,
    pub(crate) dur: u64,
    pub(crate) ext: u64,
    /// Args after "Record function id" (shapes, sequence number...), each
    /// starting with ", ".
    pub(crate) extra: String,
    /// fwdbwd flow: (id, is_start).
    pub(crate) flow: Option<(u64, bool)>,
}

pub(crate) struct RtEv {
    pub(crate) name: &'static str,
    pub(crate) cbid: u32,
    pub(crate) thread: usize,
    pub(crate) ts: u64,
    pub(crate) dur: u64,
    /// External id of the enclosing cpu_op; 0 when there is none (calls made
    /// straight from Python), which Kineto writes as no "External id" at all.
    pub(crate) ext: u64,
    pub(crate) corr: u64,
}

pub(crate) enum GpuKind {
    Kernel(Kernel),
    Memcpy(&'static str),
    Memset,
}

pub(crate) struct GpuEv {
    pub(crate) kind: GpuKind,
    pub(crate) dev: usize,
    pub(crate) stream: usize,
    pub(crate) ts: u64,
    pub(crate) dur: u64,
    pub(crate) ext: u64,
    pub(crate) corr: u64,
    pub(crate) bytes: u64,
    /// Collective metadata Kineto copies from record_param_comms to NCCL kernels.
    pub(crate) coll: Option<String>,
    /// Launched before the trace window: no runtime event in the file.
    pub(crate) unattributed: bool,
}

pub(crate) struct Stream {
    pub(crate) id: u64,
    /// When the last queued work on this stream completes.
    pub(crate) free_at: u64,
    pub(crate) last_start: u64,
    pub(crate) used: bool,
    /// Extent of this step's work, for the gpu_user_annotation span.
    pub(crate) step_lo: u64,
    pub(crate) step_hi: u64,
}

pub(crate) struct Device {
    pub(crate) id: u64,
    pub(crate) streams: Vec<Stream>,
    pub(crate) nccl: usize,
    pub(crate) copy: usize,
    pub(crate) side: Vec<usize>,
    pub(crate) next_side: usize,
}

#[derive(Clone, Copy)]
pub(crate) enum Role {
    Compute,
    Nccl,
    Copy,
    /// A side stream if the device has any, else the compute stream.
    Side,
}

/// Backward-pass work recorded during the forward pass, replayed in reverse
/// on the autograd thread(s).
#[derive(Clone, Copy)]
pub(crate) enum Node {
    Embedding,
    LayerNorm,
    /// Weight gradient of a linear layer (dgrad, wgrad, optional bias sum).
    Linear {
        fwd: Kernel,
        bias: bool,
        fin: u64,
        fout: u64,
    },
    Gelu,
    Add,
    View,
    Permute,
    Transpose,
    Clone,
    Unbind,
    Flash,
    Bmm,
    Softmax,
    Div,
    LogSoftmax,
    NllLoss,
    /// Activation moved from device `from` to the node's device.
    ToDevice {
        from: usize,
    },
    /// All parameters of one DDP bucket have their gradients.
    BucketReady {
        params: u64,
    },
}

impl Node {
    pub(crate) fn backward_name(self) -> &'static str {
        match self {
            Node::Embedding => "EmbeddingBackward0",
            Node::LayerNorm => "NativeLayerNormBackward0",
            Node::Linear { bias: true, .. } => "AddmmBackward0",
            Node::Linear { bias: false, .. } => "MmBackward0",
            Node::ToDevice { .. } => "ToCopyBackward0",
            Node::Gelu => "GeluBackward0",
            Node::Add => "AddBackward0",
            Node::View => "ViewBackward0",
            Node::Permute => "PermuteBackward0",
            Node::Transpose => "TransposeBackward0",
            Node::Clone => "CloneBackward0",
            Node::Unbind => "UnbindBackward0",
            Node::Flash => "ScaledDotProductFlashAttentionBackward0",
            Node::Bmm => "BmmBackward0",
            Node::Softmax => "SoftmaxBackward0",
            Node::Div => "DivBackward0",
            Node::LogSoftmax => "LogSoftmaxBackward0",
            Node::NllLoss => "NllLossBackward0",
            Node::BucketReady { .. } => "",
        }
    }
}

pub(crate) struct TapeEntry {
    pub(crate) node: Node,
    pub(crate) dev: usize,
    pub(crate) seq: u64,
    /// fwdbwd flow id started at the forward op (0: none).
    pub(crate) flow: u64,
}

impl TapeEntry {
    /// Marks a DDP bucket boundary: its all-reduce is issued once the
    /// backward pass has replayed everything recorded after this entry.
    pub(crate) fn bucket(dev: usize, params: u64) -> TapeEntry {
        TapeEntry {
            node: Node::BucketReady { params },
            dev,
            seq: 0,
            flow: 0,
        }
    }
}

pub(crate) struct Gen {
    pub(crate) cfg: Cfg,
    pub(crate) rng: Rng,
    pub(crate) out: Out,
    pub(crate) pid: u64,
    /// CPU threads: 0 is the Python main thread, 1 + d the autograd thread of
    /// device d.
    pub(crate) tids: Vec<u64>,
    pub(crate) thread_names: Vec<String>,
    pub(crate) thread_used: Vec<bool>,
    /// Thread that emits the next CPU event.
    pub(crate) th: usize,
    pub(crate) cursor: Vec<u64>,
    /// True right after an op opened on the thread (the next event is its
    /// first child).
    pub(crate) fresh: Vec<bool>,
    pub(crate) stack: Vec<Vec<usize>>,
    pub(crate) cpu: Vec<CpuEv>,
    pub(crate) rt: Vec<RtEv>,
    pub(crate) gpu: Vec<GpuEv>,
    pub(crate) devs: Vec<Device>,
    /// Simulated GPUs on the node (listed in deviceProperties).
    pub(crate) node_gpus: u64,
    pub(crate) next_ext: u64,
    pub(crate) next_corr: u64,
    pub(crate) next_seq: u64,
    pub(crate) next_flow: u64,
    pub(crate) launches: u64,
    pub(crate) trace_start: u64,
    pub(crate) first_step: u64,
    /// Device the forward pass is currently running on.
    pub(crate) cur_dev: usize,
}

impl Gen {
    pub(crate) fn new(cfg: Cfg, out: Out) -> Gen {
        let mut rng = Rng(cfg.seed);
        let pid = 100_000 + rng.below(3_900_000);
        let devices = cfg.devices;
        // Which GPUs of an 8-GPU node this rank drives (local rank * devices).
        let node_gpus = (cfg.world * devices as u64).clamp(devices as u64, 8.max(devices as u64));
        let slots = (node_gpus / devices as u64).max(1);
        let base = (cfg.rank % slots) * devices as u64;

        let mut tids = vec![pid];
        let mut thread_names = vec![format!("thread {pid} (python)")];
        for d in 0..devices {
            let tid = pid + 37 + d as u64 * 64 + rng.below(60);
            tids.push(tid);
            thread_names.push(format!("thread {tid} (pt_autograd_{d})"));
        }

        // Stream ids follow what PyTorch/NCCL typically get: 7 is the
        // default (legacy) compute stream, pool streams are spaced by 4.
        let devs = (0..devices)
            .map(|d| {
                let ids: Vec<u64> = [7u64, 35, 20]
                    .into_iter()
                    .chain((0..).map(|i| 24 + 4 * i).filter(|x| *x != 35 && *x != 20))
                    .take(cfg.streams)
                    .collect();
                Device {
                    id: base + d as u64,
                    streams: ids
                        .iter()
                        .map(|&id| Stream {
                            id,
                            free_at: 0,
                            last_start: 0,
                            used: false,
                            step_lo: u64::MAX,
                            step_hi: 0,
                        })
                        .collect(),
                    nccl: usize::from(cfg.streams >= 2),
                    copy: if cfg.streams >= 3 { 2 } else { 0 },
                    side: (3..cfg.streams).collect(),
                    next_side: 0,
                }
            })
            .collect();

        // The trace starts some weeks after the base time, like a job that
        // has been running for a while; relative ts values are then ~4e12 µs,
        // which is what readers parsing doubles have to cope with. All ranks
        // of a job share the window (the day depends on the world size only),
        // each starting within a couple of ms of the others.
        let job_day = Rng(cfg.world.wrapping_mul(0x2545_F491_4F6C_DD1D)).below(20 * DAY_NS);
        let trace_start = 38 * DAY_NS + job_day + rng.below(2_000_000);
        let next_corr = 20_000 + rng.below(80_000);
        // Autograd sequence numbers keep counting across the whole run.
        let next_seq = 10_000 + rng.below(500_000);
        let n_threads = tids.len();
        Gen {
            cfg,
            rng,
            out,
            pid,
            tids,
            thread_names,
            thread_used: vec![false; n_threads],
            th: 0,
            cursor: vec![trace_start; n_threads],
            fresh: vec![false; n_threads],
            stack: vec![Vec::new(); n_threads],
            cpu: Vec::new(),
            rt: Vec::new(),
            gpu: Vec::new(),
            devs,
            node_gpus,
            next_ext: 1,
            next_corr,
            next_seq,
            next_flow: 1,
            launches: 0,
            trace_start,
            // torch.profiler.schedule(wait=1, warmup=1, active=N) records
            // from the third step on.
            first_step: 2,
            cur_dev: 0,
        }
    }
}
