// Summaries of a GPU kernel trace: all-stream busy time, library share and the side-stream flag (no CUDA
// here).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kj::timing {

// One kernel execution of a trace (CUPTI's, through the CUDA plugin). Times are the tracer's clock [ns].
struct kernel_record {
  std::string name; // demangled when possible
  std::uint32_t stream_id = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t correlation_id = 0;
  std::int32_t grid[3] = {1, 1, 1};
  std::int32_t block[3] = {1, 1, 1};
};

// A kernel name pattern of code the candidate did not write: a vendor library, PyTorch's own kernels, or
// torch.compile's generated ones. Matched with std::regex (ECMAScript, case-insensitive) against the
// demangled name; the first matching row names the library.
struct library_pattern {
  std::string_view library; // "cublas", "cudnn", "cutlass", "aten", "inductor", ...
  std::string_view regex;
  std::string_view example; // a real kernel name the pattern is meant for
};

// The table (documented in docs/cuda-timing.md).
std::span<const library_pattern> library_patterns();

// The library a kernel belongs to, or "" for the candidate's own kernels.
std::string_view library_of(std::string_view kernel_name);

// [ns] covered by the union of [start, end) intervals; empty or inverted intervals count 0.
std::uint64_t union_ns(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals);

struct library_time {
  std::string library;
  double ms = 0; // [ms] sum of its kernels' durations
  std::size_t kernels = 0;
};

struct trace_summary {
  std::size_t calls = 0; // calls of the subject while the trace ran
  std::size_t kernels = 0;
  std::size_t streams = 0;     // distinct stream ids
  bool other_streams = false;  // a kernel ran on a stream other than the timed one
  double busy_ms = 0;          // [ms] union of kernel intervals over all streams
  double kernel_ms = 0;        // [ms] sum of kernel durations (exceeds busy_ms when kernels overlap)
  double busy_ms_per_call = 0; // [ms]
  double kernels_per_call = 0;
  double library_ms = 0;               // [ms] sum of durations of kernels that match a library pattern
  double library_share = 0;            // library_ms / kernel_ms; 0 when there is no kernel time
  std::vector<library_time> libraries; // per library, most time first
};

// stream id the timed events were recorded on, when the tracer could not tell (any second stream then counts
// as "other").
inline constexpr std::uint32_t k_unknown_stream_id = 0xffffffffU;

// Summarizes the kernels of `calls` calls traced on their own (no timing in the same pass).
// Throws std::invalid_argument when calls == 0 or a kernel ends before it starts.
trace_summary summarize_trace(std::span<const kernel_record> kernels, std::uint32_t timed_stream_id,
                              std::size_t calls);

// When the all-stream kernel time says the events missed work.
struct side_stream_params {
  double busy_ratio = 1.5;      // busy time per call above this multiple of the event time ...
  double min_excess_ms = 0.020; // ... and above it by at least this much [ms] (20 us), against noise
};

struct side_stream_check {
  bool flagged = false;
  bool other_streams = false;       // kernels ran on a stream other than the timed one
  bool busy_exceeds_events = false; // the busy-time rule above
  double busy_ms_per_call = 0;      // [ms]
  double event_ms = 0;              // [ms] the event time it was compared with
  std::string reason;               // empty when not flagged
};

// event_ms: the subject's event time per call (the median of its samples). Throws std::invalid_argument for a
// negative or non-finite event time.
side_stream_check check_side_stream(const trace_summary& summary, double event_ms,
                                    const side_stream_params& params = {});

} // namespace kj::timing
