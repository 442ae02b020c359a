// Implements one-shot generation: a pool of threads sends the samples, the results are stored in order.
#include "adapters/generate/generate.hpp"

#include "adapters/generate/batch_run.hpp"
#include "adapters/generate/extract.hpp"
#include "adapters/generate/one_shot_prompt.hpp"
#include "adapters/generate/settings.hpp"
#include "adapters/llm/client.hpp"
#include "core/hashing.hpp"

#include <algorithm>
#include <atomic>
#include <fmt/core.h>
#include <fstream>
#include <mutex>
#include <thread>

namespace kj::adapters {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

struct task {
  std::size_t problem = 0;
  int sample = 0;
  enum class state { pending, done, failed, skipped } status = state::pending;
  llm::reply reply;
};

milliseconds ms_of(double seconds) {
  return milliseconds(static_cast<long long>(seconds * 1000.0));
}

llm::client_options client_options_of(const generation_options& o, bool replay,
                                      const std::function<bool()>& cancelled, std::mutex& print_lock) {
  llm::client_options c;
  c.connect_timeout = ms_of(o.connect_timeout_s);
  c.request_timeout = ms_of(o.request_timeout_s);
  c.stream = llm::parse_stream_mode(o.stream).value_or(llm::stream_mode::automatic);
  c.retry.max_retries = o.max_retries;
  c.retry.base_delay = ms_of(o.retry_base_s);
  c.retry.max_wait = ms_of(o.max_retry_wait_s);
  c.concurrency = o.concurrency;
  c.pacing = {o.rpm, o.tpm};
  c.replay_only = replay;
  c.cancelled = cancelled;
  c.on_retry = [&print_lock](const std::string& what) {
    std::lock_guard<std::mutex> guard(print_lock);
    fmt::print(stderr, "kj:   {}\n", what);
  };
  return c;
}

llm::price_table load_prices(const generation_options& o) {
  try {
    return llm::price_table::load(o.prices_path.empty() ? llm::price_table::default_path() : o.prices_path);
  } catch (const llm::price_error& e) {
    throw kb::source_error(e.what());
  }
}

std::string purpose_of(const kb::problem& p, int sample) {
  return fmt::format("L{}/{} sample {}", p.level, p.file_name, sample);
}

// The request of one sample: the same whether sent alone, in a batch, or asked of a recording.
llm::request request_of(const prompt& pr, const generation_settings& s) {
  llm::request r;
  r.model = s.model;
  r.system = pr.system;
  r.messages.push_back(llm::message::user_text(pr.user));
  r.max_tokens = s.max_tokens;
  r.temperature = s.temperature;
  r.thinking_budget = s.thinking_budget;
  r.effort = s.effort;
  r.api = s.openai_api;
  return r;
}

std::string describe(const llm::reply& r) {
  const std::string cost = r.cost_usd ? fmt::format("${:.4f}", *r.cost_usd) : "no price";
  return fmt::format(
      "{} in + {} cache read + {} cache write, {} out tokens, {}, {:.1f} s, {}{}", r.tokens.input,
      r.tokens.cache_read, r.tokens.cache_write, r.tokens.output, cost, r.total_ms / 1000.0,
      r.request_id.empty() ? "no request id" : "request id " + r.request_id, r.replayed ? " (recorded)" : "");
}

// Sends the tasks from `threads` threads; stops issuing on a fatal error, Ctrl-C or the budget.
class sender {
public:
  sender(llm::client& client, const std::vector<kb::problem>& problems, const std::vector<prompt>& prompts,
         const generation_settings& settings, std::optional<double> budget, double spent,
         const std::function<bool()>& cancelled, std::mutex& print_lock)
      : m_spent(spent), m_client(client), m_problems(problems), m_prompts(prompts), m_settings(settings),
        m_budget(budget), m_cancelled(cancelled), m_print_lock(print_lock) {}

  void run(std::vector<task>& tasks, int threads) {
    m_total = tasks.size();
    std::vector<std::thread> pool;
    for (int i = 0; i < std::max(1, std::min<int>(threads, static_cast<int>(tasks.size()))); ++i)
      pool.emplace_back([&] { work(tasks); });
    for (auto& t : pool)
      t.join();
  }

  std::optional<llm::llm_error> m_fatal;
  bool m_budget_reached = false;
  double m_spent;

private:
  void work(std::vector<task>& tasks) {
    for (std::size_t i; (i = m_next++) < tasks.size();) {
      task& t = tasks[i];
      if (m_stop || (m_cancelled && m_cancelled()) || over_budget()) {
        t.status = task::state::skipped;
        continue;
      }
      const kb::problem& p = m_problems[t.problem];
      const llm::request r = request_of(m_prompts[t.problem], m_settings);
      try {
        t.reply = m_client.complete(r, {purpose_of(p, t.sample), t.sample});
        t.status = task::state::done;
        charge(t.reply);
        say(fmt::format("[{}/{}] L{} {} sample {}: {}", ++m_finished, m_total, p.level, p.file_name, t.sample,
                        describe(t.reply)));
      } catch (const llm::llm_error& e) {
        t.status = task::state::failed;
        say(fmt::format("[{}/{}] L{} {} sample {}: failed: {}", ++m_finished, m_total, p.level, p.file_name,
                        t.sample, e.what()));
        if (llm::stops_generation(e.kind())) {
          std::lock_guard<std::mutex> guard(m_state_lock);
          if (!m_fatal) m_fatal = e;
          m_stop = true;
        }
      }
    }
  }

  bool over_budget() {
    if (!m_budget) return false;
    std::lock_guard<std::mutex> guard(m_state_lock);
    if (m_spent < *m_budget) return false;
    m_budget_reached = true;
    return true;
  }

  void charge(const llm::reply& r) {
    // A reply this run recorded before (a resumed run) was counted when the run's spending was read.
    if (r.replayed || !r.cost_usd) return;
    std::lock_guard<std::mutex> guard(m_state_lock);
    m_spent += *r.cost_usd;
  }

  void say(const std::string& line) {
    std::lock_guard<std::mutex> guard(m_print_lock);
    fmt::print(stderr, "kj: {}\n", line);
  }

  llm::client& m_client;
  const std::vector<kb::problem>& m_problems;
  const std::vector<prompt>& m_prompts;
  const generation_settings& m_settings;
  std::optional<double> m_budget;
  const std::function<bool()>& m_cancelled;
  std::mutex& m_print_lock;
  std::mutex m_state_lock;
  std::atomic<std::size_t> m_next{0};
  std::atomic<std::size_t> m_finished{0};
  std::atomic<bool> m_stop{false};
  std::size_t m_total = 0;
};

} // namespace

generation_result generate_candidates(db::store& store, std::int64_t run_id,
                                      const std::vector<kb::problem>& problems,
                                      const std::vector<std::int64_t>& problem_ids,
                                      const generation_options& options, const std::string& device,
                                      const std::function<bool()>& cancelled) {
  const generation_settings settings = resolve_settings(store, options, device);
  check_same_settings(store, run_id, settings);
  const bool replay = settings.replayed_from != 0;
  const llm::price_table prices = load_prices(options);
  if (options.budget_usd && !replay && !prices.find(settings.adapter, settings.model))
    throw kb::source_error(
        fmt::format("--budget-usd: {} has no price for model '{}'; add one (docs/adapters.md) or "
                    "drop --budget-usd",
                    prices.path().string(), settings.model));
  std::unique_ptr<llm::provider> wire;
  try {
    wire = llm::make_provider(settings.adapter, replay ? settings.base_url : options.base_url,
                              replay ? "" : llm::api_key_from_environment(settings.adapter), replay);
  } catch (const llm::llm_error& e) {
    throw kb::source_error(e.what());
  }
  store.upsert_llm_generation(
      {run_id, settings.adapter, settings.model, settings.replayed_from, settings.to_json().dump()});

  std::mutex db_lock, print_lock;
  auto log = replay ? llm::store_exchange_log::replay(store, db_lock, settings.replayed_from)
                    : llm::store_exchange_log::live(store, db_lock, run_id);
  llm::client client(std::move(wire), client_options_of(options, replay, cancelled, print_lock), &log,
                     &prices);

  std::vector<prompt> prompts;
  std::vector<task> tasks;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    prompts.push_back(one_shot_prompt(problems[i], settings.device));
    for (int s = 0; s < settings.samples; ++s)
      tasks.push_back({i, s});
  }
  const std::string price_note = prices.find(settings.adapter, settings.model) ? "prices of " + prices.date()
                                                                               : "no price for this model";
  fmt::print(stderr, "kj: {} {} sample{} of {} problem{} with {} ({}, {} at a time)...\n",
             replay ? "replaying" : "generating", tasks.size(), tasks.size() == 1 ? "" : "s", problems.size(),
             problems.size() == 1 ? "" : "s", settings.producer(), price_note, options.concurrency);
  if (options.batch && !replay) {
    std::vector<batch_request> requests;
    for (const task& t : tasks)
      requests.push_back(
          {request_of(prompts[t.problem], settings), {purpose_of(problems[t.problem], t.sample), t.sample}});
    if (!run_batch(store, run_id, client, requests, prices.batch_factor(),
                   {options.batch_poll_s, cancelled})) {
      fmt::print(stderr,
                 "kj: interrupted while the batch runs at the provider: the next kj generate of this run "
                 "polls it again (nothing is asked twice)\n");
      generation_result interrupted;
      interrupted.producer = settings.producer();
      interrupted.interrupted = true;
      return interrupted;
    }
  }
  sender send(client, problems, prompts, settings, replay ? std::nullopt : options.budget_usd,
              replay ? 0.0 : store.llm_spent_usd(run_id), cancelled, print_lock);
  send.run(tasks, options.concurrency);

  generation_result result;
  result.producer = settings.producer();
  result.budget_reached = send.m_budget_reached;
  db::store::batch batch(store); // every candidate with its origin, or none (the exchanges are already in)
  for (const task& t : tasks) {
    if (t.status == task::state::failed) ++result.calls_failed;
    if (t.status == task::state::skipped) ++result.not_generated;
    if (t.status != task::state::done) continue;
    const extraction ex = extract_code(t.reply.text(), t.reply.stop_raw);
    candidate c{t.problem, result.producer, t.sample, {}, ex.found ? ex.code : t.reply.text(), ex.reason};
    const std::int64_t id = store.upsert_candidate(
        {problem_ids[t.problem], c.producer, c.sample, "", c.source, core::sha256_hex(c.source)});
    store.upsert_candidate_origin({id, run_id, t.reply.exchange_id, replay ? "replay" : settings.adapter,
                                   settings.model, prompts[t.problem].hash, t.sample, t.reply.request_id,
                                   ex.found ? "code" : "no_code", ex.reason});
    result.candidates.push_back(std::move(c));
  }
  batch.commit();
  if (send.m_fatal && send.m_fatal->kind() == llm::error_kind::cancelled) {
    result.interrupted = true;
  } else if (send.m_fatal) { // no later call could succeed: the run stops here, resumable once fixed
    store.set_run_status(run_id, "failed");
    throw *send.m_fatal;
  }
  const auto no_code = std::count_if(result.candidates.begin(), result.candidates.end(),
                                     [](const candidate& c) { return !c.no_code.empty(); });
  fmt::print(stderr,
             "kj: {} candidate{} ({} without usable code), {} failed call{}, {} sample{} not asked for{}\n",
             result.candidates.size(), result.candidates.size() == 1 ? "" : "s", no_code, result.calls_failed,
             result.calls_failed == 1 ? "" : "s", result.not_generated, result.not_generated == 1 ? "" : "s",
             result.budget_reached
                 ? fmt::format(" (budget ${:.2f} reached: ${:.4f} spent)", *options.budget_usd, send.m_spent)
                 : "");
  return result;
}

int write_kernelbench_files(const fs::path& dir, const std::vector<kb::problem>& problems,
                            const std::vector<candidate>& candidates) {
  fs::create_directories(dir);
  int written = 0;
  for (const candidate& c : candidates) {
    if (!c.no_code.empty()) continue;
    const kb::problem& p = problems[c.problem_index];
    const fs::path file =
        dir / fmt::format("level_{}_problem_{}_sample_{}_kernel.py", p.level, p.number, c.sample);
    std::ofstream out(file, std::ios::binary);
    out << c.source;
    if (!out) throw kb::source_error(fmt::format("cannot write {}", file.string()));
    ++written;
  }
  return written;
}

void preflight(const generation_options& options, bool with_tools) {
  if (!options.active() || options.adapter == "replay") return;
  const auto wire = llm::make_provider(options.adapter, options.base_url,
                                       llm::api_key_from_environment(options.adapter), true);
  llm::request r;
  r.model = options.model;
  r.messages.push_back(llm::message::user_text("pre-flight"));
  r.max_tokens = options.max_tokens;
  r.temperature = options.temperature;
  r.thinking_budget = options.thinking_budget;
  r.effort = options.effort;
  r.api = options.openai_api;
  if (with_tools)
    r.tools.push_back({"pre-flight", "a tool, as the agent's requests carry", {{"type", "object"}}});
  (void)wire->encode(r);
}

} // namespace kj::adapters
