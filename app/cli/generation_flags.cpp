// Implements the LLM adapter options and their checks.
#include "app/cli/generation_flags.hpp"

#include "adapters/llm/provider.hpp"
#include "app/cli/common.hpp"

#include <fmt/core.h>

namespace kj::cli {

void generation_flags::add_to(CLI::App& app, generation_use use) {
  adapters::generation_options& o = m_options;
  const bool agent = use == generation_use::agent;
  std::string providers;
  std::vector<std::string> names;
  for (const auto& p : llm::providers()) {
    providers += fmt::format("{}{} ({})", providers.empty() ? "" : ", ", p.name, p.help);
    names.push_back(p.name);
  }
  if (!agent) names.push_back("replay");
  auto* adapter = app.add_option("--adapter", o.adapter,
                                 agent ? "the agent's model provider: " + providers
                                       : "generate candidates with an LLM: " + providers +
                                             ", or replay (the recorded exchanges of --from RUN_ID, offline)")
                      ->check(CLI::IsMember(names));
  if (use != generation_use::run) adapter->required();
  m_settings = {
      app.add_option("--model", o.model,
                     "the model to ask, e.g. claude-opus-4-5, gemini-3-pro-preview, or the name "
                     "a vLLM server serves"),
      app.add_option(
          "--base-url", o.base_url,
          "the provider's URL (default: its public API); for vLLM/SGLang e.g. http://localhost:8000/v1"),
      m_temperature_option = app.add_option("--temperature", m_temperature,
                                            "sampling temperature (default: the "
                                            "model's own; not sent)")
                                 ->check(CLI::Range(0.0, 2.0)),
      m_max_tokens_option =
          app.add_option("--max-tokens", m_max_tokens,
                         "output token limit per answer (default: the model's default_max_tokens in "
                         "adapters/models.json, else the provider's; Anthropic 16384)")
              ->check(CLI::Range(1, 10'000'000)),
      m_thinking_option =
          app.add_option("--thinking-tokens", m_thinking,
                         "extended thinking budget in tokens (Anthropic, Gemini; default: the model's)")
              ->check(CLI::Range(0, 10'000'000)),
      m_effort_option = app.add_option(
          "--effort", m_effort,
          "how hard the model thinks, as a level: Anthropic low|medium|high|xhigh|max (adaptive thinking, "
          "Claude 4.6 and later), Gemini 3 minimal|low|medium|high (thinkingLevel), OpenAI "
          "none|minimal|low|medium|high|xhigh (reasoning.effort); the levels each model takes are in "
          "adapters/models.json; default: the model's"),
      app.add_option(
             "--openai-api", o.openai_api,
             "OpenAI's API: responses (the Responses API) or chat (chat completions, also vLLM/SGLang); "
             "default: the model's row in adapters/models.json (Responses for o-series and gpt-5 on)")
          ->check(CLI::IsMember({"responses", "chat"})),
  };
  m_live = {
      m_budget_option =
          app.add_option(
                 "--budget-usd", m_budget,
                 agent ? "stop once the run's calls have cost this much (each trajectory stops before "
                         "its next call; what it wrote is still re-measured)"
                       : "stop asking once the run's calls have cost this much (calls in flight finish; "
                         "what was generated is judged)")
              ->check(CLI::NonNegativeNumber),
      app.add_option("--prices", m_prices, "price table (default: adapters/prices.json, or $KJ_PRICES)"),
      app.add_option("--connect-timeout", o.connect_timeout_s, "seconds to wait for a connection")
          ->check(seconds())
          ->capture_default_str(),
      app.add_option("--stream", o.stream,
                     "answers as server-sent events: auto (long generations: no or a large --max-tokens, or "
                     "thinking), always or never")
          ->check(CLI::IsMember({"auto", "always", "never"}))
          ->capture_default_str(),
      app.add_option("--request-timeout", o.request_timeout_s,
                     "seconds one attempt may take, the answer included (a streamed answer: the longest "
                     "silence)")
          ->check(seconds())
          ->capture_default_str(),
      app.add_option("--max-retries", o.max_retries,
                     "retries of a call on 408/409/429/5xx/529, timeouts and broken responses")
          ->check(CLI::Range(0, 100))
          ->capture_default_str(),
      app.add_option(
             "--retry-base", o.retry_base_s,
             "seconds of the first backoff when the server names no delay (doubles each retry, with jitter)")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str(),
      m_rpm_option = app.add_option("--rpm", m_rpm,
                                    "requests per minute to the provider at most (pacing; the provider's "
                                    "rate-limit headers are obeyed whether given or not)")
                         ->check(CLI::PositiveNumber),
      m_tpm_option = app.add_option("--tpm", m_tpm,
                                    "tokens per minute (prompt and output) to the provider at most (pacing)")
                         ->check(CLI::PositiveNumber),
      app.add_option(
             "--max-retry-wait", o.max_retry_wait_s,
             "the longest delay a server may ask for (retry-after, RetryInfo) before kj gives up instead")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str(),
  };
  if (agent) return; // every turn of a trajectory is live, and one answer is one turn
  m_settings.push_back(
      app.add_option("--samples", o.samples, "answers asked for per problem (each is a candidate)")
          ->check(CLI::Range(1, 1000))
          ->capture_default_str());
  m_live.push_back(app.add_option("--concurrency", o.concurrency, "calls in flight at once to the provider")
                       ->check(CLI::Range(1, 256))
                       ->capture_default_str());
  m_batch_option =
      app.add_flag("--batch", o.batch,
                   "send the samples as one provider batch at the batch price (Anthropic Message "
                   "Batches, OpenAI Batch API, Gemini batch mode; answers within 24 h): kj polls it, "
                   "and a killed run polls the same batch again when resumed with its --run-id");
  m_live.push_back(m_batch_option);
  m_live.push_back(app.add_option("--batch-poll", o.batch_poll_s, "seconds between polls of a --batch")
                       ->check(CLI::PositiveNumber)
                       ->capture_default_str());
  m_from_option =
      app.add_option("--from", o.replay_from, "with --adapter replay: the run whose recording answers");
}

adapters::generation_options generation_flags::resolve() const {
  adapters::generation_options o = m_options;
  const auto given = [](const CLI::Option* option) { return option && option->count() > 0; };
  if (o.adapter.empty()) {
    for (const auto* list : {&m_settings, &m_live})
      for (const CLI::Option* option : *list)
        if (given(option)) throw usage_error(fmt::format("{} needs --adapter", option->get_name()));
    if (given(m_from_option)) throw usage_error("--from needs --adapter replay");
    return o;
  }
  if (o.adapter == "replay") {
    for (const CLI::Option* option : m_settings)
      if (given(option))
        throw usage_error(fmt::format(
            "{} cannot be used with --adapter replay: the recorded run's settings are", option->get_name()));
  } else if (given(m_from_option)) {
    throw usage_error("--from is for --adapter replay");
  }
  if (o.batch && given(m_budget_option))
    throw usage_error(
        "--batch with --budget-usd: a batch is priced when its answers come, after it was submitted "
        "whole, so a budget cannot stop it; drop one of them");
  if (o.batch && o.adapter == "replay")
    throw usage_error("--batch is for a live adapter: a replay answers from its recording");
  if (!o.openai_api.empty() && o.adapter != "openai")
    throw usage_error(fmt::format("--openai-api is for --adapter openai, not {}", o.adapter));
  if (given(m_temperature_option)) o.temperature = m_temperature;
  if (given(m_max_tokens_option)) o.max_tokens = m_max_tokens;
  if (given(m_thinking_option)) o.thinking_budget = m_thinking;
  if (given(m_effort_option)) o.effort = m_effort;
  if (given(m_budget_option)) o.budget_usd = m_budget;
  if (given(m_rpm_option)) o.rpm = m_rpm;
  if (given(m_tpm_option)) o.tpm = m_tpm;
  o.prices_path = m_prices;
  return o;
}

void require_credentials(const adapters::generation_options& o) {
  if (o.adapter.empty() || o.adapter == "replay") return;
  try { // a missing key or an unknown adapter is found now: before a run is recorded or a call is made
    llm::require_api_key(o.adapter, o.base_url);
    (void)llm::make_provider(o.adapter, o.base_url, llm::api_key_from_environment(o.adapter));
    adapters::preflight(o); // an impossible request is refused once, before any is sent
  } catch (const llm::llm_error& e) {
    throw usage_error(e.what());
  }
}

} // namespace kj::cli
