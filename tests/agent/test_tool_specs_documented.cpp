// The agent's eight tools, as each adapter declares them, checked against the provider's documented request
// schema (tests/fixtures/llm/<provider>/_request_schema.json): Gemini's `parameters` takes only an OpenAPI
// subset without additionalProperties, so the tools' JSON Schemas must travel in parametersJsonSchema.
#include "adapters/llm/provider.hpp"
#include "agent/tools.hpp"
#include "tests/fake_llm/request_schema.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

using namespace kj;
using namespace kj::test;

TEST_CASE("the agent's tool declarations are what each provider documents") {
  for (const char* provider : {"anthropic", "gemini", "openai"}) {
    INFO(provider);
    llm::request r;
    r.model = "test-model";
    r.system = "You write kernels.";
    r.messages.push_back(llm::message::user_text("Begin."));
    r.tools = agent::tool_specs();
    const auto body = llm::make_provider(provider, "http://x", "k")->encode(r).body;
    const auto found = request_violations(fixtures_dir() / "llm", provider, r.model, body);
    for (const auto& v : found)
      UNSCOPED_INFO(v);
    CHECK(found.empty());
  }
}
