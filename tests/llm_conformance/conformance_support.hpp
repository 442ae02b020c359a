// Shared by the conformance tests: the documented fixtures, requests shaped like kj's, and the check of a
// request against its provider's documented schema and rules.
#pragma once

#include "adapters/llm/provider.hpp"
#include "tests/fake_llm/request_schema.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::test {

inline std::filesystem::path llm_fixtures() {
  return fixtures_dir() / "llm";
}

inline nlohmann::json fixture(const std::string& provider, const std::string& name) {
  return nlohmann::json::parse(read_file(llm_fixtures() / provider / (name + ".json")));
}

// The agent's tool shapes (agent/tool_specs.cpp): objects that forbid extra fields, one without arguments.
inline std::vector<llm::tool_spec> agent_like_tools() {
  const nlohmann::json no_arguments{{"type", "object"},
                                    {"properties", nlohmann::json::object()},
                                    {"required", nlohmann::json::array()},
                                    {"additionalProperties", false}};
  const nlohmann::json path_argument{
      {"type", "object"},
      {"properties", {{"path", {{"type", "string"}, {"description", "relative to the workspace"}}}}},
      {"required", {"path"}},
      {"additionalProperties", false}};
  return {{"compile", "Build the workspace's extension.", no_arguments},
          {"read_file", "Read a text file of the workspace.", path_argument}};
}

inline llm::request conversation(const std::string& model) {
  llm::request r;
  r.model = model;
  r.system = "You write kernels.";
  r.messages.push_back(llm::message::user_text("Make it faster."));
  return r;
}

// What the provider's documentation says is wrong with the request `p` encodes for `r` (none: conforms).
// OpenAI's Responses API has fixtures of its own (openai-responses/).
inline std::vector<std::string> violations_of(const llm::provider& p, const llm::request& r) {
  const llm::wire_request wire = p.encode(r);
  const std::string family = wire.url.ends_with("/responses") ? "openai-responses" : p.name();
  return request_violations(llm_fixtures(), family, r.model, wire.body);
}

#define REQUIRE_DOCUMENTED(provider, request)                                                                \
  do {                                                                                                       \
    const auto found = ::kj::test::violations_of(provider, request);                                         \
    for (const auto& v : found)                                                                              \
      UNSCOPED_INFO(v);                                                                                      \
    CHECK(found.empty());                                                                                    \
  } while (false)

} // namespace kj::test
