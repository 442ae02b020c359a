// Implements resolving, storing and comparing generation settings.
#include "adapters/generate/settings.hpp"

#include "adapters/generate/one_shot_prompt.hpp"
#include "adapters/llm/provider.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <fmt/ranges.h>

namespace kj::adapters {

using nlohmann::json;

namespace {

template <class T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json();
}

template <class T>
std::optional<T> optional_from(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

} // namespace

json generation_settings::to_json() const {
  json out{{"adapter", adapter},
           {"model", model},
           {"base_url", base_url},
           {"samples", samples},
           {"temperature", optional_json(temperature)},
           {"max_tokens", optional_json(max_tokens)},
           {"thinking_budget", optional_json(thinking_budget)},
           {"device", device},
           {"prompt_version", prompt_version}};
  if (effort) out["effort"] = *effort; // only when set: runs recorded before it existed compare equal
  if (!openai_api.empty()) out["openai_api"] = openai_api;
  return out;
}

generation_settings generation_settings::from_json(const json& j, const std::string& where) {
  generation_settings s;
  try {
    s.adapter = j.at("adapter").get<std::string>();
    s.model = j.at("model").get<std::string>();
    s.base_url = j.value("base_url", "");
    s.samples = j.at("samples").get<int>();
    s.temperature = optional_from<double>(j, "temperature");
    s.max_tokens = optional_from<int>(j, "max_tokens");
    s.thinking_budget = optional_from<int>(j, "thinking_budget");
    s.effort = optional_from<std::string>(j, "effort");
    s.openai_api = j.value("openai_api", "");
    s.device = j.at("device").get<std::string>();
    s.prompt_version = j.at("prompt_version").get<std::string>();
  } catch (const json::exception& e) {
    throw kb::source_error(
        fmt::format("{}: the recorded generation settings are incomplete: {}", where, e.what()));
  }
  return s;
}

generation_settings resolve_settings(const db::store& store, const generation_options& options,
                                     const std::string& device) {
  if (options.adapter == "replay") {
    if (options.replay_from.empty())
      throw kb::source_error("--adapter replay needs --from RUN_ID: the run whose recorded exchanges answer");
    auto run = store.find_run(options.replay_from);
    if (!run)
      throw kb::source_error(
          fmt::format("--from {}: no such run in {}", options.replay_from, store.path().string()));
    auto recorded = store.get_llm_generation(*run);
    if (!recorded)
      throw kb::source_error(
          fmt::format("--from {}: that run generated nothing with an LLM adapter, so there is "
                      "nothing to replay",
                      options.replay_from));
    while (recorded->replayed_from != 0) { // a replay of a replay answers from the original recording
      run = recorded->replayed_from;
      recorded = store.get_llm_generation(*run);
      if (!recorded)
        throw kb::source_error(fmt::format("--from {}: its recording is gone", options.replay_from));
    }
    generation_settings s = generation_settings::from_json(
        json::parse(recorded->settings_json, nullptr, false), "run " + options.replay_from);
    s.replayed_from = *run;
    return s;
  }
  const auto& names = llm::provider_names();
  if (std::find(names.begin(), names.end(), options.adapter) == names.end())
    throw kb::source_error(
        fmt::format("--adapter '{}': expected {} or replay", options.adapter, fmt::join(names, ", ")));
  if (options.model.empty())
    throw kb::source_error(fmt::format("--adapter {} needs --model NAME", options.adapter));
  if (options.samples < 1) throw kb::source_error("--samples: expected at least 1");
  generation_settings s;
  s.adapter = options.adapter;
  s.model = options.model;
  s.base_url =
      llm::strip_url(options.base_url.empty() ? llm::default_base_url(options.adapter) : options.base_url);
  s.samples = options.samples;
  s.temperature = options.temperature;
  s.max_tokens = options.max_tokens;
  s.thinking_budget = options.thinking_budget;
  s.effort = options.effort;
  s.openai_api = options.openai_api;
  s.device = device;
  s.prompt_version = prompt_version;
  return s;
}

void check_same_settings(const db::store& store, std::int64_t run_id, const generation_settings& settings) {
  const auto stored = store.get_llm_generation(run_id);
  if (!stored) return;
  json before = json::parse(stored->settings_json, nullptr, false);
  json now = settings.to_json();
  if (stored->replayed_from != settings.replayed_from || before != now)
    throw kb::source_error(
        fmt::format("this run was generated with other settings ({}{}); resume it with the same "
                    "options, or start a new run (another --run-id)",
                    before.dump(), stored->replayed_from ? ", replayed" : ""));
}

} // namespace kj::adapters
