// Helpers every layer may use: the hash that names sources, builds and stacks, and the time stamp rows carry.
#pragma once

#include <chrono>
#include <string>

namespace kj::core {

// Lower-case hex SHA-256 of a text (source hashes, stack ids, build keys).
std::string sha256_hex(const std::string& text);
// The current time as ISO-8601 UTC with milliseconds.
std::string now_iso8601();
// The same for a given time.
std::string iso8601_of(std::chrono::system_clock::time_point time);

} // namespace kj::core
