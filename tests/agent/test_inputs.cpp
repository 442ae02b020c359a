// kj agent's front door (agent/inputs.hpp): the model is checked before anything runs, and the run's config
// and the trajectories' settings are resolved from the options without the device the session adds.
#include "agent/inputs.hpp"
#include "agent/prompt.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <fstream>
#include <string>

using namespace kj;

namespace {

agent::agent_options scripted_openai() {
  agent::agent_options o;
  o.generation.adapter = "openai";
  o.generation.model = "test-model";
  o.generation.base_url = "http://127.0.0.1:9/v1"; // a server of one's own: no key needed
  o.generation.stream = "never";
  return o;
}

std::string refusal(const agent::agent_options& o) {
  const auto prices = agent::load_prices(o);
  try {
    (void)agent::checked_model(o, prices);
  } catch (const kb::source_error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("kj agent's model is checked at its front door: adapter, model, price for a dollar budget") {
  auto o = scripted_openai();
  const auto prices = agent::load_prices(o);
  const agent::model_settings m = agent::checked_model(o, prices);
  CHECK(m.adapter == "openai");
  CHECK(m.model == "test-model");
  CHECK(m.base_url == "http://127.0.0.1:9/v1");
  CHECK(m.client.stream == llm::stream_mode::never);
  CHECK(m.prices == &prices);

  o.generation.adapter = "claudeish";
  CHECK(refusal(o).find("kj agent needs --adapter anthropic") != std::string::npos);
  o = scripted_openai();
  o.generation.model.clear();
  CHECK(refusal(o) == "kj agent needs --model NAME");
  o = scripted_openai();
  o.limits.run_usd = 1.0; // no price for test-model
  CHECK(refusal(o).find("a dollar budget needs a price for openai model 'test-model'") != std::string::npos);
}

TEST_CASE("kj agent's run config and trajectory settings leave the device to the session") {
  auto o = scripted_openai();
  o.attempts = 3;
  const auto config = agent::agent_run_config(o);
  CHECK(config.at("command") == "agent");
  CHECK(config.at("attempts") == 3);
  CHECK(config.at("model") == "test-model");
  CHECK_FALSE(config.contains("device"));
  const auto settings = agent::trajectory_settings(o);
  CHECK(settings.at("adapter") == "openai");
  CHECK(settings.at("base_url") == "http://127.0.0.1:9/v1");
  CHECK(settings.at("prompt_version") == agent::agent_prompt_version);
  CHECK(settings.at("temperature").is_null());
  CHECK_FALSE(settings.contains("device"));
  CHECK_FALSE(settings.contains("ncu"));
  CHECK_FALSE(settings.contains("openai_api")); // only when given
}

TEST_CASE("kj agent's skill document is read whole, and an unreadable one is named") {
  std::string what;
  try {
    (void)agent::read_text("/nonexistent/SKILL.md", "skill document");
  } catch (const kb::source_error& e) {
    what = e.what();
  }
  CHECK(what == "cannot read the skill document /nonexistent/SKILL.md");
}

TEST_CASE("kj agent's price table is read at its front door, and a malformed one is bad input naming it") {
  const kj::test::scratch_dir dir;
  const auto file = dir / "prices.json";
  std::ofstream(file) << "{not json";
  auto o = scripted_openai();
  o.generation.prices_path = file;
  std::string what;
  try {
    (void)agent::load_prices(o);
  } catch (const kb::source_error& e) {
    what = e.what();
  }
  CHECK(what.find(file.string()) != std::string::npos);
}
