// The agent's one way into the DB: every row a trajectory writes (candidates, in-loop evaluations, turns,
// tool calls, the trajectory itself, the exchanges with the provider) goes through here, under one lock,
// since the store is one SQLite connection shared by the trajectories of a run.
#pragma once

#include "adapters/llm/recording.hpp"
#include "db/store.hpp"
#include "planning/results/sinks.hpp"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace kj::agent {

class recorder {
public:
  recorder(db::store& store, std::int64_t run_id, std::int64_t stack_id)
      : m_store(store), m_run_id(run_id), m_stack_id(stack_id) {}

  std::int64_t run_id() const { return m_run_id; }

  std::int64_t candidate(std::int64_t problem_id, const std::string& producer, int sample,
                         const std::string& path, const std::string& source);
  // Writes the evaluation (and its build) under the run; returns its id.
  std::int64_t evaluation(results::evaluation_result& result, std::int64_t problem_id);
  std::int64_t insert_trajectory(const db::trajectory_record& t);
  void update_trajectory(const db::trajectory_record& t);
  std::int64_t turn(const db::turn_record& turn, const std::vector<db::tool_call_record>& calls);
  // The origin of a trajectory's reported candidate, so that `kj costs` counts what the agent solved.
  void origin(const db::candidate_origin_record& origin);
  // The run's spending so far [USD] (its priced exchanges).
  double spent_usd();
  bool finished(std::int64_t problem_id, int attempt);

  db::store& store() { return m_store; }
  std::mutex& lock() { return m_lock; }

private:
  db::store& m_store;
  std::int64_t m_run_id, m_stack_id;
  std::mutex m_lock;
};

// The exchange log of one trajectory: every call is recorded in llm_exchanges (usage, cost, response,
// status), but with a short request_json naming the trajectory and turn instead of the whole conversation,
// which the transcript tables hold already (a 200-turn trajectory would otherwise store it 200 times over).
// Nothing is answered from a recording: every turn is live.
class trajectory_log final : public llm::exchange_log {
public:
  explicit trajectory_log(recorder& rec) : m_recorder(rec) {}
  void set_turn(std::int64_t trajectory_id, int turn, std::size_t messages);
  std::optional<db::llm_exchange_record> find(const std::string& request_hash, int seq) override;
  std::int64_t record(db::llm_exchange_record exchange) override;

private:
  recorder& m_recorder;
  std::int64_t m_trajectory_id = 0;
  int m_turn = 0;
  std::size_t m_messages = 0;
};

} // namespace kj::agent
