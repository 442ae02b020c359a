// The LLM adapter options shared by `kj run`, `kj generate` and `kj agent` (--adapter, --model, --samples,
// --budget-usd,
// ...).
#pragma once

#include "adapters/generate/generate.hpp"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace kj::cli {

// Who takes the options: kj run (generation optional), kj generate (--adapter required), kj agent (--adapter
// required, live providers only, one answer per turn: no replay, --from, --samples or --concurrency).
enum class generation_use { run, generate, agent };

class generation_flags {
public:
  void add_to(CLI::App& app, generation_use use);
  // The options, checked: generation flags without --adapter, and replay with settings of its own, are
  // usage errors.
  adapters::generation_options resolve() const;

private:
  adapters::generation_options m_options;
  double m_temperature = 0, m_budget = 0;
  int m_max_tokens = 0, m_thinking = 0;
  std::string m_prices, m_effort;
  std::vector<CLI::Option*> m_settings; // options a replay takes from the recording
  std::vector<CLI::Option*> m_live;     // options that only mean something with an adapter
  CLI::Option* m_temperature_option = nullptr;
  CLI::Option* m_budget_option = nullptr;
  CLI::Option* m_max_tokens_option = nullptr;
  CLI::Option* m_thinking_option = nullptr;
  CLI::Option* m_effort_option = nullptr;
  CLI::Option* m_rpm_option = nullptr;
  CLI::Option* m_batch_option = nullptr;
  CLI::Option* m_tpm_option = nullptr;
  double m_rpm = 0, m_tpm = 0;
  CLI::Option* m_from_option = nullptr;
};

// A usage error when a live adapter cannot work at all (no API key for a hosted API, an unknown adapter):
// found before a run is recorded or a request is sent.
void require_credentials(const adapters::generation_options& options);

} // namespace kj::cli
