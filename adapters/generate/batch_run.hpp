// kj generate --batch: the samples not yet answered go to the provider as one batch (its id recorded before
// polling), polled until it ends, its answers recorded at the batch price; the generation then reads them
// from the recording like a resumed run. A killed or interrupted generation resumes polling the same batch.
#pragma once

#include "adapters/llm/client.hpp"
#include "db/store.hpp"

#include <functional>
#include <vector>

namespace kj::adapters {

struct batch_request {
  llm::request request;
  llm::call_context context;
};

struct batch_settings {
  double poll_s = 30; // between polls
  std::function<bool()> cancelled;
};

// Returns false when interrupted (Ctrl-C) before the batch ended: the batch keeps running at the provider,
// recorded in the run; the next kj generate of the run polls it again. Throws llm_error as the client does.
bool run_batch(db::store& store, std::int64_t run_id, llm::client& client,
               const std::vector<batch_request>& requests, double price_factor,
               const batch_settings& settings);

} // namespace kj::adapters
