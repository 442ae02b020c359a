// The one entry point of every LLM call: encode, send with timeouts and retries under a per-provider
// concurrency limit, decode, price, and record (or answer from a recording).
#pragma once

#include "adapters/llm/batch.hpp"
#include "adapters/llm/conversation.hpp"
#include "adapters/llm/errors.hpp"
#include "adapters/llm/pacing.hpp"
#include "adapters/llm/prices.hpp"
#include "adapters/llm/provider.hpp"
#include "adapters/llm/recording.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <semaphore>
#include <string>

namespace kj::llm {

// Whether answers come as server-sent events: `automatic` streams long generations (no output limit, one
// above long_generation_tokens, or thinking asked for), as Anthropic asks for large max_tokens.
enum class stream_mode { automatic, always, never };
inline constexpr int long_generation_tokens = 8192;
bool is_long_generation(const request& r);
// "auto", "always", "never"; none for anything else.
std::optional<stream_mode> parse_stream_mode(const std::string& text);

struct client_options {
  std::chrono::milliseconds connect_timeout{10'000};
  // A non-streamed attempt, the whole body included; for a streamed one, the longest silence (no byte).
  std::chrono::milliseconds request_timeout{600'000};
  std::chrono::milliseconds stream_timeout{7'200'000}; // a streamed attempt, the whole answer included
  stream_mode stream = stream_mode::automatic;
  retry_policy retry;
  int concurrency = 4;                              // calls in flight at once to this provider
  pacing_options pacing;                            // --rpm/--tpm; the provider's headers always count
  bool replay_only = false;                         // never send: a request not in the recording is an error
  std::function<bool()> cancelled;                  // polled while sending and waiting (Ctrl-C)
  std::function<void(const std::string&)> on_retry; // told about each retry, for progress output
};

// What a call is, for the recording and for people: `seq` tells identical requests apart (the sample).
struct call_context {
  std::string purpose;
  int seq = 0;
};

class client {
public:
  // `log` and `prices` may be null (nothing recorded; no cost). They must outlive the client.
  client(std::unique_ptr<provider> wire, client_options options, exchange_log* log,
         const price_table* prices);

  // Throws llm_error when no usable reply comes (after the retries the policy allows); the message names the
  // provider, the HTTP status, the provider's error and the request id. Safe to call from several threads.
  reply complete(const request& r, const call_context& context);

  const provider& wire() const { return *m_provider; }

  // A request as complete() would send it, with its recording key; none when the recording already answers
  // it. For a batch: the items to submit.
  struct prepared {
    std::string hash;
    wire_request wire;
  };
  std::optional<prepared> prepare(const request& r, const call_context& context) const;
  // Records a batch's answer to a prepared request as complete() records a live one, its cost at the batch
  // tier (`price_factor` of the standard price); complete() then answers the request from the recording. A
  // failed answer is recorded as failed: a live run asks it again.
  void record_batch_answer(const prepared& p, const request& r, const call_context& context,
                           const batch_answer& answer, double price_factor);

private:
  struct attempt_result;
  struct exchange_draft;
  std::optional<reply> from_log(const std::string& hash, const request& r, const call_context& context) const;
  attempt_result attempt(const wire_request& wire, const std::string& body, bool streamed);
  void read_answer(attempt_result& a, stream_assembler* assembler) const;
  reply finish(reply out, const std::string& header_request_id, const std::string& model,
               exchange_draft& draft, double price_factor = 1.0);
  [[noreturn]] void give_up(exchange_draft& draft, const failure& f, const std::string& what,
                            const std::string& why_not);
  reply from_recording(const db::llm_exchange_record& recorded) const;
  void sleep_for(std::chrono::milliseconds delay) const;

  std::unique_ptr<provider> m_provider;
  client_options m_options;
  exchange_log* m_log;
  const price_table* m_prices;
  std::counting_semaphore<1024> m_slots;
  pacer m_pacer;
  std::mutex m_rng_lock;
  std::mt19937_64 m_rng;
};

} // namespace kj::llm
