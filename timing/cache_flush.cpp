// Implements the host last-level-cache flush and the detection of the cache's size.
#include "timing/cache_flush.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <unistd.h>

namespace kj::timing {

namespace {

// Parses sysfs sizes such as "32768K", "2M" or "1024".
std::size_t parse_cache_size(const std::string& text) {
  std::size_t pos = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &pos);
  } catch (const std::exception&) {
    return 0;
  }
  const char unit = pos < text.size() ? text[pos] : '\0';
  if (unit == 'K' || unit == 'k') value <<= 10;
  if (unit == 'M' || unit == 'm') value <<= 20;
  if (unit == 'G' || unit == 'g') value <<= 30;
  return static_cast<std::size_t>(value);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::size_t llc_bytes_from_sysfs() {
  int best_level = 0;
  std::size_t best_size = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level_text = read_first_line(dir + "level");
    if (level_text.empty()) continue; // the indices may have gaps
    if (read_first_line(dir + "type") == "Instruction") continue;
    const int level = std::atoi(level_text.c_str());
    const std::size_t size = parse_cache_size(read_first_line(dir + "size"));
    if (size > 0 && (level > best_level || (level == best_level && size > best_size))) {
      best_level = level;
      best_size = size;
    }
  }
  return best_size;
}

} // namespace

std::size_t detect_llc_bytes() {
  if (const std::size_t from_sysfs = llc_bytes_from_sysfs(); from_sysfs > 0) return from_sysfs;
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (const long from_sysconf = ::sysconf(_SC_LEVEL3_CACHE_SIZE); from_sysconf > 0) {
    return static_cast<std::size_t>(from_sysconf);
  }
#endif
  return 0;
}

host_cache_flusher::host_cache_flusher(std::size_t bytes) {
  if (bytes == 0) {
    const std::size_t llc = detect_llc_bytes();
    bytes = std::min(2 * (llc > 0 ? llc : k_fallback_llc_bytes), k_max_bytes);
  }
  // Value-initialised: every page is faulted in now, outside any timed window.
  m_lines.resize((bytes + sizeof(cache_line) - 1) / sizeof(cache_line));
}

void host_cache_flusher::flush() {
  std::uint64_t sum = 0;
  for (cache_line& line : m_lines) {
    const std::uint64_t value = line.words[0];
    sum += value;
    line.words[0] = value + 1;
  }
  m_sink = sum;
}

} // namespace kj::timing
