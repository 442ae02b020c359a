// Implements the client: one attempt at a time, retries per the policy, every outcome recorded.
#include "adapters/llm/client.hpp"

#include "core/hashing.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>

namespace kj::llm {

using nlohmann::json;
using std::chrono::milliseconds;

struct client::attempt_result {
  http_response response;
  std::optional<reply> ok;
  failure f; // when !ok
};

namespace {

std::string header_request_id(const http_response& response) {
  for (const char* name : {"request-id", "x-request-id", "x-goog-request-id"})
    if (std::string id = response.header(name); !id.empty()) return id;
  return "";
}

// Holds one of the provider's concurrency slots for the lifetime of a call.
class slot_guard {
public:
  explicit slot_guard(std::counting_semaphore<1024>& slots) : m_slots(slots) { m_slots.acquire(); }
  ~slot_guard() { m_slots.release(); }
  slot_guard(const slot_guard&) = delete;
  slot_guard& operator=(const slot_guard&) = delete;

private:
  std::counting_semaphore<1024>& m_slots;
};

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

bool is_long_generation(const request& r) {
  return !r.max_tokens || *r.max_tokens > long_generation_tokens || r.thinking_budget.value_or(0) > 0 ||
         r.effort.has_value();
}

std::optional<stream_mode> parse_stream_mode(const std::string& text) {
  if (text == "auto") return stream_mode::automatic;
  if (text == "always") return stream_mode::always;
  if (text == "never") return stream_mode::never;
  return std::nullopt;
}

client::client(std::unique_ptr<provider> wire, client_options options, exchange_log* log,
               const price_table* prices)
    : m_provider(std::move(wire)), m_options(std::move(options)), m_log(log), m_prices(prices),
      m_slots(std::clamp(m_options.concurrency, 1, 1024)), m_pacer(m_options.pacing),
      m_rng(std::random_device{}()) {}

client::attempt_result client::attempt(const wire_request& wire, const std::string& body, bool streamed) {
  http_request h;
  h.url = wire.url;
  h.headers = wire.headers;
  for (std::string& header : m_provider->auth_headers())
    h.headers.push_back(std::move(header));
  h.body = body;
  h.connect_timeout = m_options.connect_timeout;
  h.total_timeout = m_options.request_timeout;
  h.cancelled = m_options.cancelled;
  std::unique_ptr<stream_assembler> assembler;
  sse_parser parser;
  std::optional<failure> broken; // the stream's own error, or an event kj cannot read
  if (streamed) {
    assembler = m_provider->assembler(wire);
    h.total_timeout = m_options.stream_timeout;
    h.idle_timeout = m_options.request_timeout;
    h.on_stream = [&](std::string_view bytes) {
      try {
        parser.feed(bytes, [&](const sse_event& e) { assembler->take(e); });
        return true;
      } catch (const stream_error& e) {
        broken = failure{e.kind(), m_provider->redact(fmt::format("error in the stream: {}", e.what()))};
      } catch (const std::exception& e) { // malformed_response, or a JSON type error
        broken = failure{
            error_kind::malformed,
            m_provider->redact(fmt::format("a streamed event is not the documented shape: {}", e.what()))};
      }
      return false;
    };
  }
  attempt_result a;
  a.response = http_post(h);
  const http_response& r = a.response;
  a.f.request_id = header_request_id(r);
  if (broken) {
    const std::string id = a.f.request_id;
    a.f = *broken;
    a.f.request_id = id;
    if (r.status >= 200 && r.status < 300) a.f.status = r.status; // answered (and billed) as far as it went
    return a;
  }
  if (!r.transport_error.empty()) {
    a.f.kind = r.aborted ? error_kind::cancelled : r.timed_out ? error_kind::timeout : error_kind::transport;
    a.f.message = m_provider->redact(r.transport_error);
    // Our own limit ran out on a request the server had: it may be generating (and billing) the answer.
    a.f.unanswered_generation = r.timed_out && r.request_sent;
    return a;
  }
  if (r.status < 200 || r.status >= 300) {
    try {
      a.f = m_provider->decode_failure(r);
    } catch (const std::exception& e) { // an error body too odd even for the error decoder
      a.f = {kind_of_status(r.status), m_provider->redact(e.what()), r.status, header_request_id(r), {}};
    }
    return a;
  }
  a.f.status = r.status;
  read_answer(a, r.streamed ? assembler.get() : nullptr);
  return a;
}

// A 2xx answer: the streamed events assembled into the documented body (recorded as the body), or the body.
void client::read_answer(attempt_result& a, stream_assembler* assembler) const {
  json parsed;
  if (assembler) {
    if (!assembler->complete()) {
      a.f.kind = error_kind::transport;
      a.f.message = "the stream ended before its last event";
      return;
    }
    try {
      parsed = assembler->body();
    } catch (const truncated_response& e) {
      a.f.kind = error_kind::truncated;
      a.f.message = m_provider->redact(e.what());
      return;
    } catch (const std::exception& e) {
      a.f.kind = error_kind::malformed;
      a.f.message = m_provider->redact(fmt::format("the stream cannot be assembled: {}", e.what()));
      return;
    }
    a.response.body = parsed.dump();
  } else {
    parsed = json::parse(a.response.body, nullptr, false);
    if (parsed.is_discarded()) {
      a.f.kind = error_kind::malformed;
      a.f.message = fmt::format("the response body is not valid JSON ({} bytes)", a.response.body.size());
      return;
    }
  }
  try {
    a.ok = m_provider->decode(parsed);
  } catch (const truncated_response& e) { // the output limit cut a tool call (Responses: status incomplete)
    a.f.kind = error_kind::truncated;
    a.f.message = m_provider->redact(e.what());
  } catch (const std::exception& e) { // malformed_response, or a JSON type error
    a.f.kind = error_kind::malformed;
    a.f.message = m_provider->redact(fmt::format("the response is not the documented shape: {}", e.what()));
  }
}

reply client::from_recording(const db::llm_exchange_record& recorded) const {
  try {
    reply out = m_provider->decode(json::parse(recorded.response_body));
    out.request_id = recorded.request_id;
    out.cost_usd = recorded.cost_usd;
    out.latency_ms = recorded.latency_ms;
    out.total_ms = recorded.total_ms;
    out.attempts = recorded.attempts;
    out.replayed = true;
    out.exchange_id = recorded.id;
    return out;
  } catch (const std::exception& e) {
    throw llm_error(m_provider->name(), error_kind::malformed,
                    fmt::format("{}: recorded exchange {} cannot be decoded: {}", m_provider->name(),
                                recorded.id, e.what()));
  }
}

void client::sleep_for(milliseconds delay) const {
  const auto until = std::chrono::steady_clock::now() + delay;
  while (std::chrono::steady_clock::now() < until) {
    if (m_options.cancelled && m_options.cancelled())
      throw llm_error(m_provider->name(), error_kind::cancelled, m_provider->name() + ": cancelled");
    std::this_thread::sleep_for(std::min<milliseconds>(milliseconds(50), delay));
  }
}

// The exchange being recorded while a call goes through its attempts.
struct client::exchange_draft {
  db::llm_exchange_record x;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  json failed_attempts = json::array();

  void attempt_done(const http_response& response, int number, const provider& p) {
    x.attempts = number;
    x.latency_ms = response.elapsed_ms;
    x.http_status = response.status ? std::optional<std::int64_t>(response.status) : std::nullopt;
    x.response_body = p.redact(response.body);
  }
  void close(const std::string& request_id) {
    x.request_id = request_id;
    x.total_ms = ms_since(start);
    x.attempts_json = failed_attempts.dump();
    x.finished_at = core::now_iso8601();
  }
};

std::optional<reply> client::from_log(const std::string& hash, const request& r,
                                      const call_context& context) const {
  const std::string name = m_provider->name();
  if (m_log)
    if (const auto recorded = m_log->find(hash, context.seq)) {
      if (recorded->ok) return from_recording(*recorded);
      throw llm_error(name, parse_error_kind(recorded->error_kind).value_or(error_kind::server),
                      recorded->error, recorded->http_status.value_or(0), recorded->request_id,
                      recorded->attempts);
    }
  if (m_options.replay_only)
    throw llm_error(
        name, error_kind::not_recorded,
        fmt::format("{}: the recording has no answer to this request ({}, model {}, request hash {}, "
                    "sample {}): a replay needs the problems, prompt and settings of the recorded run",
                    name, context.purpose, r.model, hash.substr(0, 16), context.seq));
  return std::nullopt;
}

reply client::finish(reply out, const std::string& header_request_id, const std::string& model,
                     exchange_draft& draft, double price_factor) {
  if (!header_request_id.empty()) out.request_id = header_request_id; // the header's id beats the body's
  out.cost_usd = m_prices ? m_prices->cost(m_provider->name(), model, out.tokens) : std::nullopt;
  if (out.cost_usd) *out.cost_usd *= price_factor;
  out.latency_ms = draft.x.latency_ms;
  out.total_ms = ms_since(draft.start);
  out.attempts = draft.x.attempts;
  db::llm_exchange_record& x = draft.x;
  x.ok = true;
  x.stop_reason = out.stop_raw;
  x.input_tokens = out.tokens.input;
  x.cache_read_tokens = out.tokens.cache_read;
  x.cache_write_tokens = out.tokens.cache_write;
  x.output_tokens = out.tokens.output;
  x.reasoning_tokens = out.tokens.reasoning;
  x.cost_usd = out.cost_usd;
  draft.close(out.request_id);
  out.exchange_id = m_log ? m_log->record(x) : 0;
  return out;
}

void client::give_up(exchange_draft& draft, const failure& f, const std::string& what,
                     const std::string& why_not) {
  const int attempts = draft.x.attempts;
  draft.x.ok = false;
  draft.x.error_kind = to_string(f.kind);
  draft.x.error = fmt::format("{}; {} attempt{}{}", what, attempts, attempts == 1 ? "" : "s",
                              why_not.empty() ? "" : ", " + why_not);
  draft.close(f.request_id);
  if (m_log && f.kind != error_kind::cancelled) m_log->record(draft.x); // a cancelled call is asked again
  throw llm_error(m_provider->name(), f.kind, draft.x.error, f.status, f.request_id, attempts);
}

std::optional<client::prepared> client::prepare(const request& r, const call_context& context) const {
  wire_request wire = m_provider->encode(r);
  std::string hash = request_hash(m_provider->name(), r.model, wire.body.dump());
  if (m_log && m_log->find(hash, context.seq)) return std::nullopt;
  return prepared{std::move(hash), std::move(wire)};
}

void client::record_batch_answer(const prepared& p, const request& r, const call_context& context,
                                 const batch_answer& answer, double price_factor) {
  exchange_draft draft;
  draft.x = {.provider = m_provider->name(),
             .model = r.model,
             .endpoint = strip_url(p.wire.url),
             .request_hash = p.hash,
             .seq = context.seq,
             .purpose = context.purpose + " (batch)",
             .request_json = m_provider->redact(p.wire.body.dump())};
  draft.x.started_at = core::now_iso8601();
  draft.x.attempts = 1;
  draft.x.http_status = answer.status ? std::optional<std::int64_t>(answer.status) : std::nullopt;
  draft.x.response_body = m_provider->redact(answer.body.is_null() ? answer.error : answer.body.dump());
  std::optional<reply> decoded;
  std::string error = answer.error;
  if (answer.ok) try {
      decoded = m_provider->decode(answer.body);
    } catch (const std::exception& e) {
      error = fmt::format("the batch answer is not the documented shape: {}", e.what());
    }
  if (!decoded) {
    draft.x.ok = false;
    draft.x.error_kind = to_string(answer.ok ? error_kind::malformed : error_kind::server);
    draft.x.error = m_provider->redact(fmt::format("{}: batch answer: {}", m_provider->name(), error));
    draft.close(answer.request_id);
    if (m_log) m_log->record(draft.x);
    return;
  }
  (void)finish(std::move(*decoded), answer.request_id, r.model, draft, price_factor); // recorded by finish()
}

reply client::complete(const request& r, const call_context& context) {
  const std::string name = m_provider->name();
  wire_request wire = m_provider->encode(r); // refuses what the provider documents as invalid
  // The hash is of the request as answered whole: a streamed and a plain call share one recording.
  const std::string hash = request_hash(name, r.model, wire.body.dump());
  if (auto recorded = from_log(hash, r, context)) return std::move(*recorded);
  const bool streamed = m_options.stream == stream_mode::always ||
                        (m_options.stream == stream_mode::automatic && is_long_generation(r));
  if (streamed) m_provider->to_stream(wire);
  const std::string body = wire.body.dump();

  slot_guard slot(m_slots); // held while waiting to retry too: a rate limit is not made worse
  exchange_draft draft;
  draft.x = {.provider = name,
             .model = r.model,
             .endpoint = strip_url(wire.url),
             .request_hash = hash,
             .seq = context.seq,
             .purpose = context.purpose,
             .request_json = m_provider->redact(body)};
  draft.x.started_at = core::now_iso8601();
  int answered = 0; // 2xx answers that could not be read: each was generated, and billed
  // About 4 bytes a token: the prompt's share of a --tpm budget, until the answer says what it used.
  const auto prompt_estimate = static_cast<std::int64_t>(body.size() / 4);
  for (int number = 1;; ++number) {
    sleep_for(m_pacer.reserve(prompt_estimate)); // --rpm/--tpm, and a limit the provider said is used up
    attempt_result a = attempt(wire, body, streamed);
    m_pacer.answered(a.response,
                     a.ok ? a.ok->tokens.prompt() + a.ok->tokens.output - prompt_estimate
                          : 0); // beyond reserve()
    draft.attempt_done(a.response, number, *m_provider);
    if (a.ok) return finish(std::move(*a.ok), a.f.request_id, r.model, draft);
    std::string why_not;
    std::optional<milliseconds> delay;
    const bool billed = a.f.status >= 200 && a.f.status < 300 && a.f.kind == error_kind::malformed;
    if (billed && ++answered > 1) {
      why_not = "a second unreadable 2xx answer: each is billed, so kj does not ask a third time";
    } else if (a.f.kind != error_kind::cancelled) {
      std::lock_guard<std::mutex> guard(m_rng_lock);
      delay = next_delay(m_options.retry, number, a.f, m_rng, &why_not);
    }
    const std::string where = a.f.status ? fmt::format("HTTP {} ", a.f.status) : std::string();
    const std::string id = a.f.request_id.empty() ? "no request id" : "request id " + a.f.request_id;
    const std::string what = fmt::format("{}: {}{} ({}, {})", name, where, a.f.message, id, draft.x.endpoint);
    if (!delay) give_up(draft, a.f, what, why_not);
    draft.failed_attempts.push_back({{"status", a.f.status},
                                     {"kind", to_string(a.f.kind)},
                                     {"error", a.f.message},
                                     {"request_id", a.f.request_id},
                                     {"wait_ms", delay->count()}});
    if (m_options.on_retry)
      m_options.on_retry(fmt::format("{}; retry {} of {} in {:.1f} s", what, number,
                                     m_options.retry.max_retries, delay->count() / 1000.0));
    sleep_for(*delay);
  }
}

} // namespace kj::llm
