// Implements the DB-backed exchange log and the request hash.
#include "adapters/llm/recording.hpp"

#include "core/hashing.hpp"

namespace kj::llm {

store_exchange_log store_exchange_log::live(db::store& store, std::mutex& lock, std::int64_t run_id) {
  return {store, lock, run_id, run_id, true};
}

store_exchange_log store_exchange_log::replay(db::store& store, std::mutex& lock,
                                              std::int64_t recorded_run_id) {
  return {store, lock, recorded_run_id, 0, false};
}

std::optional<db::llm_exchange_record> store_exchange_log::find(const std::string& request_hash, int seq) {
  std::lock_guard<std::mutex> guard(m_lock);
  return m_store.find_llm_exchange(m_lookup_run, request_hash, seq, m_ok_only);
}

std::int64_t store_exchange_log::record(db::llm_exchange_record exchange) {
  if (m_record_run == 0) return 0;
  exchange.run_id = m_record_run;
  std::lock_guard<std::mutex> guard(m_lock);
  return m_store.insert_llm_exchange(exchange);
}

std::string request_hash(const std::string& provider, const std::string& model, const std::string& body) {
  return core::sha256_hex(provider + "\n" + model + "\n" + body);
}

} // namespace kj::llm
