// Implements the profile text: time table, kernel trace table, library share, speed of light, Nsight Compute.
#include "agent/profile.hpp"

#include "agent/feedback.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace kj::agent {
namespace {

using nlohmann::json;

json candidate_trace(const db::evaluation_record& r) {
  for (const auto& t : r.timings)
    if (t.subject == "candidate") {
      const json params = json::parse(t.params_json.empty() ? "{}" : t.params_json, nullptr, false);
      if (params.is_object() && params.contains("trace")) return params["trace"];
    }
  return nullptr;
}

std::string time_table(const profile_facts& f, const headline& h) {
  std::string out = fmt::format("times [ms], {} of {} samples ({}, {} clock):\n", h.statistic, h.samples,
                                h.method, h.clock);
  const bool reference_only = f.hash.empty();
  const double cand = h.candidate_ms.value_or(0);
  out +=
      fmt::format("  {:<28} {:>10.4g}\n", reference_only ? "reference (as ModelNew)" : "your ModelNew", cand);
  const auto row = [&](const std::string& name, double ms, const std::string& note) {
    const std::string versus = reference_only || cand <= 0 || !h.untrusted.empty() ? ""
                               : ms >= cand ? fmt::format("you are {:.2f}x faster", ms / cand)
                                            : fmt::format("you are {:.2f}x slower", cand / ms);
    out += fmt::format("  {:<28} {:>10.4g}   {}{}\n", name, ms, versus, note);
  };
  if (h.eager_ms) row("eager PyTorch (reference)", *h.eager_ms, " (timed in this run, paired)");
  for (const auto& b : f.baselines)
    row("torch.compile " + b.mode, b.ms, " (kj's cached baseline)");
  if (!f.missing_modes.empty()) {
    std::string modes;
    for (const auto& m : f.missing_modes)
      modes += (modes.empty() ? "" : ", ") + m;
    out += fmt::format("  not measured on this stack: {} (the user runs `kj baselines` for them)\n", modes);
  }
  return out;
}

std::string trace_text(const json& trace, const std::string& device) {
  if (device != "cuda") return "kernel trace: none on the CPU (one C++ call per forward; no GPU kernels)\n";
  if (!trace.is_object()) return "kernel trace: not taken\n";
  if (trace.contains("error")) return "kernel trace: failed: " + trace.value("error", "") + "\n";
  std::string out = fmt::format("kernel trace (CUPTI, all streams, {} calls): {:.3g} kernels and {:.4g} ms "
                                "busy per call, {} stream(s)\n",
                                trace.value("calls", 0), trace.value("kernels_per_call", 0.0),
                                trace.value("busy_ms_per_call", 0.0), trace.value("streams", 0));
  if (trace.contains("kernel_table")) {
    out += fmt::format("  {:<60} {:>8} {:>11}  {}\n", "kernel", "launches", "total [ms]", "library");
    for (const json& k : trace["kernel_table"]) {
      std::string name = k.value("name", "");
      if (name.size() > 60) name = name.substr(0, 57) + "...";
      out += fmt::format("  {:<60} {:>8} {:>11.4g}  {}\n", name, k.value("launches", 0), k.value("ms", 0.0),
                         k.value("library", "").empty() ? "yours" : k.value("library", ""));
    }
  }
  out += fmt::format("library share of kernel time: {:.1f}%", 100 * trace.value("library_share", 0.0));
  for (const json& l : trace.value("libraries", json::array()))
    out += fmt::format("; {} {:.3g} ms", l.value("library", ""), l.value("ms", 0.0));
  out += "\n";
  if (trace.value("side_stream", false))
    out += "side streams: " + trace.value("side_stream_reason", "") + "\n";
  return out;
}

std::string sol_text(const profile_facts& f, const headline& h) {
  const speed_of_light sol = estimate_speed_of_light(f.cost, f.hardware);
  std::string out = "speed of light (lower bounds for one forward):\n";
  if (const auto bytes = f.cost.bytes()) {
    out += fmt::format("  bytes moved at least: inputs {} + parameters {} + outputs {} = {}\n",
                       human_bytes(double(*f.cost.input_bytes)),
                       human_bytes(double(f.cost.parameter_bytes.value_or(0))),
                       human_bytes(double(*f.cost.output_bytes)), human_bytes(double(*bytes)));
  } else {
    out += "  bytes moved: unknown (" + f.cost.error + ")\n";
  }
  if (f.cost.flops && *f.cost.flops > 0)
    out += "  FLOPs (matrix products, convolutions, attention; torch's FlopCounterMode): " +
           human_flops(double(*f.cost.flops)) + "\n";
  else if (f.cost.flops)
    out += "  FLOPs: no matrix product, convolution or attention: the bound is the memory one\n";
  const double cand = h.candidate_ms.value_or(0);
  const auto line = [&](const char* what, const std::optional<double>& ms, const std::string& source) {
    if (!ms) {
      out += fmt::format("  {} bound: unknown ({})\n", what, source);
      return;
    }
    out += fmt::format("  {} bound: {:.4g} ms ({})", what, *ms, source);
    if (cand > 0) out += fmt::format(" -> this run reaches {:.1f}% of it", 100 * *ms / cand);
    out += "\n";
  };
  line("memory", sol.memory_ms,
       f.hardware.bandwidth_gbs
           ? fmt::format("{:.0f} GB/s, {}", *f.hardware.bandwidth_gbs, f.hardware.bandwidth_source)
           : f.hardware.bandwidth_source);
  if (f.cost.flops && *f.cost.flops > 0)
    line("compute", sol.compute_ms,
         f.hardware.tflops ? fmt::format("{:.4g} TFLOP/s, {}", *f.hardware.tflops, f.hardware.flops_source)
                           : f.hardware.flops_source);
  if (f.device != "cuda" && sol.memory_ms && cand > 0 && *sol.memory_ms > cand)
    out += "  (above 100%: the measured bandwidth is one thread's; code using several cores can exceed it)\n";
  return out;
}

std::string ncu_text(const ncu_report& report) {
  if (!report.error.empty()) return "Nsight Compute: failed: " + clip(report.error, 800) + "\n";
  if (report.kernels.empty()) return "Nsight Compute: no kernel was profiled\n";
  std::string out = fmt::format("Nsight Compute (first {} kernel launches of judge and candidate):\n",
                                report.kernels.size());
  out += fmt::format("  {:<40} {:>9} {:>8} {:>8} {:>8} {:>6}  top stalls (cycles per issue)\n", "kernel",
                     "time [us]", "SM SOL%", "mem SOL%", "occup.%", "regs");
  const auto pct = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.1f}", *v) : std::string("-");
  };
  for (const auto& k : report.kernels) {
    std::string stalls;
    for (const auto& [reason, value] : k.stalls)
      stalls += fmt::format("{}{} {:.2g}", stalls.empty() ? "" : ", ", reason, value);
    std::string name = k.name.size() > 40 ? k.name.substr(0, 37) + "..." : k.name;
    out += fmt::format("  {:<40} {:>9} {:>8} {:>8} {:>8} {:>6}  {}\n", name,
                       k.duration_us ? fmt::format("{:.2f}", *k.duration_us) : "-", pct(k.compute_pct),
                       pct(k.memory_pct), pct(k.occupancy_pct),
                       k.registers ? fmt::format("{:.0f}", *k.registers) : "-", stalls);
  }
  return out;
}

} // namespace

std::optional<double> speed_of_light::bound_ms() const {
  if (memory_ms && compute_ms) return std::max(*memory_ms, *compute_ms);
  return memory_ms ? memory_ms : compute_ms;
}

speed_of_light estimate_speed_of_light(const problem_cost& cost, const peaks& hardware) {
  speed_of_light sol;
  if (const auto bytes = cost.bytes(); bytes && hardware.bandwidth_gbs && *hardware.bandwidth_gbs > 0)
    sol.memory_ms = double(*bytes) / (*hardware.bandwidth_gbs * 1e9) * 1e3;
  if (cost.flops && *cost.flops > 0 && hardware.tflops && *hardware.tflops > 0)
    sol.compute_ms = double(*cost.flops) / (*hardware.tflops * 1e12) * 1e3;
  return sol;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  return fmt::format("{:.3g} {}", bytes, units[u]);
}

std::string human_flops(double flops) {
  const char* units[] = {"FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP"};
  int u = 0;
  while (flops >= 1000 && u < 4) {
    flops /= 1000;
    ++u;
  }
  return fmt::format("{:.3g} {}", flops, units[u]);
}

std::string profile_text(const profile_facts& f) {
  const db::evaluation_record& r = *f.record;
  const headline h = headline_of(r);
  std::string summary;
  if (f.hash.empty()) {
    summary = "profile of the reference (no model_new.py yet): eager " +
              (h.eager_ms ? fmt::format("{:.4g} ms", *h.eager_ms) : std::string("not timed"));
    for (const auto& b : f.baselines)
      summary += fmt::format(", {} {:.4g} ms", b.mode, b.ms);
  } else if (!h.candidate_ms) {
    summary = fmt::format("profile {}: not timed ({})", f.hash, verdict_summary(r));
  } else if (!h.untrusted.empty()) { // its time, but no speedup: kj does not trust it
    summary = fmt::format("profile {}: {:.4g} ms, a time kj does not trust, so no speedup ({}); {}", f.hash,
                          *h.candidate_ms, h.untrusted, verdict_summary(r));
  } else {
    summary = fmt::format("profile {}: {:.4g} ms", f.hash, *h.candidate_ms);
    if (h.eager_ms) summary += fmt::format(", {:.2f}x vs eager", *h.eager_ms / *h.candidate_ms);
    for (const auto& b : f.baselines)
      summary += fmt::format(", {:.2f}x vs {}", b.ms / *h.candidate_ms, b.mode);
    summary += "; " + verdict_summary(r);
  }
  std::string out = summary + "\n";
  if (!h.candidate_ms && !f.hash.empty()) return out + correctness_text(r);
  out += time_table(f, h) + trace_text(candidate_trace(r), f.device) + sol_text(f, h);
  if (f.ncu) out += ncu_text(*f.ncu);
  if (!f.hash.empty()) out += correctness_text(r);
  return out;
}

} // namespace kj::agent
