// Implements kj generate --batch over the client's prepare/record_batch_answer and the provider's batch API.
#include "adapters/generate/batch_run.hpp"

#include <chrono>
#include <fmt/core.h>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

namespace kj::adapters {
namespace {

using nlohmann::json;

// Polls until the batch ends; false when cancelled first.
bool wait_for(llm::batch_api& api, db::store& store, const db::llm_batch_record& row,
              llm::batch_status& status, const batch_settings& settings) {
  std::string said;
  for (;;) {
    status = api.poll(row.batch_id);
    if (status.status != said) {
      fmt::print(stderr, "kj: batch {}: {}{}\n", row.batch_id, status.status,
                 status.detail.empty() ? "" : " " + status.detail);
      store.update_llm_batch(row.id, status.status, false);
      said = status.status;
    }
    if (status.ended) return true;
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<long long>(settings.poll_s * 1000));
    while (std::chrono::steady_clock::now() < until) {
      if (settings.cancelled && settings.cancelled()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

// Records each answer against the request its custom_id stands for (by recording key: the same requests
// are rebuilt on a resume).
void collect(llm::batch_api& api, db::store& store, const db::llm_batch_record& row,
             const llm::batch_status& status, llm::client& client, const std::vector<batch_request>& requests,
             double price_factor) {
  const json items = json::parse(row.items_json);
  std::map<std::pair<std::string, int>, const batch_request*> by_key;
  std::map<std::pair<std::string, int>, llm::client::prepared> prepared;
  for (const batch_request& b : requests)
    if (auto p = client.prepare(b.request, b.context)) {
      by_key[{p->hash, b.context.seq}] = &b;
      prepared.emplace(std::pair{p->hash, b.context.seq}, std::move(*p));
    }
  int recorded = 0;
  for (const llm::batch_answer& a : api.answers(status)) {
    if (!items.contains(a.custom_id)) continue; // not one of ours
    const json& item = items[a.custom_id];
    const std::pair key{item.at("hash").get<std::string>(), item.at("seq").get<int>()};
    const auto it = by_key.find(key);
    if (it == by_key.end()) continue; // answered already, or not asked by this selection
    client.record_batch_answer(prepared.at(key), it->second->request, it->second->context, a, price_factor);
    ++recorded;
  }
  store.update_llm_batch(row.id, "collected", true);
  fmt::print(stderr, "kj: batch {}: {} answers recorded (batch price: {:g} of the standard)\n", row.batch_id,
             recorded, price_factor);
}

} // namespace

bool run_batch(db::store& store, std::int64_t run_id, llm::client& client,
               const std::vector<batch_request>& requests, double price_factor,
               const batch_settings& settings) {
  const auto api = llm::make_batch_api(client.wire());
  for (const db::llm_batch_record& row : store.llm_batches(run_id)) { // a batch submitted before: poll it
    if (row.status == "collected") continue;
    fmt::print(stderr, "kj: resuming batch {} submitted {}\n", row.batch_id, row.created_at);
    llm::batch_status status;
    if (!wait_for(*api, store, row, status, settings)) return false;
    collect(*api, store, row, status, client, requests, price_factor);
  }
  std::vector<llm::batch_item> items;
  json map = json::object();
  for (const batch_request& b : requests)
    if (auto p = client.prepare(b.request, b.context)) {
      const std::string id = llm::item_id(items.size());
      map[id] = {{"hash", p->hash}, {"seq", b.context.seq}, {"purpose", b.context.purpose}};
      items.push_back({id, std::move(p->wire)});
    }
  if (items.empty()) return true;
  const std::string batch_id = api->submit(items);
  // Recorded before the first poll: from here a killed run finds the batch again.
  db::llm_batch_record row{0, run_id, client.wire().name(), batch_id, "submitted", map.dump()};
  row.id = store.insert_llm_batch(row);
  fmt::print(stderr, "kj: submitted batch {} of {} request{} to {}\n", batch_id, items.size(),
             items.size() == 1 ? "" : "s", client.wire().name());
  llm::batch_status status;
  if (!wait_for(*api, store, row, status, settings)) return false;
  collect(*api, store, row, status, client, requests, price_factor);
  return true;
}

} // namespace kj::adapters
