// Implements loading and matching the model capability table, and the unknown-model rule.
#include "adapters/llm/capabilities.hpp"

#include "adapters/llm/errors.hpp"
#include "adapters/llm/models.hpp"
#include "adapters/llm/provider.hpp"

#include <cstdlib>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <fnmatch.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace kj::llm {
namespace {

using nlohmann::json;

const std::vector<std::string> k_apis{"messages", "generateContent", "responses", "chat"};

struct reader {
  const std::filesystem::path& file;

  [[noreturn]] void fail(const std::string& field, const std::string& expected) const {
    throw capability_error(fmt::format("models file {}: {}: expected {}", file.string(), field, expected));
  }

  static bool is_date(const json& v) {
    static const std::regex iso(R"(\d{4}-\d{2}-\d{2})");
    return v.is_string() && std::regex_match(v.get<std::string>(), iso);
  }

  std::vector<std::string> strings(const json& o, const std::string& where, const char* key,
                                   bool non_empty) const {
    std::vector<std::string> out;
    const auto it = o.find(key);
    if (it == o.end() && !non_empty) return out;
    if (it == o.end() || !it->is_array() || (non_empty && it->empty()))
      fail(where + "." + key, non_empty ? "a non-empty list of strings" : "a list of strings");
    for (const json& s : *it) {
      if (!s.is_string() || s.get<std::string>().empty()) fail(where + "." + key, "non-empty strings");
      out.push_back(s.get<std::string>());
    }
    return out;
  }

  std::optional<int> tokens(const json& o, const std::string& where, const char* key) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer() || it->get<long long>() <= 0 || it->get<long long>() > 100'000'000)
      fail(where + "." + key, "a positive number of tokens, or null");
    return it->get<int>();
  }

  model_capability row(const json& o, const std::string& where) const {
    if (!o.is_object()) fail(where, "an object");
    model_capability c;
    c.patterns = strings(o, where, "match", true);
    c.provider = o.value("provider", "");
    if (!provider_named(c.provider)) fail(where + ".provider", "anthropic, gemini or openai");
    c.api = o.value("api", "");
    if (std::find(k_apis.begin(), k_apis.end(), c.api) == k_apis.end())
      fail(where + ".api", "messages, generateContent, responses or chat");
    c.max_output = tokens(o, where, "max_output");
    c.default_max_tokens = tokens(o, where, "default_max_tokens");
    if (c.max_output && c.default_max_tokens && *c.default_max_tokens > *c.max_output)
      fail(where + ".default_max_tokens", fmt::format("at most max_output ({})", *c.max_output));
    c.effort = strings(o, where, "effort", false);
    c.effort_default = o.value("effort_default", "");
    if (!c.effort_default.empty() &&
        std::find(c.effort.begin(), c.effort.end(), c.effort_default) == c.effort.end())
      fail(where + ".effort_default", "one of the row's effort levels");
    c.source = o.value("source", "");
    if (c.source.empty()) fail(where + ".source", "the page the row was read from");
    if (!is_date(o.value("checked", json()))) fail(where + ".checked", "a date, \"YYYY-MM-DD\"");
    c.checked = o["checked"].get<std::string>();
    return c;
  }
};

} // namespace

capability_table capability_table::load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw capability_error(fmt::format("models file {}: cannot be read", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  const json doc = json::parse(text.str(), nullptr, false);
  const reader r{path};
  if (doc.is_discarded() || !doc.is_object()) r.fail("the whole file", "a JSON object");
  if (doc.value("format", "") != "kerneljudge-models/1") r.fail("format", "\"kerneljudge-models/1\"");
  if (!reader::is_date(doc.value("date", json()))) r.fail("date", "the date of the table, \"YYYY-MM-DD\"");
  if (!doc.contains("models") || !doc["models"].is_array()) r.fail("models", "a list of model rows");
  capability_table t;
  t.m_date = doc["date"].get<std::string>();
  for (std::size_t i = 0; i < doc["models"].size(); ++i)
    t.m_rows.push_back(r.row(doc["models"][i], fmt::format("models[{}]", i)));
  return t;
}

std::filesystem::path capability_table::default_path() {
  if (const char* env = std::getenv("KJ_MODELS"); env && *env) return env;
  return std::filesystem::path(KJ_SOURCE_DIR) / "adapters" / "models.json";
}

const capability_table& capability_table::standard() {
  static const capability_table table = load(default_path());
  return table;
}

const model_capability* capability_table::find(const std::string& provider, const std::string& model) const {
  for (const model_capability& c : m_rows) {
    if (c.provider != provider) continue;
    for (const std::string& pattern : c.patterns)
      if (::fnmatch(pattern.c_str(), model.c_str(), 0) == 0) return &c;
  }
  return nullptr;
}

model_capability capability_table::of(const std::string& provider, const std::string& model) const {
  if (const model_capability* c = find(provider, model)) return *c;
  model_capability c;
  c.known = false;
  c.provider = provider;
  c.api = provider == "anthropic" ? "messages" : provider == "gemini" ? "generateContent" : "chat";
  if (provider == "openai" && models::openai_reasoning(model)) c.api = "responses";
  c.effort = models::effort_levels(provider);
  c.source = "the unknown-model rule (docs/adapters.md)";
  return c;
}

namespace {

model_capability capability_of(const std::string& provider, const std::string& model) {
  try {
    return capability_table::standard().of(provider, model);
  } catch (const capability_error& e) {
    throw llm_error(provider, error_kind::config, e.what());
  }
}

} // namespace

void require_capable(const std::string& provider, const request& r) {
  const model_capability c = capability_of(provider, r.model);
  const auto refuse = [&](const std::string& why) {
    throw llm_error(
        provider, error_kind::config,
        fmt::format("{}: {} ({}{})", provider, why, c.known ? "the model table: " : "", c.source));
  };
  if (r.effort && c.effort.empty())
    refuse(fmt::format("{} takes no effort level: leave --effort out", r.model));
  if (r.effort && std::find(c.effort.begin(), c.effort.end(), *r.effort) == c.effort.end())
    refuse(fmt::format("effort '{}' is not one of {} for {}", *r.effort, fmt::join(c.effort, ", "), r.model));
  if (r.max_tokens && c.max_output && *r.max_tokens > *c.max_output)
    refuse(fmt::format("--max-tokens {} is above {}'s output limit of {} tokens", *r.max_tokens, r.model,
                       *c.max_output));
}

std::optional<int> max_tokens_for(const std::string& provider, const request& r) {
  if (r.max_tokens) return r.max_tokens;
  return capability_of(provider, r.model).default_max_tokens;
}

std::string openai_api(const request& r) {
  if (!r.api.empty()) return r.api;
  return capability_of("openai", r.model).api;
}

} // namespace kj::llm
