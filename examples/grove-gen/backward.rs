//! The backward pass, the all-reduce, the optimizer and the loss.

use crate::catalogue::*;
use crate::helpers::*;
use crate::state::*;

impl Gen {
    /// Switch the emitting thread to the autograd thread of `dev`; the
    /// engine hands work between threads with a short delay.
    pub(crate) fn switch_to_autograd_thread(&mut self, dev: usize) {
        let next = 1 + dev;
        if next != self.th {
            let handoff = self.cursor[self.th] + self.rng.range(4_000, 18_000);
            self.cursor[next] = self.cursor[next].max(handoff);
            self.fresh[next] = false;
            self.th = next;
        }
    }

    pub(crate) fn backward(&mut self, tape: Vec<TapeEntry>) {
        self.th = 0;
        self.ua("## backward ##");
        // loss.backward(): seed gradient, then the engine takes over.
        let last = self.cur_dev;
        self.op_sh("aten::ones_like", "f[] - - - - Scalar");
        self.op("aten::empty_like");
        self.empty("aten::empty_strided");
        self.close();
        self.op_sh("aten::fill_", "f[] Scalar");
        self.launch(K_FILL_F32, last, Role::Compute, 0);
        self.close();
        self.close();
        let main_cursor = self.cursor[0];
        self.switch_to_autograd_thread(last);

        for entry in tape.into_iter().rev() {
            self.switch_to_autograd_thread(entry.dev);
            self.backward_node(entry);
        }
        // End of backward: the compute streams wait for the side streams
        // (the engine syncs streams it used) and for DDP's last all-reduces.
        // Issued outside any op, so these runtime events have no External id.
        for dev in 0..self.cfg.devices {
            self.switch_to_autograd_thread(dev);
            for _ in 0..self.devs[dev].side.len() {
                self.stream_wait(dev, Role::Compute, Role::Side);
            }
            if self.cfg.world > 1 {
                self.stream_wait(dev, Role::Compute, Role::Nccl);
            }
        }
        // The main thread blocks in the engine until the graph is done.
        let done = self.cursor[self.th];
        self.th = 0;
        self.cursor[0] = main_cursor.max(done + self.rng.range(3_000, 15_000));
        self.close();
    }

    /// With gradients set to None before the step, AccumulateGrad only has
    /// to steal the incoming gradient: a detach, no GPU work.
    pub(crate) fn accumulate_grad(&mut self) {
        self.op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad");
        self.op("torch::autograd::AccumulateGrad");
        self.view("aten::detach");
        self.close();
        self.close();
    }

    pub(crate) fn backward_node(&mut self, e: TapeEntry) {
        self.cur_dev = e.dev;
        let dev = e.dev;
        if let Node::BucketReady { params } = e.node {
            if self.cfg.world > 1 {
                self.all_reduce(params);
            }
            return;
        }
        let name = e.node.backward_name();
        let extra = format!(", \"Sequence number\": {}, \"Fwd thread id\": 1", e.seq);
        let idx = self.open(
            Cat::CpuOp,
            format!("autograd::engine::evaluate_function: {name}"),
            extra.clone(),
        );
        if e.flow != 0 {
            self.cpu[idx].flow = Some((e.flow, false));
        }
        self.open(Cat::CpuOp, name, extra);
        match e.node {
            Node::Embedding => {
                self.op_sh(
                    "aten::embedding_backward",
                    "h[B,S,H] l[B,S] Scalar Scalar Scalar Scalar",
                );
                self.op_sh(
                    "aten::embedding_dense_backward",
                    "h[B,S,H] l[B,S] Scalar Scalar Scalar",
                );
                self.op("aten::zeros");
                self.empty("aten::empty");
                self.op("aten::zero_");
                self.memset(dev, Role::Compute, VOCAB * HIDDEN * 2);
                self.close();
                self.close();
                self.launch(K_EMBEDDING_BWD, dev, Role::Compute, 0);
                self.close();
                self.close();
            }
            Node::LayerNorm => {
                self.op_sh(
                    "aten::native_layer_norm_backward",
                    "h[B,S,H] h[B,S,H] ScalarList f[T,1] f[T,1] f[H] f[H] ScalarList",
                );
                self.empty("aten::empty_like");
                self.empty("aten::empty_like");
                self.empty("aten::empty_like");
                self.launch(K_LN_BWD_INPUT, dev, Role::Compute, 0);
                self.launch(K_LN_BWD_GAMMA, dev, Role::Compute, 0);
                self.close();
            }
            Node::Linear {
                fwd,
                bias,
                fin,
                fout,
            } => {
                self.transpose("aten::t");
                self.op_sh("aten::mm", &format!("h[T,{fout}] h[{fout},{fin}]"));
                self.launch(K_GEMM_DGRAD, dev, Role::Compute, fwd.ns * 102 / 100);
                self.close();
                self.transpose("aten::t");
                self.op_sh("aten::mm", &format!("h[{fout},T] h[T,{fin}]"));
                self.launch(K_GEMM_WGRAD, dev, Role::Compute, fwd.ns * 108 / 100);
                // cuBLAS picks split-K for the skinny weight-gradient GEMMs.
                if fwd.ns < 200_000 {
                    self.launch(K_SPLITK_REDUCE, dev, Role::Compute, 0);
                }
                self.close();
                self.transpose("aten::t");
                if bias {
                    self.op_sh("aten::sum", &format!("h[T,{fout}] ScalarList Scalar -"));
                    // Bias gradients go to a side stream when there is one.
                    self.launch(K_REDUCE_SUM, dev, Role::Side, 0);
                    self.close();
                    self.view("aten::view");
                }
            }
            Node::Gelu => {
                self.op_sh("aten::gelu_backward", "h[B,S,F] h[B,S,F] -");
                self.launch(K_GELU_BWD, dev, Role::Compute, 0);
                self.close();
            }
            Node::Add | Node::Clone => {
                // Pass-through gradients: bookkeeping only.
                let c = self.rng.range(800, 4_000);
                self.advance(c);
            }
            Node::View | Node::Permute | Node::Transpose => {
                // The gradient is a view of the incoming one.
                let name = match e.node {
                    Node::View => "aten::reshape",
                    Node::Permute => "aten::permute",
                    _ => "aten::transpose",
                };
                self.op(name);
                self.view("aten::as_strided");
                self.close();
            }
            Node::Unbind => {
                self.op_sh("aten::stack", "TensorList Scalar");
                self.op_sh("aten::cat", "TensorList Scalar");
                self.launch(K_CAT, dev, Role::Compute, 0);
                self.close();
                self.close();
            }
            Node::Flash => {
                self.op_sh(
                    "aten::_scaled_dot_product_flash_attention_backward",
                    "h[B,N,S,D] h[B,N,S,D] h[B,N,S,D] h[B,N,S,D] h[B,N,S,D] f[B,N,S]",
                );
                for _ in 0..3 {
                    self.transpose("aten::transpose");
                }
                self.op_sh(
                    "aten::_flash_attention_backward",
                    "h[B,S,N,D] h[B,S,N,D] h[B,S,N,D]",
                );
                self.empty("aten::empty_like");
                self.empty("aten::empty_like");
                self.empty("aten::empty_like");
                self.empty("aten::empty");
                self.op("aten::zeros");
                self.empty("aten::empty");
                self.op("aten::zero_");
                self.memset(dev, Role::Compute, BATCH * SEQ * HEADS * HEAD_DIM * 4);
                self.close();
                self.close();
                self.launch(K_FLASH_BWD_DOT, dev, Role::Compute, 0);
                self.launch(K_FLASH_BWD, dev, Role::Compute, 0);
                self.launch(K_FLASH_BWD_CONVERT, dev, Role::Compute, 0);
                self.close();
                self.transpose("aten::transpose");
                self.close();
            }
            Node::Bmm => {
                for _ in 0..2 {
                    self.transpose("aten::transpose");
                    self.op_sh("aten::bmm", "h[B*N,S,S] h[B*N,S,D]");
                    self.launch(K_BMM, dev, Role::Compute, 0);
                    self.close();
                }
            }
            Node::Softmax => {
                self.op_sh(
                    "aten::_softmax_backward_data",
                    "h[B,N,S,S] h[B,N,S,S] Scalar Scalar",
                );
                self.empty("aten::empty_like");
                self.launch(K_SOFTMAX_BWD, dev, Role::Compute, 0);
                self.close();
            }
            Node::Div => {
                self.op_sh("aten::div", "h[B,N,S,S] Scalar");
                self.launch(K_DIV_HALF, dev, Role::Compute, 0);
                self.close();
            }
            Node::LogSoftmax => {
                self.op_sh(
                    "aten::_log_softmax_backward_data",
                    "f[T,V] f[T,V] Scalar Scalar",
                );
                self.empty("aten::empty_like");
                self.launch(K_LOG_SOFTMAX_BWD, dev, Role::Compute, 0);
                self.close();
            }
            Node::NllLoss => {
                self.op_sh(
                    "aten::nll_loss_backward",
                    "f[] f[T,V] l[T] - Scalar Scalar f[]",
                );
                self.empty("aten::empty_like");
                self.op("aten::zero_");
                self.memset(dev, Role::Compute, TOKENS * VOCAB * 4);
                self.close();
                self.launch(K_NLL_BWD, dev, Role::Compute, 0);
                self.close();
            }
            Node::ToDevice { from } => {
                self.op_sh("aten::to", "h[B,S,H] - Scalar Scalar -");
                self.op_sh("aten::_to_copy", "h[B,S,H] - - - Scalar");
                self.peer_copy(dev, from);
            }
            Node::BucketReady { .. } => unreachable!(),
        }
        self.close();
        self.close();
        // One AccumulateGrad per parameter this node produced a gradient for.
        let params = match e.node {
            Node::Embedding => 1,
            Node::LayerNorm | Node::Linear { bias: true, .. } => 2,
            Node::Linear { bias: false, .. } => 1,
            _ => 0,
        };
        for _ in 0..params {
            self.accumulate_grad();
        }
    }

    /// DDP bucket all-reduce, issued from the reducer hook on the autograd
    /// thread and run on the NCCL stream once the gradients are computed.
    pub(crate) fn all_reduce(&mut self, params: u64) {
        let dev = self.cur_dev;
        let w = self.cfg.world;
        let ranks = json_list(0..w);
        let common = format!(
            "\"Collective name\": \"allreduce\", \"In msg nelems\": {params}, \"Out msg nelems\": {params}, \"Group size\": {w}, \"dtype\": \"Float\""
        );
        let pg = format!(
            "\"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", \"Process Group Ranks\": {ranks}"
        );
        self.op_sh("c10d::allreduce_", &format!("f[{params}] - - - Scalar"));
        let extra = format!(
            ", {common}, \"In split size\": \"[]\", \"Out split size\": \"[]\", \"Global rank start\": 0, \"Global rank stride\": 1, {pg}, \"Rank\": {}",
            self.cfg.rank
        );
        self.open(Cat::CpuOp, "record_param_comms", extra);
        self.ua("nccl:all_reduce");
        let c = self.rng.range(300, 900);
        self.runtime("cudaStreamIsCapturing", CBID_STREAM_IS_CAPTURING, c);
        self.stream_wait(dev, Role::Nccl, Role::Compute);
        // Ring all-reduce at ~300 GB/s bus bandwidth.
        let bytes = params * 4;
        let ns = 8_000 + 2 * (w - 1) * bytes / w / 300;
        let coll =
            format!(" {common}, \"In split size\": \"[]\", \"Out split size\": \"[]\", {pg}");
        self.launch_coll(K_NCCL_ALLREDUCE, dev, Role::Nccl, ns, 0, Some(coll));
        let c = self.rng.range(900, 2_200);
        self.runtime("cudaEventRecord", CBID_EVENT_RECORD, c);
        self.close();
        self.close();
        self.close();
    }

    pub(crate) fn optimizer(&mut self) {
        self.th = 0;
        self.ua("## optimizer ##");
        let per_dev: Vec<u64> = (0..self.cfg.devices)
            .map(|d| {
                let layers = (0..self.cfg.layers)
                    .filter(|&l| self.dev_of_layer(l) == d)
                    .count() as u64;
                let mut p = layers * LAYER_PARAMS;
                if d == 0 {
                    p += VOCAB * HIDDEN;
                }
                if d == self.cfg.devices - 1 {
                    p += HIDDEN * VOCAB + 2 * HIDDEN;
                }
                p
            })
            .collect();
        // clip_grad_norm_: per-tensor norms, total norm, scale.
        self.op_sh("aten::_foreach_norm", "TensorList Scalar -");
        for (d, &p) in per_dev.iter().enumerate() {
            let chunks = 1 + p / 400_000_000;
            for _ in 0..chunks {
                self.launch(K_LPNORM, d, Role::Compute, 3_000 + p * 4 / chunks / 2_900);
            }
            self.launch(K_LPNORM_CLEANUP, d, Role::Compute, 0);
        }
        self.close();
        self.op_sh("aten::stack", "TensorList Scalar");
        self.op_sh("aten::cat", "TensorList Scalar");
        self.launch(K_CAT_SMALL, 0, Role::Compute, 0);
        self.close();
        self.close();
        self.op_sh("aten::linalg_vector_norm", "f[1] Scalar - Scalar -");
        self.launch(K_NORM_REDUCE, 0, Role::Compute, 0);
        self.close();
        // max_norm / (total_norm + 1e-6)
        self.op_sh("aten::add_", "f[] Scalar Scalar");
        self.launch(K_ADD_F32, 0, Role::Compute, 0);
        self.close();
        self.op_sh("aten::div", "Scalar f[]");
        self.launch(K_DIV_F32, 0, Role::Compute, 0);
        self.close();
        self.op_sh("aten::clamp", "f[] - Scalar");
        self.launch(K_CLAMP, 0, Role::Compute, 0);
        self.close();
        self.op_sh("aten::_foreach_mul_", "TensorList f[]");
        for (d, &p) in per_dev.iter().enumerate() {
            let chunks = 1 + p / 400_000_000;
            for _ in 0..chunks {
                self.launch(
                    K_FOREACH_MUL,
                    d,
                    Role::Compute,
                    3_000 + p * 8 / chunks / 2_900,
                );
            }
        }
        self.close();

        self.ua("Optimizer.step#AdamW.step");
        self.op_sh(
            "aten::_fused_adamw_",
            "TensorList TensorList TensorList TensorList TensorList TensorList Scalar Scalar Scalar Scalar Scalar Scalar Scalar - -",
        );
        for (d, &p) in per_dev.iter().enumerate() {
            let chunks = 1 + p / 250_000_000;
            for _ in 0..chunks {
                // param, grad, exp_avg, exp_avg_sq read + 3 written, fp32.
                self.launch(
                    K_FUSED_ADAMW,
                    d,
                    Role::Compute,
                    5_000 + p * 28 / chunks / 2_900,
                );
            }
        }
        self.close();
        self.close();
        self.close();
    }

    /// loss.item(): a blocking device-to-host copy, the step's sync point.
    pub(crate) fn loss_item(&mut self) {
        self.th = 0;
        let dev = self.cfg.devices - 1;
        self.op_sh("aten::item", "f[]");
        self.op_sh("aten::_local_scalar_dense", "f[]");
        self.memcpy(
            "Memcpy DtoH (Device -> Pageable)",
            dev,
            Role::Compute,
            4,
            2_000,
            0,
        );
        self.stream_sync(dev, Role::Compute);
        self.close();
        self.close();
    }
}
