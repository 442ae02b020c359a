// The plan of `kj run`: one task per candidate not yet judged in the run (recorded as candidate rows in one
// transaction), and the evaluations written without a worker (an LLM reply without code).
#pragma once

#include "adapters/candidates.hpp"
#include "db/store.hpp"
#include "engine/scheduler/scheduler.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/evaluation_task.hpp"
#include "planning/results/sinks.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace kj::orchestrator {

struct run_plan {
  std::vector<scheduler::task> tasks;
  std::vector<results::evaluation_result> no_code; // judged without a worker
  std::size_t kept = 0;       // judged before in this run (a resume): kept, not judged again
  std::size_t duplicates = 0; // the same source and sample as another file of the plan: judged once
  std::size_t not_failed = 0; // --rerun-failed: did not fail in the earlier run
};

struct plan_inputs {
  const evaluation_context& ctx;
  const std::vector<kb::problem>& problems;
  const std::vector<std::int64_t>& problem_ids;
  std::int64_t run_id = 0;
  std::int64_t stack_id = 0;
  const std::map<std::size_t, std::vector<std::int64_t>>& linked; // cached baselines by problem index
  std::optional<std::set<std::int64_t>> passed; // --rerun-failed: these candidate ids passed before: left out
  std::function<void(results::evaluation_result&)> on_result;
};

// Records every candidate (deduplicated) and plans those the run has not judged. An error names the
// candidate's file.
run_plan plan_run(db::store& store, const plan_inputs& in,
                  const std::vector<adapters::candidate>& candidates);

} // namespace kj::orchestrator
