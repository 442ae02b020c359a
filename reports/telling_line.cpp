// Implements the telling line of an error and the cut of a comma list.
#include "reports/telling_line.hpp"

#include <fmt/core.h>
#include <regex>
#include <string_view>
#include <vector>

namespace kj::reports {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t eol = std::min(text.find('\n', from), text.size());
    lines.push_back(text.substr(from, eol - from));
    from = eol + 1;
  }
  return lines;
}

bool blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

// kj's own separators: "--- its output ---", "--- end of worker output ---".
bool separator(const std::string& line) {
  return line.starts_with("--- ") && line.ends_with(" ---");
}

// gcc/clang "a.cpp:12:5: error: ...", nvcc "a.cu(12): error: ...", ninja/ld "error: ...".
bool compiler_error(const std::string& line) {
  static const std::regex located(R"((:\d+(:\d+)?|\(\d+\)): (fatal )?error: )");
  return std::regex_search(line, located) || line.starts_with("error: ") || line.starts_with("fatal error: ");
}

// A traceback's exception line (the last unindented line after it); after a header that ends in ':'
// ("ModelNew.forward raised:"), the last unindented line of what it introduces; else the first line.
std::string telling_in(const std::vector<std::string>& lines) {
  bool introduced = false;
  std::string exception, first;
  for (const auto& line : lines) {
    if (blank(line)) continue;
    const bool header = line.starts_with("Traceback (most recent call last)");
    if (first.empty()) {
      first = line;
      introduced = header || line.ends_with(":");
      continue;
    }
    if (header) {
      introduced = true;
      continue;
    }
    if (introduced && line[0] != ' ' && line[0] != '\t') exception = line;
  }
  return exception.empty() ? first : exception;
}

// "/long/cache/path/main.cpp:14:61: error: ..." as "main.cpp:14:61: error: ...": a build folder's path
// would fill the note before the error says anything.
std::string without_folder(const std::string& line) {
  static const std::regex located(R"((:\d+(:\d+)?|\(\d+\)): (fatal )?error: )");
  std::smatch m;
  if (!std::regex_search(line, m, located)) return line;
  const std::string file = line.substr(0, static_cast<std::size_t>(m.position(0)));
  const std::size_t slash = file.rfind('/');
  return slash == std::string::npos ? line : line.substr(slash + 1);
}

} // namespace

std::string telling_line(const std::string& text, std::size_t width) {
  const std::vector<std::string> lines = lines_of(text);
  std::string line;
  for (const auto& l : lines)
    if (compiler_error(l)) {
      line = without_folder(l);
      break;
    }
  if (line.empty()) {
    std::vector<std::string> head, tail;
    bool after = false;
    for (const auto& l : lines) {
      if (!after && separator(l)) {
        after = true;
        continue;
      }
      if (after && separator(l)) continue;
      (after ? tail : head).push_back(l);
    }
    line = telling_in(head);
    if (line.empty()) line = telling_in(tail);
  }
  const std::size_t start = line.find_first_not_of(" \t");
  line = start == std::string::npos ? "" : line.substr(start);
  return line.size() > width ? line.substr(0, width - 3) + "..." : line;
}

std::string cut_list(const std::string& text, std::size_t width) {
  if (width == 0 || text.size() <= width) return text;
  if (text.find(',') == std::string::npos) return text.substr(0, width);
  const std::size_t colon = text.find(": ");
  const std::string prefix = colon == std::string::npos ? "" : text.substr(0, colon + 2);
  std::vector<std::string> items;
  for (std::size_t from = prefix.size(); from <= text.size();) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    items.push_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  for (std::size_t keep = items.size(); keep-- > 0;) {
    std::string out = prefix;
    for (std::size_t i = 0; i < keep; ++i)
      out += (i ? "," : "") + items[i];
    out += fmt::format("{}+{}", keep ? " " : "", items.size() - keep);
    if (out.size() <= width) return out;
  }
  return text.substr(0, width);
}

} // namespace kj::reports
