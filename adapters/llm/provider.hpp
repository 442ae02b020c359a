// A provider's wire format: how a request is encoded, how replies and errors are decoded, and which
// environment variable holds its key. Implementations: anthropic.cpp, gemini.cpp, openai.cpp.
#pragma once

#include "adapters/llm/conversation.hpp"
#include "adapters/llm/errors.hpp"
#include "adapters/llm/http.hpp"
#include "adapters/llm/stream.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::llm {

// What goes on the wire, less the credentials: safe to store, and hashed to find a recorded answer.
struct wire_request {
  std::string url;                  // without credentials or query
  std::vector<std::string> headers; // "Name: value", none of them secret
  nlohmann::json body;
};

// A 2xx response whose body is not what the provider documents.
class malformed_response : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A 2xx answer that stopped at max_tokens inside a tool call (its arguments are cut off): the documented
// reaction is a larger limit or a continuation, never the same request again.
class truncated_response : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class provider {
public:
  provider(std::string base_url, std::string api_key);
  virtual ~provider() = default;

  virtual std::string name() const = 0; // "anthropic", "gemini", "openai"
  // Throws llm_error(config) for a request the provider documents as invalid for this model (a thinking
  // budget where only adaptive thinking exists, thinking with a custom temperature, ...): nothing is sent.
  virtual wire_request encode(const request& r) const = 0;
  // Turns an encoded request into the same call answered as a stream of server-sent events (a flag in the
  // body, or the streaming endpoint). The request hash is taken before, so both share one recording.
  virtual void to_stream(wire_request& wire) const = 0;
  // Reads a streamed answer's events into the body the non-streamed call returns (then given to decode);
  // `wire` is the request it answers (OpenAI's two API families stream differently).
  virtual std::unique_ptr<stream_assembler> assembler(const wire_request& wire) const = 0;
  // Throws malformed_response when the body does not have the documented shape.
  virtual reply decode(const nlohmann::json& body) const = 0;
  // A non-2xx response: kind (spend limits told apart from rate limits), message, requested delay.
  virtual failure decode_failure(const http_response& response) const = 0;
  // The headers that carry the key; empty when there is no key (a local server). Never logged or stored.
  virtual std::vector<std::string> auth_headers() const = 0;

  const std::string& base_url() const { return m_base_url; }
  bool has_key() const { return !m_api_key.empty(); }
  // `text` with every occurrence of the key replaced by "[redacted]": applied to all text that leaves the
  // client (errors, recorded bodies), should a server echo the key back. A key of any length is redacted:
  // a short one may mangle ordinary text, which is better than printing a secret.
  std::string redact(std::string text) const;

protected:
  const std::string& api_key() const { return m_api_key; }

private:
  std::string m_base_url;
  std::string m_api_key;
};

// One provider in the table (provider.cpp): its adapter name, one line for --adapter's help, its documented
// default base URL, the environment variables its key is read from (in order), whether a server of one's own
// (another --base-url) may go without a key, its effort levels, and the function that builds it from its
// wire format's file. A new provider is its wire format's file and a line in the table.
struct provider_entry {
  std::string name;
  std::string help;
  std::string base_url;
  std::vector<std::string> key_variables;
  bool own_server_keyless = false;
  std::vector<std::string> effort_levels;
  std::unique_ptr<provider> (*make)(const std::string& base_url, const std::string& api_key) = nullptr;
};

// Every provider, in the order --adapter's help lists them.
const std::vector<provider_entry>& providers();
// The provider named `name`, or nullptr.
const provider_entry* provider_named(const std::string& name);

// The adapters' names: "anthropic", "gemini", "openai".
const std::vector<std::string>& provider_names();
// The documented default base URL of a provider (overridden by --base-url).
std::string default_base_url(const std::string& name);
// Every environment variable an adapter reads a key from: workers (which run candidate code) start without
// them.
inline constexpr const char* api_key_environment[] = {"ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                                                      "OPENAI_API_KEY"};
// The environment variables a provider's key is read from, in order (GEMINI_API_KEY, then GOOGLE_API_KEY).
std::vector<std::string> api_key_variables(const std::string& name);
// The key from the environment; "" when unset. Keys come from nowhere else.
std::string api_key_from_environment(const std::string& name);

// Throws llm_error (config) when a hosted API (Anthropic, Gemini, OpenAI's own) has no key in the
// environment (an OpenAI-compatible server of one's own, --base-url elsewhere, needs none), and for a key
// shorter than min_key_length, which could not be redacted without changing what is recorded.
inline constexpr std::size_t min_key_length = 8;
void require_api_key(const std::string& name, const std::string& base_url);

// Builds a provider. `base_url` "" means the default. Throws llm_error(config) for an unknown name, and for
// anthropic or gemini without a key unless `key_optional` (replay decodes recordings without one).
std::unique_ptr<provider> make_provider(const std::string& name, const std::string& base_url,
                                        const std::string& api_key, bool key_optional = false);

// Shared by the decoders: the error object of a body in either shape ({"error": {...}} or flat), its
// message, and the delay a header or Gemini's RetryInfo asks for.
failure generic_failure(const provider& p, const http_response& response, nlohmann::json* error_object);

// The URL without user info, query or fragment: what may be stored and printed.
std::string strip_url(const std::string& url);

} // namespace kj::llm
