// Implements the judge's bounds on the candidate's timing: the judge's clock, numerics flags, physics.
#include "engine/worker/judge_bounds.hpp"

#include "engine/worker/support.hpp"
#include "timing/clock_bound.hpp"
#include "timing/physical_floor.hpp"
#include "timing/statistics.hpp"

#include <fmt/core.h>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {

// The backend flags among `changed` that lower the precision a forward computes at, named ("" when none):
// TF32 matmuls or convolutions, a float32 matmul precision other than "highest", reduced-precision
// reductions. cuDNN's benchmark and deterministic modes change algorithms, not precision.
std::string lower_numerics(const json& changed) {
  std::string out;
  for (const auto& [name, change] : changed.items()) {
    if (name.find("cudnn.benchmark") != std::string::npos || name.find("deterministic") != std::string::npos)
      continue;
    out += fmt::format("{}torch.{}: {}", out.empty() ? "" : "; ", name,
                       change.is_string() ? change.get<std::string>() : change.dump());
  }
  return out.empty() ? ""
                     : "the candidate changed torch's numerics flags (" + out +
                           "): its forward ran at another precision than the run's, so its time is not "
                           "credited at the run's precision";
}

// What the judge's clock says of the candidate's rounds (robust, driven call by call): every call was
// credited no lower than its bracket less the handshake's cost (driven_timing.cpp); a round whose calls were
// charged systematically marks the timing doubtful (`clock_doubt`: a forging timer or a host that delayed
// every handshake; the charged samples bound it either way). kj's draw, timed in both processes (on CUDA
// bounded by the judge's bracket around each prepare), is compared pooled over the rounds: time beyond its
// noise allowance is charged to every call. Backend flags the candidate changed (TF32, reduced-precision
// reductions) mean it ran at another precision than the run's: its timing is not credited at the run's.
void bound_by_clock(timing_result& merged, const std::vector<candidate_timing>& candidate,
                    const std::vector<reference_timing>& reference, bool cuda) {
  json rounds = json::array(), handshakes = json::array();
  std::vector<double> judge_draws;
  double draw_ms = 0, judge_draw_ms = 0;
  std::string doubt;
  json flags = json::object();
  const auto fastest = [](double so_far, double v) {
    return v > 0 && (so_far == 0 || v < so_far) ? v : so_far;
  };
  for (std::size_t i = 0; i < candidate.size() && i < reference.size(); ++i) {
    draw_ms = fastest(draw_ms, candidate[i].draw_ms);
    judge_draw_ms = fastest(judge_draw_ms, reference[i].draw_ms);
    judge_draws.insert(judge_draws.end(), reference[i].draws_ms.begin(), reference[i].draws_ms.end());
    rounds.push_back({{"draw_ms", candidate[i].draw_ms}, {"judge_draw_ms", reference[i].draw_ms}});
    const json handshake = candidate[i].timed.params.value("handshake", json());
    if (handshake.is_object()) {
      handshakes.push_back(handshake);
      if (doubt.empty() && handshake.contains("systematic")) doubt = handshake["systematic"];
    }
    flags.update(candidate[i].timed.params.value("flags_changed", json::object()));
  }
  if (rounds.empty()) return;
  merged.params["handshake"] = handshakes;
  const double judge_spread_ms =
      judge_draws.empty() ? 0 : timing::summarize(judge_draws).median - judge_draw_ms; // the judge's noise
  const timing::clock_check d = timing::check_draws(draw_ms, judge_draw_ms, judge_spread_ms);
  merged.params["judge_clock"] = {{"rounds", rounds},
                                  {"draw_ms", draw_ms},
                                  {"judge_draw_ms", judge_draw_ms},
                                  {"draw_allowance_ms", d.allowance_ms},
                                  {"judge_draw_spread_ms", judge_spread_ms}};
  const auto untrusted = [&](const std::string& reason) {
    if (!merged.params.value("trusted", true)) return;
    merged.params["trusted"] = false;
    merged.params["untrusted_reason"] = reason;
  };
  if (!doubt.empty()) merged.params["clock_doubt"] = doubt;
  if (const std::string lower = lower_numerics(flags); !lower.empty()) {
    merged.params["flags_changed"] = flags;
    untrusted(lower);
  }
  // The draw check is enforced on CUDA only, recorded on the host: there an honest candidate's OpenMP
  // threads, still spinning after its call on a small machine, slow kj's draw in its process as much as a
  // hidden precomputation would.
  if (!cuda || d.charge_ms <= 0) return;
  for (double& sample : merged.samples_ms)
    sample += d.charge_ms;
  merged.params["judge_clock"]["draw_charge_ms"] = d.charge_ms;
  merged.params["judge_clock"]["draw_charge_reason"] = d.reason;
}

void mark_systematic_charges(timing_result& merged, const std::vector<candidate_timing>& candidate) {
  for (const auto& c : candidate) {
    const json handshake = c.timed.params.value("handshake", json());
    if (!handshake.is_object() || !handshake.contains("systematic")) continue;
    merged.params["clock_doubt"] = handshake["systematic"];
    return;
  }
}

// The physical floor of the candidate's calls on this GPU (timing/physical_floor.hpp), recorded with its
// fraction of the speed of light; a median below it is impossible, and not credited. kj's own failure to
// count the work (its memory, an op the counter cannot run) leaves the floor unknown, never the candidate's.
void bound_by_physics(timing_result& candidate, py::object& session, const cuda::plugin& plugin) {
  json record;
  try {
    const json work = to_json(session.attr("physical_work")());
    const cuda::device_info d = plugin.device();
    const timing::device_peaks peaks = timing::peaks_of(
        d.cc_major, d.cc_minor, d.sm_count, static_cast<double>(d.sm_clock_khz),
        static_cast<double>(d.memory_clock_khz), d.memory_bus_bits, static_cast<double>(d.l2_bytes));
    const timing::physical_floor f = timing::floor_of(
        work.value("input_bytes", 0.0), work.value("output_bytes", 0.0), work.value("flops", 0.0), peaks);
    const double median = timing::summarize(candidate.samples_ms).median;
    record = {{"bytes", f.bytes},
              {"flops", f.flops},
              {"bandwidth_bytes_per_s", peaks.bytes_per_s},
              {"peak_ops_per_s", peaks.ops_per_s},
              {"memory_ms", f.memory_ms},
              {"compute_ms", f.compute_ms},
              {"floor_ms", f.floor_ms},
              {"speed_of_light", median > 0 ? f.floor_ms / median : 0.0}};
    if (f.floor_ms > 0 && median < f.floor_ms && candidate.params.value("trusted", true)) {
      candidate.params["trusted"] = false;
      candidate.params["untrusted_reason"] =
          fmt::format("a median of {:.4f} ms is below the physical floor of {:.4f} ms on this GPU ({:.3g} "
                      "bytes at {:.3g} "
                      "B/s, {:.3g} FLOPs at {:.3g} op/s): no kernel can be that fast",
                      median, f.floor_ms, f.bytes, peaks.bytes_per_s, f.flops, peaks.ops_per_s);
    }
  } catch (const std::exception& e) {
    record = {{"error", std::string("kj could not count the reference's work: ") + e.what()}};
  }
  candidate.params["physical_floor"] = record;
}

} // namespace kj::worker
