// Checks what kj sends against a provider's documented request shape: the JSON Schema subset of
// tests/fixtures/llm/<provider>/_request_schema.json (transcribed from the API reference named in it), plus
// the documented rules a schema cannot say (a thinking budget below max_tokens, parameters a model refuses).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::test {

// Each violation as "<JSON path>: <what is wrong>"; empty when `instance` conforms. Keywords: type, enum,
// const, properties, additionalProperties, required, items, minItems, maxItems, minimum, maximum, pattern,
// anyOf, oneOf, not, $ref (to "#/$defs/..."); `x-rule` names a rule in messages; others are ignored.
std::vector<std::string> schema_violations(const nlohmann::json& schema, const nlohmann::json& instance);

// The provider's request schema document, read from the fixtures folder.
nlohmann::json request_schema(const std::filesystem::path& fixtures, const std::string& provider);

// Schema violations and the documented rules beyond the schema, for a request body sent to `provider`.
std::vector<std::string> request_violations(const std::filesystem::path& fixtures,
                                            const std::string& provider, const std::string& model,
                                            const nlohmann::json& body);

} // namespace kj::test
