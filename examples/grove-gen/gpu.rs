//! The GPU timeline: streams, kernels, copies, sets and synchronisation.

use crate::catalogue::*;
use crate::state::*;

impl Gen {
    // --- GPU timeline -----------------------------------------------------

    pub(crate) fn stream_index(&mut self, dev: usize, role: Role) -> usize {
        let d = &mut self.devs[dev];
        match role {
            Role::Compute => 0,
            Role::Nccl => d.nccl,
            Role::Copy => d.copy,
            Role::Side => {
                if d.side.is_empty() {
                    0
                } else {
                    d.next_side = (d.next_side + 1) % d.side.len();
                    d.side[d.next_side]
                }
            }
        }
    }

    /// Schedule `dur` ns of work on a stream for a launch issued at `launch`;
    /// it cannot start before `dep` (cross-stream dependencies). Returns the
    /// start time.
    pub(crate) fn schedule(
        &mut self,
        dev: usize,
        s: usize,
        launch: u64,
        dur: u64,
        dep: u64,
        allow_overlap: bool,
    ) -> u64 {
        // The GPU sees the launch a few µs after the runtime call begins.
        let earliest = (launch + self.rng.range(2_500, 6_500)).max(dep);
        let st = &self.devs[dev].streams[s];
        let (free_at, last_start) = (st.free_at, st.last_start);
        let mut start = if free_at <= earliest {
            earliest
        } else {
            // Queued behind earlier work: the stream's launch gap.
            free_at + self.rng.range(700, 1_900)
        };
        // Programmatic dependent launch lets a kernel start while its
        // predecessor drains, so a few kernels overlap on one stream.
        if allow_overlap && free_at > earliest && self.rng.chance(0.25) {
            let overlap = self.rng.range(800, 3_000).min((free_at - last_start) / 2);
            start = (free_at - overlap).max(earliest).max(last_start + 1);
        }
        let st = &mut self.devs[dev].streams[s];
        st.free_at = st.free_at.max(start + dur);
        st.last_start = start;
        st.used = true;
        st.step_lo = st.step_lo.min(start);
        st.step_hi = st.step_hi.max(start + dur);
        start
    }

    pub(crate) fn kernel_ns(&mut self, k: &Kernel, ns: u64) -> u64 {
        let base = if ns > 0 { ns } else { k.ns };
        self.rng.jitter(base, 4)
    }

    /// cudaLaunchKernel(ExC) + the kernel it launches. `ns` overrides the
    /// kernel's catalogue duration when non-zero.
    pub(crate) fn launch(&mut self, k: Kernel, dev: usize, role: Role, ns: u64) {
        self.launch_coll(k, dev, role, ns, 0, None);
    }

    pub(crate) fn launch_coll(
        &mut self,
        k: Kernel,
        dev: usize,
        role: Role,
        ns: u64,
        dep: u64,
        coll: Option<String>,
    ) {
        let (name, cbid, cost) = if k.pdl {
            let c = self.launch_cost(3_000, 8_000);
            ("cudaLaunchKernelExC", CBID_LAUNCH_KERNEL_EXC, c)
        } else {
            let c = self.launch_cost(2_400, 6_500);
            ("cudaLaunchKernel", CBID_LAUNCH_KERNEL, c)
        };
        let (ts, corr) = self.runtime(name, cbid, cost);
        let ext = self.linked_ext();
        let s = self.stream_index(dev, role);
        // Work sent to a side stream consumes results of the compute stream
        // (PyTorch makes it wait on an event).
        let dep = if s != 0 {
            dep.max(self.devs[dev].streams[0].free_at)
        } else {
            dep
        };
        let dur = self.kernel_ns(&k, ns);
        let start = self.schedule(dev, s, ts, dur, dep, k.pdl);
        self.gpu.push(GpuEv {
            kind: GpuKind::Kernel(k),
            dev,
            stream: s,
            ts: start,
            dur,
            ext,
            corr,
            bytes: 0,
            coll,
            unattributed: false,
        });
    }

    /// cudaMemcpyAsync + the copy. `bw` is the effective bandwidth in bytes
    /// per µs (i.e. MB/s); copies also pay a fixed ~1.5 µs.
    pub(crate) fn memcpy(
        &mut self,
        name: &'static str,
        dev: usize,
        role: Role,
        bytes: u64,
        bw: u64,
        dep: u64,
    ) {
        let cost = self.launch_cost(4_000, 11_000);
        let (ts, corr) = self.runtime("cudaMemcpyAsync", CBID_MEMCPY_ASYNC, cost);
        let ext = self.linked_ext();
        let s = self.stream_index(dev, role);
        let dur = self.rng.jitter(1_400 + bytes * 1_000 / bw, 6);
        let start = self.schedule(dev, s, ts, dur, dep, false);
        self.gpu.push(GpuEv {
            kind: GpuKind::Memcpy(name),
            dev,
            stream: s,
            ts: start,
            dur,
            ext,
            corr,
            bytes,
            coll: None,
            unattributed: false,
        });
    }

    pub(crate) fn memset(&mut self, dev: usize, role: Role, bytes: u64) {
        let cost = self.launch_cost(2_500, 5_500);
        let (ts, corr) = self.runtime("cudaMemsetAsync", CBID_MEMSET_ASYNC, cost);
        let ext = self.linked_ext();
        let s = self.stream_index(dev, role);
        // ~2.5 TB/s fill rate.
        let dur = self.rng.jitter(1_200 + bytes / 2_500, 5);
        let start = self.schedule(dev, s, ts, dur, 0, false);
        self.gpu.push(GpuEv {
            kind: GpuKind::Memset,
            dev,
            stream: s,
            ts: start,
            dur,
            ext,
            corr,
            bytes,
            coll: None,
            unattributed: false,
        });
    }

    /// cudaStreamSynchronize: blocks the CPU until the stream drains.
    pub(crate) fn stream_sync(&mut self, dev: usize, role: Role) {
        let s = self.stream_index(dev, role);
        let free_at = self.devs[dev].streams[s].free_at;
        // The duration depends on where the call lands, so place it first.
        let ts = self.start_ts();
        let dur = if free_at > ts {
            free_at - ts + self.rng.range(1_500, 4_000)
        } else {
            self.rng.range(1_200, 3_000)
        };
        let corr = self.corr();
        let ext = self.linked_ext();
        let th = self.th;
        self.rt.push(RtEv {
            name: "cudaStreamSynchronize",
            cbid: CBID_STREAM_SYNC,
            thread: th,
            ts,
            dur,
            ext,
            corr,
        });
        self.cursor[th] = ts + dur;
    }

    /// cudaEventRecord + cudaStreamWaitEvent: `waiter` will not start new work
    /// before everything queued so far on `on` has finished.
    pub(crate) fn stream_wait(&mut self, dev: usize, waiter: Role, on: Role) {
        let c = self.rng.range(900, 2_200);
        self.runtime("cudaEventRecord", CBID_EVENT_RECORD, c);
        let c = self.rng.range(900, 2_600);
        self.runtime("cudaStreamWaitEvent", CBID_STREAM_WAIT_EVENT, c);
        let w = self.stream_index(dev, waiter);
        let o = self.stream_index(dev, on);
        let done = self.devs[dev].streams[o].free_at;
        let st = &mut self.devs[dev].streams[w];
        if done > st.free_at {
            // Also move last_start so no dependent launch overlaps the wait.
            st.free_at = done;
            st.last_start = done;
        }
    }

    pub(crate) fn stream_free(&mut self, dev: usize, role: Role) -> u64 {
        let s = self.stream_index(dev, role);
        self.devs[dev].streams[s].free_at
    }
}
