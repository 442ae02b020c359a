// Id and level selections such as "1-10,19" (inclusive ranges and single ids).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kj::kb {

class id_set {
public:
  // Throws std::invalid_argument naming the bad part, e.g. "bad id range '10-1' in '10-1,3'".
  static id_set parse(const std::string& text);

  bool empty() const { return m_ranges.empty(); }
  bool contains(int id) const;
  std::vector<int> values() const; // every id, ascending (ranges expanded)
  std::string text() const;        // as written: "1-10,19" ("" when empty)

private:
  std::vector<std::pair<int, int>> m_ranges;
};

} // namespace kj::kb
