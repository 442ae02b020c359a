// The kind of device a run judges on, once resolved ("auto" is a request, never a device): parsed from its
// name at the edge (the command line's resolution, a job's JSON), named again only for the DB and the screen.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kj {

enum class device_kind { cpu, cuda };

inline std::string to_string(device_kind d) {
  return d == device_kind::cuda ? "cuda" : "cpu";
}

inline std::optional<device_kind> parse_device_kind(std::string_view name) {
  if (name == "cpu") return device_kind::cpu;
  if (name == "cuda") return device_kind::cuda;
  return std::nullopt;
}

} // namespace kj
