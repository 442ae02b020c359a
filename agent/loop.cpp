// Implements one trajectory: the turn loop, budgets, tool calls and their records, then selection and the
// fresh re-measurement of the selected version.
#include "agent/loop.hpp"

#include "agent/feedback.hpp"
#include "core/hashing.hpp"
#include "engine/exec/process.hpp"

#include <chrono>
#include <fmt/core.h>
#include <iterator>
#include <memory>
#include <string>

namespace kj::agent {

std::string budgets::describe() const {
  std::string out = fmt::format("{} turns (calls to you)", max_turns);
  if (max_usd) out += fmt::format(", ${:.2f}", *max_usd);
  if (max_tokens) out += fmt::format(", {} tokens", *max_tokens);
  if (max_seconds) out += fmt::format(", {:.0f} s of wall time", *max_seconds);
  return out;
}

namespace {

using clock_type = std::chrono::steady_clock;

class trajectory_run {
public:
  trajectory_run(const trajectory_spec& spec, const model_settings& model, const budgets& limits,
                 const context_settings& context, judge& engine, recorder& rec,
                 const std::function<bool()>& cancelled)
      : m_spec(spec), m_model(model), m_limits(limits), m_context(context), m_judge(engine), m_rec(rec),
        m_cancelled(cancelled), m_log(rec) {}

  db::trajectory_record run();

private:
  void open();
  std::string budget_exhausted(int turn);
  llm::request make_request() const;
  void take_usage(const llm::reply& reply, db::turn_record& turn);
  bool run_tools(const llm::reply& reply, int turn, llm::message& results,
                 std::vector<db::tool_call_record>& calls);
  void add_user_turn(llm::message turn, bool model_turn_kept);
  void finish(bool measure);
  void stop(std::string status, std::string detail) {
    m_t.status = std::move(status);
    m_t.stop_detail = std::move(detail);
  }

  const trajectory_spec& m_spec;
  const model_settings& m_model;
  const budgets& m_limits;
  context_manager m_context;
  judge& m_judge;
  recorder& m_rec;
  const std::function<bool()>& m_cancelled;
  trajectory_log m_log;
  db::trajectory_record m_t;
  std::optional<workspace> m_workspace;
  std::unique_ptr<toolbox> m_tools;
  std::unique_ptr<llm::client> m_client;
  std::vector<llm::message> m_messages;
  clock_type::time_point m_start = clock_type::now();
  std::int64_t m_last_exchange = 0; // the trajectory's last recorded call
};

void trajectory_run::open() {
  m_t.run_id = m_rec.run_id();
  m_t.problem_id = m_spec.problem_id;
  m_t.attempt = m_spec.attempt;
  m_t.producer = m_spec.producer;
  m_t.adapter = m_model.adapter;
  m_t.model = m_model.model;
  m_t.prompt_hash = m_spec.prompt.hash;
  m_t.system_prompt = m_spec.prompt.system;
  m_t.task_prompt = m_spec.prompt.task;
  m_t.settings_json = m_spec.settings_json;
  m_t.workspace = m_spec.workspace.string();
  m_t.speedup_baseline = m_spec.basis.mode;
  m_t.started_at = core::now_iso8601();
  m_t.id = m_rec.insert_trajectory(m_t);
  m_workspace = workspace::create(m_spec.workspace, m_spec.problem->source);
  const std::int64_t problem_id = m_spec.problem_id;
  evaluation_sink sink{
      [this, problem_id](const std::string& source) {
        return m_rec.candidate(problem_id, m_spec.producer, m_spec.attempt,
                               (m_spec.workspace / "model_new.py").string(), source);
      },
      [this, problem_id](results::evaluation_result& r) { return m_rec.evaluation(r, problem_id); }};
  m_tools =
      std::make_unique<toolbox>(*m_workspace, m_judge, *m_spec.problem, std::move(sink), m_spec.profiling);
  m_client =
      std::make_unique<llm::client>(llm::make_provider(m_model.adapter, m_model.base_url, m_model.api_key),
                                    m_model.client, &m_log, m_model.prices);
  m_messages.push_back(llm::message::user_text(m_spec.prompt.task));
}

std::string trajectory_run::budget_exhausted(int turn) {
  const double elapsed = std::chrono::duration<double>(clock_type::now() - m_start).count();
  const std::int64_t tokens =
      m_t.input_tokens + m_t.cache_read_tokens + m_t.cache_write_tokens + m_t.output_tokens;
  if (m_cancelled && m_cancelled()) return "interrupted";
  if (turn > m_limits.max_turns) {
    stop("turn_limit", fmt::format("{} turns used, the most allowed (--max-turns)", m_limits.max_turns));
  } else if (m_limits.max_tokens && tokens >= *m_limits.max_tokens) {
    stop("token_limit",
         fmt::format("{} tokens used of {} (--max-trajectory-tokens)", tokens, *m_limits.max_tokens));
  } else if (m_limits.max_seconds && elapsed >= *m_limits.max_seconds) {
    stop("time_limit",
         fmt::format("{:.0f} s used of {:.0f} (--max-trajectory-seconds)", elapsed, *m_limits.max_seconds));
  } else if (m_limits.max_usd && m_t.cost_usd.value_or(0) >= *m_limits.max_usd) {
    stop("usd_limit", fmt::format("${:.4f} spent of ${:.4f} (--max-trajectory-usd)", m_t.cost_usd.value_or(0),
                                  *m_limits.max_usd));
  } else if (m_limits.run_usd && m_rec.spent_usd() >= *m_limits.run_usd) {
    stop("run_usd_limit", fmt::format("the run spent ${:.4f} of ${:.4f} (--budget-usd)", m_rec.spent_usd(),
                                      *m_limits.run_usd));
  } else {
    return "";
  }
  return m_t.status;
}

llm::request trajectory_run::make_request() const {
  llm::request r;
  r.model = m_model.model;
  r.system = m_spec.prompt.system;
  r.messages = m_messages;
  r.tools = tool_specs();
  r.max_tokens = m_model.max_tokens;
  r.temperature = m_model.temperature;
  r.thinking_budget = m_model.thinking_budget;
  r.effort = m_model.effort;
  r.api = m_model.api;
  r.context_edit = m_context.provider_request();
  return r;
}

void trajectory_run::take_usage(const llm::reply& reply, db::turn_record& turn) {
  turn.input_tokens = reply.tokens.input;
  turn.cache_read_tokens = reply.tokens.cache_read;
  turn.cache_write_tokens = reply.tokens.cache_write;
  turn.output_tokens = reply.tokens.output;
  turn.reasoning_tokens = reply.tokens.reasoning;
  turn.cost_usd = reply.cost_usd;
  turn.latency_ms = reply.total_ms;
  turn.exchange_id = reply.exchange_id;
  if (reply.exchange_id) m_last_exchange = reply.exchange_id;
  turn.stop_reason = llm::to_string(reply.stop);
  for (const auto& p : reply.content.parts) {
    if (p.type == llm::part::kind::text) turn.text += p.text;
    if (p.type == llm::part::kind::thinking)
      turn.thinking += p.redacted ? "[redacted thinking]\n" : p.text + "\n";
  }
  m_t.input_tokens += reply.tokens.input;
  m_t.cache_read_tokens += reply.tokens.cache_read;
  m_t.cache_write_tokens += reply.tokens.cache_write;
  m_t.output_tokens += reply.tokens.output;
  m_t.reasoning_tokens += reply.tokens.reasoning;
  if (reply.cost_usd) m_t.cost_usd = m_t.cost_usd.value_or(0) + *reply.cost_usd;
  m_context.observe(m_messages, m_spec.prompt.system, reply.tokens.prompt());
}

// Runs the reply's tool calls in order; true when one of them submitted.
bool trajectory_run::run_tools(const llm::reply& reply, int turn, llm::message& results,
                               std::vector<db::tool_call_record>& calls) {
  bool submitted = false;
  int seq = 0;
  for (const llm::part& call : reply.tool_calls()) {
    const auto start = clock_type::now();
    tool_outcome out = m_tools->run(call.tool_name, call.arguments, turn);
    submitted |= out.submitted;
    results.parts.push_back(
        llm::part::make_tool_result(call.call_id, call.tool_name, out.text, out.is_error));
    calls.push_back({.seq = seq++,
                     .call_id = call.call_id,
                     .tool = call.tool_name,
                     .arguments_json = call.arguments.dump(),
                     .result = out.text,
                     .summary = out.summary(),
                     .is_error = out.is_error,
                     .candidate_id = out.candidate_id,
                     .evaluation_id = out.evaluation_id,
                     .seconds = std::chrono::duration<double>(clock_type::now() - start).count()});
  }
  return submitted;
}

// What kj tells the model after a reply without a tool call.
std::string idle_note(const llm::reply& reply, const std::string& why) {
  if (reply.stop == llm::stop_reason::max_tokens)
    return "kj: your reply was cut off at the output token limit. Write large files in several smaller steps "
           "(write_file, then edit_file).";
  if (reply.stop == llm::stop_reason::tool_call_error)
    return fmt::format("kj: the provider rejected your last function call ({}), so nothing ran. Call one of "
                       "the declared tools by name, with a JSON object of arguments that matches its "
                       "schema; write a large file in several smaller steps.",
                       why);
  return "kj: no tool was called, and only tools act. Continue with a tool call; call submit when you are "
         "done.";
}

// Appends kj's turn; after a dropped (empty) model turn it joins the previous user turn instead, so that
// the conversation still alternates.
void trajectory_run::add_user_turn(llm::message turn, bool model_turn_kept) {
  if (!model_turn_kept && !m_messages.empty() && m_messages.back().who == llm::role::user) {
    auto& parts = m_messages.back().parts;
    parts.insert(parts.end(), std::make_move_iterator(turn.parts.begin()),
                 std::make_move_iterator(turn.parts.end()));
    return;
  }
  m_messages.push_back(std::move(turn));
}

db::trajectory_record trajectory_run::run() {
  open();
  std::string note; // what kj adds to the next user turn
  int idle = 0;
  std::exception_ptr fatal;
  for (int turn = 1; m_t.status == "running"; ++turn) {
    if (const std::string why = budget_exhausted(turn); !why.empty()) {
      if (why == "interrupted") stop("interrupted", "Ctrl-C");
      break;
    }
    db::turn_record record{.trajectory_id = m_t.id, .turn = turn, .user_note = note};
    record.context_note = m_context.manage(m_messages, m_spec.prompt.system);
    record.context_tokens = m_context.estimate(m_messages, m_spec.prompt.system);
    record.started_at = core::now_iso8601();
    note.clear();
    m_log.set_turn(m_t.id, turn, m_messages.size());
    std::vector<db::tool_call_record> calls;
    try {
      const llm::reply reply =
          m_client->complete(make_request(), {fmt::format("L{}/{} attempt {} turn {}", m_spec.problem->level,
                                                          m_spec.problem->file_name, m_spec.attempt, turn),
                                              0});
      take_usage(reply, record);
      m_t.turns = turn;
      // An empty turn (a blocked prompt, a function call the provider rejected) is never sent back: the
      // providers refuse a model turn without content.
      const bool kept = !reply.empty();
      if (kept) m_messages.push_back(reply.content);
      llm::message results;
      const bool submitted = run_tools(reply, turn, results, calls);
      if (submitted) stop("submitted", "the model called submit");
      if (calls.empty()) {
        const std::string why = reply.stop_raw + (reply.stop_detail.empty() ? "" : ": " + reply.stop_detail);
        if (reply.stop == llm::stop_reason::refusal) stop("refused", "the model refused: " + why);
        if (reply.stop == llm::stop_reason::context_exceeded) stop("context_exceeded", reply.stop_raw);
        if (++idle >= m_limits.max_idle_replies)
          stop("no_tool_calls", fmt::format("{} replies in a row without a tool call", idle));
        note = idle_note(reply, why);
      } else {
        idle = 0;
      }
      if (m_limits.max_turns - turn == 3)
        note += std::string(note.empty() ? "" : "\n") +
                "kj: 3 turns are left in your budget: make sure your best version is verified and profiled, "
                "then submit.";
      if (!note.empty()) results.parts.push_back(llm::part::make_text(note));
      if (!results.parts.empty()) add_user_turn(std::move(results), kept);
    } catch (const llm::llm_error& e) {
      stop(e.kind() == llm::error_kind::cancelled ? "interrupted" : "llm_error", e.what());
      if (llm::stops_generation(e.kind())) fatal = std::current_exception();
    } catch (const std::exception& e) {
      stop(m_cancelled && m_cancelled() ? "interrupted" : "error", e.what());
    }
    record.finished_at = core::now_iso8601();
    if (record.turn == m_t.turns) m_rec.turn(record, calls); // a turn whose call failed has no row
  }
  finish(m_t.status != "interrupted");
  if (fatal) std::rethrow_exception(fatal);
  return m_t;
}

void trajectory_run::finish(bool measure) {
  std::optional<std::pair<std::string, std::int64_t>> final_version;
  try {
    final_version = m_tools->current_candidate();
  } catch (const refused& e) {
    m_t.stop_detail += std::string(m_t.stop_detail.empty() ? "" : "; ") + "final workspace: " + e.what();
  }
  const std::vector<judged>& history = m_tools->history();
  if (final_version) {
    m_t.final_candidate_id = final_version->second;
    for (const judged& j : history)
      if (j.candidate_id == final_version->second) m_t.final_evaluation_id = j.evaluation_id;
  }
  const selection best = select_best(history, m_spec.basis);
  if (best.best) {
    m_t.selected_candidate_id = best.best->candidate_id;
    m_t.selected_evaluation_id = best.best->evaluation_id;
    m_t.inloop_speedup = best.inloop_speedup;
  }
  const std::string* source = best.best       ? &best.best->source
                              : final_version ? &final_version->first
                                              : nullptr;
  const std::int64_t candidate_id = best.best ? best.best->candidate_id : m_t.final_candidate_id;
  if (measure && source) {
    try { // a fresh worker, fresh timing inputs: the number the run reports
      const adapters::candidate c{
          0, m_spec.producer, m_spec.attempt, m_spec.workspace / "model_new.py", *source, ""};
      results::evaluation_result r = m_judge.profile(*m_spec.problem, c);
      r.record.candidate_id = candidate_id;
      m_t.result_evaluation_id = m_rec.evaluation(r, m_spec.problem_id);
      if (best.best) m_t.remeasured_speedup = speedup(r.record, m_spec.basis);
      m_rec.origin({candidate_id, m_rec.run_id(), m_last_exchange, m_model.adapter, m_model.model,
                    m_spec.prompt.hash, m_spec.attempt, "", "agent",
                    fmt::format("trajectory {}: the {} version", m_t.id, best.best ? "selected" : "final")});
    } catch (const std::exception& e) {
      m_t.stop_detail +=
          std::string(m_t.stop_detail.empty() ? "" : "; ") + "re-measurement failed: " + e.what();
    }
  }
  m_t.wall_s = std::chrono::duration<double>(clock_type::now() - m_start).count();
  m_t.finished_at = core::now_iso8601();
  m_rec.update_trajectory(m_t);
}

} // namespace

db::trajectory_record run_trajectory(const trajectory_spec& spec, const model_settings& model,
                                     const budgets& limits, const context_settings& context, judge& engine,
                                     recorder& rec, const std::function<bool()>& cancelled) {
  return trajectory_run(spec, model, limits, context, engine, rec, cancelled).run();
}

} // namespace kj::agent
