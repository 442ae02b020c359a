// The provider registry (names, base URLs, key variables), redaction and the shared error-body decoding.
#include "adapters/llm/provider.hpp"

#include <cstdlib>
#include <fmt/core.h>
#include <fmt/ranges.h>

namespace kj::llm {

// Defined by each wire format's file.
std::unique_ptr<provider> make_anthropic(const std::string& base_url, const std::string& api_key);
std::unique_ptr<provider> make_gemini(const std::string& base_url, const std::string& api_key);
std::unique_ptr<provider> make_openai(const std::string& base_url, const std::string& api_key);

namespace {

std::string string_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  if (it == object.end()) return "";
  return it->is_string() ? it->get<std::string>() : (it->is_null() ? "" : it->dump());
}

// The host of a URL ("api.openai.com" of "https://api.openai.com/v1").
std::string host_of(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  return url.substr(start, url.find('/', start) - start);
}

} // namespace

provider::provider(std::string base_url, std::string api_key)
    : m_base_url(std::move(base_url)), m_api_key(std::move(api_key)) {
  while (!m_base_url.empty() && m_base_url.back() == '/')
    m_base_url.pop_back();
}

std::string provider::redact(std::string text) const {
  if (m_api_key.empty()) return text;
  for (std::size_t at = text.find(m_api_key); at != std::string::npos; at = text.find(m_api_key, at))
    text.replace(at, m_api_key.size(), "[redacted]");
  return text;
}

const std::vector<provider_entry>& providers() {
  static const std::vector<provider_entry> table{
      {"anthropic",
       "Messages API, ANTHROPIC_API_KEY",
       "https://api.anthropic.com",
       {"ANTHROPIC_API_KEY"},
       false,
       {"low", "medium", "high", "xhigh", "max"},
       make_anthropic},
      {"gemini",
       "generateContent, GEMINI_API_KEY or GOOGLE_API_KEY",
       "https://generativelanguage.googleapis.com",
       {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
       false,
       {"minimal", "low", "medium", "high"},
       make_gemini},
      {"openai",
       "chat completions of OpenAI or any compatible server such as vLLM/SGLang, OPENAI_API_KEY if it needs "
       "one",
       "https://api.openai.com/v1",
       {"OPENAI_API_KEY"},
       true,
       {"none", "minimal", "low", "medium", "high", "xhigh"},
       make_openai},
  };
  return table;
}

const provider_entry* provider_named(const std::string& name) {
  for (const auto& p : providers())
    if (p.name == name) return &p;
  return nullptr;
}

const std::vector<std::string>& provider_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& p : providers())
      out.push_back(p.name);
    return out;
  }();
  return names;
}

std::string default_base_url(const std::string& name) {
  const provider_entry* p = provider_named(name);
  return p ? p->base_url : "";
}

std::vector<std::string> api_key_variables(const std::string& name) {
  const provider_entry* p = provider_named(name);
  return p ? p->key_variables : std::vector<std::string>{};
}

std::string api_key_from_environment(const std::string& name) {
  for (const std::string& variable : api_key_variables(name))
    if (const char* value = std::getenv(variable.c_str()); value && *value) return value;
  return "";
}

void require_api_key(const std::string& name, const std::string& base_url) {
  const provider_entry* p = provider_named(name);
  const std::string url = base_url.empty() ? default_base_url(name) : base_url;
  const bool own_server = p && p->own_server_keyless && url.find(host_of(p->base_url)) == std::string::npos;
  const std::string key = api_key_from_environment(name);
  // Every recorded body is redacted of the key; a key this short occurs inside ordinary text and code, whose
  // redaction would change what is recorded (and replayed).
  if (!key.empty() && key.size() < min_key_length)
    throw llm_error(
        name, error_kind::config,
        fmt::format("{}: the API key in {} has {} character{}: kj keeps keys out of everything it "
                    "records by redacting them, which a key under {} characters would do inside "
                    "ordinary text and code too; use a longer key (a server of your own, such as "
                    "vLLM's --api-key, takes any)",
                    name, fmt::join(api_key_variables(name), " or "), key.size(), key.size() == 1 ? "" : "s",
                    min_key_length));
  if (own_server || !key.empty() || api_key_variables(name).empty()) return;
  throw llm_error(name, error_kind::config,
                  fmt::format("{}: no API key: set {} in the environment{}", name,
                              fmt::join(api_key_variables(name), " or "),
                              p && p->own_server_keyless
                                  ? " (a compatible server of your own, such as vLLM, is named by "
                                    "--base-url and needs a key only if it asks for one)"
                                  : ""));
}

std::unique_ptr<provider> make_provider(const std::string& name, const std::string& base_url,
                                        const std::string& api_key, bool key_optional) {
  const provider_entry* p = provider_named(name);
  if (!p)
    throw llm_error(
        name, error_kind::config,
        fmt::format("unknown adapter '{}' (expected {})", name, fmt::join(provider_names(), ", ")));
  const std::string url = base_url.empty() ? p->base_url : base_url;
  // An OpenAI-compatible server of one's own (vLLM, SGLang) usually needs no key; the hosted APIs do.
  if (api_key.empty() && !key_optional && !p->own_server_keyless)
    throw llm_error(
        name, error_kind::config,
        fmt::format("{}: no API key: set {} in the environment", name, fmt::join(p->key_variables, " or ")));
  return p->make(url, api_key);
}

failure generic_failure(const provider& p, const http_response& response, nlohmann::json* error_object) {
  failure f;
  f.status = response.status;
  f.kind = kind_of_status(response.status);
  for (const char* header : {"request-id", "x-request-id", "x-goog-request-id"})
    if (f.request_id.empty()) f.request_id = response.header(header);
  f.retry_after = retry_after_from_headers(response);
  // Anthropic's and OpenAI's servers say whether a retry can help; their SDKs obey it over the status.
  if (const std::string should = response.header("x-should-retry"); should == "true" || should == "false")
    f.should_retry = should == "true";

  const nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  nlohmann::json error = nlohmann::json::object();
  std::string message;
  if (body.is_object()) {
    const auto it = body.find("error");
    if (it != body.end() && it->is_object())
      error = *it; // {"error": {...}}: Anthropic, Gemini, OpenAI
    else if (it != body.end() && it->is_string())
      message = it->get<std::string>();
    else if (body.contains("message"))
      error = body; // flat: vLLM, SGLang
    if (f.request_id.empty()) f.request_id = string_field(body, "request_id");
  }
  if (message.empty()) message = string_field(error, "message");
  if (message.empty())
    message = body.is_discarded()
                  ? fmt::format("(a body that is not JSON: '{}')", response.body.substr(0, 200))
                  : "(no message)";
  // Anthropic/OpenAI name the error in `type`, Gemini in `status`, vLLM in `type` with a numeric `code`.
  std::string type = string_field(error, "type");
  if (type.empty()) type = string_field(error, "status");
  f.message = p.redact(type.empty() ? message : type + ": " + message);
  if (!f.retry_after && error.contains("details") && error["details"].is_array())
    for (const auto& detail : error["details"]) // Gemini: google.rpc.RetryInfo
      if (string_field(detail, "@type").ends_with("google.rpc.RetryInfo"))
        f.retry_after = parse_proto_duration(string_field(detail, "retryDelay"));
  if (error_object) *error_object = error;
  return f;
}

std::string strip_url(const std::string& url) {
  std::string out = url.substr(0, url.find_first_of("?#"));
  const std::size_t scheme = out.find("://");
  const std::size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  const std::size_t slash = out.find('/', host);
  const std::size_t at = out.rfind('@', slash == std::string::npos ? out.size() : slash);
  if (at != std::string::npos && at >= host) out.erase(host, at + 1 - host);
  return out;
}

} // namespace kj::llm
