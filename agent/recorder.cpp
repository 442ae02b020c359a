// Implements the recorder (DB writes under one lock) and the trajectory's exchange log.
#include "agent/recorder.hpp"

#include "core/hashing.hpp"

#include <nlohmann/json.hpp>

namespace kj::agent {

std::int64_t recorder::candidate(std::int64_t problem_id, const std::string& producer, int sample,
                                 const std::string& path, const std::string& source) {
  std::lock_guard hold(m_lock);
  return m_store.upsert_candidate({problem_id, producer, sample, path, source, core::sha256_hex(source)});
}

std::int64_t recorder::evaluation(results::evaluation_result& result, std::int64_t problem_id) {
  result.record.run_id = m_run_id;
  result.record.problem_id = problem_id;
  result.record.stack_id = m_stack_id;
  std::lock_guard hold(m_lock);
  results::db_sink(m_store).evaluation(result);
  return result.evaluation_id;
}

std::int64_t recorder::insert_trajectory(const db::trajectory_record& t) {
  std::lock_guard hold(m_lock);
  return m_store.insert_trajectory(t);
}

void recorder::update_trajectory(const db::trajectory_record& t) {
  std::lock_guard hold(m_lock);
  m_store.update_trajectory(t);
}

std::int64_t recorder::turn(const db::turn_record& turn, const std::vector<db::tool_call_record>& calls) {
  std::lock_guard hold(m_lock);
  return m_store.insert_turn(turn, calls);
}

void recorder::origin(const db::candidate_origin_record& origin) {
  std::lock_guard hold(m_lock);
  m_store.upsert_candidate_origin(origin);
}

double recorder::spent_usd() {
  std::lock_guard hold(m_lock);
  return m_store.llm_spent_usd(m_run_id);
}

bool recorder::finished(std::int64_t problem_id, int attempt) {
  std::lock_guard hold(m_lock);
  return m_store.finished_trajectory(m_run_id, problem_id, attempt).has_value();
}

void trajectory_log::set_turn(std::int64_t trajectory_id, int turn, std::size_t messages) {
  m_trajectory_id = trajectory_id;
  m_turn = turn;
  m_messages = messages;
}

std::optional<db::llm_exchange_record> trajectory_log::find(const std::string&, int) {
  return std::nullopt;
}

std::int64_t trajectory_log::record(db::llm_exchange_record exchange) {
  exchange.run_id = m_recorder.run_id();
  exchange.request_json = nlohmann::json{{"agent_trajectory", m_trajectory_id},
                                         {"turn", m_turn},
                                         {"messages", m_messages},
                                         {"note", "an agent turn: the conversation is in agent_turns and "
                                                  "agent_tool_calls, not repeated here"}}
                              .dump();
  std::lock_guard hold(m_recorder.lock());
  return m_recorder.store().insert_llm_exchange(exchange);
}

} // namespace kj::agent
