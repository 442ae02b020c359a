// The settings a generation sends its requests with, resolved from the options (live) or from the recorded
// run (replay), and stored with the run so that it can be replayed.
#pragma once

#include "adapters/generate/generate.hpp"
#include "db/store.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kj::adapters {

struct generation_settings {
  std::string adapter; // the wire format: anthropic, gemini, openai
  std::string model;
  std::string base_url; // without credentials
  int samples = 1;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::optional<int> thinking_budget;
  std::optional<std::string> effort;
  std::string openai_api; // "" by the model table (stored only when given)
  std::string device;     // the prompt's target: cpu or cuda
  std::string prompt_version;
  std::int64_t replayed_from = 0; // replay: the run whose exchanges answer; 0 when live

  std::string producer() const { return adapter + "/" + model; }
  // Everything that shapes the requests (not replayed_from): stored in llm_generations.settings_json.
  nlohmann::json to_json() const;
  // Throws kb::source_error naming `where` and the field when `j` lacks one.
  static generation_settings from_json(const nlohmann::json& j, const std::string& where);
};

// Live: the options, checked (a known adapter, a model, samples >= 1). Replay: the settings of the run named
// by --from, following a replay of a replay back to the recording. Throws kb::source_error.
generation_settings resolve_settings(const db::store& store, const generation_options& options,
                                     const std::string& device);

// A resumed run must ask the same questions as before; throws kb::source_error when the stored settings of
// `run_id` differ from `settings` (nothing stored yet is fine).
void check_same_settings(const db::store& store, std::int64_t run_id, const generation_settings& settings);

} // namespace kj::adapters
