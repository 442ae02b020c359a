// The built-in agent's rows (schema v7): trajectories, turns and tool calls.
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
    "cache_write_tokens, output_tokens, cost_usd, wall_s, selected_candidate_id, selected_evaluation_id, "
    "final_candidate_id, final_evaluation_id, result_evaluation_id, speedup_baseline, inloop_speedup, "
    "remeasured_speedup, started_at, finished_at";

trajectory_record read_trajectory(const sqlite::statement& row) {
  trajectory_record t;
  t.id = row.column_int64(0);
  t.run_id = row.column_int64(1);
  t.problem_id = row.column_int64(2);
  t.attempt = row.column_int(3);
  t.producer = row.column_text(4);
  t.adapter = row.column_text(5);
  t.model = row.column_text(6);
  t.prompt_hash = row.column_text(7);
  t.system_prompt = row.column_text(8);
  t.task_prompt = row.column_text(9);
  t.settings_json = row.column_text(10);
  t.workspace = row.column_text(11);
  t.status = row.column_text(12);
  t.stop_detail = row.column_text(13);
  t.turns = row.column_int(14);
  t.input_tokens = row.column_int64(15);
  t.cache_read_tokens = row.column_int64(16);
  t.cache_write_tokens = row.column_int64(17);
  t.output_tokens = row.column_int64(18);
  t.cost_usd = row.column_optional_double(19);
  t.wall_s = row.column_double(20);
  t.selected_candidate_id = row.column_int64(21);
  t.selected_evaluation_id = row.column_int64(22);
  t.final_candidate_id = row.column_int64(23);
  t.final_evaluation_id = row.column_int64(24);
  t.result_evaluation_id = row.column_int64(25);
  t.speedup_baseline = row.column_text(26);
  t.inloop_speedup = row.column_optional_double(27);
  t.remeasured_speedup = row.column_optional_double(28);
  t.started_at = row.column_text(29);
  t.finished_at = row.column_text(30);
  return t;
}

constexpr const char* turn_columns =
    "id, trajectory_id, turn, exchange_id, user_note, context_note, context_tokens, text, thinking, "
    "stop_reason, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, cost_usd, latency_ms, "
    "started_at, finished_at";

turn_record read_turn(const sqlite::statement& row) {
  turn_record t;
  t.id = row.column_int64(0);
  t.trajectory_id = row.column_int64(1);
  t.turn = row.column_int(2);
  t.exchange_id = row.column_int64(3);
  t.user_note = row.column_text(4);
  t.context_note = row.column_text(5);
  t.context_tokens = row.column_int64(6);
  t.text = row.column_text(7);
  t.thinking = row.column_text(8);
  t.stop_reason = row.column_text(9);
  t.input_tokens = row.column_int64(10);
  t.cache_read_tokens = row.column_int64(11);
  t.cache_write_tokens = row.column_int64(12);
  t.output_tokens = row.column_int64(13);
  t.cost_usd = row.column_optional_double(14);
  t.latency_ms = row.column_double(15);
  t.started_at = row.column_text(16);
  t.finished_at = row.column_text(17);
  return t;
}

constexpr const char* call_columns = "id, turn_id, seq, call_id, tool, arguments_json, result, summary, "
                                     "is_error, candidate_id, evaluation_id, seconds";

tool_call_record read_call(const sqlite::statement& row) {
  return {.id = row.column_int64(0),
          .turn_id = row.column_int64(1),
          .seq = row.column_int(2),
          .call_id = row.column_text(3),
          .tool = row.column_text(4),
          .arguments_json = row.column_text(5),
          .result = row.column_text(6),
          .summary = row.column_text(7),
          .is_error = row.column_int64(8) != 0,
          .candidate_id = row.column_int64(9),
          .evaluation_id = row.column_int64(10),
          .seconds = row.column_double(11)};
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
       {t.input_tokens, t.cache_read_tokens, t.cache_write_tokens, t.output_tokens})
    next(tokens);
  next(t.cost_usd);
  next(t.wall_s);
  for (const std::int64_t id : {t.selected_candidate_id, t.selected_evaluation_id, t.final_candidate_id,
                                t.final_evaluation_id, t.result_evaluation_id})
    next(id_or_null(id));
  next(t.speedup_baseline);
  next(t.inloop_speedup);
  next(t.remeasured_speedup);
  next(t.started_at.empty() ? now_iso8601() : t.started_at);
  next(t.finished_at);
}

} // namespace

std::int64_t store::insert_trajectory(const trajectory_record& t) {
  connection& db = m_impl->m_db;
  auto insert = db.prepare(
      "INSERT INTO agent_trajectories (run_id, problem_id, attempt, producer, adapter, model, prompt_hash, "
      "system_prompt, task_prompt, settings_json, workspace, status, stop_detail, turns, input_tokens, "
      "cache_read_tokens, cache_write_tokens, output_tokens, cost_usd, wall_s, selected_candidate_id, "
      "selected_evaluation_id, final_candidate_id, final_evaluation_id, result_evaluation_id, "
      "speedup_baseline, inloop_speedup, remeasured_speedup, started_at, finished_at) VALUES (?, ?, ?, ?, ?, "
      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
      "input_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, output_tokens = ?, cost_usd = ?, "
      "wall_s = ?, selected_candidate_id = ?, selected_evaluation_id = ?, final_candidate_id = ?, "
      "final_evaluation_id = ?, result_evaluation_id = ?, speedup_baseline = ?, inloop_speedup = ?, "
      "remeasured_speedup = ?, started_at = ?, finished_at = ? WHERE id = ?",
      fmt::format("update trajectory {}", t.id));
  bind_trajectory_fields(update, t, 1);
  update.bind(28, t.id);
  update.run();
  if (db.changes() != 1) db.fail(fmt::format("update trajectory {}", t.id), "no such trajectory");
}

std::int64_t store::insert_turn(const turn_record& t, const std::vector<tool_call_record>& calls) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("record turn {} of trajectory {}", t.turn, t.trajectory_id);
  sqlite::transaction tx(db);
  db.prepare("INSERT INTO agent_turns (trajectory_id, turn, exchange_id, user_note, context_note, "
             "context_tokens, text, thinking, stop_reason, input_tokens, cache_read_tokens, "
             "cache_write_tokens, output_tokens, cost_usd, latency_ms, started_at, finished_at) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
             what)
      .bind_all(t.trajectory_id, t.turn, id_or_null(t.exchange_id), t.user_note, t.context_note,
                t.context_tokens, t.text, t.thinking, t.stop_reason, t.input_tokens, t.cache_read_tokens,
                t.cache_write_tokens, t.output_tokens, t.cost_usd, t.latency_ms,
                t.started_at.empty() ? now_iso8601() : t.started_at,
                t.finished_at.empty() ? now_iso8601() : t.finished_at)
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
