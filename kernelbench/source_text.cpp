// Implements UTF-8 checking, replacement and PEP 263 decoding of Python source bytes.
#include "kernelbench/source_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fmt/core.h>
#include <regex>

namespace kj::kb {
namespace {

// The length of the well-formed UTF-8 sequence at `i`, or 0 when the byte there does not start one.
std::size_t sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF; // the allowed range of the second byte
  if (b >= 0xC2 && b <= 0xDF)
    n = 2;
  else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    if (b == 0xE0) low = 0xA0;  // no overlongs
    if (b == 0xED) high = 0x9F; // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    if (b == 0xF0) low = 0x90;
    if (b == 0xF4) high = 0x8F; // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

void append_code_point(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

constexpr std::uint32_t replacement = 0xFFFD;

// cp1252's 0x80..0x9F (the rest is latin-1); 0xFFFD where the code page defines nothing.
constexpr std::uint32_t cp1252_high[32] = {0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                           0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD,
                                           0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                           0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178};

// The encoding a PEP 263 declaration on line 1 or 2 names, normalized ("latin-1", "cp1252", ...); "" if none.
std::string declared_encoding(std::string_view bytes) {
  static const std::regex cookie(R"(^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+))");
  std::size_t start = 0;
  for (int line = 0; line < 2 && start < bytes.size(); ++line) {
    const std::size_t end = std::min(bytes.find('\n', start), bytes.size());
    const std::string text(bytes.substr(start, end - start));
    if (std::smatch m; std::regex_search(text, m, cookie)) {
      std::string name = m[1];
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return c == '_' ? '-' : static_cast<char>(std::tolower(c)); });
      if (name == "latin1" || name == "iso-8859-1" || name == "iso8859-1" || name == "l1" ||
          name == "iso-latin-1" || name == "latin")
        return "latin-1";
      if (name == "windows-1252") return "cp1252";
      if (name == "utf8") return "utf-8";
      return name;
    }
    start = end + 1;
  }
  return "";
}

} // namespace

bool is_utf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = sequence_length(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_replaced(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = sequence_length(bytes, i);
    if (n == 0) {
      append_code_point(out, replacement);
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

source_text python_source_text(std::string_view bytes) {
  source_text result;
  std::size_t first = 0, invalid = 0;
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = sequence_length(bytes, i);
    if (n == 0 && invalid++ == 0) first = i;
    i += n == 0 ? 1 : n;
  }
  if (invalid == 0) {
    result.text = std::string(bytes);
    return result;
  }
  result.exact = false;
  result.line = 1 + static_cast<int>(std::count(bytes.begin(), bytes.begin() + first, '\n'));
  const std::size_t newline = first == 0 ? std::string_view::npos : bytes.rfind('\n', first - 1);
  const std::size_t column = newline == std::string_view::npos ? first + 1 : first - newline;
  const std::string where = fmt::format("not UTF-8 (byte 0x{:02X} at line {}, column {})",
                                        static_cast<unsigned char>(bytes[first]), result.line, column);
  const std::string encoding = declared_encoding(bytes);
  if (encoding == "latin-1" || encoding == "cp1252") {
    for (const char c : bytes) {
      const auto b = static_cast<unsigned char>(c);
      append_code_point(result.text,
                        encoding == "cp1252" && b >= 0x80 && b < 0xA0 ? cp1252_high[b - 0x80] : b);
    }
    result.note = fmt::format("{}; decoded as {} per its coding declaration", where, encoding);
    return result;
  }
  result.text = utf8_replaced(bytes);
  result.note = fmt::format(
      "{}; judged with {} byte{} read as U+FFFD{}", where, invalid, invalid == 1 ? "" : "s",
      encoding.empty()      ? ""
      : encoding == "utf-8" ? " (it declares utf-8, which these bytes are not)"
                            : fmt::format(" (its coding declaration '{}' is not one kj decodes)", encoding));
  return result;
}

} // namespace kj::kb
