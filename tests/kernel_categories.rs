//! Issue 11, kernel categories: real kernel names from the corpus traces (the
//! directory each came from is in the comment: kineto/, hta/ and Fuser/report1.sqlite;
//! names as the trace spells them, parameter lists included) and the built-in
//! category each must get. Batch norm, pooling and softmax must not land in conv or
//! attention; implicit-GEMM convolutions are conv; fbgemm helpers are not GEMMs.

use grove::gpu::classify::Categories;
use grove::model::EventKind;

const TABLE: &[(&str, &str)] = &[
    ("conv", "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemmMultistageINS_4gemm9GemmShapeILi128ELi128ELi32EEENS4_52Conv2dWgradOutputGradientTileAccessIteratorOptimizedINS_11MatrixShapeILi128ELi32EEENS_10tfloat32_tENS_9transform29PitchLinearWarpRakedThreadM"), // hta
    ("conv", "cask_cudnn_infer::computeBOffsetsKernel(cask_cudnn_infer::ComputeBOffsetsParams)"), // hta
    ("conv", "cask_cudnn_train::computeWgradSplitKOffsetsKernel(cask_cudnn_train::ComputeSplitKOffsetsParams)"), // hta
    ("conv", "cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1"), // hta
    ("conv", "cudnn_infer_volta_scudnn_128x32_sliced1x4_ldg4_relu_exp_medium_nhwc_tn_v1"), // hta
    ("conv", "cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1"), // hta
    ("conv", "cudnn_infer_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"), // hta
    ("conv", "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer"), // hta
    ("conv", "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train"), // hta
    ("conv", "void cask_cudnn_infer::computeOffsetsKernel<false, false>(cask_cudnn_infer::ComputeOffsetsParams)"), // hta
    ("conv", "void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, float const*, float*)"), // hta
    ("conv", "void wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)"), // hta
    ("conv", "cask_cudnn::computeBOffsetsKernel(cask_cudnn::ComputeBOffsetsParams)"), // kineto
    ("conv", "void cudnn::cnn::wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)"), // kineto
    ("conv", "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)"), // kineto
    ("conv", "void explicit_convolve_sgemm<float, int, 1024, 5, 5, 3, 3, 3, 0, false>(int, int, int, float const*, int, float const*, int, float*, kernel_conv_params, unsigned long long, int, unsigned long long, int, float, float, int, float const*, float const*)"), // kineto
    ("conv", "void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)"), // kineto
    ("conv", "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)"), // kineto
    ("conv", "volta_scudnn_128x128_relu_medium_nn_v1"), // kineto
    ("conv", "volta_scudnn_128x64_relu_interior_nn_v1"), // kineto
    ("conv", "volta_scudnn_128x64_relu_xregs_large_nn_v1"), // kineto
    ("elementwise", "void at::native::vectorized_elementwise_kernel<(int)4, at::native::<unnamed>::CompareFunctor<c10::Half>, std::array<char *, (unsigned long)3>>(int, T2, T3)"), // Fuser
    ("elementwise", "triton_poi_fused_add_cos_sin_0"), // hta
    ("elementwise", "void (anonymous namespace)::elementwise_kernel_with_index<int, at::native::arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}>(int, at::native::arange_cuda_out(c10::Scalar cons"), // hta
    ("elementwise", "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at:"), // hta
    ("elementwise", "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)"), // hta
    ("elementwise", "void at::native::(anonymous namespace)::indexSelectLargeIndex<long, long, unsigned int, 1, 1, -2, true>(at::cuda::detail::TensorInfo<long, unsigned int>, at::cuda::detail::TensorInfo<long, unsigned int>, at::cuda::detail::TensorInfo<long, unsigned int>, int, int, unsigned int, unsigned int, long)"), // hta
    ("elementwise", "void at::native::_scatter_gather_elementwise_kernel<128, 4, at::native::_cuda_scatter_gather_internal_kernel<false, at::native::OpaqueType<4> >::operator()<at::native::TensorAssign>(at::TensorIterator&, long, long, long, at::native::TensorAssign const&)::{lambda(int)#1}>(int, at::native::_cuda_scatt"), // hta
    ("elementwise", "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::(anonymous namespace)::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(bool, float, float)#1}>(at::TensorIteratorBase&, at::native::(anonymous names"), // hta
    ("elementwise", "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#20}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, at::native::(anonymous nam"), // hta
    ("elementwise", "void at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::oper"), // hta
    ("elementwise", "void linearize_index_kernel<long>(at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::Rest"), // hta
    ("elementwise", "void split_embedding_codegen_forward_unweighted_kernel<c10::Half, c10::Half, float, false, long, 2ul, 32ul>(at::GenericPackedTensorAccessor<c10::Half, 1ul, at::RestrictPtrTraits, long>, at::GenericPackedTensorAccessor<c10::Half, 1ul, at::RestrictPtrTraits, long>, at::GenericPackedTensorAccessor<c10:"), // hta
    ("elementwise", "void split_embedding_codegen_forward_weighted_kernel<c10::Half, c10::Half, float, false, long, 2ul, 32ul>(at::GenericPackedTensorAccessor<c10::Half, 1ul, at::RestrictPtrTraits, long>, at::GenericPackedTensorAccessor<c10::Half, 1ul, at::RestrictPtrTraits, long>, at::GenericPackedTensorAccessor<c10::H"), // hta
    ("elementwise", "void at::native::unrolled_elementwise_kernel<at::native::(anonymous namespace)::where_kernel_impl(at::TensorIterator&, c10::ScalarType)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(bool, float, float)#1}, at::detail::Array<char*, 4>, OffsetCalculator<3, unsigned int>,"), // kineto
    ("gemm", "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN"), // Fuser
    ("gemm", "Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_EPS0_GRVWA1_GRVWB1_GSUAMB_ISA90a_IU1_K1_LBSPPA0_LBSPPB0_LBSPPM0_LPA0_LPB0_LPM0_LRVW1_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS2_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO1_SR"), // hta
    ("gemm", "ampere_sgemm_128x64_nn"), // hta
    ("gemm", "ampere_sgemm_32x128_nn"), // hta
    ("gemm", "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)"), // hta
    ("gemm", "void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)"), // hta
    ("gemm", "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4::Params)"), // hta
    ("gemm", "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float c"), // hta
    ("gemm", "void splitKreduce_kernel<float, float, float, float, true, false, false>(cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)"), // hta
    ("gemm", "volta_sgemm_32x128_tn"), // hta
    ("gemm", "void gemmSN_TN_kernel_64addr<float, 128, 16, 2, 4, 8, 9, false, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)"), // kineto
    ("gemm", "volta_sgemm_128x32_nt"), // kineto
    ("nccl", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"), // hta
    ("nccl", "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"), // hta
    ("nccl", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"), // hta
    ("norm", "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, long, float const*, float const*, float const*, float const*, float*, float*)"), // hta
    ("norm", "void at::native::(anonymous namespace)::LayerNormForwardCUDAKernel<float, float>(long, float const*, float const*, float const*, float const*, float const*, float*)"), // hta
    ("norm", "void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, float*, float*)"), // hta
    ("norm", "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float, float>(float const*, float const*, float const*, float const*, float const*, float*, int)"), // hta
    ("norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)"), // hta
    ("norm", "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)"), // hta
    ("norm", "void cudnn::bn_bw_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_bw_1C11_args<float>)"), // hta
    ("norm", "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<float>)"), // hta
    ("norm", "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)"), // kineto
    ("norm", "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)"), // kineto
    ("optimizer", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::("), // hta
    ("other", "<unnamed>::nvfuser_none_f0_c0_r0_g0(<unnamed>::Tensor<<unnamed>::__half, (int)3, (int)3>, <unnamed>::Tensor<<unnamed>::__half, (int)3, (int)3>, <unnamed>::TensorMap, <unnamed>::TensorMap, <unnamed>::Tensor<<unnamed>::__half, (int)2, (int)2>)"), // Fuser
    ("other", "void bounds_check_indices_kernel<long, false>(at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, int const*, long, at::GenericPackedTen"), // hta
    ("other", "void fbgemm_gpu::_offsets_range_cuda_kernel<int>(long, long, int const*, int*)"), // hta
    ("other", "Kernel"), // kineto
    ("other", "void cunn_ClassNLLCriterion_updateOutput_kernel<float, float>(float*, float*, float*, long*, float*, int, int, int, int, long)"), // kineto
    ("pooling", "void at::native::(anonymous namespace)::adaptive_average_pool<float>(float const*, float*, int, int, int, int, long, long, long)"), // hta
    ("pooling", "void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float>(float const*, long const*, int, long, long, long, int, int, int, int, int, int, int, int, int, int, float*)"), // hta
    ("pooling", "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)"), // hta
    ("reduce", "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::MaxOps<float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MaxOps<float>, unsigned int, float, 4>)"), // hta
    ("reduce", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::Half, 4> >(at::native::ReduceOp<c10::Half, at::native::fun"), // hta
    ("reduce", "void cub::DeviceCompactInitKernel<cub::ReduceByKeyScanTileState<int, int, true>, int*>(cub::ReduceByKeyScanTileState<int, int, true>, int, int*)"), // hta
    ("reduce", "void cub::DeviceRadixSortHistogramKernel<cub::DeviceRadixSortPolicy<long, float, int>::Policy800, false, long, int>(int*, long const*, int, int, int)"), // hta
    ("reduce", "void cub::DeviceReduceByKeyKernel<cub::DispatchReduceByKey<long*, long*, cub::ConstantInputIterator<int, int>, int*, int*, cub::Equality, cub::Sum, int>::PtxReduceByKeyPolicy, long*, long*, cub::ConstantInputIterator<int, int>, int*, int*, cub::ReduceByKeyScanTileState<int, int, true>, cub::Equality"), // hta
    ("reduce", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4>)"), // kineto
    ("softmax", "void (anonymous namespace)::softmax_warp_backward<float, float, float, 1, false, false>(float*, float const*, float const*, int, int, int, bool const*)"), // hta
    ("softmax", "void (anonymous namespace)::softmax_warp_forward<float, float, float, 1, false, false>(float*, float const*, int, int, int, bool const*, int, bool)"), // hta
    ("softmax", "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, float const*, int, int, int)"), // kineto
];

#[test]
fn real_kernel_names_get_their_category() {
    assert!(TABLE.len() >= 50, "the table keeps at least 50 names");
    let c = Categories::builtin();
    let wrong: Vec<String> = TABLE
        .iter()
        .filter_map(|&(want, name)| {
            let got = &c.rules[c.classify(name, EventKind::Kernel)].name;
            (got != want).then(|| format!("{want:>11} expected, got {got:<11} {name}"))
        })
        .collect();
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// Every category the table names exists, and none of its kernels falls through to
/// a category by accident of rule order (each is also checked alone above).
#[test]
fn table_names_only_builtin_categories() {
    let c = Categories::builtin();
    for &(want, _) in TABLE {
        assert!(c.rules.iter().any(|r| r.name == want), "{want}");
    }
}
