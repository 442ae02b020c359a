// The task that judges one candidate: its content-addressed build (when it compiles anything), then one
// evaluate job on a device slot, then the finished record. Shared by `kj run` and evaluate().
#pragma once

#include "adapters/candidates.hpp"
#include "engine/exec/messages.hpp"
#include "engine/exec/precompiled_header.hpp"
#include "engine/scheduler/scheduler.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/judging_settings.hpp"
#include "planning/results/sinks.hpp"

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kj::orchestrator {

// What every evaluation of a run shares: the judging settings and what the run resolved.
struct evaluation_context {
  judging_settings judging;
  device_kind device = device_kind::cpu;
  nlohmann::json env; // the probe worker's environment (versions that key the builds)
  const exec::build_cache* builds = nullptr;
  std::vector<std::string> wrapper; // put before the evaluate job's worker command (a profiler); builds: none
  bool warm_judges = true;          // the slot's judge stays warm between evaluations (exec/warm_worker.hpp)
  // CPU builds: kj's precompiled torch/extension.h, offered to each build once it is made (nullopt: none).
  std::optional<exec::precompiled_header> pch;
};

// kj's precompiled header for this stack's CPU builds under bwrap (exec/precompiled_header.hpp), keyed by
// what it depends on (Python, torch, the compiler, its flags in the environment); nullopt elsewhere.
std::optional<exec::precompiled_header> precompiled_header_for(const nlohmann::json& env, device_kind device,
                                                               const std::filesystem::path& cache_dir);

// A build's launch gets the precompiled header when it is made (CPATH, and its folder read-only).
void offer_precompiled_header(const std::optional<exec::precompiled_header>& pch, exec::launch_spec& launch);

// How many CPU builds a run must have to make the header: `setting` is $KJ_PCH_MIN_BUILDS (empty: 6, where it
// starts to pay; scripts/test sets 1, its many small runs share one header). Not a whole number of at least
// 1: says so on stderr and keeps 6.
std::size_t pch_min_builds(const std::string& setting);

// Makes `pch` before a run's `compiles` CPU builds when that many pay for it (about 45 s of the compiler,
// once per stack; each build is then about 14 s shorter; pch_min_builds); says so, and why not when it fails.
void prepare_precompiled_header(const exec::precompiled_header& pch, const exec::job_runner& runner,
                                std::size_t compiles);

evaluation_context context_of(const judging_settings& judging, const nlohmann::json& env, device_kind device,
                              const exec::build_cache& builds);

// The evaluate job of a candidate (protocol per the problem's KernelBench version, sizes per device).
exec::evaluate_job evaluate_message(const evaluation_context& ctx, const kb::problem& problem,
                                    const adapters::candidate& candidate);

// The build key of a candidate's source under this context's stack.
std::string candidate_build_key(const evaluation_context& ctx, const std::string& source,
                                const std::map<std::string, std::int64_t>& overrides);

// How a candidate's build job starts (kj run and the agent's compile tool alike): in the sandbox, with the
// build timeout, at a lower priority on a GPU machine.
exec::launch_spec build_launch(const evaluation_context& ctx, const std::string& name);

// `record` comes with the ids, device, protocol, baselines and static findings filled in; the task fills
// the rest and hands the result to `on_result` (called one at a time by the scheduler). A candidate whose
// cached build failed to load is not recorded then: the build is forgotten and a follow-up task (`rebuilt`)
// builds and judges it once more, and that second verdict is the candidate's.
scheduler::task evaluation_task(const evaluation_context& ctx, const kb::problem& problem,
                                const adapters::candidate& candidate, db::evaluation_record record,
                                std::function<void(results::evaluation_result&)> on_result,
                                bool rebuilt = false);

} // namespace kj::orchestrator
