// Names for kj's enums at the edges (the DB, a job's JSON, the command line): each enum lists its names in
// the order of its values; these turn a value into its name and a name back into a value.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kj {

template <class E, std::size_t N>
std::string name_in(const std::array<std::string_view, N>& names, E value) {
  return std::string(names[static_cast<std::size_t>(value)]);
}

// nullopt for a name the table does not hold
template <class E, std::size_t N>
std::optional<E> parse_in(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

} // namespace kj
