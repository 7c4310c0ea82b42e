//! The training step: data loading, the forward pass and its transformer blocks.

use std::io::{self};

use crate::catalogue::*;
use crate::state::*;

impl Gen {
    // --- The training step ------------------------------------------------

    pub(crate) fn dev_of_layer(&self, l: u64) -> usize {
        (l * self.cfg.devices as u64 / self.cfg.layers) as usize
    }

    /// GPU work still running from the iteration before the profiler
    /// started: CUPTI hands it over, but its launches predate the window, so
    /// these activities have a correlation id and no runtime event.
    pub(crate) fn prelude(&mut self) {
        let t = self.trace_start + self.rng.range(3_000, 15_000);
        let mut corr = self.next_corr - self.rng.range(30, 60);
        let s = 0;
        self.devs[0].streams[s].free_at = t;
        let tail: [(Option<Kernel>, u64); 3] = [
            (Some(K_FUSED_ADAMW), 180_000),
            (Some(K_FUSED_ADAMW), 150_000),
            (None, 4 << 20),
        ];
        for (k, size) in tail {
            let start = self.devs[0].streams[s].free_at + self.rng.range(700, 1_500);
            let (kind, dur, bytes) = match k {
                Some(k) => (GpuKind::Kernel(k), self.rng.jitter(size, 5), 0),
                None => (
                    GpuKind::Memset,
                    self.rng.jitter(1_200 + size / 2_500, 5),
                    size,
                ),
            };
            corr += self.rng.range(1, 3);
            self.devs[0].streams[s].free_at = start + dur;
            self.devs[0].streams[s].used = true;
            self.gpu.push(GpuEv {
                kind,
                dev: 0,
                stream: s,
                ts: start,
                dur,
                ext: 0,
                corr,
                bytes,
                coll: None,
                unattributed: true,
            });
        }
        // Profiler start-up before the first step begins on the CPU.
        self.cursor[0] = self.trace_start + self.rng.range(900_000, 2_400_000);
    }

    pub(crate) fn step(&mut self, n: u64) -> io::Result<()> {
        self.th = 0;
        for d in &mut self.devs {
            for s in &mut d.streams {
                s.step_lo = u64::MAX;
                s.step_hi = 0;
            }
        }
        let step_idx = self.ua(format!("ProfilerStep#{n}"));
        self.cur_dev = 0;
        self.data_loading();
        if !self.cfg.forward_only {
            self.zero_grad();
        }
        let mut tape = Vec::new();
        self.forward(&mut tape);
        if !self.cfg.forward_only {
            self.backward(tape);
            self.optimizer();
        }
        self.loss_item();
        self.close();
        let step_ext = self.cpu[step_idx].ext;
        let name = format!("ProfilerStep#{n}");
        self.flush_step(&name, step_ext)?;
        self.out.stats.steps += 1;
        // The next step opens right after (profiler.step() between them).
        let gap = if self.rng.chance(0.3) {
            0
        } else {
            self.rng.range(2_000, 40_000)
        };
        self.advance(gap);
        Ok(())
    }

    pub(crate) fn data_loading(&mut self) {
        self.ua("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
        for _ in 0..2 {
            self.op_sh("aten::stack", "TensorList Scalar");
            for _ in 0..BATCH {
                self.op_sh("aten::unsqueeze", "l[S] Scalar");
                self.view("aten::as_strided");
                self.close();
            }
            self.op_sh("aten::cat", "TensorList Scalar");
            // The actual CPU-side copy of the batch.
            let c = self.rng.range(15_000, 60_000);
            self.advance(c);
            self.close();
            self.close();
        }
        self.close();
        // Host-to-device copies of input ids and labels on the copy stream.
        for _ in 0..2 {
            self.op_sh("aten::to", "l[B,S] Scalar - - Scalar");
            self.op_sh("aten::_to_copy", "l[B,S] Scalar - - Scalar");
            self.empty("aten::empty_strided");
            self.op_sh("aten::copy_", "l[B,S] l[B,S] Scalar");
            self.memcpy(
                "Memcpy HtoD (Pinned -> Device)",
                0,
                Role::Copy,
                TOKENS * 8,
                22_000,
                0,
            );
            self.close();
            self.close();
            self.close();
        }
        // torch.cuda.current_stream().wait_stream(copy_stream): called from
        // Python, outside any op, so these runtime events have no External id.
        if self.devs[0].copy != 0 {
            self.stream_wait(0, Role::Compute, Role::Copy);
        }
    }

    /// zero_grad(set_to_none=True), PyTorch's default: gradients are just
    /// dropped, so the annotation has no children and launches nothing.
    pub(crate) fn zero_grad(&mut self) {
        self.ua("Optimizer.zero_grad#AdamW.zero_grad");
        let c = self.rng.range(20_000, 90_000);
        self.advance(c);
        self.close();
    }

    pub(crate) fn forward(&mut self, tape: &mut Vec<TapeEntry>) {
        self.ua("## forward ##");
        let ddp = self.cfg.world > 1;
        if ddp {
            self.ua("DistributedDataParallel.forward");
        }
        self.cur_dev = 0;
        // Embedding.
        self.ua("nn.Module: Embedding_0");
        self.op_fwd(
            "aten::embedding",
            "h[V,H] l[B,S] Scalar Scalar Scalar",
            Node::Embedding,
            tape,
        );
        self.view("aten::reshape");
        self.op_sh("aten::index_select", "h[V,H] Scalar l[T]");
        self.empty("aten::empty");
        self.launch(K_EMBEDDING, 0, Role::Compute, 0);
        self.close();
        self.view("aten::view");
        self.close();
        self.close();
        tape.push(TapeEntry::bucket(0, VOCAB * HIDDEN));

        let mut linear_idx = 0;
        for l in 0..self.cfg.layers {
            let dev = self.dev_of_layer(l);
            if dev != self.cur_dev {
                self.move_to_device(dev, tape);
            }
            // Recorded before the block, so replayed after its backward.
            tape.push(TapeEntry::bucket(dev, LAYER_PARAMS));
            self.block(l, &mut linear_idx, tape);
        }
        let last = self.cur_dev;
        self.layer_norm(tape);
        self.linear(&mut linear_idx, HIDDEN, VOCAB, false, K_GEMM_LM_HEAD, tape);

        // Loss in fp32.
        self.op_sh(
            "aten::cross_entropy_loss",
            "f[T,V] l[T] - Scalar Scalar Scalar",
        );
        self.op_sh("aten::log_softmax", "f[T,V] Scalar -");
        self.op_fwd(
            "aten::_log_softmax",
            "f[T,V] Scalar Scalar",
            Node::LogSoftmax,
            tape,
        );
        self.launch(K_LOG_SOFTMAX, last, Role::Compute, 0);
        self.close();
        self.close();
        self.op_sh("aten::nll_loss_nd", "f[T,V] l[T] - Scalar Scalar");
        self.op_sh("aten::nll_loss", "f[T,V] l[T] - Scalar Scalar");
        self.op_fwd(
            "aten::nll_loss_forward",
            "f[T,V] l[T] - Scalar Scalar",
            Node::NllLoss,
            tape,
        );
        self.empty("aten::empty");
        self.empty("aten::empty");
        self.launch(K_NLL, last, Role::Compute, 0);
        self.close();
        self.close();
        self.close();
        self.close();
        if ddp {
            self.close();
        }
        // loss.detach().to("cpu", non_blocking=True) for the logger.
        self.op_sh("aten::to", "f[] Scalar - - Scalar");
        self.op_sh("aten::_to_copy", "f[] Scalar - - Scalar");
        self.empty("aten::empty_strided");
        self.op_sh("aten::copy_", "f[] f[] Scalar");
        self.memcpy(
            "Memcpy DtoH (Device -> Pinned)",
            last,
            Role::Compute,
            4,
            2_000,
            0,
        );
        self.close();
        self.close();
        self.close();
        self.close();
    }

    /// Move the activation to the next device (pipeline-style model split).
    pub(crate) fn move_to_device(&mut self, dev: usize, tape: &mut Vec<TapeEntry>) {
        let from = self.cur_dev;
        self.op_sh("aten::to", "h[B,S,H] - Scalar Scalar -");
        self.cur_dev = dev;
        self.op_fwd(
            "aten::_to_copy",
            "h[B,S,H] - - - Scalar",
            Node::ToDevice { from },
            tape,
        );
        self.peer_copy(from, dev);
    }

    /// The inside of `aten::_to_copy` between devices: once `from`'s compute stream is
    /// free, `to` copies the activation over; closes the three ops `aten::to` opened.
    pub(crate) fn peer_copy(&mut self, from: usize, to: usize) {
        self.empty("aten::empty_strided");
        self.op_sh("aten::copy_", "h[B,S,H] h[B,S,H] Scalar");
        let dep = self.stream_free(from, Role::Compute);
        self.memcpy(
            "Memcpy PtoP (Device -> Device)",
            to,
            Role::Compute,
            TOKENS * HIDDEN * 2,
            280_000,
            dep,
        );
        self.close();
        self.close();
        self.close();
    }

    pub(crate) fn layer_norm(&mut self, tape: &mut Vec<TapeEntry>) {
        let dev = self.cur_dev;
        self.ua("layer_norm");
        self.op_sh(
            "aten::layer_norm",
            "h[B,S,H] ScalarList f[H] f[H] Scalar Scalar",
        );
        self.op_fwd(
            "aten::native_layer_norm",
            "h[B,S,H] ScalarList f[H] f[H] Scalar",
            Node::LayerNorm,
            tape,
        );
        self.empty("aten::empty_like");
        self.empty("aten::empty");
        self.empty("aten::empty");
        self.launch(K_LN_FWD, dev, Role::Compute, 0);
        self.close();
        self.close();
        self.close();
    }

    /// nn.Linear on fp16 activations and weights: a GEMM (cuBLAS picks the
    /// kernel), with the bias folded in through addmm.
    pub(crate) fn linear(
        &mut self,
        idx: &mut u64,
        fin: u64,
        fout: u64,
        bias: bool,
        k: Kernel,
        tape: &mut Vec<TapeEntry>,
    ) {
        let dev = self.cur_dev;
        self.ua(format!("nn.Module: Linear_{idx}"));
        *idx += 1;
        if bias {
            self.op_sh(
                "aten::linear",
                &format!("h[B,S,{fin}] h[{fout},{fin}] h[{fout}]"),
            );
        } else {
            self.op_sh("aten::linear", &format!("h[B,S,{fin}] h[{fout},{fin}] -"));
        }
        self.transpose("aten::t");
        if bias {
            self.view("aten::view");
            self.op_fwd(
                "aten::addmm",
                &format!("h[{fout}] h[T,{fin}] h[{fin},{fout}] Scalar Scalar"),
                Node::Linear {
                    fwd: k,
                    bias,
                    fin,
                    fout,
                },
                tape,
            );
            self.launch(k, dev, Role::Compute, 0);
            self.close();
            self.view("aten::view");
        } else {
            self.op_sh("aten::matmul", &format!("h[B,S,{fin}] h[{fin},{fout}]"));
            self.view("aten::reshape");
            self.op_fwd(
                "aten::mm",
                &format!("h[T,{fin}] h[{fin},{fout}]"),
                Node::Linear {
                    fwd: k,
                    bias,
                    fin,
                    fout,
                },
                tape,
            );
            self.launch(k, dev, Role::Compute, 0);
            self.close();
            self.view("aten::_unsafe_view");
            self.close();
        }
        self.close();
        self.close();
    }

    pub(crate) fn residual_add(&mut self, tape: &mut Vec<TapeEntry>) {
        let dev = self.cur_dev;
        self.op_fwd("aten::add", "h[B,S,H] h[B,S,H] Scalar", Node::Add, tape);
        self.launch(K_ADD_HALF, dev, Role::Compute, 0);
        self.close();
    }

    pub(crate) fn block(&mut self, l: u64, linear_idx: &mut u64, tape: &mut Vec<TapeEntry>) {
        let dev = self.cur_dev;
        self.ua(format!("nn.Module: TransformerBlock_{l}"));
        self.layer_norm(tape);

        self.ua("attention");
        self.linear(linear_idx, HIDDEN, 3 * HIDDEN, true, K_GEMM_QKV, tape);
        // qkv.view(B, S, 3, H, D).permute(2, 0, 3, 1, 4).unbind(0)
        self.op_fwd("aten::view", "h[B,S,3*H] ScalarList", Node::View, tape);
        self.close();
        self.op_fwd(
            "aten::permute",
            "h[B,S,3,N,D] ScalarList",
            Node::Permute,
            tape,
        );
        self.view("aten::as_strided");
        self.close();
        self.op_fwd("aten::unbind", "h[3,B,N,S,D] Scalar", Node::Unbind, tape);
        for _ in 0..3 {
            self.op("aten::select");
            self.view("aten::as_strided");
            self.close();
        }
        self.close();
        // Even layers use the flash kernel, odd ones the math path (as when a
        // mask or an unsupported head size forces the fallback).
        if l.is_multiple_of(2) {
            self.op_sh(
                "aten::scaled_dot_product_attention",
                "h[B,N,S,D] h[B,N,S,D] h[B,N,S,D] - Scalar Scalar -",
            );
            self.op_fwd(
                "aten::_scaled_dot_product_flash_attention",
                "h[B,N,S,D] h[B,N,S,D] h[B,N,S,D] Scalar Scalar Scalar -",
                Node::Flash,
                tape,
            );
            for _ in 0..3 {
                self.transpose("aten::transpose");
            }
            self.op_sh(
                "aten::_flash_attention_forward",
                "h[B,S,N,D] h[B,S,N,D] h[B,S,N,D] - - Scalar Scalar Scalar Scalar",
            );
            self.empty("aten::empty_like");
            self.empty("aten::empty");
            self.empty("aten::empty");
            self.launch(K_FLASH_FWD, dev, Role::Compute, 0);
            self.close();
            self.transpose("aten::transpose");
            self.close();
            self.close();
        } else {
            self.op_sh("aten::matmul", "h[B,N,S,D] h[B,N,D,S]");
            self.view("aten::expand");
            self.view("aten::reshape");
            self.op_fwd("aten::bmm", "h[B*N,S,D] h[B*N,D,S]", Node::Bmm, tape);
            self.launch(K_BMM, dev, Role::Compute, 0);
            self.close();
            self.view("aten::_unsafe_view");
            self.close();
            self.op_fwd("aten::div", "h[B,N,S,S] Scalar", Node::Div, tape);
            self.launch(K_DIV_HALF, dev, Role::Compute, 0);
            self.close();
            self.op_sh("aten::softmax", "h[B,N,S,S] Scalar -");
            self.op_fwd(
                "aten::_softmax",
                "h[B,N,S,S] Scalar Scalar",
                Node::Softmax,
                tape,
            );
            self.launch(K_SOFTMAX, dev, Role::Compute, 0);
            self.close();
            self.close();
            self.op_sh("aten::matmul", "h[B,N,S,S] h[B,N,S,D]");
            self.view("aten::expand");
            self.view("aten::reshape");
            self.op_fwd("aten::bmm", "h[B*N,S,S] h[B*N,S,D]", Node::Bmm, tape);
            self.launch(K_BMM, dev, Role::Compute, 0);
            self.close();
            self.view("aten::_unsafe_view");
            self.close();
        }
        // out.transpose(1, 2).reshape(B, S, D): the reshape of a
        // non-contiguous tensor copies, then the output projection.
        self.op_fwd(
            "aten::transpose",
            "h[B,N,S,D] Scalar Scalar",
            Node::Transpose,
            tape,
        );
        self.view("aten::as_strided");
        self.close();
        self.op_sh("aten::reshape", "h[B,S,N,D] ScalarList");
        self.op_fwd("aten::clone", "h[B,S,N,D] Scalar", Node::Clone, tape);
        self.op("aten::empty_like");
        self.empty("aten::empty_strided");
        self.close();
        self.op_sh("aten::copy_", "h[B,S,N,D] h[B,S,N,D] Scalar");
        self.launch(K_COPY_HALF, dev, Role::Compute, 0);
        self.close();
        self.close();
        self.view("aten::_unsafe_view");
        self.close();
        self.linear(linear_idx, HIDDEN, HIDDEN, true, K_GEMM_OUT, tape);
        self.close(); // attention
        self.residual_add(tape);

        self.layer_norm(tape);
        self.ua("mlp");
        self.linear(linear_idx, HIDDEN, FFN, true, K_GEMM_FC1, tape);
        self.op_fwd("aten::gelu", "h[B,S,F] -", Node::Gelu, tape);
        self.launch(K_GELU, dev, Role::Compute, 0);
        self.close();
        self.linear(linear_idx, FFN, HIDDEN, true, K_GEMM_FC2, tape);
        self.close(); // mlp
        self.residual_add(tape);
        self.close(); // block
    }
}
