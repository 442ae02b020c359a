// Implements kernel-trace summaries: interval union, per-library time through a table of name patterns.
#include "timing/trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace kj::timing {
namespace {

// Patterns match the kernel's qualified name only (see kernel_head): template arguments and parameters are
// cut off, so the candidate's own `relu_kernel<c10::Half>` stays its own while `at::native::...` does not.
constexpr library_pattern k_patterns[] = {
    {"cublas", R"(^cublas)", "cublasLt::splitKreduce_kernel"},
    {"cublas", R"(^nvjet_)", "nvjet_tst_192x192_64x4_2x1_v_bz_coopA_TNT"},
    {"cublas",
     R"(^(gemv2[nt]_kernel|gemvnsp_kernel|gemmk1_kernel|gemmsn_[nt]{2}_kernel|splitkreduce_kernel))",
     "gemv2T_kernel_val"},
    {"cublas", R"(^gemvx::kernel)", "gemvx::kernel"},
    {"xmma", R"(^(sm\d+_)?xmma)",
     "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_execute_kernel__5x_cublas"},
    {"nvidia-sass", R"(^(maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell)_)",
     "ampere_sgemm_128x64_nn"},
    {"cutlass", R"(cutlass)", "cutlass::Kernel2"},
    {"cudnn", R"(cudnn)", "cudnn::engines_precompiled::nchwToNhwcKernel"},
    {"cudnn",
     R"(^((implicit|explicit|precomputed)_convolve_\w*gemm|convolve_common_engine|conv2d_grouped_direct_kernel|(nchw|nhwc)to(nchw|nhwc)kernel|cask_|fft[12]d_(r2c|c2r)))",
     "implicit_convolve_sgemm"},
    {"aten", R"(^(at|c10)::)", "at::native::vectorized_elementwise_kernel"},
    {"aten", R"(^_zn(2at|3c10)\d)", "_ZN2at6native29vectorized_elementwise_kernel..."},
    {"aten", R"(^pytorch_flash::)", "pytorch_flash::flash_fwd_kernel"},
    {"flash-attn", R"(^flash::)", "flash::flash_fwd_kernel"},
    {"inductor", R"(^triton_(poi|per|red|tem|for|mix|unk)_)", "triton_poi_fused_relu_0"},
    {"cub/thrust", R"(^(cub|thrust)::)", "cub::DeviceRadixSortOnesweepKernel"},
    {"cufft", R"(^(regular_fft|vector_fft|composite_2way_fft|cufft))", "regular_fft"},
    {"cusparse/cusolver/curand", R"(^(cusparse|cusolver|curand))", "cusparse::csrmv_v3_kernel"},
    {"nccl", R"(^nccl)", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
};

// "void at::native::(anonymous namespace)::f<float>(float*)" -> "at::native::(anonymous namespace)::f".
std::string_view kernel_head(std::string_view name) {
  constexpr std::string_view k_void = "void ";
  constexpr std::string_view k_anonymous = "(anonymous namespace)";
  if (name.substr(0, k_void.size()) == k_void) name.remove_prefix(k_void.size());
  std::size_t i = 0;
  while (i < name.size()) {
    if (name.substr(i, k_anonymous.size()) == k_anonymous) {
      i += k_anonymous.size();
      continue;
    }
    if (name[i] == '<' || name[i] == '(') break;
    ++i;
  }
  return name.substr(0, i);
}

const std::vector<std::regex>& compiled_patterns() {
  static const std::vector<std::regex> compiled = [] {
    std::vector<std::regex> out;
    for (const auto& p : k_patterns)
      out.emplace_back(std::string(p.regex),
                       std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
    return out;
  }();
  return compiled;
}

double to_ms(std::uint64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

} // namespace

std::span<const library_pattern> library_patterns() {
  return k_patterns;
}

std::string_view library_of(std::string_view kernel_name) {
  const std::string head(kernel_head(kernel_name));
  const auto& regexes = compiled_patterns();
  for (std::size_t i = 0; i < regexes.size(); ++i) {
    if (std::regex_search(head, regexes[i])) return k_patterns[i].library;
  }
  // cuBLAS's generic-named kernels (dot_kernel, reduce_1Block_kernel, ...) carry its parameter types in their
  // template arguments, e.g. dot_kernel<float, 128, 0, cublasDotParams<cublasGemvTensorStridedBatched<...>>>.
  static const std::regex cublas_types(R"(<.*\bcublas[A-Z]\w*(Params|Batched)\b)", std::regex::optimize);
  if (std::regex_search(kernel_name.begin(), kernel_name.end(), cublas_types)) return "cublas";
  return {};
}

std::uint64_t union_ns(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::uint64_t total = 0;
  std::uint64_t covered_to = 0; // end of the merged run so far
  bool any = false;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (!any || start >= covered_to) {
      total += end - start;
      covered_to = end;
      any = true;
    } else if (end > covered_to) {
      total += end - covered_to;
      covered_to = end;
    }
  }
  return total;
}

trace_summary summarize_trace(std::span<const kernel_record> kernels, std::uint32_t timed_stream_id,
                              std::size_t calls) {
  if (calls == 0) throw std::invalid_argument("summarize_trace: calls must be at least 1");
  trace_summary s;
  s.calls = calls;
  s.kernels = kernels.size();
  std::set<std::uint32_t> streams;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;
  intervals.reserve(kernels.size());
  std::unordered_map<std::string, std::string_view> library_cache;
  std::map<std::string_view, library_time> by_library;
  std::uint64_t kernel_ns = 0;
  std::uint64_t library_ns = 0;
  for (const auto& k : kernels) {
    if (k.end_ns < k.start_ns) {
      throw std::invalid_argument(fmt::format("summarize_trace: kernel '{}' ends ({}) before it starts ({})",
                                              k.name, k.end_ns, k.start_ns));
    }
    const std::uint64_t duration = k.end_ns - k.start_ns;
    kernel_ns += duration;
    intervals.emplace_back(k.start_ns, k.end_ns);
    streams.insert(k.stream_id);
    auto [cached, added] = library_cache.try_emplace(k.name);
    if (added) cached->second = library_of(k.name);
    if (cached->second.empty()) continue;
    library_ns += duration;
    auto& lib = by_library[cached->second];
    lib.library = std::string(cached->second);
    lib.ms += to_ms(duration);
    ++lib.kernels;
  }
  s.streams = streams.size();
  s.other_streams =
      timed_stream_id == k_unknown_stream_id
          ? streams.size() > 1
          : std::any_of(streams.begin(), streams.end(), [&](auto id) { return id != timed_stream_id; });
  s.kernel_ms = to_ms(kernel_ns);
  s.busy_ms = to_ms(union_ns(std::move(intervals)));
  s.busy_ms_per_call = s.busy_ms / static_cast<double>(calls);
  s.kernels_per_call = static_cast<double>(s.kernels) / static_cast<double>(calls);
  s.library_ms = to_ms(library_ns);
  s.library_share = kernel_ns > 0 ? static_cast<double>(library_ns) / static_cast<double>(kernel_ns) : 0;
  for (auto& [name, lib] : by_library)
    s.libraries.push_back(std::move(lib));
  std::stable_sort(s.libraries.begin(), s.libraries.end(),
                   [](const auto& a, const auto& b) { return a.ms > b.ms; });
  return s;
}

side_stream_check check_side_stream(const trace_summary& summary, double event_ms,
                                    const side_stream_params& params) {
  if (!std::isfinite(event_ms) || event_ms < 0) {
    throw std::invalid_argument(
        fmt::format("check_side_stream: event time {} ms is not a duration", event_ms));
  }
  side_stream_check c;
  c.event_ms = event_ms;
  c.busy_ms_per_call = summary.busy_ms_per_call;
  c.other_streams = summary.other_streams;
  c.busy_exceeds_events = c.busy_ms_per_call > params.busy_ratio * event_ms &&
                          c.busy_ms_per_call - event_ms > params.min_excess_ms;
  c.flagged = c.other_streams || c.busy_exceeds_events;
  if (c.busy_exceeds_events) {
    c.reason = fmt::format("GPU busy {:.4g} ms per call on all streams against {:.4g} ms of event time",
                           c.busy_ms_per_call, event_ms);
  }
  if (c.other_streams) {
    if (!c.reason.empty()) c.reason += "; ";
    c.reason += fmt::format("kernels ran on {} streams, not only the timed one", summary.streams);
  }
  return c;
}

} // namespace kj::timing
