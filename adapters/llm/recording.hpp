// Where a client finds recorded answers and records new exchanges: the DB (llm_exchanges), shared by the
// threads of a generation under one lock, since the store is one SQLite connection.
#pragma once

#include "db/store.hpp"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace kj::llm {

class exchange_log {
public:
  virtual ~exchange_log() = default;
  // A recorded exchange to answer this request (hash of its content, seq) with, or none.
  virtual std::optional<db::llm_exchange_record> find(const std::string& request_hash, int seq) = 0;
  // Stores an exchange that went over the wire; returns its id (0 when nothing is stored).
  virtual std::int64_t record(db::llm_exchange_record exchange) = 0;
};

// Live runs read their own successful exchanges (a resumed run pays once) and record into the run; a replay
// reads every exchange of the recorded run, failures included, and records nothing.
class store_exchange_log final : public exchange_log {
public:
  static store_exchange_log live(db::store& store, std::mutex& lock, std::int64_t run_id);
  static store_exchange_log replay(db::store& store, std::mutex& lock, std::int64_t recorded_run_id);

  std::optional<db::llm_exchange_record> find(const std::string& request_hash, int seq) override;
  std::int64_t record(db::llm_exchange_record exchange) override;

private:
  store_exchange_log(db::store& store, std::mutex& lock, std::int64_t lookup_run, std::int64_t record_run,
                     bool ok_only)
      : m_store(store), m_lock(lock), m_lookup_run(lookup_run), m_record_run(record_run), m_ok_only(ok_only) {
  }
  db::store& m_store;
  std::mutex& m_lock;
  std::int64_t m_lookup_run;
  std::int64_t m_record_run; // 0: record nothing
  bool m_ok_only;
};

// The hash that keys a request in the recording: provider, model and the body as sent (keys are headers,
// so never part of it; nor is the base URL, so a recording replays whatever server it came from).
std::string request_hash(const std::string& provider, const std::string& model, const std::string& body);

} // namespace kj::llm
