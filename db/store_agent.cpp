// The built-in agent's rows (schema v7): trajectories, turns and tool calls.
#include "core/hashing.hpp"
#include "db/store_impl.hpp"

#include <fmt/format.h>

namespace kj::db {

using sqlite::connection;

std::optional<double> trajectory_record::inflation() const {
  if (!inloop_speedup || !remeasured_speedup || *remeasured_speedup <= 0) return std::nullopt;
  return *inloop_speedup / *remeasured_speedup;
}

namespace {

constexpr const char* trajectory_columns =
    "id, run_id, problem_id, attempt, producer, adapter, model, prompt_hash, system_prompt, task_prompt, "
    "settings_json, workspace, status, stop_detail, turns, input_tokens, cache_read_tokens, "
    "cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, wall_s, selected_candidate_id, "
    "selected_evaluation_id, final_candidate_id, final_evaluation_id, result_evaluation_id, "
    "speedup_baseline, inloop_speedup, "
    "remeasured_speedup, started_at, finished_at";

trajectory_record read_trajectory(const sqlite::statement& row) {
  trajectory_record t;
  t.id = row.int64("id");
  t.run_id = row.int64("run_id");
  t.problem_id = row.int64("problem_id");
  t.attempt = row.integer("attempt");
  t.producer = row.text("producer");
  t.adapter = row.text("adapter");
  t.model = row.text("model");
  t.prompt_hash = row.text("prompt_hash");
  t.system_prompt = row.text("system_prompt");
  t.task_prompt = row.text("task_prompt");
  t.settings_json = row.text("settings_json");
  t.workspace = row.text("workspace");
  t.status = row.text("status");
  t.stop_detail = row.text("stop_detail");
  t.turns = row.integer("turns");
  t.input_tokens = row.int64("input_tokens");
  t.cache_read_tokens = row.int64("cache_read_tokens");
  t.cache_write_tokens = row.int64("cache_write_tokens");
  t.output_tokens = row.int64("output_tokens");
  t.reasoning_tokens = row.int64("reasoning_tokens");
  t.cost_usd = row.optional_real("cost_usd");
  t.wall_s = row.real("wall_s");
  t.selected_candidate_id = row.int64("selected_candidate_id");
  t.selected_evaluation_id = row.int64("selected_evaluation_id");
  t.final_candidate_id = row.int64("final_candidate_id");
  t.final_evaluation_id = row.int64("final_evaluation_id");
  t.result_evaluation_id = row.int64("result_evaluation_id");
  t.speedup_baseline = row.text("speedup_baseline");
  t.inloop_speedup = row.optional_real("inloop_speedup");
  t.remeasured_speedup = row.optional_real("remeasured_speedup");
  t.started_at = row.text("started_at");
  t.finished_at = row.text("finished_at");
  return t;
}

constexpr const char* turn_columns =
    "id, trajectory_id, turn, exchange_id, user_note, context_note, context_tokens, text, thinking, "
    "stop_reason, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, reasoning_tokens, "
    "cost_usd, latency_ms, started_at, finished_at";

turn_record read_turn(const sqlite::statement& row) {
  turn_record t;
  t.id = row.int64("id");
  t.trajectory_id = row.int64("trajectory_id");
  t.turn = row.integer("turn");
  t.exchange_id = row.int64("exchange_id");
  t.user_note = row.text("user_note");
  t.context_note = row.text("context_note");
  t.context_tokens = row.int64("context_tokens");
  t.text = row.text("text");
  t.thinking = row.text("thinking");
  t.stop_reason = row.text("stop_reason");
  t.input_tokens = row.int64("input_tokens");
  t.cache_read_tokens = row.int64("cache_read_tokens");
  t.cache_write_tokens = row.int64("cache_write_tokens");
  t.output_tokens = row.int64("output_tokens");
  t.reasoning_tokens = row.int64("reasoning_tokens");
  t.cost_usd = row.optional_real("cost_usd");
  t.latency_ms = row.real("latency_ms");
  t.started_at = row.text("started_at");
  t.finished_at = row.text("finished_at");
  return t;
}

constexpr const char* call_columns = "id, turn_id, seq, call_id, tool, arguments_json, result, summary, "
                                     "is_error, candidate_id, evaluation_id, seconds";

tool_call_record read_call(const sqlite::statement& row) {
  return {.id = row.int64("id"),
          .turn_id = row.int64("turn_id"),
          .seq = row.integer("seq"),
          .call_id = row.text("call_id"),
          .tool = row.text("tool"),
          .arguments_json = row.text("arguments_json"),
          .result = row.text("result"),
          .summary = row.text("summary"),
          .is_error = row.int64("is_error") != 0,
          .candidate_id = row.int64("candidate_id"),
          .evaluation_id = row.int64("evaluation_id"),
          .seconds = row.real("seconds")};
}

// Binds every column of a trajectory after id, run, problem and attempt, from parameter `first` on.
void bind_trajectory_fields(sqlite::statement& s, const trajectory_record& t, int first) {
  int i = first;
  const auto next = [&](const auto& value) { s.bind(i++, value); }; // one parameter per statement
  for (const std::string* text : {&t.producer, &t.adapter, &t.model, &t.prompt_hash, &t.system_prompt,
                                  &t.task_prompt, &t.settings_json, &t.workspace, &t.status, &t.stop_detail})
    next(*text);
  next(t.turns);
  for (const std::int64_t tokens :
       {t.input_tokens, t.cache_read_tokens, t.cache_write_tokens, t.output_tokens, t.reasoning_tokens})
    next(tokens);
  next(t.cost_usd);
  next(t.wall_s);
  for (const std::int64_t id : {t.selected_candidate_id, t.selected_evaluation_id, t.final_candidate_id,
                                t.final_evaluation_id, t.result_evaluation_id})
    next(id_or_null(id));
  next(t.speedup_baseline);
  next(t.inloop_speedup);
  next(t.remeasured_speedup);
  next(t.started_at.empty() ? core::now_iso8601() : t.started_at);
  next(t.finished_at);
}

} // namespace

std::int64_t store::insert_trajectory(const trajectory_record& t) {
  connection& db = m_impl->m_db;
  auto insert = db.prepare(
      "INSERT INTO agent_trajectories (run_id, problem_id, attempt, producer, adapter, model, prompt_hash, "
      "system_prompt, task_prompt, settings_json, workspace, status, stop_detail, turns, input_tokens, "
      "cache_read_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, wall_s, "
      "selected_candidate_id, selected_evaluation_id, final_candidate_id, final_evaluation_id, "
      "result_evaluation_id, speedup_baseline, inloop_speedup, remeasured_speedup, started_at, finished_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      fmt::format("record a trajectory of problem {} in run {}", t.problem_id, t.run_id));
  insert.bind_all(t.run_id, t.problem_id, t.attempt);
  bind_trajectory_fields(insert, t, 4);
  insert.run();
  return db.last_insert_rowid();
}

void store::update_trajectory(const trajectory_record& t) {
  connection& db = m_impl->m_db;
  auto update = db.prepare(
      "UPDATE agent_trajectories SET producer = ?, adapter = ?, model = ?, prompt_hash = ?, system_prompt = "
      "?, "
      "task_prompt = ?, settings_json = ?, workspace = ?, status = ?, stop_detail = ?, turns = ?, "
      "input_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, output_tokens = ?, "
      "reasoning_tokens = ?, cost_usd = ?, "
      "wall_s = ?, selected_candidate_id = ?, selected_evaluation_id = ?, final_candidate_id = ?, "
      "final_evaluation_id = ?, result_evaluation_id = ?, speedup_baseline = ?, inloop_speedup = ?, "
      "remeasured_speedup = ?, started_at = ?, finished_at = ? WHERE id = ?",
      fmt::format("update trajectory {}", t.id));
  bind_trajectory_fields(update, t, 1);
  update.bind(29, t.id);
  update.run();
  if (db.changes() != 1) db.fail(fmt::format("update trajectory {}", t.id), "no such trajectory");
}

std::int64_t store::insert_turn(const turn_record& t, const std::vector<tool_call_record>& calls) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("record turn {} of trajectory {}", t.turn, t.trajectory_id);
  sqlite::transaction tx(db);
  db.prepare("INSERT INTO agent_turns (trajectory_id, turn, exchange_id, user_note, context_note, "
             "context_tokens, text, thinking, stop_reason, input_tokens, cache_read_tokens, "
             "cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, latency_ms, started_at, "
             "finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
             what)
      .bind_all(t.trajectory_id, t.turn, id_or_null(t.exchange_id), t.user_note, t.context_note,
                t.context_tokens, t.text, t.thinking, t.stop_reason, t.input_tokens, t.cache_read_tokens,
                t.cache_write_tokens, t.output_tokens, t.reasoning_tokens, t.cost_usd, t.latency_ms,
                t.started_at.empty() ? core::now_iso8601() : t.started_at,
                t.finished_at.empty() ? core::now_iso8601() : t.finished_at)
      .run();
  const std::int64_t turn_id = db.last_insert_rowid();
  auto insert =
      db.prepare("INSERT INTO agent_tool_calls (turn_id, seq, call_id, tool, arguments_json, result, "
                 "summary, is_error, candidate_id, evaluation_id, seconds) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 what);
  for (const tool_call_record& c : calls)
    insert
        .bind_all(turn_id, c.seq, c.call_id, c.tool, c.arguments_json, c.result, c.summary,
                  c.is_error ? 1 : 0, id_or_null(c.candidate_id), id_or_null(c.evaluation_id), c.seconds)
        .run();
  tx.commit();
  return turn_id;
}

std::optional<std::int64_t> store::finished_trajectory(std::int64_t run_id, std::int64_t problem_id,
                                                       int attempt) const {
  auto find = m_impl->m_db.prepare(
      "SELECT id FROM agent_trajectories WHERE run_id = ? AND problem_id = ? AND attempt = ? "
      "AND status NOT IN ('running', 'interrupted') ORDER BY id DESC LIMIT 1",
      fmt::format("look up trajectory {} of problem {} in run {}", attempt, problem_id, run_id));
  find.bind_all(run_id, problem_id, attempt);
  if (!find.step()) return std::nullopt;
  return find.column_int64(0);
}

std::optional<trajectory_record> store::get_trajectory(std::int64_t id) const {
  auto get =
      m_impl->m_db.prepare(fmt::format("SELECT {} FROM agent_trajectories WHERE id = ?", trajectory_columns),
                           fmt::format("read trajectory {}", id));
  get.bind_all(id);
  if (!get.step()) return std::nullopt;
  return read_trajectory(get);
}

std::optional<trajectory_transcript> store::get_transcript(std::int64_t id) const {
  auto trajectory = get_trajectory(id);
  if (!trajectory) return std::nullopt;
  trajectory_transcript out{std::move(*trajectory), {}, {}};
  const connection& db = m_impl->m_db;
  const std::string what = fmt::format("read the transcript of trajectory {}", id);
  auto turns = db.prepare(
      fmt::format("SELECT {} FROM agent_turns WHERE trajectory_id = ? ORDER BY turn, id", turn_columns),
      what);
  turns.bind_all(id);
  while (turns.step())
    out.turns.push_back(read_turn(turns));
  auto calls = db.prepare(
      fmt::format("SELECT {} FROM agent_tool_calls WHERE turn_id = ? ORDER BY seq", call_columns), what);
  for (const turn_record& t : out.turns) {
    calls.bind_all(t.id);
    out.calls.emplace_back();
    while (calls.step())
      out.calls.back().push_back(read_call(calls));
    calls.reset();
  }
  return out;
}

std::vector<trajectory_record> store::trajectories(const std::string& run_uid) const {
  auto rows = m_impl->m_db.prepare(
      fmt::format("SELECT {} FROM agent_trajectories WHERE run_id = (SELECT id FROM runs WHERE run_uid = ?) "
                  "ORDER BY problem_id, attempt, id",
                  trajectory_columns),
      fmt::format("read the trajectories of run '{}'", run_uid));
  rows.bind_all(run_uid);
  std::vector<trajectory_record> out;
  while (rows.step())
    out.push_back(read_trajectory(rows));
  return out;
}

std::optional<tool_call_record> store::tool_call_of_evaluation(std::int64_t evaluation_id) const {
  auto get = m_impl->m_db.prepare(
      fmt::format("SELECT {} FROM agent_tool_calls WHERE evaluation_id = ? ORDER BY id LIMIT 1",
                  call_columns),
      fmt::format("find the tool call of evaluation {}", evaluation_id));
  get.bind_all(evaluation_id);
  if (!get.step()) return std::nullopt;
  return read_call(get);
}

std::optional<std::int64_t> store::trajectory_of_result(std::int64_t evaluation_id) const {
  auto get = m_impl->m_db.prepare(
      "SELECT id FROM agent_trajectories WHERE result_evaluation_id = ? ORDER BY id LIMIT 1",
      fmt::format("find the trajectory of evaluation {}", evaluation_id));
  get.bind_all(evaluation_id);
  if (!get.step()) return std::nullopt;
  return get.column_int64(0);
}

} // namespace kj::db
