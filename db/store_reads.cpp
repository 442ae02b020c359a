// Reads for reports: evaluations with their timings, samples and linked baselines, runs, stacks, problems and
// candidates, as stored. Nothing here derives a number (reports/metrics.cpp does).
#include "db/store.hpp"
#include "db/store_impl.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <string>

namespace kj::db {

using sqlite::connection;
using sqlite::statement;

namespace {

constexpr const char* evaluation_query = R"sql(
SELECT e.id, e.run_id, r.run_uid, r.created_at, COALESCE(json_extract(r.config_json, '$.precision'), ''),
       p.id, p.suite, p.kb_version, p.level, p.number, p.name, p.file_name, p.source_hash,
       c.id, c.path, c.producer, c.sample, c.source_hash, e.stack_id, s.stack_hash, e.device, e.protocol,
       e.verdict, e.error, e.strict_verdict, e.strict_failed, e.degenerate, e.finished_at, e.duration_s,
       (SELECT group_concat(kind, ',') FROM (SELECT DISTINCT kind FROM static_findings f
                                             WHERE f.evaluation_id = e.id ORDER BY kind)),
       e.reason, m.evaluation_id, m.device_peak_bytes, m.judge_device_bytes, m.runner_device_bytes,
       m.judge_rss_bytes, m.runner_rss_bytes, m.budget_bytes,
       (SELECT json_group_object(phase, seconds) FROM evaluation_phases ph WHERE ph.evaluation_id = e.id),
       e.overrides_json
FROM evaluations e
LEFT JOIN evaluation_memory m ON m.evaluation_id = e.id
JOIN runs r ON r.id = e.run_id
JOIN problems p ON p.id = e.problem_id
JOIN candidates c ON c.id = e.candidate_id
JOIN stacks s ON s.id = e.stack_id
WHERE e.purpose = 'result' -- not the built-in agent's in-loop evaluations
  AND (?1 = '' OR r.run_uid = ?1) AND (?2 = '' OR c.producer = ?2)
  AND (?3 = '' OR substr(s.stack_hash, 1, length(?3)) = ?3)
  AND (?4 IS NULL OR p.level = ?4) AND (?5 IS NULL OR p.number = ?5)
  AND (?6 = '' OR p.file_name = ?6 COLLATE NOCASE OR p.name = ?6 COLLATE NOCASE)
ORDER BY p.suite, p.level, p.number, c.producer, c.sample, r.created_at, e.id
)sql";

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

// The run's precision: config_json's; a run that predates it computed at its protocol's
// (kernelbench-main-bf16), else fp32.
kj::precision run_precision(const connection& db, const std::string& stored, const std::string& protocol,
                            std::int64_t evaluation_id) {
  if (!stored.empty()) return precision_column(db, stored, "evaluation " + std::to_string(evaluation_id));
  for (const kj::precision p : {kj::precision::fp16, kj::precision::bf16, kj::precision::tf32})
    if (protocol.ends_with("-" + kj::name_of(p))) return p;
  return kj::precision::fp32;
}

evaluation_row read_evaluation_row(const connection& db, const statement& row) {
  evaluation_row e;
  e.evaluation_id = row.column_int64(0);
  e.run_id = row.column_int64(1);
  e.run_uid = row.column_text(2);
  e.run_created_at = row.column_text(3);
  e.problem_id = row.column_int64(5);
  e.suite = row.column_text(6);
  e.kb_version = row.column_text(7);
  e.level = row.column_int(8);
  e.number = row.column_int(9);
  e.problem_name = row.column_text(10);
  e.problem_file = row.column_text(11);
  e.problem_hash = row.column_text(12);
  e.candidate_id = row.column_int64(13);
  e.candidate_path = row.column_text(14);
  e.producer = row.column_text(15);
  e.sample = row.column_int(16);
  e.candidate_hash = row.column_text(17);
  e.stack_id = row.column_int64(18);
  e.stack_hash = row.column_text(19);
  e.device = row.column_text(20);
  e.protocol = row.column_text(21);
  e.precision = run_precision(db, row.column_text(4), e.protocol, e.evaluation_id);
  // kj wrote every name the DB holds: another is the DB's damage, said as such
  const std::string what = fmt::format("read evaluation {}", e.evaluation_id);
  e.verdict = verdict_column(db, row.column_text(22), what);
  e.error = row.column_text(23);
  e.strict_verdict = strict_verdict_column(db, row.column_text(24), what);
  e.strict_failed = row.column_text(25);
  e.degenerate = row.column_text(26);
  e.finished_at = row.column_text(27);
  e.duration_s = row.column_optional_double(28);
  if (!row.is_null(29)) e.finding_kinds = split_commas(row.column_text(29));
  e.reason = row.column_text(30);
  const auto bytes = [&](int column) {
    return row.is_null(column) ? std::nullopt : std::optional<std::int64_t>(row.column_int64(column));
  };
  if (!row.is_null(31))
    e.memory = memory_record{bytes(32), bytes(33), bytes(34), bytes(35), bytes(36), bytes(37)};
  if (!row.is_null(38) && row.column_text(38) != "{}") e.phases_json = row.column_text(38);
  if (!row.is_null(39) && row.column_text(39) != "{}") e.overrides_json = row.column_text(39);
  return e;
}

std::vector<double> read_samples(statement& samples, std::int64_t id) {
  std::vector<double> out;
  samples.bind_all(id);
  while (samples.step())
    out.push_back(samples.column_double(0));
  samples.reset();
  return out;
}

// The timings and linked baselines of each row, with their samples when asked for.
void read_children(const connection& db, std::vector<evaluation_row>& rows, bool with_samples) {
  auto timings = db.prepare("SELECT id, subject, method, clock, params_json, median_ms, mean_ms, min_ms, "
                            "max_ms, stdev_ms FROM timings WHERE evaluation_id = ? ORDER BY id",
                            "read the timings of evaluations");
  auto timing_samples = db.prepare(
      "SELECT value_ms FROM timing_samples WHERE timing_id = ? ORDER BY sample_index", "read timing samples");
  auto baselines = db.prepare(
      "SELECT b.id, b.mode, b.origin, b.status, b.method, b.clock, b.params_json, b.hardware, b.stack_id, "
      "b.median_ms, b.mean_ms, b.min_ms, b.max_ms, b.stdev_ms, b.precision FROM evaluation_baselines eb "
      "JOIN baselines b ON b.id = eb.baseline_id WHERE eb.evaluation_id = ? ORDER BY b.id",
      "read the baselines linked to evaluations");
  auto baseline_samples =
      db.prepare("SELECT value_ms FROM baseline_samples WHERE baseline_id = ? ORDER BY sample_index",
                 "read baseline samples");
  for (evaluation_row& e : rows) {
    timings.bind_all(e.evaluation_id);
    while (timings.step()) {
      timing_row t{timings.column_int64(0),
                   timings.column_text(1),
                   timings.column_text(2),
                   timings.column_text(3),
                   timings.column_text(4),
                   timings.column_optional_double(5),
                   timings.column_optional_double(6),
                   timings.column_optional_double(7),
                   timings.column_optional_double(8),
                   timings.column_optional_double(9),
                   {}};
      if (with_samples) t.samples_ms = read_samples(timing_samples, t.id);
      e.timings.push_back(std::move(t));
    }
    timings.reset();
    baselines.bind_all(e.evaluation_id);
    while (baselines.step()) {
      linked_baseline_row b;
      b.id = baselines.column_int64(0);
      b.mode = baselines.column_text(1);
      b.origin = baselines.column_text(2);
      b.status = baselines.column_text(3);
      b.method = baselines.column_text(4);
      b.clock = baselines.column_text(5);
      b.params_json = baselines.column_text(6);
      b.hardware = baselines.column_text(7);
      b.stack_id = baselines.column_int64(8); // NULL reads as 0
      b.median_ms = baselines.column_optional_double(9);
      b.mean_ms = baselines.column_optional_double(10);
      b.min_ms = baselines.column_optional_double(11);
      b.max_ms = baselines.column_optional_double(12);
      b.stdev_ms = baselines.column_optional_double(13);
      b.precision = precision_column(db, baselines.column_text(14), "baseline " + std::to_string(b.id));
      if (with_samples) b.samples_ms = read_samples(baseline_samples, b.id);
      e.baselines.push_back(std::move(b));
    }
    baselines.reset();
  }
}

std::optional<std::int64_t> optional_int(const std::optional<int>& value) {
  return value ? std::optional<std::int64_t>(*value) : std::nullopt;
}

} // namespace

std::vector<evaluation_row> store::evaluation_rows(const evaluation_filter& filter) const {
  const connection& db = m_impl->m_db;
  auto rows = db.prepare(evaluation_query, "read evaluations for a report");
  rows.bind_all(filter.run_uid, filter.producer, filter.stack_hash, optional_int(filter.level),
                optional_int(filter.number), filter.problem);
  std::vector<evaluation_row> out;
  while (rows.step())
    out.push_back(read_evaluation_row(db, rows));
  read_children(db, out, filter.samples);
  add_llm_usage(db, out);
  return out;
}

std::vector<run_row> store::runs() const {
  auto rows = m_impl->m_db.prepare(
      "SELECT r.id, r.run_uid, r.created_at, r.status, r.device, r.command_line, r.kj_version, "
      "r.config_json, r.stack_id, COALESCE(s.stack_hash, ''), "
      "(SELECT count(*) FROM evaluations e WHERE e.run_id = r.id AND e.purpose = 'result'), r.producer, "
      "r.detail, (SELECT group_concat(verdict || '=' || n, ',') FROM (SELECT verdict, count(*) AS n FROM "
      "evaluations e WHERE e.run_id = r.id AND e.purpose = 'result' GROUP BY verdict ORDER BY verdict)) "
      "FROM runs r LEFT JOIN stacks s ON s.id = r.stack_id ORDER BY r.created_at, r.id",
      "list runs");
  std::vector<run_row> out;
  while (rows.step()) {
    out.push_back({rows.column_int64(0), rows.column_text(1), rows.column_text(2), rows.column_text(3),
                   rows.column_text(4), rows.column_text(5), rows.column_text(6), rows.column_text(7),
                   rows.column_int64(8), rows.column_text(9), rows.column_int64(10), rows.column_text(11),
                   rows.column_text(12)});
    const std::string tally = rows.column_text(13); // "correct=3,incorrect=1"
    for (std::size_t start = 0; start < tally.size();) {
      const std::size_t end = std::min(tally.find(',', start), tally.size());
      const std::size_t eq = tally.find('=', start);
      if (eq < end)
        out.back().verdicts[tally.substr(start, eq - start)] = std::stoll(tally.substr(eq + 1, end - eq - 1));
      start = end + 1;
    }
  }
  return out;
}

std::optional<stack_record> store::get_stack(std::int64_t stack_id) const {
  auto get = m_impl->m_db.prepare(
      "SELECT stack_hash, python, torch, device_name, fingerprint_json FROM stacks WHERE id = ?",
      fmt::format("read stack {}", stack_id));
  get.bind_all(stack_id);
  if (!get.step()) return std::nullopt;
  return stack_record{get.column_text(0), get.column_text(1), get.column_text(2), get.column_text(3),
                      get.column_text(4)};
}

std::optional<problem_record> store::get_problem(std::int64_t problem_id) const {
  auto get = m_impl->m_db.prepare("SELECT suite, kb_version, level, number, name, file_name, path, source, "
                                  "source_hash, source_commit FROM problems WHERE id = ?",
                                  fmt::format("read problem {}", problem_id));
  get.bind_all(problem_id);
  if (!get.step()) return std::nullopt;
  return problem_record{get.column_text(0), get.column_text(1), get.column_int(2),  get.column_int(3),
                        get.column_text(4), get.column_text(5), get.column_text(6), get.column_text(7),
                        get.column_text(8), get.column_text(9)};
}

std::optional<candidate_record> store::get_candidate(std::int64_t candidate_id) const {
  auto get = m_impl->m_db.prepare("SELECT problem_id, producer, sample, path, source, source_hash, "
                                  "source_bytes FROM candidates WHERE id = ?",
                                  fmt::format("read candidate {}", candidate_id));
  get.bind_all(candidate_id);
  if (!get.step()) return std::nullopt;
  return candidate_record{get.column_int64(0), get.column_text(1), get.column_int(2), get.column_text(3),
                          get.column_text(4),  get.column_text(5), get.column_text(6)};
}

} // namespace kj::db
