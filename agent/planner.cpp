// Implements `kj agent`: checks, the stack and the run, the baselines, the hardware's peaks, then the pool of
// trajectories and the summary.
#include "agent/planner.hpp"

#include "adapters/generate/accounting.hpp"
#include "adapters/llm/provider.hpp"
#include "agent/inputs.hpp"
#include "agent/transcript.hpp"
#include "core/version.hpp"
#include "engine/exec/job_runner.hpp"
#include "engine/exec/sandbox.hpp"
#include "planning/baselines/baselines.hpp"
#include "planning/orchestrator/problem_sources.hpp"
#include "planning/orchestrator/run.hpp"
#include "planning/orchestrator/run_config.hpp"
#include "planning/orchestrator/run_session.hpp"
#include "planning/orchestrator/run_setup.hpp"
#include "planning/orchestrator/summary.hpp"

#include <algorithm>
#include <atomic>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::agent {
namespace {

struct problem_setup {
  const kb::problem* problem = nullptr;
  std::int64_t problem_id = 0;
  profile_context profiling;
  speedup_basis basis;
};

struct work_item {
  const problem_setup* setup = nullptr;
  int attempt = 0;
};

std::int64_t open_run(db::store& store, const agent_inputs& inputs, const std::string& run_uid,
                      const std::string& device, std::int64_t stack_id) {
  if (auto existing = store.find_run(run_uid)) {
    fmt::print(stderr, "kj: resuming run {}: finished trajectories are kept\n", run_uid);
    store.set_run_status(*existing, "running");
    return *existing;
  }
  json config = inputs.config;
  config["device"] = device;
  // The run's producer label is its trajectories' (agent/<adapter>/<model>).
  return store.create_run({run_uid, "", "running", device, inputs.command_line, version_string(),
                           config.dump(), stack_id, inputs.producer});
}

// The compiled baselines of every problem (cached, or measured first for a list of modes) and the basis its
// speedups are judged against: compile-default when known, else the fastest compiled mode, else eager.
void add_baselines(db::store& store, const agent_inputs& inputs, const orchestrator::run_session& session,
                   std::int64_t stack_id, std::vector<problem_setup>& setups) {
  std::vector<std::string> modes{"compile-default", "max-autotune", "max-autotune-no-cudagraphs"};
  const orchestrator::judging_settings& judging = inputs.session.judging;
  const fs::path& cache = inputs.session.cache_dir;
  if (inputs.baselines == "none" || !judging.timing.enabled) return;
  baselines::options opts = baselines::options_for(judging, session.device);
  opts.modes = inputs.baselines == "cached" ? modes : baselines::parse_modes(inputs.baselines);
  std::erase(opts.modes, "eager");
  opts.measure_missing = inputs.baselines != "cached";
  const exec::job_runner runner{cache, false};
  const exec::build_cache builds(cache / "builds");
  const scheduler::scheduler runs(
      runner, builds, {.slots = scheduler::device_slots(session.device, session.gpus), .overlap = false});
  std::vector<baselines::problem_ref> refs;
  for (const auto& s : setups)
    refs.push_back({s.problem, s.problem_id});
  results::db_sink to_db(store);
  for (const auto& r : baselines::ensure(
           store, runs, refs, {stack_id, session.stack.stack_hash, session.stack.device_name}, opts, to_db))
    for (auto& s : setups)
      if (s.problem == r.problem && r.record.status == "ok" && r.record.headline_ms())
        s.profiling.baselines.push_back({r.mode, *r.record.headline_ms()});
  for (auto& s : setups) {
    for (const auto& mode : opts.modes)
      if (std::none_of(s.profiling.baselines.begin(), s.profiling.baselines.end(),
                       [&](const baseline_time& b) { return b.mode == mode; }))
        s.profiling.missing_modes.push_back(mode);
    const baseline_time* pick = nullptr;
    for (const auto& b : s.profiling.baselines) {
      if (b.mode == "compile-default") {
        pick = &b;
        break;
      }
      if (!pick || b.ms < pick->ms) pick = &b;
    }
    if (pick) s.basis = {pick->mode, pick->ms};
  }
}

fs::path workspace_for(const fs::path& root, const std::string& run_uid, const kb::problem& p, int attempt) {
  const fs::path base = root / run_uid / fmt::format("L{}-{}-{}", p.level, p.number, p.name);
  fs::path dir = base / fmt::format("a{}", attempt);
  for (int again = 1; fs::exists(dir); ++again) // a resumed run's unfinished attempt starts afresh
    dir = base / fmt::format("a{}-{}", attempt, again);
  return dir;
}

// The settings every trajectory of the run shares, as stored with each trajectory: the inputs' with the
// session's device and the judge's ncu.
std::string settings_json(const agent_inputs& inputs, const std::string& device, const judge& engine) {
  json settings = inputs.settings;
  settings["device"] = device;
  settings["ncu"] = engine.settings().ncu;
  return settings.dump();
}

// The session's device, environment and GPUs and the cache folder it checked: resolved once, in open_session.
judge_settings judge_settings_of(const agent_inputs& inputs, const orchestrator::run_session& session) {
  judge_settings j;
  j.evaluate.device = to_string(session.device);
  j.evaluate.env = session.env;
  j.evaluate.judging = inputs.session.judging;
  j.evaluate.cache_dir = inputs.session.cache_dir;
  j.gpus = session.gpus;
  if (session.device == device_kind::cuda) j.ncu = find_ncu(inputs.ncu);
  return j;
}

task_facts facts_of(const problem_setup& s, const std::string& device, const json& env,
                    const agent_inputs& inputs, const problem_cost& cost) {
  const orchestrator::judging_settings& judging = inputs.session.judging;
  task_facts f;
  f.problem = s.problem;
  f.device = device;
  f.device_name = device == "cuda" ? env.value("device_name", "GPU") : env.value("cpu", "CPU");
  f.precision = judging.precision;
  f.sizes = s.problem->overrides_for(device, judging.overrides);
  f.inputs = cost.inputs;
  f.baseline = s.basis.mode == "eager"
                   ? "eager PyTorch (no torch.compile baseline is cached for this stack)"
                   : fmt::format("torch.compile {} ({:.4g} ms)", s.basis.mode, *s.basis.ms);
  f.budget = inputs.limits.describe();
  return f;
}

// When no trajectory of the run got a single answer from the model (every request refused, e.g. a 400 for
// each): why, from the first one's stop; the run then failed, whatever its trajectories' own statuses say.
std::optional<std::string> no_request_answered(const std::vector<db::trajectory_record>& trajectories) {
  const auto answered = [](const db::trajectory_record& t) {
    return t.input_tokens + t.output_tokens > 0 || t.status != "llm_error";
  };
  if (trajectories.empty() || std::any_of(trajectories.begin(), trajectories.end(), answered))
    return std::nullopt;
  return fmt::format("no request to the model succeeded in {} trajectories; the first error: {}",
                     trajectories.size(), trajectories.front().stop_detail);
}

} // namespace

int execute_agent(const agent_options& o) {
  // The front door: the options are read here, once; the cache folder is checked first and the model before
  // anything runs. Every step below takes `inputs`, never the options.
  const fs::path cache_dir = exec::cache_dir_or_default(o.cache_dir);
  orchestrator::check_cache_dir(cache_dir);
  const llm::price_table prices = load_prices(o);
  const agent_inputs inputs{
      .session = {o.device, o.gpus, o.judging, cache_dir, o.run_uid, "the agent's candidates"},
      .db_path = o.db_path,
      .sources = o.sources,
      .model = checked_model(o, prices),
      .skill = o.skill.empty() ? "" : read_text(o.skill, "skill document"),
      .config = agent_run_config(o),
      .settings = trajectory_settings(o),
      .baselines = o.baselines,
      .ncu = o.ncu,
      .peaks = o.peaks,
      .limits = o.limits,
      .context = o.context,
      .workspaces = o.workspaces.empty() ? cache_dir / "agent" : o.workspaces,
      .attempts = o.attempts,
      .parallel = o.parallel,
      .command_line = o.command_line,
      .producer = fmt::format("agent/{}/{}", o.generation.adapter, o.generation.model)};
  const auto problems = orchestrator::load_all_problems(inputs.sources, inputs.session.cache_dir);
  db::store store = db::store::open(inputs.db_path);

  const orchestrator::run_session session = orchestrator::open_session(inputs.session);
  const json& env = session.env;
  const std::string device = to_string(session.device); // the agent's settings and prompts name it
  const std::int64_t stack_id = store.upsert_stack(session.stack);
  const std::string& run_uid = session.run_uid;
  const std::int64_t run_id = open_run(store, inputs, run_uid, device, stack_id);
  const std::vector<std::int64_t> problem_ids = orchestrator::record_problems(store, problems);
  exec::install_interrupt_handlers();

  std::vector<problem_setup> setups;
  for (std::size_t i = 0; i < problems.size(); ++i)
    setups.push_back({&problems[i], problem_ids[i], {}, {}});
  add_baselines(store, inputs, session, stack_id, setups);
  const peaks hardware = device_peaks(env, device, inputs.session.judging.precision, inputs.peaks);
  for (auto& s : setups)
    s.profiling.hardware = hardware;
  judge engine(judge_settings_of(inputs, session));
  recorder rec(store, run_id, stack_id);
  const std::string settings = settings_json(inputs, device, engine);

  std::vector<work_item> work;
  std::size_t skipped = 0;
  for (const auto& s : setups)
    for (int a = 0; a < inputs.attempts; ++a) {
      if (rec.finished(s.problem_id, a))
        ++skipped;
      else
        work.push_back({&s, a});
    }
  fmt::print(
      stderr, "kj: agent {}/{} on {} problem(s) x {} attempt(s): {} trajectories{} ({} at once), run {}\n",
      inputs.model.adapter, inputs.model.model, problems.size(), inputs.attempts, work.size(),
      skipped ? fmt::format(", {} finished before", skipped) : "", std::max(1, inputs.parallel), run_uid);

  std::atomic<std::size_t> next{0};
  std::mutex print_lock;
  std::exception_ptr fatal;
  const auto worker = [&] {
    for (std::size_t i; (i = next++) < work.size();) {
      {
        std::lock_guard hold(print_lock);
        if (fatal || exec::interrupt_requested()) return;
      }
      const work_item& w = work[i];
      trajectory_spec spec;
      spec.problem = w.setup->problem;
      spec.problem_id = w.setup->problem_id;
      spec.attempt = w.attempt;
      spec.producer = inputs.producer;
      spec.workspace = workspace_for(inputs.workspaces, run_uid, *spec.problem, w.attempt);
      spec.prompt =
          make_prompt(facts_of(*w.setup, device, env, inputs, engine.cost(*spec.problem)), inputs.skill);
      spec.settings_json = settings;
      spec.profiling = w.setup->profiling;
      spec.basis = w.setup->basis;
      try {
        const db::trajectory_record t = run_trajectory(spec, inputs.model, inputs.limits, inputs.context,
                                                       engine, rec, exec::interrupt_requested);
        std::lock_guard hold(print_lock);
        fmt::print(stderr, "kj: {}\n",
                   trajectory_line(t, fmt::format("L{} {}", spec.problem->level, spec.problem->file_name)));
      } catch (...) {
        std::lock_guard hold(print_lock);
        if (!fatal) fatal = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, inputs.parallel); ++t)
    threads.emplace_back(worker);
  for (auto& t : threads)
    t.join();

  if (exec::interrupt_requested()) {
    store.set_run_status(run_id, "interrupted");
    fmt::print(stderr,
               "\nkj: interrupted; finished trajectories are in {}. Resume with: kj agent --run-id {} ...\n",
               inputs.db_path.string(), run_uid);
    return 130;
  }
  const auto trajectories = store.trajectories(run_uid);
  const auto unanswered = no_request_answered(trajectories);
  store.set_run_status(run_id, fatal || unanswered ? "failed" : "finished");
  if (unanswered) store.set_run_detail(run_id, *unanswered);
  write_trajectory_table(trajectories, store, std::cout);
  orchestrator::print_run_summary(store, run_uid, inputs.db_path);
  adapters::write_cost_table(store.llm_costs(run_uid), std::cout);
  if (fatal) {
    try {
      std::rethrow_exception(fatal);
    } catch (const std::exception& e) {
      fmt::print(stderr, "kj: the agent stopped: {}\nkj: resume with: kj agent --run-id {} ...\n", e.what(),
                 run_uid);
    }
    return 1;
  }
  if (unanswered) {
    fmt::print(stderr, "kj: {}\n", *unanswered);
    return 1;
  }
  return 0;
}

} // namespace kj::agent
