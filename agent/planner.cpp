// Implements `kj agent`: checks, the stack and the run, the baselines, the hardware's peaks, then the pool of
// trajectories and the summary.
#include "agent/planner.hpp"

#include "adapters/generate/accounting.hpp"
#include "adapters/llm/provider.hpp"
#include "agent/transcript.hpp"
#include "core/version.hpp"
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
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
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

std::string read_text(const fs::path& file, const char* what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw kb::source_error(fmt::format("cannot read the {} {}", what, file.string()));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

llm::price_table load_prices(const agent_options& o) {
  try {
    const auto& p = o.generation.prices_path;
    return llm::price_table::load(p.empty() ? llm::price_table::default_path() : p);
  } catch (const llm::price_error& e) {
    throw kb::source_error(e.what());
  }
}

void check_model(const agent_options& o, const llm::price_table& prices) {
  const auto& g = o.generation;
  if (!llm::provider_named(g.adapter))
    throw kb::source_error(
        fmt::format("kj agent needs --adapter {} (a local vLLM/SGLang server is openai with "
                    "--base-url)",
                    fmt::join(llm::provider_names(), ", ")));
  if (g.model.empty()) throw kb::source_error("kj agent needs --model NAME");
  if ((o.limits.max_usd || o.limits.run_usd) && !prices.find(g.adapter, g.model))
    throw kb::source_error(fmt::format("a dollar budget needs a price for {} model '{}' in {} (add an entry, "
                                       "or drop --max-trajectory-usd/--budget-usd)",
                                       g.adapter, g.model, prices.path().string()));
  try { // a missing key is found now, not at the first turn
    llm::require_api_key(g.adapter, g.base_url);
    (void)llm::make_provider(g.adapter, g.base_url, llm::api_key_from_environment(g.adapter));
    adapters::preflight(
        g, true); // an impossible request (the agent's carry tools) is refused before any is sent
  } catch (const llm::llm_error& e) {
    throw kb::source_error(e.what());
  }
}

std::int64_t open_run(db::store& store, const agent_options& o, const std::string& run_uid,
                      const std::string& device, std::int64_t stack_id) {
  if (auto existing = store.find_run(run_uid)) {
    fmt::print(stderr, "kj: resuming run {}: finished trajectories are kept\n", run_uid);
    store.set_run_status(*existing, "running");
    return *existing;
  }
  json config{{"command", "agent"},
              {"producer", "agent"},
              {"sources", orchestrator::source_selection(o.sources)},
              {"device", device},
              {"adapter", o.generation.adapter},
              {"model", o.generation.model},
              {"attempts", o.attempts},
              {"max_turns", o.limits.max_turns},
              {"baselines", o.baselines},
              {"context_tokens", o.context.window_tokens},
              {"kb_version", o.sources.kb_version}};
  config.update(orchestrator::judging_config(o.judging));
  // The run's producer label is its trajectories' (agent/<adapter>/<model>).
  return store.create_run({run_uid, "", "running", device, o.command_line, version_string(), config.dump(),
                           stack_id, fmt::format("agent/{}/{}", o.generation.adapter, o.generation.model)});
}

// The compiled baselines of every problem (cached, or measured first for a list of modes) and the basis its
// speedups are judged against: compile-default when known, else the fastest compiled mode, else eager.
void add_baselines(db::store& store, const agent_options& o, const orchestrator::run_session& session,
                   const fs::path& cache, std::int64_t stack_id, std::vector<problem_setup>& setups) {
  std::vector<std::string> modes{"compile-default", "max-autotune", "max-autotune-no-cudagraphs"};
  if (o.baselines == "none" || !o.judging.timing.enabled) return;
  baselines::options opts = baselines::options_for(o.judging, session.device);
  opts.modes = o.baselines == "cached" ? modes : baselines::parse_modes(o.baselines);
  std::erase(opts.modes, "eager");
  opts.measure_missing = o.baselines != "cached";
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

// The settings every trajectory of the run shares, as stored with each trajectory.
std::string settings_json(const agent_options& o, const std::string& device, const judge& engine) {
  json settings{
      {"device", device},
      {"adapter", o.generation.adapter},
      {"model", o.generation.model},
      {"base_url", llm::strip_url(o.generation.base_url)},
      {"temperature", o.generation.temperature ? json(*o.generation.temperature) : json()},
      {"max_tokens", o.generation.max_tokens ? json(*o.generation.max_tokens) : json()},
      {"thinking_budget", o.generation.thinking_budget ? json(*o.generation.thinking_budget) : json()},
      {"effort", o.generation.effort ? json(*o.generation.effort) : json()},
      {"max_turns", o.limits.max_turns},
      {"max_trajectory_tokens", o.limits.max_tokens ? json(*o.limits.max_tokens) : json()},
      {"max_trajectory_seconds", o.limits.max_seconds ? json(*o.limits.max_seconds) : json()},
      {"max_trajectory_usd", o.limits.max_usd ? json(*o.limits.max_usd) : json()},
      {"budget_usd", o.limits.run_usd ? json(*o.limits.run_usd) : json()},
      {"context_tokens", o.context.window_tokens},
      {"provider_context_editing", o.context.provider_editing},
      {"timing", o.judging.timing},
      {"protocol", kj::name_of(o.judging.protocol)},
      {"precision", kj::name_of(o.judging.precision)},
      {"ncu", engine.settings().ncu},
      {"prompt_version", agent_prompt_version}};
  if (!o.generation.openai_api.empty()) settings["openai_api"] = o.generation.openai_api; // only when given
  return settings.dump();
}

model_settings model_settings_of(const agent_options& o, const llm::price_table& prices) {
  const auto ms = [](double s) { return std::chrono::milliseconds(static_cast<long long>(s * 1000)); };
  model_settings m{o.generation.adapter,
                   o.generation.model,
                   o.generation.base_url,
                   llm::api_key_from_environment(o.generation.adapter),
                   o.generation.temperature,
                   o.generation.max_tokens,
                   o.generation.thinking_budget,
                   o.generation.effort,
                   {},
                   &prices};
  m.api = o.generation.openai_api;
  m.client.connect_timeout = ms(o.generation.connect_timeout_s);
  m.client.request_timeout = ms(o.generation.request_timeout_s);
  m.client.stream = llm::parse_stream_mode(o.generation.stream).value_or(llm::stream_mode::automatic);
  m.client.retry.max_retries = o.generation.max_retries;
  m.client.retry.base_delay = ms(o.generation.retry_base_s);
  m.client.retry.max_wait = ms(o.generation.max_retry_wait_s);
  m.client.pacing = {o.generation.rpm, o.generation.tpm};
  m.client.cancelled = exec::interrupt_requested;
  return m;
}

// The session's device, environment and GPUs and the cache folder it checked: resolved once, in open_session.
judge_settings judge_settings_of(const agent_options& o, const orchestrator::run_session& session,
                                 const fs::path& cache_dir) {
  judge_settings j;
  j.evaluate.device = to_string(session.device);
  j.evaluate.env = session.env;
  j.evaluate.judging = o.judging;
  j.evaluate.cache_dir = cache_dir;
  j.gpus = session.gpus;
  if (session.device == device_kind::cuda) j.ncu = find_ncu(o.ncu);
  return j;
}

task_facts facts_of(const problem_setup& s, const std::string& device, const json& env,
                    const agent_options& o, const problem_cost& cost) {
  task_facts f;
  f.problem = s.problem;
  f.device = device;
  f.device_name = device == "cuda" ? env.value("device_name", "GPU") : env.value("cpu", "CPU");
  f.precision = o.judging.precision;
  f.sizes = s.problem->overrides_for(device, o.judging.overrides);
  f.inputs = cost.inputs;
  f.baseline = s.basis.mode == "eager"
                   ? "eager PyTorch (no torch.compile baseline is cached for this stack)"
                   : fmt::format("torch.compile {} ({:.4g} ms)", s.basis.mode, *s.basis.ms);
  f.budget = o.limits.describe();
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
  const fs::path cache_dir = orchestrator::session_cache_dir(o.cache_dir);
  const llm::price_table prices = load_prices(o);
  check_model(o, prices);
  const std::string skill = o.skill.empty() ? "" : read_text(o.skill, "skill document");
  const auto problems = orchestrator::load_all_problems(o.sources, cache_dir);
  db::store store = db::store::open(o.db_path);

  const orchestrator::run_session session = orchestrator::open_session(
      {o.device, o.gpus, o.judging, cache_dir, o.run_uid, "the agent's candidates"});
  const json& env = session.env;
  const std::string device = to_string(session.device); // the agent's settings and prompts name it
  const std::int64_t stack_id = store.upsert_stack(session.stack);
  const std::string& run_uid = session.run_uid;
  const std::int64_t run_id = open_run(store, o, run_uid, device, stack_id);
  const std::vector<std::int64_t> problem_ids = orchestrator::record_problems(store, problems);
  exec::install_interrupt_handlers();

  std::vector<problem_setup> setups;
  for (std::size_t i = 0; i < problems.size(); ++i)
    setups.push_back({&problems[i], problem_ids[i], {}, {}});
  add_baselines(store, o, session, cache_dir, stack_id, setups);
  const peaks hardware = device_peaks(env, device, o.judging.precision, o.peaks);
  for (auto& s : setups)
    s.profiling.hardware = hardware;
  judge engine(judge_settings_of(o, session, cache_dir));
  recorder rec(store, run_id, stack_id);
  const model_settings model = model_settings_of(o, prices);
  const std::string settings = settings_json(o, device, engine);
  const fs::path workspaces = o.workspaces.empty() ? cache_dir / "agent" : o.workspaces;

  std::vector<work_item> work;
  std::size_t skipped = 0;
  for (const auto& s : setups)
    for (int a = 0; a < o.attempts; ++a) {
      if (rec.finished(s.problem_id, a))
        ++skipped;
      else
        work.push_back({&s, a});
    }
  fmt::print(stderr,
             "kj: agent {}/{} on {} problem(s) x {} attempt(s): {} trajectories{} ({} at once), run {}\n",
             o.generation.adapter, o.generation.model, problems.size(), o.attempts, work.size(),
             skipped ? fmt::format(", {} finished before", skipped) : "", std::max(1, o.parallel), run_uid);

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
      spec.producer = fmt::format("agent/{}/{}", o.generation.adapter, o.generation.model);
      spec.workspace = workspace_for(workspaces, run_uid, *spec.problem, w.attempt);
      spec.prompt = make_prompt(facts_of(*w.setup, device, env, o, engine.cost(*spec.problem)), skill);
      spec.settings_json = settings;
      spec.profiling = w.setup->profiling;
      spec.basis = w.setup->basis;
      try {
        const db::trajectory_record t =
            run_trajectory(spec, model, o.limits, o.context, engine, rec, exec::interrupt_requested);
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
  for (int t = 0; t < std::max(1, o.parallel); ++t)
    threads.emplace_back(worker);
  for (auto& t : threads)
    t.join();

  if (exec::interrupt_requested()) {
    store.set_run_status(run_id, "interrupted");
    fmt::print(stderr,
               "\nkj: interrupted; finished trajectories are in {}. Resume with: kj agent --run-id {} ...\n",
               o.db_path.string(), run_uid);
    return 130;
  }
  const auto trajectories = store.trajectories(run_uid);
  const auto unanswered = no_request_answered(trajectories);
  store.set_run_status(run_id, fatal || unanswered ? "failed" : "finished");
  if (unanswered) store.set_run_detail(run_id, *unanswered);
  write_trajectory_table(trajectories, store, std::cout);
  orchestrator::print_run_summary(store, run_uid, o.db_path);
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
