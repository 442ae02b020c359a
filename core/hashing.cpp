// Implements sha256_hex (OpenSSL's EVP digest) and now_iso8601.
#include "core/hashing.hpp"

#include <chrono>
#include <ctime>
#include <fmt/core.h>
#include <openssl/evp.h>
#include <stdexcept>

namespace kj::core {

std::string sha256_hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: EVP_Digest failed");
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i)
    hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::string now_iso8601() {
  return iso8601_of(std::chrono::system_clock::now());
}

std::string iso8601_of(std::chrono::system_clock::time_point now) {
  using namespace std::chrono;
  const auto seconds = floor<std::chrono::seconds>(now);
  const auto millis = duration_cast<milliseconds>(now - seconds).count();
  const std::time_t t = system_clock::to_time_t(seconds);
  std::tm utc{};
  ::gmtime_r(&t, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
}

} // namespace kj::core
