// Implements loading, matching and applying the price table.
#include "adapters/llm/prices.hpp"

#include <chrono>
#include <cstdlib>
#include <fmt/core.h>
#include <fnmatch.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace kj::llm {
namespace {

using nlohmann::json;

bool is_iso_date(const json& value) {
  static const std::regex iso_date(R"(\d{4}-\d{2}-\d{2})");
  return value.is_string() && std::regex_match(value.get<std::string>(), iso_date);
}

// Days since 1970-01-01 of a YYYY-MM-DD date.
long days_of(const std::string& date) {
  using namespace std::chrono;
  const year_month_day ymd{year(std::stoi(date.substr(0, 4))), month(std::stoul(date.substr(5, 2))),
                           day(std::stoul(date.substr(8, 2)))};
  return sys_days(ymd).time_since_epoch().count();
}

std::string today_utc() {
  using namespace std::chrono;
  const year_month_day ymd{floor<days>(system_clock::now())};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

struct reader {
  const std::filesystem::path& file;

  [[noreturn]] void fail(const std::string& field, const std::string& expected) const {
    throw price_error(fmt::format("prices file {}: {}: expected {}", file.string(), field, expected));
  }

  double rate(const json& object, const std::string& where, const char* key) const {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number() || it->get<double>() < 0)
      fail(where + "." + key, "a non-negative number (USD per million tokens)");
    return it->get<double>();
  }

  price prices(const json& object, const std::string& where) const {
    return {rate(object, where, "input"), rate(object, where, "cache_read"),
            rate(object, where, "cache_write"), rate(object, where, "output")};
  }

  price_entry entry(const json& object, const std::string& where) const {
    if (!object.is_object()) fail(where, "an object");
    price_entry e;
    const auto match = object.find("match");
    if (match == object.end() || !match->is_array() || match->empty())
      fail(where + ".match", "a list of model globs");
    for (const json& pattern : *match) {
      if (!pattern.is_string() || pattern.get<std::string>().empty())
        fail(where + ".match", "non-empty strings");
      e.patterns.push_back(pattern.get<std::string>());
    }
    if (object.contains("provider") && !object["provider"].is_string()) fail(where + ".provider", "a string");
    e.provider = object.value("provider", "");
    e.base = prices(object, where);
    e.source = object.value("source", "");
    if (object.contains("checked") && !is_iso_date(object["checked"]))
      fail(where + ".checked", "the date this row was checked against its source, as \"YYYY-MM-DD\"");
    e.checked = object.value("checked", "");
    if (const auto tier = object.find("long_context"); tier != object.end()) {
      const std::string at = where + ".long_context";
      if (!tier->is_object()) fail(at, "an object");
      const auto threshold = tier->find("above_prompt_tokens");
      if (threshold == tier->end() || !threshold->is_number_integer() || threshold->get<std::int64_t>() <= 0)
        fail(at + ".above_prompt_tokens", "a positive integer");
      e.long_threshold = threshold->get<std::int64_t>();
      e.long_price = prices(*tier, at);
    }
    return e;
  }
};

} // namespace

price_table price_table::load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw price_error(fmt::format("prices file {}: cannot be read", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  const json doc = json::parse(text.str(), nullptr, false);
  const reader r{path};
  if (doc.is_discarded() || !doc.is_object()) r.fail("the whole file", "a JSON object");
  price_table table;
  table.m_path = path;
  if (!doc.contains("date") || !is_iso_date(doc["date"]))
    r.fail("date", "the date the prices were checked, as \"YYYY-MM-DD\"");
  table.m_date = doc["date"].get<std::string>();
  if (doc.value("unit", "") != "USD per 1M tokens") r.fail("unit", "\"USD per 1M tokens\"");
  if (doc.contains("batch_price_factor")) {
    const json& f = doc["batch_price_factor"];
    if (!f.is_number() || f.get<double>() <= 0 || f.get<double>() > 1)
      r.fail("batch_price_factor", "the batch tier's share of the standard price, a number in (0, 1]");
    table.m_batch_factor = f.get<double>();
  }
  if (!doc.contains("models") || !doc["models"].is_array()) r.fail("models", "a list of price entries");
  for (std::size_t i = 0; i < doc["models"].size(); ++i) {
    table.m_entries.push_back(r.entry(doc["models"][i], fmt::format("models[{}]", i)));
    if (table.m_entries.back().checked.empty()) table.m_entries.back().checked = table.m_date;
  }
  return table;
}

std::filesystem::path price_table::default_path() {
  if (const char* env = std::getenv("KJ_PRICES"); env && *env) return env;
  return std::filesystem::path(KJ_SOURCE_DIR) / "adapters" / "prices.json";
}

std::vector<stale_price> price_table::stale(int max_age_days, const std::string& today) const {
  const long now = days_of(today.empty() ? today_utc() : today);
  std::vector<stale_price> out;
  for (const price_entry& e : m_entries)
    if (const long age = now - days_of(e.checked); age > max_age_days)
      out.push_back({&e, static_cast<int>(age)});
  return out;
}

const price_entry* price_table::find(const std::string& provider, const std::string& model) const {
  for (const price_entry& e : m_entries) {
    if (!e.provider.empty() && e.provider != provider) continue;
    for (const std::string& pattern : e.patterns)
      if (::fnmatch(pattern.c_str(), model.c_str(), 0) == 0) return &e;
  }
  return nullptr;
}

std::optional<double> price_table::cost(const std::string& provider, const std::string& model,
                                        const usage& tokens) const {
  const price_entry* e = find(provider, model);
  if (!e) return std::nullopt;
  const price& p = e->long_threshold && tokens.prompt() > *e->long_threshold ? e->long_price : e->base;
  const double micro =
      static_cast<double>(tokens.input) * p.input + static_cast<double>(tokens.cache_read) * p.cache_read +
      static_cast<double>(tokens.cache_write) * p.cache_write + static_cast<double>(tokens.output) * p.output;
  return micro / 1e6;
}

} // namespace kj::llm
