// Baseline modes and the cache key.
#include "core/hashing.hpp"
#include "core/verdict.hpp"
#include "planning/baselines/baselines.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sstream>

using nlohmann::json;

namespace kj::baselines {

std::vector<std::string> parse_modes(const std::string& list) {
  if (list == "all") return all_modes;
  if (list == "default") return default_modes;
  std::vector<std::string> modes;
  std::stringstream in(list);
  for (std::string mode; std::getline(in, mode, ',');) {
    if (mode.empty()) continue;
    if (std::find(all_modes.begin(), all_modes.end(), mode) == all_modes.end())
      throw kb::source_error(
          fmt::format("--modes: unknown baseline mode '{}' (expected a comma-separated list "
                      "of {}, or 'default' or 'all')",
                      mode, fmt::join(all_modes, ", ")));
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) modes.push_back(mode);
  }
  if (modes.empty()) throw kb::source_error("--modes: no baseline mode given");
  return modes;
}

json key_json(const key_fields& key) {
  json timing = key.timing;
  // Not part of a baseline's measurement: switches of the candidate's timing pass, and rounds (a baseline is
  // timed alone, in one round).
  for (const char* field : {"enabled", "check_outputs", "graphs", "floor", "rounds"})
    timing.erase(field);
  return {{"problem_source_hash", key.problem_source_hash},
          {"overrides", key.overrides},
          {"precision", kj::name_of(key.precision)},
          {"mode", key.mode},
          {"device", key.device},
          {"seed", key.seed},
          {"eval_mode", key.eval_mode},
          {"timing", timing},
          {"stack", key.stack_hash}};
}

std::string cache_key(const json& key_json) {
  return core::sha256_hex(key_json.dump());
}

bool usable(const db::baseline_record& cached, double timeout_s) {
  // "incorrect" was written by kj before the compiled-vs-eager check became a note: measured again
  if (cached.status == "not_run") return false;
  const auto v = kj::parse_verdict(cached.status); // else a verdict's name, or ok
  if (v == verdict::crashed || v == verdict::harness_error || v == verdict::incorrect) return false;
  if (v == verdict::timeout) return json::parse(cached.params_json).value("timeout_s", 0.0) >= timeout_s;
  return true;
}

} // namespace kj::baselines
