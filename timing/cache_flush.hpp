// Evicts the host's last-level cache between CPU-timed samples, so that every sample starts cold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kj::timing {

// The size of the last-level cache of the CPU this process runs on, in bytes, or 0 if unknown.
// Reads /sys/devices/system/cpu/cpu0/cache/index*/ (the highest level that holds data) first, then
// sysconf(_SC_LEVEL3_CACHE_SIZE): under some hypervisors glibc's value is the sum over all of the
// socket's core complexes (320 MiB for a 32 MiB L3 seen here), which would make every flush 10x dearer.
std::size_t detect_llc_bytes();

// Owns a buffer at least twice the last-level cache and touches every cache line of it on flush().
// Each line is read and written (a dirty line must be written back before its slot can be reused, and a
// read alone may leave lines shared with a clean copy). Plain stores are used on purpose: memset switches
// to non-temporal stores for large sizes, and those bypass the cache instead of evicting it.
class host_cache_flusher {
public:
  static constexpr std::size_t k_fallback_llc_bytes = std::size_t{64} << 20;
  static constexpr std::size_t k_max_bytes = std::size_t{512} << 20;

  // bytes == 0: 2x the detected last-level cache (2x 64 MiB if unknown), at most 512 MiB.
  // Otherwise exactly `bytes`, rounded up to whole cache lines. The pages are touched here, not in flush().
  explicit host_cache_flusher(std::size_t bytes = 0);

  void flush();
  std::size_t bytes() const { return m_lines.size() * sizeof(cache_line); }

private:
  struct alignas(64) cache_line {
    std::uint64_t words[8];
  };

  std::vector<cache_line> m_lines;
  volatile std::uint64_t m_sink = 0; // the flush's reads feed it, so they cannot be optimised away
};

} // namespace kj::timing
