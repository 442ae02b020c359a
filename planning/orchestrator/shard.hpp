// Shards: a deterministic partition of a run's jobs, so that N hosts (a Slurm array, N pods) each judge one
// part into their own DB and `kj merge` combines them (docs/scaling.md).
#pragma once

#include "adapters/candidates.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kj::orchestrator {

// Shard `index` of `count` (1-based, as written on the command line: --shard 2/4). 1/1 is the whole plan.
struct shard {
  int index = 1;
  int count = 1;

  bool partial() const { return count > 1; }
  std::string label() const; // "2/4"; "" for the whole plan
  // Whether a job with this key belongs to the shard: the first 8 bytes of the key's SHA-256, as a number,
  // modulo `count` equal `index - 1`.
  bool holds(const std::string& key) const;
};

// Parses "i/N" (1 <= i <= N); throws kb::source_error "--shard '<text>': ..." otherwise.
shard parse_shard(const std::string& text);

// A problem's identity: suite, KernelBench version, level and file name (not its position in the plan, so
// that adding problems moves no job to another shard, and not its source hash, so that an edited problem
// stays where it was).
std::string problem_identity(const kb::problem& problem);
// A candidate's job key: the problem's identity, the candidate's source hash and its sample number.
std::string job_key(const kb::problem& problem, const std::string& source_hash, int sample);

// The candidates of the shard (all of them for 1/1), in plan order; prints how many of the plan's it kept.
std::vector<adapters::candidate> select_shard(const shard& part, const std::vector<kb::problem>& problems,
                                              std::vector<adapters::candidate> candidates);

// A run resumed with another shard than it was started with would mix two partitions in one run: throws
// kb::source_error naming the run and the shard it needs. A merged run (one with parts) already combines
// shards: any shard, or none (the jobs it lacks), may resume it.
void check_resumed_shard(const db::run_record& run, const shard& part, bool merged);

} // namespace kj::orchestrator
