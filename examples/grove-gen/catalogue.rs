//! The simulated model and machine: sizes, H100 properties, CUPTI callback ids and
//! the kernel catalogue.

// ---------------------------------------------------------------------------
// Simulated model. Sizes only shape kernel durations, byte counts and the
// "Input Dims" args; they are those of a ~1B-parameter decoder.
// ---------------------------------------------------------------------------
pub(crate) const BATCH: u64 = 4;
pub(crate) const SEQ: u64 = 2048;
pub(crate) const TOKENS: u64 = BATCH * SEQ;
pub(crate) const HIDDEN: u64 = 2048;
pub(crate) const FFN: u64 = 8192;
pub(crate) const HEADS: u64 = 16;
pub(crate) const HEAD_DIM: u64 = HIDDEN / HEADS;
pub(crate) const VOCAB: u64 = 32000;
/// Parameters of one transformer block (qkv + out + fc1 + fc2 + norms).
pub(crate) const LAYER_PARAMS: u64 = 4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN + 8 * HIDDEN;

// H100 SXM properties, as cudaGetDeviceProperties reports them.
pub(crate) const NUM_SMS: u64 = 132;
pub(crate) const MAX_THREADS_PER_SM: u64 = 2048;
pub(crate) const REGS_PER_SM: u64 = 65536;
pub(crate) const SMEM_PER_SM: u64 = 233472;

/// Base of Kineto's relative timestamps: it rounds the process start down to
/// a 3-month boundary (here 2024-10-01T00:00:00Z).
pub(crate) const BASE_TIME_NS: u64 = 1_727_740_800_000_000_000;
pub(crate) const DAY_NS: u64 = 86_400 * 1_000_000_000;

// CUPTI runtime callback ids, as Kineto writes them in "cbid".
pub(crate) const CBID_MEMCPY_ASYNC: u32 = 41;
pub(crate) const CBID_MEMSET_ASYNC: u32 = 51;
pub(crate) const CBID_STREAM_SYNC: u32 = 131;
pub(crate) const CBID_EVENT_RECORD: u32 = 135;
pub(crate) const CBID_STREAM_WAIT_EVENT: u32 = 147;
pub(crate) const CBID_LAUNCH_KERNEL: u32 = 211;
pub(crate) const CBID_STREAM_IS_CAPTURING: u32 = 317;
pub(crate) const CBID_LAUNCH_KERNEL_EXC: u32 = 430;
/// cudaMemcpy_v3020 ..= cudaMemset2DAsync_v3020: all copy and set calls.
pub(crate) const CBID_MEMCPY_MEMSET: std::ops::RangeInclusive<u32> = 31..=53;

/// Kineto's `RuntimeActivity::flowStart()`: these callbacks start an ac2g
/// flow. Every other runtime event still gets a flow (its flow id is its
/// correlation id), but as a dangling *end* on the CPU thread; readers meet
/// that in real traces, so we reproduce it.
pub(crate) fn cbid_starts_flow(cbid: u32) -> bool {
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
pub(crate) struct Kernel {
    pub(crate) name: &'static str,
    pub(crate) grid: [u64; 3],
    pub(crate) block: [u64; 3],
    pub(crate) regs: u64,
    pub(crate) smem: u64,
    pub(crate) ns: u64,
    /// Launched with cudaLaunchKernelExC and programmatic dependent launch
    /// allowed, so it may start before its predecessor on the stream ends.
    pub(crate) pdl: bool,
}

pub(crate) const fn kern(
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

pub(crate) const fn pdl(k: Kernel) -> Kernel {
    Kernel { pdl: true, ..k }
}

pub(crate) const GEMM_TN_256: &str = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
pub(crate) const GEMM_TN_128: &str = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
pub(crate) const GEMM_NN_256: &str = "sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
pub(crate) const GEMM_NT_128: &str = "sm90_xmma_gemm_f16f16_f16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_on_kernel__5x_cublas";

pub(crate) const K_GEMM_QKV: Kernel = pdl(kern(
    GEMM_TN_256,
    [24, 64, 1],
    [384, 1, 1],
    168,
    197_632,
    340_000,
));
pub(crate) const K_GEMM_OUT: Kernel =
    kern(GEMM_TN_128, [16, 64, 1], [256, 1, 1], 168, 131_072, 118_000);
pub(crate) const K_GEMM_FC1: Kernel = pdl(kern(
    GEMM_TN_256,
    [32, 64, 1],
    [384, 1, 1],
    168,
    197_632,
    460_000,
));
pub(crate) const K_GEMM_FC2: Kernel =
    kern(GEMM_TN_256, [8, 64, 1], [384, 1, 1], 168, 197_632, 455_000);
pub(crate) const K_GEMM_LM_HEAD: Kernel = kern(
    GEMM_TN_256,
    [125, 64, 1],
    [384, 1, 1],
    168,
    197_632,
    1_790_000,
);
pub(crate) const K_GEMM_DGRAD: Kernel =
    kern(GEMM_NN_256, [16, 64, 1], [384, 1, 1], 168, 197_632, 0);
pub(crate) const K_GEMM_WGRAD: Kernel =
    kern(GEMM_NT_128, [48, 16, 1], [256, 1, 1], 166, 131_072, 0);
pub(crate) const K_SPLITK_REDUCE: Kernel = kern("void cublasLt::splitKreduce_kernel<32, 16, int, float, __half, float, __half, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, __half const*, __half*, float const*, float const*, __half const*, __half const*, __half*, void*, long, float*, int*)", [96, 8, 1], [32, 16, 1], 32, 0, 14_000);
pub(crate) const K_BMM: Kernel = kern("void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8>(cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8::Params)", [16, 8, 64], [256, 1, 1], 234, 98_304, 172_000);
pub(crate) const K_FLASH_FWD: Kernel = pdl(kern("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t> >, false, true, false, false, false, true, false, false>(pytorch_flash::Flash_fwd_params)", [16, 4, 16], [128, 1, 1], 255, 49_152, 181_000));
pub(crate) const K_FLASH_BWD_DOT: Kernel = kern("void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::half_t> > >(pytorch_flash::Flash_bwd_params)", [32, 4, 16], [256, 1, 1], 40, 0, 16_000);
pub(crate) const K_FLASH_BWD: Kernel = pdl(kern("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::half_t> >, false, true, false, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)", [32, 4, 16], [256, 1, 1], 255, 114_688, 452_000));
pub(crate) const K_FLASH_BWD_CONVERT: Kernel = kern("void pytorch_flash::flash_bwd_convert_dq_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::half_t> > >(pytorch_flash::Flash_bwd_params, int)", [32, 4, 16], [256, 1, 1], 72, 32_768, 21_000);
pub(crate) const K_SOFTMAX: Kernel = kern("void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 11, false, false>(c10::Half*, c10::Half const*, int, int, int, bool const*, int, bool)", [32768, 1, 1], [128, 1, 1], 64, 0, 96_000);
pub(crate) const K_SOFTMAX_BWD: Kernel = kern("void (anonymous namespace)::softmax_warp_backward<c10::Half, c10::Half, float, 11, false, false>(c10::Half*, c10::Half const*, c10::Half const*, int, int, int, bool const*)", [32768, 1, 1], [128, 1, 1], 72, 0, 121_000);
pub(crate) const K_DIV_HALF: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3>)", [262144, 1, 1], [128, 1, 1], 26, 0, 88_000);
pub(crate) const K_LOG_SOFTMAX: Kernel = kern("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", [8192, 1, 1], [1024, 1, 1], 38, 0, 702_000);
pub(crate) const K_LOG_SOFTMAX_BWD: Kernel = kern("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)", [8192, 1, 1], [1024, 1, 1], 40, 0, 1_050_000);
pub(crate) const K_NLL: Kernel = kern("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)", [1, 1, 1], [32, 1, 1], 30, 0, 8_200);
pub(crate) const K_NLL_BWD: Kernel = kern("void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)", [1, 1, 1], [32, 1, 1], 24, 0, 6_400);
pub(crate) const K_LN_FWD: Kernel = kern("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, float, c10::Half const*, c10::Half const*, c10::Half const*, float*, float*, c10::Half*)", [8192, 1, 1], [128, 1, 1], 30, 0, 25_000);
pub(crate) const K_LN_BWD_INPUT: Kernel = kern("void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::Half, float>(c10::Half const*, c10::Half const*, float const*, float const*, c10::Half const*, c10::Half*, int)", [8192, 1, 1], [128, 1, 1], 38, 0, 41_000);
pub(crate) const K_LN_BWD_GAMMA: Kernel = kern("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<c10::Half, float>(long, long, c10::Half const*, c10::Half const*, float const*, float const*, c10::Half*, c10::Half*)", [64, 1, 1], [32, 16, 1], 64, 4_352, 29_000);
pub(crate) const K_ADD_HALF: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3>)", [16384, 1, 1], [128, 1, 1], 26, 0, 35_000);
pub(crate) const K_ADD_F32: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", [1, 1, 1], [128, 1, 1], 24, 0, 1_600);
pub(crate) const K_GELU: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)", [65536, 1, 1], [128, 1, 1], 32, 0, 91_000);
pub(crate) const K_GELU_BWD: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half, c10::Half)#1}, at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::Half, c10::Half)#1}, at::detail::Array<char*, 3>)", [65536, 1, 1], [128, 1, 1], 40, 0, 133_000);
pub(crate) const K_COPY_HALF: Kernel = kern("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)#1})", [32768, 1, 1], [128, 1, 1], 28, 0, 38_000);
pub(crate) const K_REDUCE_SUM: Kernel = kern("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::Half, 4, 4> >(at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::Half, 4, 4>)", [16, 64, 1], [32, 16, 1], 40, 16, 19_000);
pub(crate) const K_CAT: Kernel = kern("void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)", [1584, 1, 3], [512, 1, 1], 32, 0, 98_000);
pub(crate) const K_CAT_SMALL: Kernel = kern("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)", [1, 1, 1], [512, 1, 1], 32, 0, 2_900);
pub(crate) const K_EMBEDDING: Kernel = kern("void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::Half, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::Half, unsigned int>, at::cuda::detail::TensorInfo<c10::Half const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)", [65536, 1, 1], [128, 1, 1], 32, 0, 11_000);
pub(crate) const K_EMBEDDING_BWD: Kernel = kern("void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::Half, float, long>(long const*, c10::Half const*, c10::Half*, int, long, int, int)", [64, 1, 1], [32, 32, 1], 56, 8_448, 84_000);
pub(crate) const K_FILL_F32: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", [1, 1, 1], [128, 1, 1], 16, 0, 1_500);
pub(crate) const K_LPNORM: Kernel = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, 2, float, float>, float*, int>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, 2, float, float>, float*, int)", [320, 1, 1], [512, 1, 1], 32, 2_048, 0);
pub(crate) const K_LPNORM_CLEANUP: Kernel = kern("void at::native::(anonymous namespace)::lpnorm_cleanup<float, 2, float, float>(float const*, at::native::(anonymous namespace)::TensorListAddresses, int)", [14, 1, 1], [512, 1, 1], 24, 2_048, 3_100);
pub(crate) const K_NORM_REDUCE: Kernel = kern("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4, 4>)", [1, 1, 1], [32, 1, 1], 32, 16, 2_600);
pub(crate) const K_DIV_F32: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3>)", [1, 1, 1], [128, 1, 1], 18, 0, 1_700);
pub(crate) const K_CLAMP: Kernel = kern("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_max_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::clamp_max_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)", [1, 1, 1], [128, 1, 1], 18, 0, 1_600);
pub(crate) const K_FOREACH_MUL: Kernel = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float const*>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float const*)", [320, 1, 1], [512, 1, 1], 30, 0, 0);
pub(crate) const K_FUSED_ADAMW: Kernel = kern("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*)", [320, 1, 1], [512, 1, 1], 72, 0, 0);
pub(crate) const K_NCCL_ALLREDUCE: Kernel = kern(
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    [24, 1, 1],
    [640, 1, 1],
    96,
    8_704,
    0,
);

pub(crate) const GPU_NAME: &str = "NVIDIA H100 80GB HBM3";
