// Implements `kj run`: resolve sources and device, record problems and candidates, plan one task per
// candidate, let the scheduler run them, summarize.
#include "planning/orchestrator/run.hpp"

#include "adapters/candidates.hpp"
#include "adapters/generate/accounting.hpp"
#include "core/hashing.hpp"
#include "core/verdict.hpp"
#include "engine/exec/job_runner.hpp"
#include "engine/exec/sandbox.hpp"
#include "planning/baselines/baselines.hpp"
#include "planning/orchestrator/evaluation_task.hpp"
#include "planning/orchestrator/problem_sources.hpp"
#include "planning/orchestrator/run_collect.hpp"
#include "planning/orchestrator/run_config.hpp"
#include "planning/orchestrator/run_lock.hpp"
#include "planning/orchestrator/run_plan.hpp"
#include "planning/orchestrator/run_setup.hpp"
#include "planning/orchestrator/summary.hpp"
#include "planning/results/heartbeat.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <iostream>
#include <optional>
#include <set>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::orchestrator {

namespace {

// Prints each measured baseline as it is known (cached ones are only counted).
class baseline_console final : public results::result_sink {
public:
  void baseline(results::baseline_result& r) override {
    if (r.cached) return;
    fmt::print(stderr, "  L{} {} {}: {}\n", r.problem.level, r.problem.file_name, r.mode,
               r.record.status == "ok" ? fmt::format("{:.4g} ms", r.record.headline_ms().value_or(0))
                                       : r.record.status);
  }
};

// The eager baselines `kj baselines --precision` cached at the other numerics a candidate may compute at
// (tf32 on CUDA, bf16, fp16), linked so that a candidate found computing at one of them is also compared at
// its own numerics (CUDA-Agent issue #16; reports/metrics.cpp). Looked up only: never measured by a run.
std::vector<baselines::result> matched_numerics_baselines(db::store& store,
                                                          const scheduler::scheduler& runner,
                                                          const std::vector<baselines::problem_ref>& refs,
                                                          const baselines::stack_ref& stack,
                                                          baselines::options opts) {
  std::vector<baselines::result> found;
  const kj::precision run_precision = opts.precision;
  opts.modes = {"eager"};
  opts.measure_missing = false;
  results::sink_set none({});
  for (const kj::precision at : {kj::precision::tf32, kj::precision::bf16, kj::precision::fp16}) {
    if (at == run_precision || (at == kj::precision::tf32 && opts.device != device_kind::cuda)) continue;
    opts.precision = at;
    for (auto& r : baselines::ensure(store, runner, refs, stack, opts, none))
      if (r.record.status == "ok") found.push_back(std::move(r));
  }
  return found;
}

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
  std::vector<baselines::problem_ref> refs;
  std::map<const kb::problem*, std::size_t> index_of;
  for (const auto& c : candidates)
    if (index_of.emplace(&problems[c.problem_index], c.problem_index).second)
      refs.push_back({&problems[c.problem_index], problem_ids[c.problem_index]});
  for (const auto& r : matched_numerics_baselines(store, runner, refs, stack, opts))
    linked[index_of[r.problem]].push_back(r.record.id);
  if (opts.modes.empty()) return linked;
  opts.measure_missing = !cached_only;
  if (!cached_only)
    fmt::print(stderr, "kj: baselines {} for {} problems (cached where measured before)...\n",
               fmt::join(opts.modes, ", "), refs.size());
  results::db_sink to_db(store);
  baseline_console console;
  results::sink_set sinks({&to_db, &console});
  for (const auto& r : baselines::ensure(store, runner, refs, stack, opts, sinks))
    linked[index_of[r.problem]].push_back(r.record.id);
  return linked;
}

// Stops the run after `limit` failed evaluations (--maxfail): as Ctrl-C does, so the run stays resumable.
class maxfail_sink final : public results::result_sink {
public:
  explicit maxfail_sink(int limit) : m_limit(limit) {}
  void begin(std::size_t planned, std::size_t /*kept*/) override { m_planned = planned; }
  void evaluation(results::evaluation_result& r) override {
    ++m_done;
    const bool failed = !counted_correct(r.record.verdict, r.record.strict_verdict);
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

std::vector<std::int64_t> record_problems(db::store& store, const std::vector<kb::problem>& problems) {
  std::vector<std::int64_t> ids;
  db::store::batch batch(store);
  for (const auto& p : problems)
    ids.push_back(
        store.upsert_problem({p.suite, p.kb_version, p.level, p.number, p.name, p.file_name, p.path.string(),
                              p.source, core::sha256_hex(p.source), p.source_commit}));
  batch.commit();
  return ids;
}

namespace {

// What the rest of a run needs, once the run is recorded.
struct run_state {
  // The judging phase's operational settings (build jobs, progress, --maxfail, baselines, fresh judges).
  const run_options& options;
  const run_inputs& inputs;
  const std::vector<kb::problem>& problems;
  std::vector<adapters::candidate> candidates; // imported ones; an adapter's are generated under the run
  const json& env;
  device_kind device;
  const std::vector<int>& gpus;
  const db::stack_record& stack;
  std::int64_t stack_id = 0;
  std::optional<std::set<std::int64_t>> passed; // --rerun-failed: left out
};

// Says what the plan compiles and leaves out, and tells the heartbeat how many builds to expect.
std::size_t announce(const run_plan& plan, const run_options& options, device_kind device,
                     std::size_t beside_slots, results::heartbeat& beat) {
  std::size_t compiles = 0, reused = 0;
  for (const auto& t : plan.tasks) {
    compiles += t.builds.size();
    reused += t.reused_builds;
  }
  if (reused)
    fmt::print(stderr, "kj: {} candidates were built before (their cached builds are reused)\n", reused);
  if (compiles)
    fmt::print(stderr, "kj: compiling {} candidates ({} at a time){}...\n", compiles,
               options.build_jobs > 0 ? options.build_jobs : scheduler::default_build_jobs(beside_slots),
               device == device_kind::cuda ? " while the device judges the others" : " before judging");
  if (plan.not_failed)
    fmt::print(stderr, "kj: --rerun-failed: {} candidates passed before and are left out\n", plan.not_failed);
  beat.expect_builds(compiles);
  beat.touch();
  return compiles;
}

// Plans the run's tasks and judges them: returns the exit code (0, 130 after Ctrl-C, 1 after --maxfail).
int judge(db::store& store, run_state& st, const run_handle& run, run_guard& guard) {
  const run_options& options = st.options;
  const run_inputs& inputs = st.inputs;
  const std::vector<std::int64_t> problem_ids = record_problems(store, st.problems);
  exec::install_interrupt_handlers();
  if (inputs.generation.active()) { // an LLM adapter records its exchanges under the run
    auto generated = adapters::generate_candidates(store, run.id, st.problems, problem_ids, inputs.generation,
                                                   to_string(st.device), exec::interrupt_requested);
    store.set_run_producer(run.id, generated.producer);
    st.candidates = std::move(generated.candidates);             // -k chose the problems before
    if (st.candidates.empty() && !exec::interrupt_requested()) { // every call failed: nothing to judge
      guard.fail("the model answered none of the requests (their errors are above)");
      fmt::print(stderr, "kj: {}/{} answered none of the requests: nothing to judge (exit 1)\n",
                 inputs.generation.adapter, inputs.generation.model);
      return 1;
    }
  }
  auto candidates = select_shard(inputs.part, st.problems, std::move(st.candidates));
  if (exec::interrupt_requested()) {
    guard.release();
    return stopped(store, run, inputs.db_path, false);
  }
  const exec::job_runner runner{inputs.cache_dir, options.keep_scratch};
  const exec::build_cache builds(inputs.cache_dir / "builds");
  const results::progress_mode mode = results::progress_mode_for(options.progress);
  results::heartbeat beat(mode);
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
    return stopped(store, run, inputs.db_path, false);
  }

  evaluation_context ctx = context_of(options.judging, st.env, st.device, builds);
  ctx.warm_judges = !options.fresh_judges;
  ctx.pch = precompiled_header_for(st.env, st.device, inputs.cache_dir);
  device_use use{.slots = std::max<std::size_t>(1, scheduler::device_slots(st.device, st.gpus).size())};
  results::db_sink to_db(store);
  results::progress_sink progress(mode != results::progress_mode::lines);
  maxfail_sink maxfail(options.maxfail);
  results::sink_set sinks({&to_db, &progress, &beat, &maxfail});
  run_plan plan = plan_run(store,
                           {ctx, st.problems, problem_ids, run.id, st.stack_id, linked, st.passed,
                            [&sinks, &use](results::evaluation_result& r) {
                              if (!r.slot.empty()) // the scheduler calls this one result at a time
                                use.busy_s += r.record.duration_s;
                              sinks.evaluation(r);
                            }},
                           candidates);
  const std::size_t compiles =
      announce(plan, options, st.device,
               st.device == device_kind::cuda ? scheduler::device_slots(st.device, st.gpus).size() : 0, beat);
  if (ctx.pch) {
    prepare_precompiled_header(*ctx.pch, runner, compiles);
    for (auto& t : plan.tasks) // planned before it was made
      for (auto& b : t.builds)
        offer_precompiled_header(ctx.pch, b.launch);
  }
  sinks.begin(plan.tasks.size() + plan.no_code.size(), plan.kept);
  for (auto& r : plan.no_code)
    sinks.evaluation(r);
  const auto started = std::chrono::steady_clock::now();
  const bool finished = runs.run(std::move(plan.tasks));
  use.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  sinks.end(!finished);
  guard.release();
  if (!finished) return stopped(store, run, inputs.db_path, maxfail.tripped());
  store.set_run_status(run.id, "finished");
  print_run_summary(store, run.uid, inputs.db_path, use);
  if (inputs.generation.active()) adapters::write_cost_table(store.llm_costs(run.uid), std::cout);
  return 0;
}

// --rerun-failed: the candidates that passed in the previous run of these options, left out; those that
// failed and those it never judged (stopped by --maxfail or Ctrl-C) are judged. nullopt: nothing to rerun
// (none failed, and the run finished). The run's config names that run.
std::optional<std::set<std::int64_t>> passed_before(const db::store& store, json& config,
                                                    const std::string& run_uid) {
  const run_handle previous = previous_run(store, config, run_uid);
  const auto failed = store.failed_candidates(previous.id);
  const auto record = store.get_run(previous.id);
  const bool finished = record && record->status == "finished";
  fmt::print(stderr, "kj: --rerun-failed: {} candidate{} failed in run {}{}\n", failed.size(),
             failed.size() == 1 ? "" : "s", previous.uid,
             finished ? ""
                      : fmt::format(" ({}: what it never judged is judged too)",
                                    record ? record->status : "unfinished"));
  config["rerun_failed_of"] = previous.uid;
  if (failed.empty() && finished) return std::nullopt;
  const auto passed = store.passed_candidates(previous.id);
  return std::set<std::int64_t>(passed.begin(), passed.end());
}

// The outermost folder of `path` that does not exist yet (empty when it all does).
fs::path first_missing(const fs::path& path) {
  std::error_code ec;
  fs::path missing;
  for (fs::path p = fs::absolute(path, ec).lexically_normal(); !p.empty() && !fs::exists(p, ec);
       p = p.parent_path()) {
    missing = p;
    if (p == p.parent_path()) break;
  }
  return missing;
}

} // namespace

int execute_run(const run_options& options) {
  // The front door: what the setup reads of the options is resolved here, once (the producer, the run's
  // defining options, the cache folder); every setup step below takes `inputs` or `request`.
  const run_inputs inputs{.producer = default_producer(options),
                          .config = run_config(options),
                          .cache_dir = exec::cache_dir_or_default(options.cache_dir),
                          .db_path = options.db_path,
                          .sources = options.sources,
                          .candidates = options.candidates,
                          .filter = options.filter,
                          .generation = options.generation,
                          .part = options.part,
                          .force = options.force,
                          .command_line = options.command_line};
  const session_request request{options.device,   options.gpus,    options.judging,
                                inputs.cache_dir, options.run_uid, "candidates"};
  // Bad input is found before anything runs: sources, candidates, DB path, cache folder. A cache folder this
  // command made is taken back when it is refused as exposed (every run would be refused there, so none uses
  // it); other mistakes leave the cache in place.
  const fs::path made = first_missing(inputs.cache_dir);
  check_cache_dir(inputs.cache_dir);
  const auto refuse_exposed_cache = [&](const std::vector<fs::path>& exposed) {
    try {
      refuse_exposed(inputs, exposed);
    } catch (const kb::source_error&) {
      std::error_code ec;
      if (!made.empty() && !exec::exposed_under(inputs.cache_dir, exposed).empty()) fs::remove_all(made, ec);
      throw;
    }
  };
  refuse_exposed_cache(exec::system_folders());
  if (const std::string& c = inputs.candidates;
      !c.empty() && c != "identity" && c != "examples" && !fs::exists(c))
    throw kb::source_error(fmt::format("--candidates {}: no such folder or file", c));
  std::vector<kb::problem> problems = load_all_problems(inputs.sources, inputs.cache_dir);
  if (inputs.generation.active()) // the model is asked only for what -k keeps
    problems = filter_problems(inputs.filter, std::move(problems),
                               inputs.generation.adapter + "/" + inputs.generation.model);
  if (options.baselines != "cached" && options.baselines != "none") baselines::parse_modes(options.baselines);

  const run_session session = open_session(request);
  {
    std::vector<fs::path> python;
    for (const auto& p : session.env.value("python_paths", std::vector<std::string>{}))
      python.emplace_back(p);
    refuse_exposed_cache(python);
  }
  const device_kind device = session.device;
  // Imported candidates are read before the database is opened: a mistyped folder leaves no file, no run.
  std::vector<adapters::candidate> imported;
  if (!inputs.generation.active())
    imported =
        filter_candidates(inputs.filter, problems, import_candidates(inputs, problems, to_string(device)));
  if (options.collect_only) return collect_only(inputs, problems, std::move(imported), device);
  db::store store = db::store::open(inputs.db_path);
  json config = inputs.config;
  config["device"] = to_string(device);
  const std::string& run_uid = session.run_uid;
  const run_lock lock(inputs.db_path, run_uid);
  run_state st{options, inputs, problems, {}, session.env, device, session.gpus, session.stack};
  if (options.rerun_failed) {
    st.passed = passed_before(store, config, run_uid);
    if (!st.passed) {
      fmt::print(stderr, "kj: --rerun-failed: nothing to rerun\n");
      return 0;
    }
  }
  st.candidates = std::move(imported);
  st.stack_id = store.upsert_stack(session.stack);
  const run_handle run = open_run(store, inputs, run_uid, config, to_string(device), st.stack_id);
  run_guard guard(store, run);
  try {
    return judge(store, st, run, guard);
  } catch (const std::exception& e) {
    guard.fail(e.what());
    throw;
  }
}

} // namespace kj::orchestrator
