// Implements what `kj agent`'s front door resolves: the prices, the checked model, the skill's text, the
// run's config and the trajectories' settings.
#include "agent/inputs.hpp"

#include "adapters/llm/provider.hpp"
#include "agent/prompt.hpp"
#include "core/enum_names.hpp"
#include "core/precision.hpp"
#include "engine/exec/process.hpp"
#include "planning/orchestrator/run_config.hpp"

#include <chrono>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::agent {

std::string read_text(const fs::path& file, const char* what) {
  std::ifstream stream(file, std::ios::binary);
  if (!stream) throw kb::source_error(fmt::format("cannot read the {} {}", what, file.string()));
  std::stringstream text;
  text << stream.rdbuf();
  return text.str();
}

llm::price_table load_prices(const agent_options& o) {
  try {
    const auto& p = o.generation.prices_path;
    return llm::price_table::load(p.empty() ? llm::price_table::default_path() : p);
  } catch (const llm::price_error& e) {
    throw kb::source_error(e.what());
  }
}

namespace {

void check_adapter(const agent_options& o, const llm::price_table& prices) {
  const auto& g = o.generation;
  if (!llm::provider_named(g.adapter))
    throw kb::source_error(
        fmt::format("kj agent needs --adapter {} (a local vLLM/SGLang server is openai with "
                    "--base-url)",
                    fmt::join(llm::provider_names(), ", ")));
  if (g.model.empty()) throw kb::source_error("kj agent needs --model NAME");
  if ((o.limits.max_usd || o.limits.run_usd) && !prices.find(g.adapter, g.model))
    throw kb::source_error(fmt::format("a dollar budget needs a price for {} model '{}' in {} (add an entry, "
                                       "or drop --max-trajectory-usd/--budget-usd)",
                                       g.adapter, g.model, prices.path().string()));
}

} // namespace

model_settings checked_model(const agent_options& o, const llm::price_table& prices) {
  check_adapter(o, prices);
  const auto& g = o.generation;
  const auto ms = [](double s) { return std::chrono::milliseconds(static_cast<long long>(s * 1000)); };
  try {
    llm::require_api_key(g.adapter, g.base_url); // a missing key is found now, not at the first turn
    model_settings m{g.adapter,
                     g.model,
                     g.base_url,
                     llm::api_key_from_environment(g.adapter),
                     g.temperature,
                     g.max_tokens,
                     g.thinking_budget,
                     g.effort,
                     {},
                     &prices};
    (void)llm::make_provider(g.adapter, g.base_url, m.api_key);
    adapters::preflight(
        g, true); // an impossible request (the agent's carry tools) is refused before any is sent
    m.api = g.openai_api;
    m.client.connect_timeout = ms(g.connect_timeout_s);
    m.client.request_timeout = ms(g.request_timeout_s);
    m.client.stream = llm::parse_stream_mode(g.stream).value_or(llm::stream_mode::automatic);
    m.client.retry.max_retries = g.max_retries;
    m.client.retry.base_delay = ms(g.retry_base_s);
    m.client.retry.max_wait = ms(g.max_retry_wait_s);
    m.client.pacing = {g.rpm, g.tpm};
    m.client.cancelled = exec::interrupt_requested;
    return m;
  } catch (const llm::llm_error& e) {
    throw kb::source_error(e.what());
  }
}

json agent_run_config(const agent_options& o) {
  json config{{"command", "agent"},
              {"producer", "agent"},
              {"sources", orchestrator::source_selection(o.sources)},
              {"adapter", o.generation.adapter},
              {"model", o.generation.model},
              {"attempts", o.attempts},
              {"max_turns", o.limits.max_turns},
              {"baselines", o.baselines},
              {"context_tokens", o.context.window_tokens},
              {"kb_version", o.sources.kb_version}};
  config.update(orchestrator::judging_config(o.judging));
  return config;
}

json trajectory_settings(const agent_options& o) {
  const auto& g = o.generation;
  const auto& l = o.limits;
  const auto maybe = [](const auto& value) { return value ? json(*value) : json(); };
  json settings{{"adapter", g.adapter},
                {"model", g.model},
                {"base_url", llm::strip_url(g.base_url)},
                {"temperature", maybe(g.temperature)},
                {"max_tokens", maybe(g.max_tokens)},
                {"thinking_budget", maybe(g.thinking_budget)},
                {"effort", maybe(g.effort)},
                {"max_turns", l.max_turns},
                {"max_trajectory_tokens", maybe(l.max_tokens)},
                {"max_trajectory_seconds", maybe(l.max_seconds)},
                {"max_trajectory_usd", maybe(l.max_usd)},
                {"budget_usd", maybe(l.run_usd)},
                {"context_tokens", o.context.window_tokens},
                {"provider_context_editing", o.context.provider_editing},
                {"timing", o.judging.timing},
                {"protocol", kj::name_of(o.judging.protocol)},
                {"precision", kj::name_of(o.judging.precision)},
                {"prompt_version", agent_prompt_version}};
  if (!g.openai_api.empty()) settings["openai_api"] = g.openai_api; // only when given
  return settings;
}

} // namespace kj::agent
