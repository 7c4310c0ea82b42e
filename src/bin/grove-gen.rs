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
//! influence the data it is tested with.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;

const USAGE: &str = "\
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
// Simulated model. Sizes only shape kernel durations, byte counts and the
// "Input Dims" args; they are those of a ~1B-parameter decoder.
// ---------------------------------------------------------------------------
const BATCH: u64 = 4;
const SEQ: u64 = 2048;
const TOKENS: u64 = BATCH * SEQ;
const HIDDEN: u64 = 2048;
const FFN: u64 = 8192;
const HEADS: u64 = 16;
const HEAD_DIM: u64 = HIDDEN / HEADS;
const VOCAB: u64 = 32000;
/// Parameters of one transformer block (qkv + out + fc1 + fc2 + norms).
const LAYER_PARAMS: u64 = 4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN + 8 * HIDDEN;

// H100 SXM properties, as cudaGetDeviceProperties reports them.
const NUM_SMS: u64 = 132;
const MAX_THREADS_PER_SM: u64 = 2048;
const REGS_PER_SM: u64 = 65536;
const SMEM_PER_SM: u64 = 233472;

/// Base of Kineto's relative timestamps: it rounds the process start down to
/// a 3-month boundary (here 2024-10-01T00:00:00Z).
const BASE_TIME_NS: u64 = 1_727_740_800_000_000_000;
const DAY_NS: u64 = 86_400 * 1_000_000_000;

// CUPTI runtime callback ids, as Kineto writes them in "cbid".
const CBID_MEMCPY_ASYNC: u32 = 41;
const CBID_MEMSET_ASYNC: u32 = 51;
const CBID_STREAM_SYNC: u32 = 131;
const CBID_EVENT_RECORD: u32 = 135;
const CBID_STREAM_WAIT_EVENT: u32 = 147;
const CBID_LAUNCH_KERNEL: u32 = 211;
const CBID_STREAM_IS_CAPTURING: u32 = 317;
const CBID_LAUNCH_KERNEL_EXC: u32 = 430;
/// cudaMemcpy_v3020 ..= cudaMemset2DAsync_v3020: all copy and set calls.
const CBID_MEMCPY_MEMSET: std::ops::RangeInclusive<u32> = 31..=53;

/// Kineto's `RuntimeActivity::flowStart()`: these callbacks start an ac2g
/// flow. Every other runtime event still gets a flow (its flow id is its
/// correlation id), but as a dangling *end* on the CPU thread; readers meet
/// that in real traces, so we reproduce it.
fn cbid_starts_flow(cbid: u32) -> bool {
    CBID_MEMCPY_MEMSET.contains(&cbid)
        || matches!(
            cbid,
            CBID_LAUNCH_KERNEL | CBID_LAUNCH_KERNEL_EXC | CBID_STREAM_SYNC | CBID_STREAM_WAIT_EVENT
        )
}

// ---------------------------------------------------------------------------
// Kernel catalogue: demangled names as CUPTI reports them for this model
// (fp16 on sm90), launch geometry and a mean duration (0: the call site
// computes it from the bytes or FLOPs involved).
// ---------------------------------------------------------------------------
#[derive(Clone, Copy)]
struct Kernel {
    name: &'static str,
    grid: [u64; 3],
    block: [u64; 3],
    regs: u64,
    smem: u64,
    ns: u64,
    /// Launched with cudaLaunchKernelExC and programmatic dependent launch
    /// allowed, so it may start before its predecessor on the stream ends.
    pdl: bool,
}

const fn kern(
    name: &'static str,
    grid: [u64; 3],
    block: [u64; 3],
    regs: u64,
    smem: u64,
    ns: u64,
) -> Kernel {
    Kernel {
        name,
        grid,
        block,
        regs,
        smem,
        ns,
        pdl: false,
    }
}

const fn pdl(k: Kernel) -> Kernel {
    Kernel { pdl: true, ..k }
}

const GEMM_TN_256: &str = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
const GEMM_TN_128: &str = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
const GEMM_NN_256: &str = "sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
const GEMM_NT_128: &str = "sm90_xmma_gemm_f16f16_f16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_on_kernel__5x_cublas";

const K_GEMM_QKV: Kernel = pdl(kern(
    GEMM_TN_256,
    [24, 64, 1],
    [384, 1, 1],
    168,
    197_632,
    340_000,
));
const K_GEMM_OUT: Kernel = kern(GEMM_TN_128, [16, 64, 1], [256, 1, 1], 168, 131_072, 118_000);
const K_GEMM_FC1: Kernel = pdl(kern(
    GEMM_TN_256,
    [32, 64, 1],
    [384, 1, 1],
    168,
    197_632,
    460_000,
));
const K_GEMM_FC2: Kernel = kern(GEMM_TN_256, [8, 64, 1], [384, 1, 1], 168, 197_632, 455_000);
const K_GEMM_LM_HEAD: Kernel = kern(
    GEMM_TN_256,
    [125, 64, 1],
    [384, 1, 1],
    168,
    197_632,
    1_790_000,
);
const K_GEMM_DGRAD: Kernel = kern(GEMM_NN_256, [16, 64, 1], [384, 1, 1], 168, 197_632, 0);
const K_GEMM_WGRAD: Kernel = kern(GEMM_NT_128, [48, 16, 1], [256, 1, 1], 166, 131_072, 0);
const K_SPLITK_REDUCE: Kernel = kern("void cublasLt::splitKreduce_kernel<32, 16, int, float, __half, float, __half, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, __half const*, __half*, float const*, float const*, __half const*, __half const*, __half*, void*, long, float*, int*)", [96, 8, 1], [32, 16, 1], 32, 0, 14_000);
const K_BMM: Kernel = kern("void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8>(cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8::Params)", [16, 8, 64], [256, 1, 1], 234, 98_304, 172_000);
const K_FLASH_FWD: Kernel = pdl(kern("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t> >, false, true, false, false, false, true, false, false>(pytorch_flash::Flash_fwd_params)", [16, 4, 16], [128, 1, 1], 255, 49_152, 181_000));
const K_FLASH_BWD_DOT: Kernel = kern("void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::half_t> > >(pytorch_flash::Flash_bwd_params)", [32, 4, 16], [256, 1, 1], 40, 0, 16_000);
const K_FLASH_BWD: Kernel = pdl(kern("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::half_t> >, false, true, false, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)", [32, 4, 16], [256, 1, 1], 255, 114_688, 452_000));
const K_FLASH_BWD_CONVERT: Kernel = kern("void pytorch_flash::flash_bwd_convert_dq_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::half_t> > >(pytorch_flash::Flash_bwd_params, int)", [32, 4, 16], [256, 1, 1], 72, 32_768, 21_000);
const K_SOFTMAX: Kernel = kern("void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 11, false, false>(c10::Half*, c10::Half const*, int, int, int, bool const*, int, bool)", [32768, 1, 1], [128, 1, 1], 64, 0, 96_000);
const K_SOFTMAX_BWD: Kernel = kern("void (anonymous namespace)::softmax_warp_backward<c10::Half, c10::Half, float, 11, false, false>(c10::Half*, c10::Half const*, c10::Half const*, int, int, int, bool const*)", [32768, 1, 1], [128, 1, 1], 72, 0, 121_000);
const K_DIV_HALF: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3>)", [262144, 1, 1], [128, 1, 1], 26, 0, 88_000);
const K_LOG_SOFTMAX: Kernel = kern("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", [8192, 1, 1], [1024, 1, 1], 38, 0, 702_000);
const K_LOG_SOFTMAX_BWD: Kernel = kern("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)", [8192, 1, 1], [1024, 1, 1], 40, 0, 1_050_000);
const K_NLL: Kernel = kern("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)", [1, 1, 1], [32, 1, 1], 30, 0, 8_200);
const K_NLL_BWD: Kernel = kern("void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)", [1, 1, 1], [32, 1, 1], 24, 0, 6_400);
const K_LN_FWD: Kernel = kern("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, float, c10::Half const*, c10::Half const*, c10::Half const*, float*, float*, c10::Half*)", [8192, 1, 1], [128, 1, 1], 30, 0, 25_000);
const K_LN_BWD_INPUT: Kernel = kern("void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::Half, float>(c10::Half const*, c10::Half const*, float const*, float const*, c10::Half const*, c10::Half*, int)", [8192, 1, 1], [128, 1, 1], 38, 0, 41_000);
const K_LN_BWD_GAMMA: Kernel = kern("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<c10::Half, float>(long, long, c10::Half const*, c10::Half const*, float const*, float const*, c10::Half*, c10::Half*)", [64, 1, 1], [32, 16, 1], 64, 4_352, 29_000);
const K_ADD_HALF: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3>)", [16384, 1, 1], [128, 1, 1], 26, 0, 35_000);
const K_ADD_F32: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", [1, 1, 1], [128, 1, 1], 24, 0, 1_600);
const K_GELU: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)", [65536, 1, 1], [128, 1, 1], 32, 0, 91_000);
const K_GELU_BWD: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half, c10::Half)#1}, at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half, c10::Half)#1}, at::detail::Array<char*, 3>)", [65536, 1, 1], [128, 1, 1], 40, 0, 133_000);
const K_COPY_HALF: Kernel = kern("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)#1})", [32768, 1, 1], [128, 1, 1], 28, 0, 38_000);
const K_REDUCE_SUM: Kernel = kern("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::Half, 4, 4> >(at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::Half, 4, 4>)", [16, 64, 1], [32, 16, 1], 40, 16, 19_000);
const K_CAT: Kernel = kern("void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)", [1584, 1, 3], [512, 1, 1], 32, 0, 98_000);
const K_CAT_SMALL: Kernel = kern("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)", [1, 1, 1], [512, 1, 1], 32, 0, 2_900);
const K_EMBEDDING: Kernel = kern("void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::Half, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::Half, unsigned int>, at::cuda::detail::TensorInfo<c10::Half const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)", [65536, 1, 1], [128, 1, 1], 32, 0, 11_000);
const K_EMBEDDING_BWD: Kernel = kern("void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::Half, float, long>(long const*, c10::Half const*, c10::Half*, int, long, int, int)", [64, 1, 1], [32, 32, 1], 56, 8_448, 84_000);
const K_FILL_F32: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", [1, 1, 1], [128, 1, 1], 16, 0, 1_500);
const K_LPNORM: Kernel = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, 2, float, float>, float*, int>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, 2, float, float>, float*, int)", [320, 1, 1], [512, 1, 1], 32, 2_048, 0);
const K_LPNORM_CLEANUP: Kernel = kern("void at::native::(anonymous namespace)::lpnorm_cleanup<float, 2, float, float>(float const*, at::native::(anonymous namespace)::TensorListAddresses, int)", [14, 1, 1], [512, 1, 1], 24, 2_048, 3_100);
const K_NORM_REDUCE: Kernel = kern("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4, 4>)", [1, 1, 1], [32, 1, 1], 32, 16, 2_600);
const K_DIV_F32: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3>)", [1, 1, 1], [128, 1, 1], 18, 0, 1_700);
const K_CLAMP: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_max_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::clamp_max_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)", [1, 1, 1], [128, 1, 1], 18, 0, 1_600);
const K_FOREACH_MUL: Kernel = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float const*>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float const*)", [320, 1, 1], [512, 1, 1], 30, 0, 0);
const K_FUSED_ADAMW: Kernel = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*)", [320, 1, 1], [512, 1, 1], 72, 0, 0);
const K_NCCL_ALLREDUCE: Kernel = kern(
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    [24, 1, 1],
    [640, 1, 1],
    96,
    8_704,
    0,
);

const GPU_NAME: &str = "NVIDIA H100 80GB HBM3";

// ---------------------------------------------------------------------------
// Small helpers.
// ---------------------------------------------------------------------------

/// Kineto's time format: integer nanoseconds printed as microseconds with a
/// three-digit fraction. Formatting from integers keeps the text exact.
struct Us(u64);

impl fmt::Display for Us {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

/// splitmix64: tiny, fast and good enough; determinism is what matters.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64) < p * (1u64 << 53) as f64
    }
    /// `base` ± `pct` percent, with rare slow outliers (throttling, contention).
    fn jitter(&mut self, base: u64, pct: u64) -> u64 {
        let spread = base * pct / 100;
        let mut v = base - spread + self.below(2 * spread + 1);
        if self.chance(0.015) {
            v = v * self.range(120, 160) / 100;
        }
        v.max(1)
    }
}

fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("bad size {s:?}"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        _ => return Err(format!("bad size unit in {s:?}")),
    };
    Ok(n * mult)
}

/// Row-major strides of a contiguous tensor.
fn strides(dims: &[u64]) -> Vec<u64> {
    let mut out = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1] * dims[i + 1];
    }
    out
}

fn json_list<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let mut s = String::from("[");
    for (i, it) in items.into_iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{it}");
    }
    s.push(']');
    s
}

/// Value of one dimension in a shape spec: a number or a model-size letter,
/// optionally multiplied (`B*N`).
fn dim_value(d: &str) -> u64 {
    d.split('*')
        .map(|f| match f {
            "B" => BATCH,
            "S" => SEQ,
            "T" => TOKENS,
            "H" => HIDDEN,
            "F" => FFN,
            "N" => HEADS,
            "D" => HEAD_DIM,
            "V" => VOCAB,
            n => n.parse().unwrap_or_else(|_| panic!("bad dimension {d:?}")),
        })
        .product()
}

/// The record_shapes args PyTorch attaches to an op, from a compact spec so
/// call sites stay one line: space-separated inputs, each either a tensor
/// `t[d0,d1,...]` (t: `h` c10::Half, `f` float, `l` long int; see
/// `dim_value` for dims), `Scalar` (its concrete value is recorded),
/// `ScalarList`, `TensorList`, or `-` for None.
fn shapes(spec: &str) -> String {
    let (mut concrete, mut types, mut strides_l, mut dims_l) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for tok in spec.split_whitespace() {
        let (ty, dims): (&str, Vec<u64>) = match tok.split_once('[') {
            Some((t, rest)) => {
                let ty = match t {
                    "h" => "c10::Half",
                    "f" => "float",
                    "l" => "long int",
                    _ => panic!("bad tensor type in shape spec {spec:?}"),
                };
                let dims = rest
                    .trim_end_matches(']')
                    .split(',')
                    .filter(|d| !d.is_empty())
                    .map(dim_value)
                    .collect();
                (ty, dims)
            }
            None if tok == "-" => ("", Vec::new()),
            None => (tok, Vec::new()),
        };
        concrete.push(if ty == "Scalar" { "\"1\"" } else { "\"\"" });
        types.push(format!("\"{ty}\""));
        strides_l.push(json_list(strides(&dims)));
        dims_l.push(json_list(dims));
    }
    format!(
        ", \"Concrete Inputs\": {}, \"Input type\": {}, \"Input Strides\": {}, \"Input Dims\": {}",
        json_list(concrete),
        json_list(types),
        json_list(strides_l),
        json_list(dims_l)
    )
}

// ---------------------------------------------------------------------------
// Configuration.
// ---------------------------------------------------------------------------
struct Cfg {
    steps: u64,
    layers: u64,
    streams: usize,
    devices: usize,
    rank: u64,
    world: u64,
    seed: u64,
    target: Option<u64>,
    forward_only: bool,
    out: String,
    summary: Option<String>,
}

fn parse_args() -> Result<Cfg, String> {
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

// ---------------------------------------------------------------------------
// Output: Kineto's exact event layout, with byte and event accounting.
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Stats {
    events: u64,
    kernels: u64,
    memcpy: u64,
    memset: u64,
    gpu_time_ns: u64,
    cpu_ops: u64,
    user_annotations: u64,
    gpu_user_annotations: u64,
    runtime: u64,
    flows: u64,
    unattributed: u64,
    unattributed_ns: u64,
    steps: u64,
}

/// The output file, optionally gzip-compressed.
enum Sink {
    Plain(BufWriter<File>),
    Gz(Box<GzEncoder<BufWriter<File>>>),
}

impl Sink {
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.write_all(b),
            Sink::Gz(w) => w.write_all(b),
        }
    }

    /// Flush everything, ending the gzip stream, so that errors surface here
    /// rather than being swallowed by Drop.
    fn finish(self) -> io::Result<()> {
        let mut inner = match self {
            Sink::Plain(w) => w,
            Sink::Gz(w) => w.finish()?,
        };
        inner.flush()
    }
}

struct Out {
    w: Sink,
    /// Text of the events being formatted; flushed to `w` in large chunks.
    buf: String,
    flushed: u64,
    stats: Stats,
}

impl Out {
    fn bytes(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= 1 << 16 {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        self.w.write_all(self.buf.as_bytes())?;
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// A complete ("X") event. `args` is the body of the args object, already
    /// joined the way Kineto joins it; empty means no args object at all.
    fn complete(
        &mut self,
        cat: &str,
        name: &str,
        pid: u64,
        tid: u64,
        (ts, dur): (u64, u64),
        args: &str,
    ) {
        self.stats.events += 1;
        let _ = write!(
            self.buf,
            "\n  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {pid}, \"tid\": {tid},\n    \"ts\": {}, \"dur\": {}",
            Us(ts),
            Us(dur)
        );
        if !args.is_empty() {
            let _ = write!(self.buf, ",\n    \"args\": {{\n      {args}\n    }}");
        }
        self.buf.push_str("\n  },");
    }

    /// One end of a flow arrow ("s" or "f"); ends bind to the enclosing slice.
    fn flow(&mut self, start: bool, id: u64, pid: u64, tid: u64, ts: u64, cat: &str) {
        self.stats.events += 1;
        self.stats.flows += 1;
        let _ = write!(
            self.buf,
            "\n  {{\n    \"ph\": \"{}\", \"id\": {id}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {},\n    \"cat\": \"{cat}\", \"name\": \"{cat}\"{}\n  }},",
            if start { 's' } else { 'f' },
            Us(ts),
            if start { "" } else { ", \"bp\": \"e\"" }
        );
    }

    /// Kineto's handleDeviceInfo: three process metadata events.
    fn device_info(&mut self, pid: u64, name: &str, label: &str, sort: u64, ts: u64) {
        self.stats.events += 3;
        let t = Us(ts);
        let _ = write!(
            self.buf,
            "\n  {{\n    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": 0,\n    \"args\": {{\n      \"name\": \"{name}\"\n    }}\n  }},\n  {{\n    \"name\": \"process_labels\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": 0,\n    \"args\": {{\n      \"labels\": \"{label}\"\n    }}\n  }},\n  {{\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": 0,\n    \"args\": {{\n      \"sort_index\": {sort}\n    }}\n  }},"
        );
    }

    /// Kineto's handleResourceInfo: thread name and sort index.
    fn resource_info(&mut self, pid: u64, tid: u64, name: &str, sort: u64, ts: u64) {
        self.stats.events += 2;
        let t = Us(ts);
        let _ = write!(
            self.buf,
            "\n  {{\n    \"name\": \"thread_name\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": {tid},\n    \"args\": {{\n      \"name\": \"{name}\"\n    }}\n  }},\n  {{\n    \"name\": \"thread_sort_index\", \"ph\": \"M\", \"ts\": {t}, \"pid\": {pid}, \"tid\": {tid},\n    \"args\": {{\n      \"sort_index\": {sort}\n    }}\n  }},"
        );
    }
}

// ---------------------------------------------------------------------------
// Simulation state.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Cat {
    CpuOp,
    UserAnnotation,
}

struct CpuEv {
    cat: Cat,
    name: Cow<'static, str>,
    thread: usize,
    ts: u64,
    dur: u64,
    ext: u64,
    /// Args after "Record function id" (shapes, sequence number...), each
    /// starting with ", ".
    extra: String,
    /// fwdbwd flow: (id, is_start).
    flow: Option<(u64, bool)>,
}

struct RtEv {
    name: &'static str,
    cbid: u32,
    thread: usize,
    ts: u64,
    dur: u64,
    /// External id of the enclosing cpu_op; 0 when there is none (calls made
    /// straight from Python), which Kineto writes as no "External id" at all.
    ext: u64,
    corr: u64,
}

enum GpuKind {
    Kernel(Kernel),
    Memcpy(&'static str),
    Memset,
}

struct GpuEv {
    kind: GpuKind,
    dev: usize,
    stream: usize,
    ts: u64,
    dur: u64,
    ext: u64,
    corr: u64,
    bytes: u64,
    /// Collective metadata Kineto copies from record_param_comms to NCCL kernels.
    coll: Option<String>,
    /// Launched before the trace window: no runtime event in the file.
    unattributed: bool,
}

struct Stream {
    id: u64,
    /// When the last queued work on this stream completes.
    free_at: u64,
    last_start: u64,
    used: bool,
    /// Extent of this step's work, for the gpu_user_annotation span.
    step_lo: u64,
    step_hi: u64,
}

struct Device {
    id: u64,
    streams: Vec<Stream>,
    nccl: usize,
    copy: usize,
    side: Vec<usize>,
    next_side: usize,
}

#[derive(Clone, Copy)]
enum Role {
    Compute,
    Nccl,
    Copy,
    /// A side stream if the device has any, else the compute stream.
    Side,
}

/// Backward-pass work recorded during the forward pass, replayed in reverse
/// on the autograd thread(s).
#[derive(Clone, Copy)]
enum Node {
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
    fn backward_name(self) -> &'static str {
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

struct TapeEntry {
    node: Node,
    dev: usize,
    seq: u64,
    /// fwdbwd flow id started at the forward op (0: none).
    flow: u64,
}

impl TapeEntry {
    /// Marks a DDP bucket boundary: its all-reduce is issued once the
    /// backward pass has replayed everything recorded after this entry.
    fn bucket(dev: usize, params: u64) -> TapeEntry {
        TapeEntry {
            node: Node::BucketReady { params },
            dev,
            seq: 0,
            flow: 0,
        }
    }
}

struct Gen {
    cfg: Cfg,
    rng: Rng,
    out: Out,
    pid: u64,
    /// CPU threads: 0 is the Python main thread, 1 + d the autograd thread of
    /// device d.
    tids: Vec<u64>,
    thread_names: Vec<String>,
    thread_used: Vec<bool>,
    /// Thread that emits the next CPU event.
    th: usize,
    cursor: Vec<u64>,
    /// True right after an op opened on the thread (the next event is its
    /// first child).
    fresh: Vec<bool>,
    stack: Vec<Vec<usize>>,
    cpu: Vec<CpuEv>,
    rt: Vec<RtEv>,
    gpu: Vec<GpuEv>,
    devs: Vec<Device>,
    /// Simulated GPUs on the node (listed in deviceProperties).
    node_gpus: u64,
    next_ext: u64,
    next_corr: u64,
    next_seq: u64,
    next_flow: u64,
    launches: u64,
    trace_start: u64,
    first_step: u64,
    /// Device the forward pass is currently running on.
    cur_dev: usize,
}

impl Gen {
    fn new(cfg: Cfg, out: Out) -> Gen {
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

    // --- CPU timeline -----------------------------------------------------

    /// Timestamp for the next event on the current thread: a little after
    /// the parent's start for a first child, after a gap (sometimes none, so
    /// siblings touch) otherwise.
    fn start_ts(&mut self) -> u64 {
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

    fn advance(&mut self, ns: u64) {
        self.cursor[self.th] += ns;
    }

    fn open(&mut self, cat: Cat, name: impl Into<Cow<'static, str>>, extra: String) -> usize {
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

    fn op(&mut self, name: &'static str) -> usize {
        self.open(Cat::CpuOp, name, String::new())
    }

    /// cpu_op with record_shapes args; see `shapes` for the spec syntax.
    fn op_sh(&mut self, name: &'static str, args: &str) -> usize {
        self.open(Cat::CpuOp, name, shapes(args))
    }

    fn ua(&mut self, name: impl Into<Cow<'static, str>>) -> usize {
        self.open(Cat::UserAnnotation, name, String::new())
    }

    /// Forward op that creates an autograd node: it gets a sequence number
    /// and starts a fwdbwd flow that the backward op will end.
    fn op_fwd(
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

    fn close(&mut self) {
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
    fn leaf(&mut self, name: &'static str, extra: String, lo: u64, hi: u64, zero_p: f64) {
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

    fn empty(&mut self, name: &'static str) {
        self.leaf(name, String::new(), 700, 2_600, 0.08);
    }

    fn view(&mut self, name: &'static str) {
        self.leaf(name, String::new(), 500, 1_900, 0.04);
    }

    /// aten::t / aten::transpose: a view made of a transpose and an as_strided.
    fn transpose(&mut self, name: &'static str) {
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
    fn linked_ext(&self) -> u64 {
        self.stack[self.th]
            .iter()
            .rev()
            .map(|&i| &self.cpu[i])
            .find(|e| e.cat == Cat::CpuOp)
            .map_or(0, |e| e.ext)
    }

    fn corr(&mut self) -> u64 {
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
    fn runtime(&mut self, name: &'static str, cbid: u32, dur: u64) -> (u64, u64) {
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
    fn launch_cost(&mut self, lo: u64, hi: u64) -> u64 {
        self.launches += 1;
        if self.launches <= 3 {
            self.rng.range(18_000, 45_000)
        } else if self.rng.chance(0.01) {
            self.rng.range(15_000, 60_000)
        } else {
            self.rng.range(lo, hi)
        }
    }

    // --- GPU timeline -----------------------------------------------------

    fn stream_index(&mut self, dev: usize, role: Role) -> usize {
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
    fn schedule(
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

    fn kernel_ns(&mut self, k: &Kernel, ns: u64) -> u64 {
        let base = if ns > 0 { ns } else { k.ns };
        self.rng.jitter(base, 4)
    }

    /// cudaLaunchKernel(ExC) + the kernel it launches. `ns` overrides the
    /// kernel's catalogue duration when non-zero.
    fn launch(&mut self, k: Kernel, dev: usize, role: Role, ns: u64) {
        self.launch_coll(k, dev, role, ns, 0, None);
    }

    fn launch_coll(
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
    fn memcpy(
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

    fn memset(&mut self, dev: usize, role: Role, bytes: u64) {
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
    fn stream_sync(&mut self, dev: usize, role: Role) {
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
    fn stream_wait(&mut self, dev: usize, waiter: Role, on: Role) {
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

    fn stream_free(&mut self, dev: usize, role: Role) -> u64 {
        let s = self.stream_index(dev, role);
        self.devs[dev].streams[s].free_at
    }

    // --- The training step ------------------------------------------------

    fn dev_of_layer(&self, l: u64) -> usize {
        (l * self.cfg.devices as u64 / self.cfg.layers) as usize
    }

    /// GPU work still running from the iteration before the profiler
    /// started: CUPTI hands it over, but its launches predate the window, so
    /// these activities have a correlation id and no runtime event.
    fn prelude(&mut self) {
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

    fn step(&mut self, n: u64) -> io::Result<()> {
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

    fn data_loading(&mut self) {
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
    fn zero_grad(&mut self) {
        self.ua("Optimizer.zero_grad#AdamW.zero_grad");
        let c = self.rng.range(20_000, 90_000);
        self.advance(c);
        self.close();
    }

    fn forward(&mut self, tape: &mut Vec<TapeEntry>) {
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
    fn move_to_device(&mut self, dev: usize, tape: &mut Vec<TapeEntry>) {
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
    fn peer_copy(&mut self, from: usize, to: usize) {
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

    fn layer_norm(&mut self, tape: &mut Vec<TapeEntry>) {
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
    fn linear(
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

    fn residual_add(&mut self, tape: &mut Vec<TapeEntry>) {
        let dev = self.cur_dev;
        self.op_fwd("aten::add", "h[B,S,H] h[B,S,H] Scalar", Node::Add, tape);
        self.launch(K_ADD_HALF, dev, Role::Compute, 0);
        self.close();
    }

    fn block(&mut self, l: u64, linear_idx: &mut u64, tape: &mut Vec<TapeEntry>) {
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

    /// Switch the emitting thread to the autograd thread of `dev`; the
    /// engine hands work between threads with a short delay.
    fn switch_to_autograd_thread(&mut self, dev: usize) {
        let next = 1 + dev;
        if next != self.th {
            let handoff = self.cursor[self.th] + self.rng.range(4_000, 18_000);
            self.cursor[next] = self.cursor[next].max(handoff);
            self.fresh[next] = false;
            self.th = next;
        }
    }

    fn backward(&mut self, tape: Vec<TapeEntry>) {
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
    fn accumulate_grad(&mut self) {
        self.op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad");
        self.op("torch::autograd::AccumulateGrad");
        self.view("aten::detach");
        self.close();
        self.close();
    }

    fn backward_node(&mut self, e: TapeEntry) {
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
    fn all_reduce(&mut self, params: u64) {
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

    fn optimizer(&mut self) {
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
    fn loss_item(&mut self) {
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

    // --- Writing --------------------------------------------------------------

    fn flush_step(&mut self, step_name: &str, step_ext: u64) -> io::Result<()> {
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

    fn header(&mut self) {
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

    fn footer(&mut self) -> io::Result<()> {
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
