// Implements the shard partition: a stable hash of each job's identity, modulo the shard count.
#include "planning/orchestrator/shard.hpp"

#include "core/hashing.hpp"
#include "db/store.hpp"

#include <charconv>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <string_view>

namespace kj::orchestrator {

std::string shard::label() const {
  return partial() ? fmt::format("{}/{}", index, count) : "";
}

bool shard::holds(const std::string& key) const {
  if (!partial()) return true;
  const std::uint64_t hash = std::stoull(core::sha256_hex(key).substr(0, 16), nullptr, 16);
  return hash % static_cast<std::uint64_t>(count) == static_cast<std::uint64_t>(index - 1);
}

namespace {

bool parse_int(std::string_view text, int& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

} // namespace

shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  shard s;
  if (slash == std::string::npos || !parse_int(std::string_view(text).substr(0, slash), s.index) ||
      !parse_int(std::string_view(text).substr(slash + 1), s.count))
    throw kb::source_error(fmt::format("--shard '{}': expected i/N with whole numbers, e.g. 2/4", text));
  if (s.count < 1 || s.index < 1 || s.index > s.count)
    throw kb::source_error(
        fmt::format("--shard '{}': the shard number must be between 1 and the shard count ({})", text,
                    s.count < 1 ? "which must be at least 1" : std::to_string(s.count)));
  return s;
}

std::string problem_identity(const kb::problem& problem) {
  return fmt::format("{}\n{}\n{}\n{}", problem.suite, problem.kb_version, problem.level, problem.file_name);
}

std::string job_key(const kb::problem& problem, const std::string& source_hash, int sample) {
  return fmt::format("{}\n{}\n{}", problem_identity(problem), source_hash, sample);
}

std::vector<adapters::candidate> select_shard(const shard& part, const std::vector<kb::problem>& problems,
                                              std::vector<adapters::candidate> candidates) {
  if (!part.partial()) return candidates;
  const std::size_t total = candidates.size();
  std::erase_if(candidates, [&](const adapters::candidate& c) {
    return !part.holds(job_key(problems[c.problem_index], core::sha256_hex(c.source), c.sample));
  });
  fmt::print(stderr, "kj: shard {}: {} of the plan's {} candidates\n", part.label(), candidates.size(),
             total);
  return candidates;
}

void check_resumed_shard(const db::run_record& run, const shard& part, bool merged) {
  if (merged) return;
  std::string recorded;
  try {
    recorded = nlohmann::json::parse(run.config_json).value("shard", "");
  } catch (const nlohmann::json::exception&) {
  }
  if (recorded == part.label()) return;
  const std::string needed = recorded.empty() ? "no --shard" : "--shard " + recorded;
  throw kb::source_error(fmt::format("--run-id {}: the run was started with {}; resume it with {}",
                                     run.run_uid, needed, needed));
}

} // namespace kj::orchestrator
