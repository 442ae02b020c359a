// Implements id_set parsing and membership.
#include "kernelbench/id_set.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <stdexcept>

namespace kj::kb {
namespace {

int parse_int(const std::string& part, const std::string& whole) {
  int value = 0;
  const auto* end = part.data() + part.size();
  auto [ptr, ec] = std::from_chars(part.data(), end, value);
  if (part.empty())
    throw std::invalid_argument("empty id in '" + whole + "' (expected numbers like 1-10,19)");
  if (ec != std::errc() || ptr != end || value < 0)
    throw std::invalid_argument("'" + part + "' in '" + whole +
                                "' is not a whole number (expected numbers like 1-10,19)");
  return value;
}

} // namespace

id_set id_set::parse(const std::string& text) {
  if (text.starts_with("--")) // `--ids --collect-only`: CLI11 took the next flag for the value
    throw std::invalid_argument("'" + text +
                                "' is an option, not numbers: give them right after the flag (e.g. 1-10,19)");
  id_set result;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(start, comma - start);
    const std::size_t dash = part.find('-');
    if (dash == std::string::npos) {
      const int id = parse_int(part, text);
      result.m_ranges.emplace_back(id, id);
    } else {
      if (dash == 0 || dash + 1 == part.size())
        throw std::invalid_argument("range '" + part + "' in '" + text +
                                    "' needs both ends (e.g. 1-10; ids count from 1)");
      const int lo = parse_int(part.substr(0, dash), text);
      const int hi = parse_int(part.substr(dash + 1), text);
      if (hi < lo)
        throw std::invalid_argument("range '" + part + "' in '" + text +
                                    "' ends before it starts (e.g. 1-10)");
      result.m_ranges.emplace_back(lo, hi);
    }
    start = comma + 1;
  }
  return result;
}

bool id_set::contains(int id) const {
  return std::any_of(m_ranges.begin(), m_ranges.end(),
                     [id](auto r) { return r.first <= id && id <= r.second; });
}

std::vector<int> id_set::values() const {
  std::set<int> ids;
  for (auto [lo, hi] : m_ranges)
    for (int i = lo; i <= hi; ++i)
      ids.insert(i);
  return {ids.begin(), ids.end()};
}

std::string id_set::text() const {
  std::string out;
  for (auto [lo, hi] : m_ranges)
    out += (out.empty() ? "" : ",") +
           (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi));
  return out;
}

} // namespace kj::kb
