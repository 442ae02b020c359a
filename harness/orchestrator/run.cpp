// Implements `kj run`: resolve sources and device, record problems and candidates, plan one task per
// candidate, let the scheduler run them, summarize.
#include "harness/orchestrator/run.hpp"

#include "adapters/candidates.hpp"
#include "adapters/generate/accounting.hpp"
#include "baselines/baselines.hpp"
#include "harness/exec/sandbox.hpp"
#include "harness/orchestrator/evaluation_task.hpp"
#include "harness/orchestrator/problem_sources.hpp"
#include "harness/orchestrator/run_collect.hpp"
#include "harness/orchestrator/run_config.hpp"
#include "harness/orchestrator/run_lock.hpp"
#include "harness/orchestrator/run_plan.hpp"
#include "harness/orchestrator/run_setup.hpp"
#include "harness/orchestrator/summary.hpp"
#include "harness/scheduler/heartbeat.hpp"
#include "harness/version.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <set>
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
              device_kind device) {
  std::map<std::size_t, std::vector<std::int64_t>> linked;
  if (options.baselines == "none" || !options.judging.timing.enabled) return linked;
  baselines::options opts = baselines::options_for(options.judging, device);
  const bool cached_only = options.baselines == "cached";
  opts.modes = cached_only ? baselines::all_modes : baselines::parse_modes(options.baselines);
  std::erase(opts.modes, "eager");
  if (opts.modes.empty()) return linked;
  opts.measure_missing = !cached_only;
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

// Stops the run after `limit` failed evaluations (--maxfail): as Ctrl-C does, so the run stays resumable.
class maxfail_sink final : public scheduler::result_sink {
public:
  explicit maxfail_sink(int limit) : m_limit(limit) {}
  void begin(std::size_t planned, std::size_t /*kept*/) override { m_planned = planned; }
  void evaluation(scheduler::evaluation_result& r) override {
    ++m_done;
    const bool failed = r.record.verdict != "correct" || r.record.strict_verdict == "fail";
    if (m_limit <= 0 || !failed || ++m_failed != m_limit || m_done >= m_planned) return; // nothing left: ends
    fmt::print(stderr, "kj: {} failed evaluation{}: stopping (--maxfail {})\n", m_failed,
               m_failed == 1 ? "" : "s", m_limit);
    m_tripped = true;
    exec::request_interrupt();
  }
  bool tripped() const { return m_tripped; }

private:
  int m_limit = 0;
  int m_failed = 0;
  std::size_t m_planned = 0, m_done = 0;
  bool m_tripped = false;
};

// Ends the run after Ctrl-C or --maxfail: interrupted, resumable. Exit code 130, or 1 after --maxfail.
int stopped(db::store& store, const run_handle& run, const fs::path& db_path, bool maxfail) {
  store.set_run_status(run.id, "interrupted");
  if (maxfail) store.set_run_detail(run.id, "stopped by --maxfail");
  fmt::print(stderr, "\nkj: {}; finished evaluations are in {}. Resume with: kj run --run-id {} ...\n",
             maxfail ? "stopped after --maxfail failures" : "interrupted", db_path.string(), run.uid);
  return maxfail ? 1 : 130;
}

} // namespace

void check_cache_dir(const fs::path& cache_dir) {
  std::error_code ec;
  fs::create_directories(cache_dir / "scratch", ec);
  bool writable = false;
  if (!ec) {
    const fs::path probe = cache_dir / "scratch" / fmt::format(".kj-write-test-{}", ::getpid());
    writable = static_cast<bool>(std::ofstream(probe));
    fs::remove(probe, ec);
  }
  if (!writable)
    throw kb::source_error(fmt::format("cache folder {} is not writable ({}): pass --cache-dir or set "
                                       "KJ_CACHE_DIR to a writable folder",
                                       cache_dir.string(), ec ? ec.message() : "cannot create files in it"));
}

db::stack_record stack_from(json env, device_kind device) {
  db::stack_record stack;
  stack.python = env.value("python", "");
  stack.torch = env.value("torch", "");
  stack.device_name = device == device_kind::cuda ? env.value("device_name", "")
                                                  : "cpu: " + env.value("cpu", env.value("device_name", ""));
  env.erase("kj_boot"); // how kj's own start went on this machine today: no part of the stack
  env["device"] = to_string(device);
  env["kj_version"] = version_string();
  // Identity: everything the worker reported except what describes the moment rather than the stack (the
  // number of visible devices) and fields that only exist on the other device.
  json identity = env;
  identity.erase("device_count");
  identity.erase("python_paths"); // where the venv lies is not part of the stack
  identity.erase("cuda_available");
  if (device == device_kind::cpu)
    for (const char* gpu_only : {"gpu_uuid", "sm_count", "compute_capability", "gpu_memory_bytes", "l2_bytes",
                                 "cuda_driver", "nvidia_driver", "nvcc", "cudnn"})
      identity.erase(gpu_only);
  stack.fingerprint_json = env.dump();
  stack.stack_hash = db::sha256_hex(identity.dump()).substr(0, 16);
  return stack;
}

device_kind resolve_device(const std::string& requested, const json& env) {
  const bool has_cuda = env.value("cuda_available", false);
  if (requested == "auto") return has_cuda ? device_kind::cuda : device_kind::cpu;
  const auto device = parse_device_kind(requested);
  if (!device) throw kb::source_error("--device " + requested + ": expected auto, cpu or cuda");
  if (*device == device_kind::cuda && !has_cuda)
    throw kb::source_error("--device cuda: torch in the embedded Python sees no CUDA device "
                           "(torch " +
                           env.value("torch", "?") + ", CUDA " + env.value("torch_cuda", "none") + ")");
  return *device;
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
    // Not the user's data, but their setup: exit code 2 with what to change.
    throw kb::source_error(fmt::format("the worker could not start Python with torch ({}): {}\n{}\nkj embeds "
                                       "the python3 named by KJ_PYTHON, "
                                       "else the one it was built with: point KJ_PYTHON at a python3 that "
                                       "imports torch (scripts/setup picks one)",
                                       exec::describe_exit(outcome),
                                       verdict ? verdict->value("error", "") : "", tail));
  }
  json env = (*hello)["environment"];
  env["kj_boot"]["seconds"] = outcome.wall_s; // the probe's whole life: start, import torch, fingerprint
  return env;
}

namespace {

// What the rest of a run needs, once the run is recorded.
struct run_state {
  const run_options& options;
  const fs::path& cache_dir;
  const std::vector<kb::problem>& problems;
  std::vector<adapters::candidate> candidates; // imported ones; an adapter's are generated under the run
  const json& env;
  device_kind device;
  const std::vector<int>& gpus;
  const db::stack_record& stack;
  std::int64_t stack_id = 0;
  std::optional<std::set<std::int64_t>> only; // --rerun-failed
};

// Says what the plan compiles and leaves out, and tells the heartbeat how many builds to expect.
void announce(const run_plan& plan, const run_options& options, device_kind device,
              scheduler::heartbeat& beat) {
  std::size_t compiles = 0, reused = 0;
  for (const auto& t : plan.tasks) {
    compiles += t.builds.size();
    reused += t.reused_builds;
  }
  if (reused)
    fmt::print(stderr, "kj: {} candidates were built before (their cached builds are reused)\n", reused);
  if (compiles)
    fmt::print(stderr, "kj: compiling {} candidates ({} at a time){}...\n", compiles,
               options.build_jobs > 0 ? options.build_jobs : scheduler::default_build_jobs(),
               device == device_kind::cuda ? " while the device judges the others" : " before judging");
  if (plan.not_failed)
    fmt::print(stderr, "kj: --rerun-failed: {} candidates passed before and are left out\n", plan.not_failed);
  beat.expect_builds(compiles);
  beat.touch();
}

// Plans the run's tasks and judges them: returns the exit code (0, 130 after Ctrl-C, 1 after --maxfail).
int judge(db::store& store, run_state& st, const run_handle& run, run_guard& guard) {
  const run_options& options = st.options;
  const std::vector<std::int64_t> problem_ids = record_problems(store, st.problems);
  exec::install_interrupt_handlers();
  if (options.generation.active()) { // an LLM adapter records its exchanges under the run
    auto generated =
        adapters::generate_candidates(store, run.id, st.problems, problem_ids, options.generation,
                                      to_string(st.device), exec::interrupt_requested);
    store.set_run_producer(run.id, generated.producer);
    st.candidates = std::move(generated.candidates);             // -k chose the problems before
    if (st.candidates.empty() && !exec::interrupt_requested()) { // every call failed: nothing to judge
      guard.fail("the model answered none of the requests (their errors are above)");
      fmt::print(stderr, "kj: {}/{} answered none of the requests: nothing to judge (exit 1)\n",
                 options.generation.adapter, options.generation.model);
      return 1;
    }
  }
  auto candidates = select_shard(options.part, st.problems, std::move(st.candidates));
  if (exec::interrupt_requested()) {
    guard.release();
    return stopped(store, run, options.db_path, false);
  }
  const exec::job_runner runner{st.cache_dir, options.keep_scratch};
  const exec::build_cache builds(st.cache_dir / "builds");
  const bool quiet = scheduler::progress_sink::quiet_for(options.progress);
  scheduler::heartbeat beat(quiet);
  // CPU timing must not share the machine with a compiler: there every build comes first. On a GPU the
  // next candidates compile while the current one is timed.
  const scheduler::scheduler runs(runner, builds,
                                  {.build_jobs = options.build_jobs,
                                   .observer = &beat,
                                   .slots = scheduler::device_slots(st.device, st.gpus),
                                   .overlap = st.device == device_kind::cuda});
  const auto linked = run_baselines(store, runs, options, st.problems, problem_ids, candidates,
                                    {st.stack_id, st.stack.stack_hash, st.stack.device_name}, st.device);
  if (exec::interrupt_requested()) {
    guard.release();
    return stopped(store, run, options.db_path, false);
  }

  const evaluation_context ctx = context_of(options.judging, st.env, st.device, builds);
  device_use use{.slots = std::max<std::size_t>(1, scheduler::device_slots(st.device, st.gpus).size())};
  scheduler::db_sink to_db(store);
  scheduler::progress_sink progress(quiet);
  maxfail_sink maxfail(options.maxfail);
  scheduler::sink_set sinks({&to_db, &progress, &beat, &maxfail});
  run_plan plan = plan_run(store,
                           {ctx, st.problems, problem_ids, run.id, st.stack_id, linked, st.only,
                            [&sinks, &use](scheduler::evaluation_result& r) {
                              if (!r.slot.empty()) // the scheduler calls this one result at a time
                                use.busy_s += r.record.duration_s;
                              sinks.evaluation(r);
                            }},
                           candidates);
  announce(plan, options, st.device, beat);
  sinks.begin(plan.tasks.size() + plan.no_code.size(), plan.kept);
  for (auto& r : plan.no_code)
    sinks.evaluation(r);
  const auto started = std::chrono::steady_clock::now();
  const bool finished = runs.run(std::move(plan.tasks));
  use.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  sinks.end(!finished);
  guard.release();
  if (!finished) return stopped(store, run, options.db_path, maxfail.tripped());
  store.set_run_status(run.id, "finished");
  print_run_summary(store, run.uid, options.db_path, use);
  if (options.generation.active()) adapters::write_cost_table(store.llm_costs(run.uid), std::cout);
  return 0;
}

// --rerun-failed: the candidates that failed in the previous run of these options (empty: none failed); the
// run's config names that run.
std::set<std::int64_t> failed_before(const db::store& store, json& config, const std::string& run_uid) {
  const run_handle previous = previous_run(store, config, run_uid);
  const auto ids = store.failed_candidates(previous.id);
  fmt::print(stderr, "kj: --rerun-failed: {} candidate{} failed in run {}\n", ids.size(),
             ids.size() == 1 ? "" : "s", previous.uid);
  config["rerun_failed_of"] = previous.uid;
  return {ids.begin(), ids.end()};
}

} // namespace

int execute_run(const run_options& options) {
  // Bad input is found before anything runs: sources, candidates, DB path, cache folder.
  const fs::path cache_dir = options.cache_dir.empty() ? exec::default_cache_dir() : options.cache_dir;
  refuse_exposed(options, cache_dir, exec::system_folders());
  check_cache_dir(cache_dir);
  if (const std::string& c = options.candidates;
      !c.empty() && c != "identity" && c != "examples" && !fs::exists(c))
    throw kb::source_error(fmt::format("--candidates {}: no such folder or file", c));
  std::vector<kb::problem> problems = load_all_problems(options.sources, cache_dir);
  if (options.generation.active()) // the model is asked only for what -k keeps
    problems = filter_problems(options.filter, std::move(problems),
                               options.generation.adapter + "/" + options.generation.model);
  if (options.baselines != "cached" && options.baselines != "none") baselines::parse_modes(options.baselines);

  fmt::print(stderr, "kj: starting a worker to probe Python, torch and the device...\n");
  if (const std::string sandbox = exec::sandbox_kind(); sandbox != "bwrap")
    fmt::print(stderr,
               "kj: warning: candidates run without a filesystem and network sandbox ({}); see "
               "docs/security.md\n",
               sandbox.substr(6));
  const json env = probe_environment(cache_dir);
  {
    std::vector<fs::path> python;
    for (const auto& p : env.value("python_paths", std::vector<std::string>{}))
      python.emplace_back(p);
    refuse_exposed(options, cache_dir, python);
  }
  refuse_limits_below_kj(options.judging, env);
  const device_kind device = resolve_device(options.device, env);
  if (options.collect_only) return collect_only(options, problems, device);
  // Imported candidates are read before the database is opened: a mistyped folder leaves no file, no run.
  const std::string producer = default_producer(options);
  std::vector<adapters::candidate> imported;
  if (!options.generation.active())
    imported = filter_candidates(options.filter, problems,
                                 import_candidates(options, problems, to_string(device), producer));
  db::store store = db::store::open(options.db_path);
  if (device != device_kind::cuda && !options.gpus.empty())
    throw kb::source_error(fmt::format("--gpus {}: the run is on the CPU ({}); --gpus picks CUDA devices",
                                       fmt::join(options.gpus, ","),
                                       options.device == "cpu" ? "--device cpu" : "torch sees no GPU"));
  const std::vector<int> gpus =
      device == device_kind::cuda ? resolve_gpus(options.gpus, env) : std::vector<int>{};
  const db::stack_record stack = stack_from(env, device);
  json config = run_config(options, to_string(device), producer);
  const std::string run_uid = options.run_uid.empty() ? new_run_uid() : options.run_uid;
  const run_lock lock(options.db_path, run_uid);
  run_state st{options, cache_dir, problems, {}, env, device, gpus, stack};
  if (options.rerun_failed) {
    st.only = failed_before(store, config, run_uid);
    if (st.only->empty()) {
      fmt::print(stderr, "kj: --rerun-failed: nothing to rerun\n");
      return 0;
    }
  }
  st.candidates = std::move(imported);
  st.stack_id = store.upsert_stack(stack);
  const run_handle run = open_run(store, options, run_uid, config, producer, to_string(device), st.stack_id);
  run_guard guard(store, run);
  try {
    return judge(store, st, run, guard);
  } catch (const std::exception& e) {
    guard.fail(e.what());
    throw;
  }
}

} // namespace kj::orchestrator
