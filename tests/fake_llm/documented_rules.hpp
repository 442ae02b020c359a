// The providers' documented request rules that a JSON Schema cannot state: cross-field limits, pairing of
// tool calls and results, and parameters particular models refuse. Each names the page it comes from.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::test {

std::vector<std::string> documented_rule_violations(const std::string& provider, const std::string& model,
                                                    const nlohmann::json& body);

} // namespace kj::test
