// Tests the kernel-trace summaries (pure logic, no GPU): busy-time union, library share, side-stream flag.
#include "tests/support/catch_compat.hpp"
#include "timing/trace_summary.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using kj::timing::check_side_stream;
using kj::timing::k_unknown_stream_id;
using kj::timing::kernel_record;
using kj::timing::library_of;
using kj::timing::library_patterns;
using kj::timing::summarize_trace;
using kj::timing::union_ns;

namespace {

kernel_record kernel(std::string name, std::uint32_t stream, std::uint64_t start_ns, std::uint64_t end_ns) {
  kernel_record k;
  k.name = std::move(name);
  k.stream_id = stream;
  k.start_ns = start_ns;
  k.end_ns = end_ns;
  return k;
}

} // namespace

TEST_CASE("union_ns merges overlapping, nested and touching intervals", "[timing][trace]") {
  CHECK(union_ns({}) == 0);
  CHECK(union_ns({{10, 20}}) == 10);
  CHECK(union_ns({{10, 20}, {30, 45}}) == 25);            // disjoint
  CHECK(union_ns({{10, 20}, {15, 30}}) == 20);            // overlapping
  CHECK(union_ns({{10, 100}, {20, 30}, {40, 50}}) == 90); // nested
  CHECK(union_ns({{10, 20}, {20, 30}}) == 20);            // touching
  CHECK(union_ns({{30, 40}, {0, 5}, {35, 60}}) == 35);    // unsorted
  CHECK(union_ns({{10, 10}, {20, 15}}) == 0);             // empty and inverted count nothing
}

TEST_CASE("library_of recognizes vendor, PyTorch and inductor kernels", "[timing][trace]") {
  CHECK(
      library_of(
          "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, false, false>("
          "cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, "
          "float const*, float const*, float const*, float*, void*, long, float*, int*)") == "cublas");
  CHECK(library_of("nvjet_tst_192x192_64x4_2x1_v_bz_coopA_TNT") == "cublas");
  // seen on an H100 (torch 2.11, matrix-vector product): generic heads, cuBLAS types in the template
  // arguments
  CHECK(library_of(
            "void dot_kernel<float, 128, 0, cublasDotParams<cublasGemvTensorStridedBatched<float const>, "
            "cublasGemvTensorStridedBatched<float> > >(cublasDotParams<cublasGemvTensorStridedBatched<"
            "float const>, cublasGemvTensorStridedBatched<float> >)") == "cublas");
  CHECK(library_of("void reduce_1Block_kernel<float, 128, 7, cublasGemvTensorStridedBatched<float>, "
                   "cublasGemvTensorStridedBatched<float const>>(float*)") == "cublas");
  CHECK(library_of("void dot_kernel<float>(float const*, float const*, float*)").empty());
  CHECK(library_of(
            "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
            "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, "
            "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>>("
            "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, "
            "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, "
            "float, float)") == "cublas");
  CHECK(library_of(
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_"
            "off_kernel__5x_cublas") == "xmma");
  CHECK(library_of("ampere_sgemm_128x64_nn") == "nvidia-sass");
  CHECK(library_of("volta_fp16_s884cudnn_fp16_128x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1") == "nvidia-sass");
  CHECK(library_of("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>("
                   "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)") == "cutlass");
  CHECK(library_of("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
                   "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)") == "cutlass");
  CHECK(library_of(
            "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
            "(cudnnKernelDataType_t)2>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, "
            "float*)") == "cudnn");
  CHECK(library_of(
            "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0") ==
        "cudnn");
  CHECK(library_of(
            "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, "
            "int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, "
            "float, float, int, float const*, float const*, bool, int, int)") == "cudnn");
  CHECK(library_of(
            "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
            "launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
            "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
            "const::{lambda(float)#1}, at::detail::Array<char*, 2>>(int, at::native::(anonymous "
            "namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
            "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
            "const::{lambda(float)#1}, at::detail::Array<char*, 2>)") == "aten");
  CHECK(library_of("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                   "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)") ==
        "aten");
  CHECK(
      library_of(
          "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEv"
          "iT0_T1_") == "aten");
  CHECK(library_of(
            "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
            "cutlass::half_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::half_t>>, false, true, false, "
            "false, true, true, false, false>(pytorch_flash::Flash_fwd_params)") == "aten");
  CHECK(library_of("triton_poi_fused_relu_0") == "inductor");
  CHECK(library_of("triton_red_fused__softmax_0") == "inductor");
  CHECK(library_of("triton_tem_fused_mm_0") == "inductor");
  CHECK(
      library_of("void cub::CUB_200200_800_900_NS::DeviceRadixSortOnesweepKernel<cub::CUB_200200_800_900_NS::"
                 "DeviceRadixSortPolicy<float, cub::CUB_200200_800_900_NS::NullType, int>::Policy900, false, "
                 "float, cub::CUB_200200_800_900_NS::NullType, int, int, "
                 "cub::CUB_200200_800_900_NS::detail::identity_decomposer_t>(int*, int*, int*, int const*, "
                 "float*, float const*, cub::CUB_200200_800_900_NS::NullType*, "
                 "cub::CUB_200200_800_900_NS::NullType const*, int, int, int, "
                 "cub::CUB_200200_800_900_NS::detail::identity_decomposer_t)") == "cub/thrust");
}

TEST_CASE("library_of leaves the candidate's own kernels alone, even templated on library types",
          "[timing][trace]") {
  CHECK(library_of("relu_kernel(float const*, float*, long)").empty());
  CHECK(library_of("void relu_kernel<c10::Half>(c10::Half const*, c10::Half*, long)").empty());
  CHECK(
      library_of("void my_gemm_kernel<128, 64>(float const*, float const*, float*, int, int, int)").empty());
  CHECK(library_of("void (anonymous namespace)::softmax_kernel<float>(float const*, float*, int)").empty());
  CHECK(library_of("void fused_gemm<cutlass::half_t>(cutlass::half_t const*, cutlass::half_t*)").empty());
  CHECK(library_of("fused_conv_bias_relu_kernel").empty());
  CHECK(library_of("matmul_kernel").empty()); // a Triton kernel the candidate wrote
  CHECK(library_of("_Z11relu_kernelPKfPfl").empty());
  CHECK(library_of("").empty());
}

TEST_CASE("every library pattern matches its own documented example", "[timing][trace]") {
  REQUIRE(library_patterns().size() >= 10);
  for (const auto& p : library_patterns()) {
    INFO(p.library << ": " << p.regex << " on " << p.example);
    CHECK(!library_of(p.example).empty());
  }
}

TEST_CASE("summarize_trace: one stream, own kernels only", "[timing][trace]") {
  const std::vector<kernel_record> kernels = {
      kernel("relu_kernel(float const*, float*, long)", 7, 1'000'000, 1'300'000),
      kernel("relu_kernel(float const*, float*, long)", 7, 2'000'000, 2'300'000),
  };
  const auto s = summarize_trace(kernels, 7, 2);
  CHECK(s.calls == 2);
  CHECK(s.kernels == 2);
  CHECK(s.streams == 1);
  CHECK_FALSE(s.other_streams);
  CHECK(s.busy_ms == Approx(0.6));
  CHECK(s.kernel_ms == Approx(0.6));
  CHECK(s.busy_ms_per_call == Approx(0.3));
  CHECK(s.kernels_per_call == Approx(1.0));
  CHECK(s.library_ms == 0);
  CHECK(s.library_share == 0);
  CHECK(s.libraries.empty());
}

TEST_CASE("summarize_trace: library share weighs kernel time, per library", "[timing][trace]") {
  const std::vector<kernel_record> kernels = {
      kernel("ampere_sgemm_128x64_nn", 7, 0, 3'000'000), // 3 ms cuBLAS
      kernel("void at::native::vectorized_elementwise_kernel<4>(int)", 7, 3'000'000,
             3'500'000),                                      // 0.5 ms aten
      kernel("my_bias_relu_kernel", 7, 3'500'000, 4'000'000), // 0.5 ms own
  };
  const auto s = summarize_trace(kernels, 7, 1);
  CHECK(s.kernel_ms == Approx(4.0));
  CHECK(s.library_ms == Approx(3.5));
  CHECK(s.library_share == Approx(0.875));
  REQUIRE(s.libraries.size() == 2);
  CHECK(s.libraries[0].library == "nvidia-sass");
  CHECK(s.libraries[0].ms == Approx(3.0));
  CHECK(s.libraries[0].kernels == 1);
  CHECK(s.libraries[1].library == "aten");
  CHECK(s.libraries[1].ms == Approx(0.5));
}

TEST_CASE("summarize_trace: overlapping streams count once in busy time, fully in kernel time",
          "[timing][trace]") {
  const std::vector<kernel_record> kernels = {
      kernel("k_main", 7, 0, 100'000),         // timed stream: 0.1 ms
      kernel("k_side", 13, 50'000, 2'050'000), // side stream: 2 ms, overlapping the first
      kernel("k_main", 7, 3'000'000, 3'100'000),
      kernel("k_side", 13, 3'050'000, 5'050'000),
  };
  const auto s = summarize_trace(kernels, 7, 2);
  CHECK(s.streams == 2);
  CHECK(s.other_streams);
  CHECK(s.kernel_ms == Approx(4.2));
  CHECK(s.busy_ms == Approx(4.1));
  CHECK(s.busy_ms_per_call == Approx(2.05));
  CHECK(s.kernels_per_call == Approx(2.0));
}

TEST_CASE("summarize_trace: an unknown timed stream makes any second stream 'other'", "[timing][trace]") {
  const std::vector<kernel_record> one = {kernel("a", 3, 0, 10), kernel("b", 3, 10, 20)};
  CHECK_FALSE(summarize_trace(one, k_unknown_stream_id, 1).other_streams);
  const std::vector<kernel_record> two = {kernel("a", 3, 0, 10), kernel("b", 4, 10, 20)};
  CHECK(summarize_trace(two, k_unknown_stream_id, 1).other_streams);
  // With a known id, a single stream that is not the timed one is "other" too.
  CHECK(summarize_trace(one, 9, 1).other_streams);
}

TEST_CASE("summarize_trace: empty traces and bad input", "[timing][trace]") {
  const auto empty = summarize_trace({}, 7, 3);
  CHECK(empty.kernels == 0);
  CHECK(empty.streams == 0);
  CHECK_FALSE(empty.other_streams);
  CHECK(empty.busy_ms == 0);
  CHECK(empty.library_share == 0);
  CHECK_THROWS_AS(summarize_trace({}, 7, 0), std::invalid_argument);
  const std::vector<kernel_record> inverted = {kernel("a", 7, 20, 10)};
  CHECK_THROWS_AS(summarize_trace(inverted, 7, 1), std::invalid_argument);
}

TEST_CASE("check_side_stream: busy time must clearly exceed the event time", "[timing][trace]") {
  kj::timing::trace_summary s;
  s.streams = 1;
  s.busy_ms_per_call = 0.10;
  // Busy time at or under the event time: the events saw everything.
  auto c = check_side_stream(s, 0.11);
  CHECK_FALSE(c.flagged);
  CHECK(c.reason.empty());
  // Twice the event time but only 5 us more: noise at this scale, not flagged.
  s.busy_ms_per_call = 0.010;
  CHECK_FALSE(check_side_stream(s, 0.005).flagged);
  // 1.4x and 0.4 ms more: under the ratio, not flagged.
  s.busy_ms_per_call = 1.4;
  CHECK_FALSE(check_side_stream(s, 1.0).flagged);
  // 20x and 1.9 ms more: flagged, with a reason that says so.
  s.busy_ms_per_call = 2.0;
  c = check_side_stream(s, 0.1);
  CHECK(c.flagged);
  CHECK(c.busy_exceeds_events);
  CHECK_FALSE(c.other_streams);
  CHECK(c.reason.find("GPU busy") != std::string::npos);
  // Custom thresholds.
  kj::timing::side_stream_params strict;
  strict.busy_ratio = 1.1;
  strict.min_excess_ms = 0.001;
  s.busy_ms_per_call = 1.2;
  CHECK(check_side_stream(s, 1.0, strict).flagged);
}

TEST_CASE("check_side_stream: kernels on another stream are flagged on their own", "[timing][trace]") {
  kj::timing::trace_summary s;
  s.streams = 2;
  s.other_streams = true;
  s.busy_ms_per_call = 0.1;
  const auto c = check_side_stream(s, 0.1);
  CHECK(c.flagged);
  CHECK(c.other_streams);
  CHECK_FALSE(c.busy_exceeds_events);
  CHECK(c.reason.find("2 streams") != std::string::npos);
  CHECK_THROWS_AS(check_side_stream(s, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(check_side_stream(s, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}
