// Implements the schema subset and loads the providers' request schemas.
#include "tests/fake_llm/request_schema.hpp"

#include "tests/fake_llm/documented_rules.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::test {
namespace {

using nlohmann::json;

class checker {
public:
  explicit checker(const json& root) : m_root(root) {}

  void check(const json& s, const json& v, const std::string& at, std::vector<std::string>& out) const {
    if (!s.is_object()) return; // true / {}: anything
    if (const auto ref = s.find("$ref"); ref != s.end()) return check(resolve(*ref), v, at, out);
    if (s.contains("type") && !type_ok(s["type"], v))
      return out.push_back(fmt::format("{}: expected {}, got {}", at, s["type"].dump(), v.type_name()));
    if (s.contains("const") && v != s["const"])
      out.push_back(fmt::format("{}: expected {}, got {}", at, s["const"].dump(), v.dump()));
    if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end())
      out.push_back(fmt::format("{}: {} is not one of {}", at, v.dump(), s["enum"].dump()));
    if (v.is_object()) check_object(s, v, at, out);
    if (v.is_array()) check_array(s, v, at, out);
    if (v.is_number()) check_number(s, v, at, out);
    if (v.is_string() && s.contains("pattern") &&
        !std::regex_search(v.get<std::string>(), std::regex(s["pattern"].get<std::string>())))
      out.push_back(fmt::format("{}: {} does not match {}", at, v.dump(), s["pattern"].dump()));
    if (s.contains("anyOf")) check_alternatives(s, s["anyOf"], v, at, out, false);
    if (s.contains("oneOf")) check_alternatives(s, s["oneOf"], v, at, out, true);
    if (s.contains("not") && valid(s["not"], v))
      out.push_back(
          fmt::format("{}: {}", at, s["not"].value("x-rule", "matches a shape that is not allowed")));
  }

  bool valid(const json& s, const json& v) const {
    std::vector<std::string> errors;
    check(s, v, "", errors);
    return errors.empty();
  }

private:
  const json& resolve(const json& ref) const {
    const std::string text = ref.get<std::string>();
    const std::string prefix = "#/$defs/";
    if (text.rfind(prefix, 0) != 0 || !m_root.contains("$defs") ||
        !m_root["$defs"].contains(text.substr(prefix.size())))
      throw std::runtime_error("request schema: unresolved $ref " + text);
    return m_root["$defs"][text.substr(prefix.size())];
  }

  static bool one_type_ok(const std::string& type, const json& v) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "integer") return v.is_number_integer() || v.is_number_unsigned();
    if (type == "number") return v.is_number();
    if (type == "boolean") return v.is_boolean();
    if (type == "null") return v.is_null();
    return false;
  }

  static bool type_ok(const json& type, const json& v) {
    if (type.is_string()) return one_type_ok(type.get<std::string>(), v);
    for (const json& t : type)
      if (one_type_ok(t.get<std::string>(), v)) return true;
    return false;
  }

  void check_object(const json& s, const json& v, const std::string& at,
                    std::vector<std::string>& out) const {
    const json properties = s.value("properties", json::object());
    for (const json& name : s.value("required", json::array()))
      if (!v.contains(name.get<std::string>()))
        out.push_back(fmt::format("{}: the required field '{}' is missing", at, name.get<std::string>()));
    for (const auto& [key, value] : v.items()) {
      const std::string where = at + "." + key;
      if (properties.contains(key)) {
        check(properties[key], value, where, out);
      } else if (s.contains("additionalProperties")) {
        const json& extra = s["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>())
          out.push_back(fmt::format("{}: the field '{}' is not in the documented {}", at, key,
                                    s.value("title", "object")));
        else
          check(extra, value, where, out);
      }
    }
  }

  void check_array(const json& s, const json& v, const std::string& at, std::vector<std::string>& out) const {
    if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>())
      out.push_back(
          fmt::format("{}: at least {} items expected, got {}", at, s["minItems"].get<int>(), v.size()));
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<std::size_t>())
      out.push_back(
          fmt::format("{}: at most {} items expected, got {}", at, s["maxItems"].get<int>(), v.size()));
    if (s.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i)
        check(s["items"], v[i], fmt::format("{}[{}]", at, i), out);
  }

  static void check_number(const json& s, const json& v, const std::string& at,
                           std::vector<std::string>& out) {
    if (s.contains("minimum") && v.get<double>() < s["minimum"].get<double>())
      out.push_back(fmt::format("{}: {} is below the minimum {}", at, v.dump(), s["minimum"].dump()));
    if (s.contains("maximum") && v.get<double>() > s["maximum"].get<double>())
      out.push_back(fmt::format("{}: {} is above the maximum {}", at, v.dump(), s["maximum"].dump()));
  }

  // A discriminated union reports the errors of the branch whose `type` (or `role`) constant matches.
  void check_alternatives(const json& s, const json& options, const json& v, const std::string& at,
                          std::vector<std::string>& out, bool exactly_one) const {
    int matches = 0;
    for (const json& option : options)
      matches += valid(option, v) ? 1 : 0;
    if (matches == 1 || (matches > 1 && !exactly_one)) return;
    if (matches > 1) return out.push_back(fmt::format("{}: matches more than one of the allowed shapes", at));
    for (const char* tag : {"type", "role"})
      for (const json& option : options) {
        const json* constant = tag_constant(option, tag);
        if (constant && v.is_object() && v.contains(tag) && v[tag] == *constant)
          return check(option, v, at, out);
      }
    out.push_back(fmt::format("{}: {}", at, s.value("x-rule", "matches none of the allowed shapes")));
  }

  const json* tag_constant(const json& option, const char* tag) const {
    const json& o = option.contains("$ref") ? resolve(option["$ref"]) : option;
    if (!o.contains("properties") || !o["properties"].contains(tag)) return nullptr;
    const json& p = o["properties"][tag];
    return p.contains("const") ? &p["const"] : nullptr;
  }

  const json& m_root;
};

} // namespace

std::vector<std::string> schema_violations(const json& schema, const json& instance) {
  std::vector<std::string> out;
  checker(schema).check(schema, instance, "$", out);
  return out;
}

json request_schema(const std::filesystem::path& fixtures, const std::string& provider) {
  static std::mutex lock;
  static std::map<std::filesystem::path, json> cache;
  const std::filesystem::path file = fixtures / provider / "_request_schema.json";
  std::lock_guard<std::mutex> guard(lock);
  if (const auto it = cache.find(file); it != cache.end()) return it->second;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("fake LLM server: cannot read " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  return cache[file] = json::parse(text.str());
}

std::vector<std::string> request_violations(const std::filesystem::path& fixtures,
                                            const std::string& provider, const std::string& model,
                                            const json& body) {
  std::vector<std::string> out = schema_violations(request_schema(fixtures, provider), body);
  for (std::string& rule : documented_rule_violations(provider, model, body))
    out.push_back(std::move(rule));
  return out;
}

} // namespace kj::test
