// `kj run --collect-only`: which candidate would be judged against which problem, and which would be built;
// nothing is judged, and nothing is recorded (the database is not opened).
#include "planning/orchestrator/run_collect.hpp"

#include "engine/scheduler/scheduler.hpp"
#include "planning/orchestrator/run_setup.hpp"
#include "planning/orchestrator/shard.hpp"

#include <fmt/core.h>
#include <set>

namespace kj::orchestrator {

int collect_only(const run_inputs& inputs, const std::vector<kb::problem>& problems,
                 std::vector<adapters::candidate> imported, device_kind device) {
  if (inputs.generation.active()) {
    fmt::print("--collect-only: {} would be asked for {} sample(s) of each of {} problems; nothing is sent, "
               "judged or recorded\n",
               inputs.generation.adapter + "/" + inputs.generation.model, inputs.generation.samples,
               problems.size());
    return 0;
  }
  const std::string& producer = inputs.producer;
  // --shard: the shard's part of the plan, as the run would judge it (select_shard says how many it keeps).
  const auto candidates = select_shard(inputs.part, problems, std::move(imported));
  fmt::print("{:>2} {:>4} {:<30} {:<16} {:<6} {}\n", "L", "id", "problem", "producer", "build", "candidate");
  std::set<std::size_t> covered;
  std::size_t builds = 0;
  for (const auto& c : candidates) {
    const kb::problem& p = problems[c.problem_index];
    covered.insert(c.problem_index);
    const bool build = scheduler::needs_build(c.source);
    builds += build ? 1 : 0;
    fmt::print("{:>2} {:>4} {:<30} {:<16} {:<6} {}{}\n", p.level, p.number, p.name.substr(0, 30),
               producer.substr(0, 16), build ? "yes" : "-",
               c.path.empty() ? "(" + producer + ")" : c.path.string(),
               c.sample > 0 ? fmt::format(" (sample {})", c.sample) : "");
  }
  std::string missing;
  for (std::size_t i = 0; i < problems.size(); ++i)
    if (!covered.contains(i))
      missing += fmt::format("{}L{} {} {}", missing.empty() ? "" : ", ", problems[i].level,
                             problems[i].number, problems[i].name);
  // The build cache is keyed by the toolchain the session probes: not looked up here, so "to build" counts
  // the candidates with a build step, of which the run reuses those already in the cache.
  fmt::print("\n--collect-only: {} candidate(s) for {} of {} selected problems on {}, {} to build{}; nothing "
             "is judged or recorded\n",
             candidates.size(), covered.size(), problems.size(), to_string(device), builds,
             builds ? " (or to take from the build cache, when built before)" : "");
  if (!missing.empty()) fmt::print("problems without a candidate: {}\n", missing);
  return 0;
}

} // namespace kj::orchestrator
