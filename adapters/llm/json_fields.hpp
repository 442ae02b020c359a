// Small readers for provider JSON: absent or null fields read as empty, a wrong type is a malformed response.
#pragma once

#include "adapters/llm/provider.hpp"

#include <cstdint>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <string>

namespace kj::llm::fields {

inline const nlohmann::json* find(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

inline std::string text(const nlohmann::json& object, const char* key) {
  const nlohmann::json* value = find(object, key);
  if (!value) return "";
  if (!value->is_string()) throw malformed_response(fmt::format("field '{}' is not a string", key));
  return value->get<std::string>();
}

inline std::int64_t count(const nlohmann::json& object, const char* key) {
  const nlohmann::json* value = find(object, key);
  if (!value) return 0;
  if (!value->is_number_integer() && !value->is_number_unsigned())
    throw malformed_response(fmt::format("field '{}' is not an integer", key));
  return value->get<std::int64_t>();
}

inline const nlohmann::json& array(const nlohmann::json& object, const char* key) {
  const nlohmann::json* value = find(object, key);
  if (!value || !value->is_array())
    throw malformed_response(fmt::format("field '{}' is missing or not an array", key));
  return *value;
}

inline const nlohmann::json& object(const nlohmann::json& object, const char* key) {
  const nlohmann::json* value = find(object, key);
  if (!value || !value->is_object())
    throw malformed_response(fmt::format("field '{}' is missing or not an object", key));
  return *value;
}

} // namespace kj::llm::fields
