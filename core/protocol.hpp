// The compatible verdict's rules a run judges by (REFERENCE §3, §4): KernelBench's (per the problem's
// KernelBench version) or CUDA Agent's released verification. Parsed from its name at the edges (the command
// line, kj.toml), named again only there, in the run's options and in the protocol's recorded name.
#pragma once

#include "core/enum_names.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace kj {

enum class protocol_kind { kernelbench, cuda_agent };

inline constexpr std::array<std::string_view, 2> protocol_kind_names{"kernelbench", "cuda-agent"};

inline std::string name_of(protocol_kind k) {
  return name_in(protocol_kind_names, k);
}

inline std::optional<protocol_kind> parse_protocol_kind(std::string_view name) {
  return parse_in<protocol_kind>(protocol_kind_names, name);
}

} // namespace kj
