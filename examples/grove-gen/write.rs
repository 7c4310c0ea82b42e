//! Writing: one step's events, the header and the footer.

use std::fmt::Write as _;
use std::io;

use crate::catalogue::*;
use crate::helpers::*;
use crate::state::*;

impl Gen {
    // --- Writing --------------------------------------------------------------

    pub(crate) fn flush_step(&mut self, step_name: &str, step_ext: u64) -> io::Result<()> {
        let pid = self.pid;
        let cpu = std::mem::take(&mut self.cpu);
        for e in &cpu {
            let tid = self.tids[e.thread];
            let (cat, args) = match e.cat {
                Cat::CpuOp => {
                    self.out.stats.cpu_ops += 1;
                    ("cpu_op", e.extra.as_str())
                }
                Cat::UserAnnotation => {
                    self.out.stats.user_annotations += 1;
                    ("user_annotation", "")
                }
            };
            let args = format!(
                "\"External id\": {},\"Record function id\": 0{args}, \"Ev Idx\": {}",
                e.ext,
                e.ext - 1
            );
            self.out
                .complete(cat, &e.name, pid, tid, (e.ts, e.dur), &args);
            if let Some((id, start)) = e.flow {
                self.out.flow(start, id, pid, tid, e.ts, "fwdbwd");
            }
            self.out.maybe_flush()?;
        }
        self.cpu = cpu;
        self.cpu.clear();

        let rt = std::mem::take(&mut self.rt);
        for e in &rt {
            let tid = self.tids[e.thread];
            self.out.stats.runtime += 1;
            let mut args = String::new();
            if e.ext != 0 {
                let _ = write!(args, "\"External id\": {},", e.ext);
            }
            let _ = write!(
                args,
                "\n      \"cbid\": {}, \"correlation\": {}",
                e.cbid, e.corr
            );
            self.out
                .complete("cuda_runtime", e.name, pid, tid, (e.ts, e.dur), &args);
            self.out
                .flow(cbid_starts_flow(e.cbid), e.corr, pid, tid, e.ts, "ac2g");
            self.out.maybe_flush()?;
        }
        self.rt = rt;
        self.rt.clear();

        let gpu = std::mem::take(&mut self.gpu);
        for e in &gpu {
            let dev = self.devs[e.dev].id;
            let stream = self.devs[e.dev].streams[e.stream].id;
            let ctx = dev + 1;
            let mut args = String::new();
            if e.ext != 0 {
                let _ = write!(args, "\"External id\": {},", e.ext);
            }
            let (cat, name) = match &e.kind {
                GpuKind::Kernel(k) => {
                    self.out.stats.kernels += 1;
                    let blocks = k.grid.iter().product::<u64>();
                    let threads = k.block.iter().product::<u64>();
                    let blocks_per_sm = blocks as f64 / NUM_SMS as f64;
                    let warps_per_sm = blocks_per_sm * threads.div_ceil(32) as f64;
                    // Occupancy as the CUDA occupancy calculator would limit it.
                    let max_active = (MAX_THREADS_PER_SM / threads)
                        .min(REGS_PER_SM / (k.regs * threads).max(1))
                        .min(SMEM_PER_SM.checked_div(k.smem).unwrap_or(32))
                        .min(32) as f64;
                    let occ = (blocks_per_sm.min(max_active) * threads as f64
                        / MAX_THREADS_PER_SM as f64
                        * 100.0
                        + 0.5) as u64;
                    let _ = write!(
                        args,
                        "\n      \"queued\": 0, \"device\": {dev}, \"context\": {ctx},\n      \"stream\": {stream}, \"correlation\": {},\n      \"registers per thread\": {},\n      \"shared memory\": {},\n      \"blocks per SM\": {blocks_per_sm},\n      \"warps per SM\": {warps_per_sm},\n      \"grid\": [{}, {}, {}],\n      \"block\": [{}, {}, {}],\n      \"est. achieved occupancy %\": {occ}",
                        e.corr, k.regs, k.smem, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2]
                    );
                    if let Some(c) = &e.coll {
                        args.push(',');
                        args.push_str(c);
                    }
                    ("kernel", k.name)
                }
                GpuKind::Memcpy(name) => {
                    self.out.stats.memcpy += 1;
                    ("gpu_memcpy", *name)
                }
                GpuKind::Memset => {
                    self.out.stats.memset += 1;
                    ("gpu_memset", "Memset (Device)")
                }
            };
            if !matches!(e.kind, GpuKind::Kernel(_)) {
                let _ = write!(
                    args,
                    "\n      \"device\": {dev}, \"context\": {ctx},\n      \"stream\": {stream}, \"correlation\": {},\n      \"bytes\": {}, \"memory bandwidth (GB/s)\": {}",
                    e.corr,
                    e.bytes,
                    e.bytes as f64 / e.dur as f64
                );
            }
            self.out.stats.gpu_time_ns += e.dur;
            if e.unattributed {
                self.out.stats.unattributed += 1;
                self.out.stats.unattributed_ns += e.dur;
            }
            self.out
                .complete(cat, name, dev, stream, (e.ts, e.dur), &args);
            self.out.flow(false, e.corr, dev, stream, e.ts, "ac2g");
            self.out.maybe_flush()?;
        }
        self.gpu = gpu;
        self.gpu.clear();

        // Kineto mirrors the step annotation onto each stream that ran its
        // work, widened by 1 ns on each side.
        let args = format!("\"External id\": {step_ext}");
        for d in 0..self.devs.len() {
            for s in 0..self.devs[d].streams.len() {
                let st = &self.devs[d].streams[s];
                if st.step_lo <= st.step_hi {
                    let (dev, sid, lo, hi) = (self.devs[d].id, st.id, st.step_lo, st.step_hi);
                    self.out.stats.gpu_user_annotations += 1;
                    self.out.complete(
                        "gpu_user_annotation",
                        step_name,
                        dev,
                        sid,
                        (lo - 1, hi - lo + 2),
                        &args,
                    );
                }
            }
        }
        self.out.maybe_flush()
    }

    pub(crate) fn header(&mut self) {
        let mut props = Vec::new();
        for id in 0..self.node_gpus {
            props.push(format!(
                "\n    {{\n      \"id\": {id}, \"name\": \"{GPU_NAME}\", \"totalGlobalMem\": 85029158912,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": {MAX_THREADS_PER_SM},\n      \"regsPerBlock\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": {NUM_SMS}\n    , \"regsPerMultiprocessor\": {REGS_PER_SM}, \"sharedMemPerBlockOptin\": 232448, \"sharedMemPerMultiprocessor\": {SMEM_PER_SM}\n    }}"
            ));
        }
        let w = self.cfg.world;
        let dist = format!(
            "{{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": {w}, \"pg_count\": 1, \"pg_config\": [{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": {w}, \"ranks\": {}}}], \"nccl_version\": \"2.21.5\"}}",
            self.cfg.rank,
            json_list(0..w)
        );
        let _ = write!(
            self.out.buf,
            "\n  {{\n    \"schemaVersion\": 1,\n    \"deviceProperties\": [{}\n    ],\n      \"distributedInfo\": {dist},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {BASE_TIME_NS},\n  \"traceEvents\": [",
            props.join(",")
        );
    }

    pub(crate) fn footer(&mut self) -> io::Result<()> {
        let t0 = self.trace_start;
        let gpu_end = self
            .devs
            .iter()
            .flat_map(|d| d.streams.iter().map(|s| s.free_at))
            .max()
            .unwrap_or(0);
        let cpu_end = self.cursor.iter().copied().max().unwrap_or(0);
        let end = cpu_end.max(gpu_end) + self.rng.range(40_000, 250_000);

        // Process metadata: the CPU process, then every possible GPU (Kineto
        // announces GPUs 0..=15 whether they were used or not).
        let pname = "python";
        self.out.device_info(self.pid, pname, "CPU", self.pid, t0);
        let max_gpu = self.devs.iter().map(|d| d.id).max().unwrap_or(0).max(15);
        for g in 0..=max_gpu {
            self.out
                .device_info(g, pname, &format!("GPU {g}"), 5_000_000 + g, t0);
        }
        // Threads and streams, ordered by (pid, tid) as Kineto's map is.
        let mut streams: Vec<(u64, u64)> = self
            .devs
            .iter()
            .flat_map(|d| {
                d.streams
                    .iter()
                    .filter(|s| s.used)
                    .map(move |s| (d.id, s.id))
            })
            .collect();
        streams.sort_unstable();
        for (dev, id) in streams {
            self.out
                .resource_info(dev, id, &format!("stream {id} "), id, t0);
        }
        let mut threads: Vec<usize> = (0..self.tids.len())
            .filter(|&t| self.thread_used[t])
            .collect();
        threads.sort_by_key(|&t| self.tids[t]);
        for t in threads {
            let tid = self.tids[t];
            let name = self.thread_names[t].clone();
            self.out.resource_info(self.pid, tid, &name, tid, t0);
        }

        self.out.stats.events += 4;
        let _ = write!(
            self.out.buf,
            "\n  {{\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": {}, \"dur\": {},\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {{\n      \"Op count\": 0\n    }}\n  }},\n  {{\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": {},\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {{\n      \"sort_index\": {}\n    }}\n  }},\n  {{\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": {}\n  }},\n  {{\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": {}\n  }}\n  ],",
            Us(t0),
            Us(end - t0),
            Us(t0),
            0x2000_0000u64,
            Us(t0),
            Us(end)
        );
        // tensorboard_trace_handler's naming: {host}_{pid}.{unix ms}.pt.trace.json
        let unix_ms = (BASE_TIME_NS + t0) / 1_000_000;
        let _ = write!(
            self.out.buf,
            "\n  \"traceName\": \"./log/trainer/gpu-node-{:02}_{}.{unix_ms}.pt.trace.json\"\n}}",
            self.cfg.rank / 8,
            self.pid
        );
        self.out.flush_buf()
    }
}
