// Implements the peaks: the datasheet table's lookup, the CPU's measured copy bandwidth, the user's values.
#include "agent/hardware.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fmt/core.h>
#include <fnmatch.h>
#include <memory>
#include <stdexcept>
#include <string_view>

namespace kj::agent {

extern const std::string_view agent_hardware_text;

namespace {

using nlohmann::json;

// The table's entry for a GPU name, or null.
const json* find_gpu(const json& table, const std::string& name, const std::string& where) {
  if (!table.is_object() || !table.contains("gpus") || !table["gpus"].is_array())
    throw std::runtime_error(where + ": expected an object with a \"gpus\" array");
  for (const json& entry : table["gpus"]) {
    if (!entry.is_object() || !entry.contains("match") || !entry["match"].is_array())
      throw std::runtime_error(where + ": every entry of \"gpus\" needs a \"match\" array of globs");
    for (const json& pattern : entry["match"])
      if (pattern.is_string() && ::fnmatch(pattern.get<std::string>().c_str(), name.c_str(), 0) == 0)
        return &entry;
  }
  return nullptr;
}

} // namespace

std::string builtin_hardware_table() {
  return std::string(agent_hardware_text);
}

double measure_copy_bandwidth_gbs(std::size_t bytes) {
  auto from = std::make_unique<char[]>(bytes);
  auto to = std::make_unique<char[]>(bytes);
  std::memset(from.get(), 1, bytes); // touch every page first: the copy is timed, not the page faults
  std::memset(to.get(), 2, bytes);
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.get(), from.get(), bytes);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    from[static_cast<std::size_t>(i) % bytes] = to[bytes - 1]; // keeps the copies from being optimized away
  }
  return 2.0 * static_cast<double>(bytes) / best / 1e9;
}

peaks device_peaks(const json& env, const std::string& device, kj::precision at,
                   const peak_settings& settings) {
  peaks out;
  const std::string precision = kj::name_of(at); // the table's key
  if (device == "cuda") {
    const std::string where = settings.table_text.empty() ? "agent/hardware.json" : settings.table_name;
    const json table = json::parse(
        settings.table_text.empty() ? builtin_hardware_table() : settings.table_text, nullptr, false);
    if (table.is_discarded()) throw std::runtime_error(where + ": not valid JSON");
    const std::string gpu = env.value("device_name", "");
    if (const json* entry = find_gpu(table, gpu, where)) {
      const std::string source = entry->value("source", where);
      if (entry->contains("bandwidth_gbs") && (*entry)["bandwidth_gbs"].is_number()) {
        out.bandwidth_gbs = (*entry)["bandwidth_gbs"].get<double>();
        out.bandwidth_source = fmt::format("{} peak for {}", source, gpu);
      }
      const json tflops = entry->value("tflops", json::object());
      if (tflops.contains(precision) && tflops[precision].is_number()) {
        out.tflops = tflops[precision].get<double>();
        out.flops_source = fmt::format("{} {} peak for {}", source, precision, gpu);
      }
    } else {
      out.bandwidth_source = out.flops_source =
          fmt::format("'{}' is not in {}: pass --peak-bandwidth-gbs and --peak-tflops", gpu, where);
    }
  } else {
    out.bandwidth_gbs = measure_copy_bandwidth_gbs();
    out.bandwidth_source = "measured here: one thread's memcpy of 256 MiB (read + write), best of 5";
    out.flops_source = "unknown for a CPU: pass --peak-tflops";
  }
  if (settings.bandwidth_gbs) {
    out.bandwidth_gbs = settings.bandwidth_gbs;
    out.bandwidth_source = "configured (--peak-bandwidth-gbs)";
  }
  if (settings.tflops) {
    out.tflops = settings.tflops;
    out.flops_source = "configured (--peak-tflops)";
  }
  return out;
}

} // namespace kj::agent
