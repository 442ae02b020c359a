// Implements `kj run`: resolve sources and device, record problems and candidates, run each job, summarize.
#include "harness/orchestrator/run.hpp"

#include "adapters/candidates.hpp"
#include "adapters/generate/accounting.hpp"
#include "baselines/baselines.hpp"
#include "db/store.hpp"
#include "harness/orchestrator/build_pool.hpp"
#include "harness/orchestrator/jobs.hpp"
#include "harness/orchestrator/outcome.hpp"
#include "harness/orchestrator/problem_sources.hpp"
#include "harness/orchestrator/summary.hpp"
#include "harness/verdict.hpp"
#include "harness/verify/static_scan.hpp"
#include "harness/version.hpp"

#include <chrono>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <iostream>
#include <random>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::orchestrator {
namespace {

std::string new_run_uid() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  return fmt::format("r{}-{:04x}", stamp, rd() & 0xffff);
}

std::vector<adapters::candidate> resolve_candidates(const run_options& options,
                                                    const std::vector<kb::problem>& problems,
                                                    const std::string& device, db::store& store,
                                                    std::int64_t run_id,
                                                    const std::vector<std::int64_t>& problem_ids) {
  // LLM adapters (issue 13): the producer generates (or replays) and records the candidates itself.
  if (options.generation.active())
    return adapters::generate_candidates(store, run_id, problems, problem_ids, options.generation, device,
                                         interrupt_requested)
        .candidates;
  std::string which = options.candidates;
  if (which.empty()) {
    const bool only_builtin = options.sources.builtin && options.sources.kernelbench_dir.empty() &&
                              options.sources.files.empty() && options.sources.ops6k_path.empty();
    if (!only_builtin)
      throw kb::source_error("no candidates given: pass --candidates DIR (KernelBench-style files) or "
                             "--candidates identity");
    which = "examples";
  }
  if (which == "identity") return adapters::identity_candidates(problems);
  const bool examples = which == "examples";
  const fs::path dir = examples ? adapters::examples_dir(device) : fs::path(which);
  auto report = adapters::candidates_from_directory(dir, problems, examples ? "examples" : "directory");
  for (const auto& skipped : report.skipped)
    fmt::print(stderr, "kj: skipping candidate {}\n", skipped);
  if (report.candidates.empty())
    throw kb::source_error(fmt::format("no candidate in {} matches the selected problems", dir.string()));
  return std::move(report.candidates);
}

} // namespace

db::stack_record stack_from(json env, const std::string& device) {
  db::stack_record stack;
  stack.python = env.value("python", "");
  stack.torch = env.value("torch", "");
  stack.device_name = device == "cuda" ? env.value("device_name", "")
                                       : "cpu: " + env.value("cpu", env.value("device_name", ""));
  env["device"] = device;
  env["kj_version"] = version_string();
  // Identity: everything the worker reported except what describes the moment rather than the stack (the
  // number of visible devices) and fields that only exist on the other device.
  json identity = env;
  identity.erase("device_count");
  identity.erase("cuda_available");
  if (device == "cpu")
    for (const char* gpu_only : {"gpu_uuid", "sm_count", "compute_capability", "gpu_memory_bytes", "l2_bytes",
                                 "cuda_driver", "nvidia_driver", "nvcc", "cudnn"})
      identity.erase(gpu_only);
  stack.fingerprint_json = env.dump();
  stack.stack_hash = db::sha256_hex(identity.dump()).substr(0, 16);
  return stack;
}

namespace {

struct planned_job {
  const kb::problem* problem = nullptr;
  const adapters::candidate* candidate = nullptr;
  std::string name;
  job_spec job;
  db::evaluation_record record;
  bool done = false;
};

// The cached (or, for a list of modes, freshly measured) compiled baselines of the problems that have
// candidates, by problem index; eager is left out: the run times it paired with each candidate.
std::map<std::size_t, std::vector<std::int64_t>>
run_baselines(db::store& store, const job_runner& runner, const run_options& options,
              const std::vector<kb::problem>& problems, const std::vector<std::int64_t>& problem_ids,
              const std::vector<adapters::candidate>& candidates, const baselines::stack_ref& stack,
              const std::string& device) {
  std::map<std::size_t, std::vector<std::int64_t>> linked;
  if (options.baselines == "none" || !options.timing.enabled) return linked;
  baselines::options opts;
  const bool cached_only = options.baselines == "cached";
  opts.modes = cached_only ? baselines::all_modes : baselines::parse_modes(options.baselines);
  std::erase(opts.modes, "eager");
  if (opts.modes.empty()) return linked;
  opts.measure_missing = !cached_only;
  opts.device = device;
  opts.protocol = options.protocol;
  opts.precision = options.precision;
  opts.timing = options.timing;
  opts.overrides = options.overrides;
  opts.compile_jobs = options.build_jobs;
  opts.timeout_s = options.timeout_s;
  std::vector<baselines::problem_ref> refs;
  std::map<const kb::problem*, std::size_t> index_of;
  for (const auto& c : candidates)
    if (index_of.emplace(&problems[c.problem_index], c.problem_index).second)
      refs.push_back({&problems[c.problem_index], problem_ids[c.problem_index]});
  if (!cached_only)
    fmt::print(stderr, "kj: baselines {} for {} problems (cached where measured before)...\n",
               fmt::join(opts.modes, ", "), refs.size());
  for (const auto& r : baselines::ensure(store, runner, refs, stack, opts)) {
    linked[index_of[r.problem]].push_back(r.record.id);
    if (!cached_only && !r.cached)
      fmt::print(stderr, "  L{} {} {}: {}\n", r.problem->level, r.problem->file_name, r.mode,
                 r.record.status == "ok" ? fmt::format("{:.4g} ms", r.record.headline_ms().value_or(0))
                                         : r.record.status);
  }
  return linked;
}

int interrupted(db::store& store, std::int64_t run_id, const std::string& run_uid, const fs::path& db_path) {
  store.set_run_status(run_id, "interrupted");
  fmt::print(stderr,
             "\nkj: interrupted; finished evaluations are in {}. Resume with: kj run --run-id {} ...\n",
             db_path.string(), run_uid);
  return 130;
}

} // namespace

std::string resolve_device(const std::string& requested, const json& env) {
  const bool has_cuda = env.value("cuda_available", false);
  if (requested == "auto") return has_cuda ? "cuda" : "cpu";
  if (requested == "cuda" && !has_cuda)
    throw kb::source_error("--device cuda: torch in the embedded Python sees no CUDA device "
                           "(torch " +
                           env.value("torch", "?") + ", CUDA " + env.value("torch_cuda", "none") + ")");
  return requested;
}

std::vector<std::int64_t> record_problems(db::store& store, const std::vector<kb::problem>& problems) {
  std::vector<std::int64_t> ids;
  for (const auto& p : problems)
    ids.push_back(
        store.upsert_problem({p.suite, p.kb_version, p.level, p.number, p.name, p.file_name, p.path.string(),
                              p.source, db::sha256_hex(p.source), p.source_commit}));
  return ids;
}

json probe_environment(const fs::path& cache_dir) {
  job_runner runner{cache_dir, std::chrono::milliseconds(300'000), false};
  job_spec probe;
  probe.mode = "probe";
  std::string tail;
  worker_outcome outcome = runner.run(probe, "probe", &tail);
  const json* hello = find_event(outcome, "hello");
  if (!hello) {
    const json* verdict = find_event(outcome, "verdict");
    throw std::runtime_error(fmt::format("the worker could not start Python with torch ({}): {}\n{}",
                                         describe_exit(outcome), verdict ? verdict->value("error", "") : "",
                                         tail));
  }
  return (*hello)["environment"];
}

int execute_run(const run_options& options) {
  // Bad input is found before anything runs: sources, candidates directory, DB path.
  const auto problems =
      load_all_problems(options.sources, options.cache_dir.empty() ? default_cache_dir() : options.cache_dir);
  if (options.baselines != "cached" && options.baselines != "none") baselines::parse_modes(options.baselines);
  db::store store = db::store::open(options.db_path);
  const fs::path cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;

  fmt::print(stderr, "kj: starting a worker to probe Python, torch and the device...\n");
  const json env = probe_environment(cache_dir);
  const std::string device = resolve_device(options.device, env);

  const db::stack_record stack = stack_from(env, device);
  const std::int64_t stack_id = store.upsert_stack(stack);
  std::string run_uid = options.run_uid.empty() ? new_run_uid() : options.run_uid;
  std::int64_t run_id = 0;
  if (auto existing = store.find_run(run_uid)) {
    run_id = *existing;
    fmt::print(stderr, "kj: resuming run {}\n", run_uid);
    store.set_run_status(run_id, "running");
  } else {
    json config{{"device", device},
                {"candidates", options.candidates},
                {"timeout_s", options.timeout_s},
                {"overrides", options.overrides},
                {"timing", options.timing},
                {"protocol", options.protocol},
                {"trials", options.trials},
                {"library_policy", options.trace.library_policy},
                {"max_library_share", options.trace.max_library_share},
                {"precision", options.precision},
                {"baselines", options.baselines},
                {"kb_version", options.sources.kb_version}};
    run_id = store.create_run(
        {run_uid, "", "running", device, options.command_line, version_string(), config.dump(), stack_id});
  }

  const std::vector<std::int64_t> problem_ids = record_problems(store, problems);

  install_interrupt_handlers();
  // Candidates are resolved once the run exists: an LLM adapter records its exchanges under it.
  const auto candidates = resolve_candidates(options, problems, device, store, run_id, problem_ids);
  if (interrupt_requested()) return interrupted(store, run_id, run_uid, options.db_path);
  job_runner runner{cache_dir, std::chrono::milliseconds(static_cast<long long>(options.timeout_s * 1000)),
                    options.keep_scratch};
  const auto linked = run_baselines(store, runner, options, problems, problem_ids, candidates,
                                    {stack_id, stack.stack_hash, stack.device_name}, device);
  if (interrupt_requested()) return interrupted(store, run_id, run_uid, options.db_path);
  progress_view progress(candidates.size());
  std::vector<planned_job> plan;
  std::map<std::int64_t, std::string> planned; // candidate id -> the file it was planned from
  for (const auto& c : candidates) {
    const kb::problem& p = problems[c.problem_index];
    const std::int64_t candidate_id =
        store.upsert_candidate({problem_ids[c.problem_index], c.producer, c.sample, c.path.string(), c.source,
                                db::sha256_hex(c.source)});
    if (store.has_evaluation(run_id, candidate_id)) {
      progress.skip();
      continue;
    }
    // LLM adapters (issue 13): a reply without usable code is judged `no_code` without a worker.
    if (!c.no_code.empty()) {
      db::evaluation_record e{run_id, problem_ids[c.problem_index], candidate_id, stack_id, device, "{}", ""};
      e.verdict = std::string(to_string(verdict::no_code));
      e.error = c.no_code;
      e.started_at = e.finished_at = db::now_iso8601();
      store.insert_evaluation(e);
      progress.begin(p, c);
      progress.end(e);
      continue;
    }
    if (const auto [it, fresh] = planned.emplace(candidate_id, c.path.string()); !fresh) {
      // Two files with the same source and sample number are one candidate: judged once.
      fmt::print(stderr, "kj: skipping candidate {}: the same source and sample as {}\n", c.path.string(),
                 it->second);
      progress.skip();
      continue;
    }
    planned_job& j = plan.emplace_back();
    j.problem = &p;
    j.candidate = &c;
    j.name = fmt::format("L{}-{}-s{}", p.level, p.number, c.sample);
    j.job.device = device;
    j.job.problem = {p.path.string(), p.source};
    j.job.candidate = {c.path.empty() ? "<" + c.producer + " " + p.file_name + ">" : c.path.string(),
                       c.source};
    j.job.overrides = p.overrides_for(device, options.overrides);
    j.job.protocol =
        make_protocol(options.protocol, p.kb_version.empty() ? "main" : p.kb_version, options.precision);
    if (options.trials > 0 && options.trials != j.job.protocol.trials) { // no longer the original protocol
      j.job.protocol.trials = options.trials;
      j.job.protocol.name += fmt::format("+trials={}", options.trials);
    }
    j.job.timing = options.timing;
    j.job.strict = options.strict;
    j.record = {run_id, problem_ids[c.problem_index], candidate_id, stack_id, device,
                "{}",   j.job.protocol.name};
    if (auto it = linked.find(c.problem_index); it != linked.end()) j.record.baseline_ids = it->second;
    for (const auto& f : verify::scan_candidate(c.source))
      j.record.findings.push_back({f.kind, f.line, f.excerpt});
  }

  // Compile first, in parallel, so that timing never shares the machine with a compiler.
  std::vector<build_request> builds;
  std::vector<std::size_t> build_of;
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (needs_build(plan[i].candidate->source)) {
      builds.push_back({plan[i].job, plan[i].name});
      build_of.push_back(i);
    }
  if (!builds.empty()) {
    const int jobs = options.build_jobs > 0 ? options.build_jobs : default_build_jobs();
    fmt::print(stderr, "kj: compiling {} candidates, {} at a time...\n", builds.size(), jobs);
    const auto built = build_all(runner, builds, jobs, [&](std::size_t i, const build_outcome& b) {
      fmt::print(stderr, "  built {} ({:.0f} s): {}\n", builds[i].name, b.outcome.wall_s,
                 b.built ? "ok" : "failed");
    });
    for (std::size_t k = 0; k < built.size(); ++k) {
      if (built[k].built) continue;
      planned_job& j = plan[build_of[k]];
      j.done = true;
      if (built[k].outcome.interrupted) continue;
      j.record.started_at = db::now_iso8601();
      fill_evaluation(built[k].outcome, built[k].log_tail, j.record, options.trace);
      j.record.finished_at = db::now_iso8601();
      store.insert_evaluation(j.record);
      progress.begin(*j.problem, *j.candidate);
      progress.end(j.record);
    }
  }
  if (interrupt_requested()) return interrupted(store, run_id, run_uid, options.db_path);

  for (auto& j : plan) {
    if (j.done) continue;
    j.record.started_at = db::now_iso8601();
    progress.begin(*j.problem, *j.candidate);
    std::string tail;
    json applied = json::object();
    const worker_outcome outcome = runner.run(j.job, j.name, &tail, [&](const json& e) {
      if (e.contains("applied_overrides")) applied = e["applied_overrides"];
    });
    if (outcome.interrupted) return interrupted(store, run_id, run_uid, options.db_path);
    fill_evaluation(outcome, tail, j.record, options.trace);
    j.record.overrides_json = applied.dump();
    j.record.finished_at = db::now_iso8601();
    store.insert_evaluation(j.record);
    progress.end(j.record);
  }
  store.set_run_status(run_id, "finished");
  print_run_summary(store, run_uid, options.db_path);
  if (options.generation.active())
    adapters::write_cost_table(store.llm_costs(run_uid), std::cout); // issue 13
  return 0;
}

} // namespace kj::orchestrator
