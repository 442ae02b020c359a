// Implements `kj run`: resolve sources and device, record problems and candidates, plan one task per
// candidate, let the scheduler run them, summarize.
#include "harness/orchestrator/run.hpp"

#include "adapters/candidates.hpp"
#include "adapters/generate/accounting.hpp"
#include "baselines/baselines.hpp"
#include "harness/exec/sandbox.hpp"
#include "harness/orchestrator/evaluation_task.hpp"
#include "harness/orchestrator/problem_sources.hpp"
#include "harness/orchestrator/summary.hpp"
#include "harness/verdict.hpp"
#include "harness/verify/static_scan.hpp"
#include "harness/version.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <iostream>
#include <random>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::orchestrator {

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

namespace {

std::vector<adapters::candidate> resolve_candidates(const run_options& options,
                                                    const std::vector<kb::problem>& problems,
                                                    const std::string& device, db::store& store,
                                                    std::int64_t run_id,
                                                    const std::vector<std::int64_t>& problem_ids) {
  // An LLM adapter generates (or replays) the candidates and records its exchanges under the run.
  if (options.generation.active())
    return adapters::generate_candidates(store, run_id, problems, problem_ids, options.generation, device,
                                         exec::interrupt_requested)
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

// Prints each measured baseline as it is known (cached ones are only counted).
class baseline_console final : public scheduler::result_sink {
public:
  void baseline(scheduler::baseline_result& r) override {
    if (r.cached) return;
    fmt::print(stderr, "  L{} {} {}: {}\n", r.problem.level, r.problem.file_name, r.mode,
               r.record.status == "ok" ? fmt::format("{:.4g} ms", r.record.headline_ms().value_or(0))
                                       : r.record.status);
  }
};

// The cached (or, for a list of modes, freshly measured) compiled baselines of the problems that have
// candidates, by problem index; eager is left out: the run times it paired with each candidate.
std::map<std::size_t, std::vector<std::int64_t>>
run_baselines(db::store& store, const scheduler::scheduler& runner, const run_options& options,
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
  opts.timeout_s = options.timeout_s;
  std::vector<baselines::problem_ref> refs;
  std::map<const kb::problem*, std::size_t> index_of;
  for (const auto& c : candidates)
    if (index_of.emplace(&problems[c.problem_index], c.problem_index).second)
      refs.push_back({&problems[c.problem_index], problem_ids[c.problem_index]});
  if (!cached_only)
    fmt::print(stderr, "kj: baselines {} for {} problems (cached where measured before)...\n",
               fmt::join(opts.modes, ", "), refs.size());
  scheduler::db_sink to_db(store);
  baseline_console console;
  scheduler::sink_set sinks({&to_db, &console});
  for (const auto& r : baselines::ensure(store, runner, refs, stack, opts, sinks))
    linked[index_of[r.problem]].push_back(r.record.id);
  return linked;
}

int interrupted(db::store& store, std::int64_t run_id, const std::string& run_uid, const fs::path& db_path) {
  store.set_run_status(run_id, "interrupted");
  fmt::print(stderr,
             "\nkj: interrupted; finished evaluations are in {}. Resume with: kj run --run-id {} ...\n",
             db_path.string(), run_uid);
  return 130;
}

std::int64_t create_or_resume_run(db::store& store, const run_options& options, const std::string& run_uid,
                                  const std::string& device, std::int64_t stack_id) {
  if (auto existing = store.find_run(run_uid)) {
    const db::run_record run = store.get_run(*existing).value();
    check_resumed_shard(run, options.part, !store.run_parts(*existing).empty());
    // A run still marked running was not ended by its kj (killed, or the machine went down): interrupted.
    const std::string was = run.status == "running" ? "interrupted" : run.status;
    fmt::print(stderr, "kj: resuming run {} ({}{})\n", run_uid, was,
               run.status == "running" ? ": its kj stopped without ending it, e.g. killed" : "");
    store.set_run_status(*existing, "running");
    return *existing;
  }
  const json config{{"device", device},
                    {"candidates", options.candidates},
                    {"timeout_s", options.timeout_s},
                    {"build_timeout_s", options.build_timeout_s},
                    {"limits", options.limits},
                    {"overrides", options.overrides},
                    {"timing", options.timing},
                    {"protocol", options.protocol},
                    {"trials", options.trials},
                    {"library_policy", options.trace.library_policy},
                    {"max_library_share", options.trace.max_library_share},
                    {"precision", options.precision},
                    {"input_rng", options.input_rng},
                    {"baselines", options.baselines},
                    {"gpus", options.gpus},
                    {"sandbox", exec::sandbox_kind()},
                    {"seccomp", exec::have_seccomp()},
                    {"kb_version", options.sources.kb_version},
                    {"shard", options.part.label()}};
  return store.create_run(
      {run_uid, "", "running", device, options.command_line, version_string(), config.dump(), stack_id});
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
  identity.erase("python_paths"); // where the venv lies is not part of the stack
  identity.erase("cuda_available");
  if (device == "cpu")
    for (const char* gpu_only : {"gpu_uuid", "sm_count", "compute_capability", "gpu_memory_bytes", "l2_bytes",
                                 "cuda_driver", "nvidia_driver", "nvcc", "cudnn"})
      identity.erase(gpu_only);
  stack.fingerprint_json = env.dump();
  stack.stack_hash = db::sha256_hex(identity.dump()).substr(0, 16);
  return stack;
}

std::string resolve_device(const std::string& requested, const json& env) {
  const bool has_cuda = env.value("cuda_available", false);
  if (requested == "auto") return has_cuda ? "cuda" : "cpu";
  if (requested == "cuda" && !has_cuda)
    throw kb::source_error("--device cuda: torch in the embedded Python sees no CUDA device "
                           "(torch " +
                           env.value("torch", "?") + ", CUDA " + env.value("torch_cuda", "none") + ")");
  return requested;
}

std::vector<int> resolve_gpus(const std::vector<int>& requested, const json& env) {
  const int visible = env.value("device_count", 0);
  // Two slots on one GPU would time two candidates on it at once.
  for (std::size_t i = 0; i < requested.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (requested[i] == requested[j])
        throw kb::source_error(
            fmt::format("--gpus: GPU {} is listed twice (one slot per GPU)", requested[i]));
  for (int g : requested)
    if (g < 0 || g >= visible)
      throw kb::source_error(
          fmt::format("--gpus: GPU {} is not visible (torch sees {} GPU(s): 0-{})", g, visible, visible - 1));
  if (!requested.empty()) return requested;
  std::vector<int> all;
  for (int g = 0; g < std::max(visible, 1); ++g)
    all.push_back(g);
  return all;
}

std::vector<std::int64_t> record_problems(db::store& store, const std::vector<kb::problem>& problems) {
  std::vector<std::int64_t> ids;
  db::store::batch batch(store);
  for (const auto& p : problems)
    ids.push_back(
        store.upsert_problem({p.suite, p.kb_version, p.level, p.number, p.name, p.file_name, p.path.string(),
                              p.source, db::sha256_hex(p.source), p.source_commit}));
  batch.commit();
  return ids;
}

json probe_environment(const fs::path& cache_dir) {
  const exec::job_runner runner{cache_dir, false};
  std::string tail;
  const exec::worker_outcome outcome =
      runner.run(exec::probe_job{}, {.name = "probe", .timeout = std::chrono::milliseconds(300'000)}, &tail);
  const json* hello = exec::find_event(outcome, "hello");
  if (!hello) {
    const json* verdict = exec::find_event(outcome, "verdict");
    throw std::runtime_error(fmt::format("the worker could not start Python with torch ({}): {}\n{}",
                                         exec::describe_exit(outcome),
                                         verdict ? verdict->value("error", "") : "", tail));
  }
  return (*hello)["environment"];
}

int execute_run(const run_options& options) {
  // Bad input is found before anything runs: sources, candidates directory, DB path.
  const fs::path cache_dir = options.cache_dir.empty() ? exec::default_cache_dir() : options.cache_dir;
  const auto problems = load_all_problems(options.sources, cache_dir);
  if (options.baselines != "cached" && options.baselines != "none") baselines::parse_modes(options.baselines);
  db::store store = db::store::open(options.db_path);

  fmt::print(stderr, "kj: starting a worker to probe Python, torch and the device...\n");
  if (const std::string sandbox = exec::sandbox_kind(); sandbox != "bwrap")
    fmt::print(stderr,
               "kj: warning: candidates run without a filesystem and network sandbox ({}); see "
               "docs/security.md\n",
               sandbox.substr(6));
  const json env = probe_environment(cache_dir);
  const std::string device = resolve_device(options.device, env);
  if (device != "cuda" && !options.gpus.empty())
    throw kb::source_error(fmt::format("--gpus {}: the run is on the CPU ({}); --gpus picks CUDA devices",
                                       fmt::join(options.gpus, ","),
                                       options.device == "cpu" ? "--device cpu" : "torch sees no GPU"));
  const std::vector<int> gpus = device == "cuda" ? resolve_gpus(options.gpus, env) : std::vector<int>{};

  const db::stack_record stack = stack_from(env, device);
  const std::int64_t stack_id = store.upsert_stack(stack);
  const std::string run_uid = options.run_uid.empty() ? new_run_uid() : options.run_uid;
  const std::int64_t run_id = create_or_resume_run(store, options, run_uid, device, stack_id);
  const std::vector<std::int64_t> problem_ids = record_problems(store, problems);

  exec::install_interrupt_handlers();
  // Candidates are resolved once the run exists: an LLM adapter records its exchanges under it.
  auto candidates = resolve_candidates(options, problems, device, store, run_id, problem_ids);
  candidates = select_shard(options.part, problems, std::move(candidates));
  if (exec::interrupt_requested()) return interrupted(store, run_id, run_uid, options.db_path);
  const exec::job_runner runner{cache_dir, options.keep_scratch};
  const exec::build_cache builds(cache_dir / "builds");
  // CPU timing must not share the machine with a compiler: there every build comes first. On a GPU the
  // next candidates compile while the current one is timed.
  device_use use{.slots = std::max<std::size_t>(1, scheduler::device_slots(device, gpus).size())};
  const scheduler::scheduler runs(runner, builds,
                                  {.build_jobs = options.build_jobs,
                                   .slots = scheduler::device_slots(device, gpus),
                                   .overlap = device == "cuda"});
  const auto linked = run_baselines(store, runs, options, problems, problem_ids, candidates,
                                    {stack_id, stack.stack_hash, stack.device_name}, device);
  if (exec::interrupt_requested()) return interrupted(store, run_id, run_uid, options.db_path);

  const evaluation_context ctx = context_of(options, env, device, builds);
  scheduler::db_sink to_db(store);
  scheduler::progress_sink progress(scheduler::progress_sink::quiet_for(options.progress));
  scheduler::sink_set sinks({&to_db, &progress});
  std::vector<scheduler::task> tasks;
  std::size_t skipped = 0;
  std::map<std::int64_t, std::string> planned; // candidate id -> the file it was planned from
  std::vector<scheduler::evaluation_result> no_code;
  db::store::batch planning(store); // the plan's candidate rows: one transaction
  for (const auto& c : candidates) {
    const kb::problem& p = problems[c.problem_index];
    const std::int64_t candidate_id =
        store.upsert_candidate({problem_ids[c.problem_index], c.producer, c.sample, c.path.string(), c.source,
                                db::sha256_hex(c.source)});
    if (store.has_evaluation(run_id, candidate_id)) {
      ++skipped;
      continue;
    }
    if (!c.no_code.empty()) { // an LLM adapter's reply without usable code: judged without a worker
      scheduler::evaluation_result r;
      r.problem = {p.level, p.number, p.name, p.file_name};
      r.candidate = {c.producer, c.sample, c.path.string()};
      r.record = {run_id, problem_ids[c.problem_index], candidate_id, stack_id, device, "{}", ""};
      r.record.verdict = std::string(to_string(verdict::no_code));
      r.record.error = c.no_code;
      r.record.started_at = r.record.finished_at = db::now_iso8601();
      no_code.push_back(std::move(r));
      continue;
    }
    if (const auto [it, fresh] = planned.emplace(candidate_id, c.path.string()); !fresh) {
      // Two files with the same source and sample number are one candidate: judged once.
      fmt::print(stderr, "kj: skipping candidate {}: the same source and sample as {}\n", c.path.string(),
                 it->second);
      ++skipped;
      continue;
    }
    db::evaluation_record record{run_id,
                                 problem_ids[c.problem_index],
                                 candidate_id,
                                 stack_id,
                                 device,
                                 "{}",
                                 evaluate_message(ctx, p, c).protocol.name};
    if (auto it = linked.find(c.problem_index); it != linked.end()) record.baseline_ids = it->second;
    for (const auto& f : verify::scan_candidate(c.source))
      record.findings.push_back({f.kind, f.line, f.excerpt});
    tasks.push_back(
        evaluation_task(ctx, p, c, std::move(record), [&sinks, &use](scheduler::evaluation_result& r) {
          if (!r.slot.empty())
            use.busy_s += r.record.duration_s; // the scheduler calls this one result at a time
          sinks.evaluation(r);
        }));
  }
  planning.commit();
  std::size_t compiles = 0, reused = 0;
  for (const auto& t : tasks) {
    compiles += t.builds.size();
    reused += t.reused_builds;
  }
  if (reused)
    fmt::print(stderr, "kj: {} candidates were built before (their cached builds are reused)\n", reused);
  if (compiles)
    fmt::print(stderr, "kj: compiling {} candidates ({} at a time){}...\n", compiles,
               options.build_jobs > 0 ? options.build_jobs : scheduler::default_build_jobs(),
               device == "cuda" ? " while the device judges the others" : " before judging");
  sinks.begin(tasks.size() + no_code.size(), skipped);
  for (auto& r : no_code)
    sinks.evaluation(r);
  const auto started = std::chrono::steady_clock::now();
  const bool finished = runs.run(std::move(tasks));
  use.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  sinks.end(!finished);
  if (!finished) return interrupted(store, run_id, run_uid, options.db_path);
  store.set_run_status(run_id, "finished");
  print_run_summary(store, run_uid, options.db_path, use);
  if (options.generation.active()) adapters::write_cost_table(store.llm_costs(run_uid), std::cout);
  return 0;
}

} // namespace kj::orchestrator
