//! The CPU timeline: operators, runtime calls and launch costs.

use std::borrow::Cow;

use crate::helpers::*;
use crate::state::*;

impl Gen {
    // --- CPU timeline -----------------------------------------------------

    /// Timestamp for the next event on the current thread: a little after
    /// the parent's start for a first child, after a gap (sometimes none, so
    /// siblings touch) otherwise.
    pub(crate) fn start_ts(&mut self) -> u64 {
        let th = self.th;
        let gap = if self.fresh[th] {
            self.rng.range(250, 2_400)
        } else if self.rng.chance(0.06) {
            0
        } else {
            self.rng.range(150, 1_800)
        };
        self.fresh[th] = false;
        self.cursor[th] += gap;
        self.cursor[th]
    }

    pub(crate) fn advance(&mut self, ns: u64) {
        self.cursor[self.th] += ns;
    }

    pub(crate) fn open(
        &mut self,
        cat: Cat,
        name: impl Into<Cow<'static, str>>,
        extra: String,
    ) -> usize {
        let ts = self.start_ts();
        let th = self.th;
        let ext = self.next_ext;
        self.next_ext += 1;
        self.cpu.push(CpuEv {
            cat,
            name: name.into(),
            thread: th,
            ts,
            dur: 0,
            ext,
            extra,
            flow: None,
        });
        let idx = self.cpu.len() - 1;
        self.stack[th].push(idx);
        self.fresh[th] = true;
        self.thread_used[th] = true;
        idx
    }

    pub(crate) fn op(&mut self, name: &'static str) -> usize {
        self.open(Cat::CpuOp, name, String::new())
    }

    /// cpu_op with record_shapes args; see `shapes` for the spec syntax.
    pub(crate) fn op_sh(&mut self, name: &'static str, args: &str) -> usize {
        self.open(Cat::CpuOp, name, shapes(args))
    }

    pub(crate) fn ua(&mut self, name: impl Into<Cow<'static, str>>) -> usize {
        self.open(Cat::UserAnnotation, name, String::new())
    }

    /// Forward op that creates an autograd node: it gets a sequence number
    /// and starts a fwdbwd flow that the backward op will end.
    pub(crate) fn op_fwd(
        &mut self,
        name: &'static str,
        args: &str,
        node: Node,
        tape: &mut Vec<TapeEntry>,
    ) -> usize {
        if self.cfg.forward_only {
            return self.op_sh(name, args);
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let flow = self.next_flow;
        self.next_flow += 1;
        let extra = format!(
            "{}, \"Sequence number\": {seq}, \"Fwd thread id\": 0",
            shapes(args)
        );
        let idx = self.open(Cat::CpuOp, name, extra);
        self.cpu[idx].flow = Some((flow, true));
        let dev = self.cur_dev;
        tape.push(TapeEntry {
            node,
            dev,
            seq,
            flow,
        });
        idx
    }

    pub(crate) fn close(&mut self) {
        let th = self.th;
        let idx = self.stack[th].pop().expect("close without open");
        // Self time after the last child; never zero, so children end
        // strictly inside their parent.
        let tail = if self.fresh[th] {
            self.rng.range(600, 3_500)
        } else {
            self.rng.range(200, 2_200)
        };
        self.cursor[th] += tail;
        self.fresh[th] = false;
        self.cpu[idx].dur = self.cursor[th] - self.cpu[idx].ts;
    }

    /// Leaf op with a self time in `lo..=hi`, zero-duration with probability
    /// `zero_p` (cheap view/alloc ops measured below the clock's resolution).
    pub(crate) fn leaf(
        &mut self,
        name: &'static str,
        extra: String,
        lo: u64,
        hi: u64,
        zero_p: f64,
    ) {
        let ts = self.start_ts();
        let dur = if self.rng.chance(zero_p) {
            0
        } else {
            self.rng.range(lo, hi)
        };
        let th = self.th;
        let ext = self.next_ext;
        self.next_ext += 1;
        self.cpu.push(CpuEv {
            cat: Cat::CpuOp,
            name: Cow::Borrowed(name),
            thread: th,
            ts,
            dur,
            ext,
            extra,
            flow: None,
        });
        self.cursor[th] = ts + dur;
        self.thread_used[th] = true;
    }

    pub(crate) fn empty(&mut self, name: &'static str) {
        self.leaf(name, String::new(), 700, 2_600, 0.08);
    }

    pub(crate) fn view(&mut self, name: &'static str) {
        self.leaf(name, String::new(), 500, 1_900, 0.04);
    }

    /// aten::t / aten::transpose: a view made of a transpose and an as_strided.
    pub(crate) fn transpose(&mut self, name: &'static str) {
        self.op(name);
        if name == "aten::t" {
            self.op("aten::transpose");
            self.view("aten::as_strided");
            self.close();
        } else {
            self.view("aten::as_strided");
        }
        self.close();
    }

    /// Innermost cpu_op on the current thread: what the CUPTI external
    /// correlation links runtime calls (and their GPU work) to.
    pub(crate) fn linked_ext(&self) -> u64 {
        self.stack[self.th]
            .iter()
            .rev()
            .map(|&i| &self.cpu[i])
            .find(|e| e.cat == Cat::CpuOp)
            .map_or(0, |e| e.ext)
    }

    pub(crate) fn corr(&mut self) -> u64 {
        // Runtime calls Kineto filters out (cudaGetDevice, cudaGetLastError...)
        // consume correlation ids too, so the ids in the file have gaps.
        self.next_corr += if self.rng.chance(0.3) {
            self.rng.range(2, 4)
        } else {
            1
        };
        self.next_corr
    }

    /// A cuda_runtime event lasting `dur`; returns (ts, correlation id).
    pub(crate) fn runtime(&mut self, name: &'static str, cbid: u32, dur: u64) -> (u64, u64) {
        let ts = self.start_ts();
        let corr = self.corr();
        let ext = self.linked_ext();
        let th = self.th;
        self.rt.push(RtEv {
            name,
            cbid,
            thread: th,
            ts,
            dur,
            ext,
            corr,
        });
        self.cursor[th] = ts + dur;
        self.thread_used[th] = true;
        (ts, corr)
    }

    /// Duration of a launch-like runtime call: a few µs, the very first ones
    /// slow (lazy module loading), an occasional stall.
    pub(crate) fn launch_cost(&mut self, lo: u64, hi: u64) -> u64 {
        self.launches += 1;
        if self.launches <= 3 {
            self.rng.range(18_000, 45_000)
        } else if self.rng.chance(0.01) {
            self.rng.range(15_000, 60_000)
        } else {
            self.rng.range(lo, hi)
        }
    }
}
