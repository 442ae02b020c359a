// Implements evaluate() on the run planner's pieces: one evaluation task, a one-slot scheduler, a memory
// sink.
#include "planning/orchestrator/evaluate.hpp"

#include "planning/orchestrator/evaluation_task.hpp"
#include "planning/orchestrator/run.hpp"
#include "planning/verify/static_scan.hpp"

#include <fmt/core.h>

namespace kj::orchestrator {

std::optional<exec::build_record> build(const kb::problem& problem, const adapters::candidate& candidate,
                                        const evaluate_options& options) {
  if (!scheduler::needs_build(candidate.source)) return std::nullopt;
  const std::filesystem::path cache_dir = exec::cache_dir_or_default(options.cache_dir);
  const nlohmann::json env = options.env.is_null() ? probe_environment(cache_dir) : options.env;
  const device_kind device = resolve_device(options.device, env);
  const exec::build_cache builds(cache_dir / "builds");
  evaluation_context ctx = context_of(options.judging, env, device, builds);
  ctx.pch = precompiled_header_for(env, device, cache_dir); // offered when an earlier run made it
  const exec::evaluate_job job = evaluate_message(ctx, problem, candidate);
  const std::string key = candidate_build_key(ctx, candidate.source, job.overrides);
  if (auto cached = builds.lookup(key)) return cached;
  const exec::job_runner runner{cache_dir, false};
  return builds.build(
      runner, key, exec::build_job{job.problem, job.candidate, job.overrides},
      build_launch(ctx, fmt::format("build-L{}-{}-s{}", problem.level, problem.number, candidate.sample)));
}

results::evaluation_result evaluate(const kb::problem& problem, const adapters::candidate& candidate,
                                    const evaluate_options& options) {
  const std::filesystem::path cache_dir = exec::cache_dir_or_default(options.cache_dir);
  const nlohmann::json env = options.env.is_null() ? probe_environment(cache_dir) : options.env;
  const device_kind device = resolve_device(options.device, env);
  const exec::job_runner runner{cache_dir, false};
  const exec::build_cache builds(cache_dir / "builds");
  evaluation_context ctx = context_of(options.judging, env, device, builds);
  ctx.wrapper = options.wrapper;
  ctx.pch = precompiled_header_for(env, device, cache_dir);
  db::evaluation_record record;
  record.device = to_string(device);
  record.overrides_json = "{}";
  record.protocol = evaluate_message(ctx, problem, candidate).protocol.name; // throws on a bad protocol
  for (const auto& f : verify::scan_candidate(candidate.source))
    record.findings.push_back({f.kind, f.line, f.excerpt});
  results::memory_sink results;
  const scheduler::scheduler runs(runner, builds,
                                  {.build_jobs = 1, .slots = scheduler::device_slots(device, {options.gpu})});
  runs.run({evaluation_task(ctx, problem, candidate, std::move(record),
                            [&](results::evaluation_result& r) { results.evaluation(r); })});
  if (results.evaluations.empty())
    throw std::runtime_error("evaluate: interrupted before the evaluation of " + candidate.path.string() +
                             " finished");
  return std::move(results.evaluations.front());
}

} // namespace kj::orchestrator
