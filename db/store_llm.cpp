// The LLM adapters' rows (schema v4): exchanges for record and replay, candidate origins, cost totals.
#include "core/hashing.hpp"
#include "db/store.hpp"
#include "db/store_impl.hpp"

#include <fmt/format.h>

namespace kj::db {

using sqlite::connection;

namespace {

constexpr const char* exchange_columns =
    "id, run_id, provider, model, endpoint, request_hash, seq, purpose, request_json, http_status, "
    "response_body, ok, error_kind, error, request_id, stop_reason, input_tokens, cache_read_tokens, "
    "cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, latency_ms, total_ms, attempts, "
    "attempts_json, started_at, finished_at";

llm_exchange_record read_exchange(const sqlite::statement& row) {
  llm_exchange_record x;
  x.id = row.int64("id");
  x.run_id = row.int64("run_id");
  x.provider = row.text("provider");
  x.model = row.text("model");
  x.endpoint = row.text("endpoint");
  x.request_hash = row.text("request_hash");
  x.seq = row.integer("seq");
  x.purpose = row.text("purpose");
  x.request_json = row.text("request_json");
  if (!row.null("http_status")) x.http_status = row.int64("http_status");
  x.response_body = row.text("response_body");
  x.ok = row.int64("ok") != 0;
  x.error_kind = row.text("error_kind");
  x.error = row.text("error");
  x.request_id = row.text("request_id");
  x.stop_reason = row.text("stop_reason");
  x.input_tokens = row.int64("input_tokens");
  x.cache_read_tokens = row.int64("cache_read_tokens");
  x.cache_write_tokens = row.int64("cache_write_tokens");
  x.output_tokens = row.int64("output_tokens");
  x.reasoning_tokens = row.int64("reasoning_tokens");
  x.cost_usd = row.optional_real("cost_usd");
  x.latency_ms = row.real("latency_ms");
  x.total_ms = row.real("total_ms");
  x.attempts = row.integer("attempts");
  x.attempts_json = row.text("attempts_json");
  x.started_at = row.text("started_at");
  x.finished_at = row.text("finished_at");
  return x;
}

// The exchanges a run used: those it recorded, and the recorded ones its candidates were replayed from.
constexpr const char* used_exchanges = R"sql(
used AS (
  SELECT x.* FROM llm_exchanges x JOIN runs r ON r.id = x.run_id WHERE r.run_uid = ?1
  UNION
  SELECT x.* FROM llm_exchanges x JOIN candidate_origins o ON o.exchange_id = x.id
  JOIN runs r ON r.id = o.run_id WHERE r.run_uid = ?1
))sql";

} // namespace

std::int64_t store::insert_llm_exchange(const llm_exchange_record& x) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("record an exchange with {} ({})", x.provider, x.purpose);
  db.prepare(
        "INSERT INTO llm_exchanges (run_id, provider, model, endpoint, request_hash, seq, purpose, "
        "request_json, http_status, response_body, ok, error_kind, error, request_id, stop_reason, "
        "input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, "
        "latency_ms, total_ms, attempts, attempts_json, started_at, finished_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        what)
      .bind_all(x.run_id, x.provider, x.model, x.endpoint, x.request_hash, x.seq, x.purpose, x.request_json,
                x.http_status, x.response_body, x.ok ? 1 : 0, x.error_kind, x.error, x.request_id,
                x.stop_reason, x.input_tokens, x.cache_read_tokens, x.cache_write_tokens, x.output_tokens,
                x.reasoning_tokens, x.cost_usd, x.latency_ms, x.total_ms, x.attempts, x.attempts_json,
                x.started_at.empty() ? core::now_iso8601() : x.started_at,
                x.finished_at.empty() ? core::now_iso8601() : x.finished_at)
      .run();
  return db.last_insert_rowid();
}

std::optional<llm_exchange_record>
store::find_llm_exchange(std::int64_t run_id, const std::string& request_hash, int seq, bool ok_only) const {
  auto find = m_impl->m_db.prepare(
      fmt::format("SELECT {} FROM llm_exchanges WHERE run_id = ? AND request_hash = ? AND seq = ? "
                  "AND (ok = 1 OR ? = 0) ORDER BY id DESC LIMIT 1",
                  exchange_columns),
      fmt::format("look up a recorded exchange of run {}", run_id));
  find.bind_all(run_id, request_hash, seq, ok_only ? 1 : 0);
  if (!find.step()) return std::nullopt;
  return read_exchange(find);
}

double store::llm_spent_usd(std::int64_t run_id) const {
  auto sum = m_impl->m_db.prepare("SELECT coalesce(sum(cost_usd), 0) FROM llm_exchanges WHERE run_id = ?",
                                  fmt::format("sum the spending of run {}", run_id));
  sum.bind_all(run_id);
  sum.step();
  return sum.column_double(0);
}

void store::upsert_candidate_origin(const candidate_origin_record& o) {
  connection& db = m_impl->m_db;
  db.prepare("INSERT INTO candidate_origins (candidate_id, run_id, exchange_id, adapter, model, prompt_hash, "
             "sample, request_id, extraction, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
             "ON CONFLICT (candidate_id, run_id) DO UPDATE SET exchange_id = excluded.exchange_id, "
             "adapter = excluded.adapter, model = excluded.model, prompt_hash = excluded.prompt_hash, "
             "sample = excluded.sample, request_id = excluded.request_id, extraction = excluded.extraction, "
             "detail = excluded.detail",
             fmt::format("record the origin of candidate {} in run {}", o.candidate_id, o.run_id))
      .bind_all(o.candidate_id, o.run_id, id_or_null(o.exchange_id), o.adapter, o.model, o.prompt_hash,
                o.sample, o.request_id, o.extraction, o.detail, core::now_iso8601())
      .run();
}

std::optional<candidate_origin_record> store::get_candidate_origin(std::int64_t candidate_id,
                                                                   std::int64_t run_id) const {
  auto get = m_impl->m_db.prepare(
      "SELECT exchange_id, adapter, model, prompt_hash, sample, request_id, extraction, detail "
      "FROM candidate_origins WHERE candidate_id = ? AND run_id = ?",
      fmt::format("read the origin of candidate {} in run {}", candidate_id, run_id));
  get.bind_all(candidate_id, run_id);
  if (!get.step()) return std::nullopt;
  return candidate_origin_record{candidate_id,        run_id,
                                 get.column_int64(0), get.column_text(1),
                                 get.column_text(2),  get.column_text(3),
                                 get.column_int(4),   get.column_text(5),
                                 get.column_text(6),  get.column_text(7)};
}

void store::upsert_llm_generation(const llm_generation_record& g) {
  m_impl->m_db
      .prepare(
          "INSERT INTO llm_generations (run_id, adapter, model, replayed_from, settings_json, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET adapter = excluded.adapter, "
          "model = excluded.model, replayed_from = excluded.replayed_from, "
          "settings_json = excluded.settings_json",
          fmt::format("record the generation settings of run {}", g.run_id))
      .bind_all(g.run_id, g.adapter, g.model, id_or_null(g.replayed_from), g.settings_json,
                core::now_iso8601())
      .run();
}

std::int64_t store::insert_llm_batch(const llm_batch_record& b) {
  connection& db = m_impl->m_db;
  db.prepare("INSERT INTO llm_batches (run_id, provider, batch_id, status, items_json, created_at) "
             "VALUES (?, ?, ?, ?, ?, ?)",
             fmt::format("record batch {} of run {}", b.batch_id, b.run_id))
      .bind_all(b.run_id, b.provider, b.batch_id, b.status, b.items_json, core::now_iso8601())
      .run();
  return db.last_insert_rowid();
}

void store::update_llm_batch(std::int64_t id, const std::string& status, bool finished) {
  m_impl->m_db
      .prepare("UPDATE llm_batches SET status = ?, finished_at = ? WHERE id = ?",
               fmt::format("update batch row {}", id))
      .bind_all(status, finished ? core::now_iso8601() : std::string(), id)
      .run();
}

std::vector<llm_batch_record> store::llm_batches(std::int64_t run_id) const {
  auto rows = m_impl->m_db.prepare("SELECT id, run_id, provider, batch_id, status, items_json, created_at, "
                                   "finished_at FROM llm_batches WHERE run_id = ? ORDER BY id",
                                   fmt::format("read the batches of run {}", run_id));
  rows.bind_all(run_id);
  std::vector<llm_batch_record> out;
  while (rows.step())
    out.push_back({rows.column_int64(0), rows.column_int64(1), rows.column_text(2), rows.column_text(3),
                   rows.column_text(4), rows.column_text(5), rows.column_text(6), rows.column_text(7)});
  return out;
}

std::optional<llm_generation_record> store::get_llm_generation(std::int64_t run_id) const {
  auto get = m_impl->m_db.prepare(
      "SELECT adapter, model, replayed_from, settings_json FROM llm_generations WHERE run_id = ?",
      fmt::format("read the generation settings of run {}", run_id));
  get.bind_all(run_id);
  if (!get.step()) return std::nullopt;
  return llm_generation_record{run_id, get.column_text(0), get.column_text(1), get.column_int64(2),
                               get.column_text(3)};
}

std::vector<llm_cost_row> store::llm_costs(const std::string& run_uid) const {
  // Solved counts come from the run's evaluations of candidates whose origin names the model.
  auto rows = m_impl->m_db.prepare(fmt::format(R"sql(
WITH {}, solved AS (
  SELECT o.adapter, o.model, c.problem_id,
         max({}) AS correct,
         max({}) AS strict_pass
  FROM candidate_origins o
  JOIN runs r ON r.id = o.run_id
  JOIN candidates c ON c.id = o.candidate_id
  LEFT JOIN evaluations e ON e.candidate_id = o.candidate_id AND e.run_id = o.run_id AND e.purpose = 'result'
  WHERE r.run_uid = ?1
  GROUP BY o.adapter, o.model, c.problem_id
)
SELECT u.provider, u.model, count(*), sum(u.ok = 0), sum(u.cost_usd IS NULL AND u.ok = 1),
       sum(u.input_tokens), sum(u.cache_read_tokens), sum(u.cache_write_tokens), sum(u.output_tokens),
       coalesce(sum(u.cost_usd), 0), sum(u.total_ms),
       (SELECT count(*) FROM solved s WHERE s.model = u.model),
       (SELECT coalesce(sum(s.correct), 0) FROM solved s WHERE s.model = u.model),
       (SELECT coalesce(sum(s.strict_pass), 0) FROM solved s WHERE s.model = u.model),
       sum(u.run_id <> (SELECT id FROM runs WHERE run_uid = ?1)), sum(u.reasoning_tokens),
       sum(u.purpose LIKE '% (batch)')
FROM used u GROUP BY u.provider, u.model ORDER BY u.provider, u.model
)sql",
                                               used_exchanges, verdict_is_sql("e", kj::verdict::correct),
                                               counted_correct_sql("e")),
                                   fmt::format("sum the LLM costs of run '{}'", run_uid));
  rows.bind_all(run_uid);
  std::vector<llm_cost_row> out;
  while (rows.step())
    out.push_back({.provider = rows.column_text(0),
                   .model = rows.column_text(1),
                   .calls = rows.column_int64(2),
                   .failed_calls = rows.column_int64(3),
                   .unpriced_calls = rows.column_int64(4),
                   .input_tokens = rows.column_int64(5),
                   .cache_read_tokens = rows.column_int64(6),
                   .cache_write_tokens = rows.column_int64(7),
                   .output_tokens = rows.column_int64(8),
                   .reasoning_tokens = rows.column_int64(15),
                   .cost_usd = rows.column_double(9),
                   .latency_ms = rows.column_double(10),
                   .problems = rows.column_int64(11),
                   .solved = rows.column_int64(12),
                   .solved_strict = rows.column_int64(13),
                   .replayed_calls = rows.column_int64(14),
                   .batch_calls = rows.column_int64(16)});
  return out;
}

void add_llm_usage(const connection& db, std::vector<evaluation_row>& rows) {
  // A built-in agent's result: its whole trajectory's usage; a generated candidate: its exchange's.
  auto usage = db.prepare(
      "SELECT 0 AS k, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, cost_usd, "
      "reasoning_tokens FROM agent_trajectories WHERE result_evaluation_id = ?1 "
      "UNION ALL "
      "SELECT 1 AS k, x.input_tokens, x.cache_read_tokens, x.cache_write_tokens, x.output_tokens, "
      "x.cost_usd, "
      "x.reasoning_tokens "
      "FROM evaluations e JOIN candidate_origins o ON o.candidate_id = e.candidate_id AND o.run_id = "
      "e.run_id "
      "JOIN llm_exchanges x ON x.id = o.exchange_id WHERE e.id = ?1 ORDER BY k LIMIT 1",
      "read the tokens and cost of generated candidates");
  for (evaluation_row& row : rows) {
    usage.bind_all(row.evaluation_id);
    if (usage.step()) {
      row.input_tokens = usage.column_int64(1);
      row.cache_read_tokens = usage.column_int64(2);
      row.cache_write_tokens = usage.column_int64(3);
      row.output_tokens = usage.column_int64(4);
      row.cost_usd = usage.column_optional_double(5);
      row.reasoning_tokens = usage.column_int64(6);
    }
    usage.reset();
  }
}

} // namespace kj::db
