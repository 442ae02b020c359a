// The providers are one table (adapters/llm/provider.cpp): each builds from its line and names itself, its
// default URL and key variables come from there, a hosted API without a key is refused naming its variables,
// an OpenAI-compatible server of one's own needs none, and an unknown adapter is refused naming the others.
#include "adapters/llm/models.hpp"
#include "adapters/llm/provider.hpp"
#include "tests/support/catch_compat.hpp"

#include <cstdlib>
#include <string>

using namespace kj::llm;

namespace {

std::string config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const llm_error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("every provider in the table builds, names itself and carries its documented settings") {
  REQUIRE(providers().size() == provider_names().size());
  for (const auto& entry : providers()) {
    INFO(entry.name);
    const auto p = make_provider(entry.name, "", "sk-test");
    CHECK(p->name() == entry.name);
    CHECK(default_base_url(entry.name) == entry.base_url);
    CHECK(entry.base_url.starts_with("https://"));
    CHECK(api_key_variables(entry.name) == entry.key_variables);
    CHECK(models::effort_levels(entry.name) == entry.effort_levels);
    CHECK_FALSE(entry.help.empty());
  }
  CHECK(provider_named("replay") == nullptr);
  CHECK(models::effort_levels("replay").empty());
}

TEST_CASE(
    "keys: hosted APIs need one, a compatible server of one's own does not, unknown names are refused") {
  for (const auto& entry : providers())
    for (const auto& variable : entry.key_variables)
      ::unsetenv(variable.c_str());
  const std::string anthropic = config_error([] { require_api_key("anthropic", ""); });
  CHECK(anthropic.find("ANTHROPIC_API_KEY") != std::string::npos);
  const std::string gemini = config_error([] { make_provider("gemini", "", ""); });
  CHECK(gemini.find("GEMINI_API_KEY or GOOGLE_API_KEY") != std::string::npos);
  CHECK(config_error([] { require_api_key("openai", "http://127.0.0.1:8000/v1"); }).empty());
  CHECK(config_error([] { require_api_key("openai", ""); }).find("OPENAI_API_KEY") != std::string::npos);
  CHECK(config_error([] { make_provider("openai", "http://127.0.0.1:8000/v1", ""); }).empty());
  const std::string unknown = config_error([] { make_provider("mistral", "", "k"); });
  CHECK(unknown.find("unknown adapter 'mistral' (expected anthropic, gemini, openai)") != std::string::npos);
}
