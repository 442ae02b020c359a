// The parts of a merged run: shard counts and the shards missing (kj merge's warning, kj runs' status).
#include "app/cli/run_parts.hpp"

#include "kernelbench/problems.hpp"
#include "planning/orchestrator/shard.hpp"

#include <fmt/core.h>

namespace kj::cli {

// The shard counts the parts of one run name, each with the shard numbers present.
std::map<int, std::set<int>> shards_of(const std::vector<db::run_part_record>& parts) {
  std::map<int, std::set<int>> seen;
  for (const auto& p : parts) {
    if (p.shard.empty()) continue;
    try {
      const auto part = orchestrator::parse_shard(p.shard);
      seen[part.count].insert(part.index);
    } catch (const kb::source_error&) { // not written by kj run: nothing to check
    }
  }
  return seen;
}

std::vector<std::string> missing_shards(const std::vector<db::run_part_record>& parts) {
  std::vector<std::string> missing;
  for (const auto& [count, present] : shards_of(parts))
    for (int i = 1; i <= count; ++i)
      if (!present.count(i)) missing.push_back(fmt::format("{}/{}", i, count));
  return missing;
}

} // namespace kj::cli
