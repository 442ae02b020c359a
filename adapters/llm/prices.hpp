// The price table: per-model prices of the four token buckets, read from a data file (--prices FILE; the
// default, adapters/prices.json, carries the date its prices were checked). No price lives in code.
#pragma once

#include "adapters/llm/conversation.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::llm {

// A price file that cannot be read or does not have the documented shape; the message names file and field.
class price_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// [USD per million tokens] of each bucket.
struct price {
  double input = 0, cache_read = 0, cache_write = 0, output = 0;
};

struct price_entry {
  std::vector<std::string> patterns; // shell globs over the model name ("claude-opus-4-5*")
  std::string provider;              // "" matches any adapter
  price base;
  // Long-context pricing: a request whose prompt (input + cache read + cache write) exceeds the threshold
  // pays `long_price` on all of its tokens.
  std::optional<std::int64_t> long_threshold;
  price long_price;
  std::string source;  // where the numbers come from
  std::string checked; // when they were last checked against it (YYYY-MM-DD; the file's date if not given)
};

// The rows of a price table checked more than `max_age_days` before `today` (YYYY-MM-DD).
struct stale_price {
  const price_entry* entry = nullptr;
  int age_days = 0;
};

class price_table {
public:
  // Throws price_error naming the file and the field when it is unreadable or malformed.
  static price_table load(const std::filesystem::path& path);
  // $KJ_PRICES when set, else the source tree's adapters/prices.json.
  static std::filesystem::path default_path();

  // The first entry (in file order) whose provider and one of whose patterns match; null when none.
  const price_entry* find(const std::string& provider, const std::string& model) const;
  // [USD] of one call; none when the model has no price.
  std::optional<double> cost(const std::string& provider, const std::string& model,
                             const usage& tokens) const;

  const std::string& date() const { return m_date; } // when the prices were checked (YYYY-MM-DD)
  // The batch tier's share of the standard price (`batch_price_factor`; 1 when the file gives none).
  double batch_factor() const { return m_batch_factor; }
  // Rows checked more than `max_age_days` days before `today` ("" = the system's date, UTC).
  std::vector<stale_price> stale(int max_age_days = 90, const std::string& today = "") const;
  const std::filesystem::path& path() const { return m_path; }
  const std::vector<price_entry>& entries() const { return m_entries; }

private:
  std::filesystem::path m_path;
  std::string m_date;
  double m_batch_factor = 1.0;
  std::vector<price_entry> m_entries;
};

} // namespace kj::llm
