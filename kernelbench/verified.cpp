// Implements the verified problem set's reader and lookup.
#include "kernelbench/verified.hpp"

#include "kernelbench/problems.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/core.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

using nlohmann::json;
namespace fs = std::filesystem;

namespace kj::kb {
namespace {

const std::vector<std::string> k_statuses{"sound", "weak", "unsound", "error", "unaudited"};

// The value of `key` in `object` as T (an int only from a JSON integer); a source_error naming the file and
// the field when absent or mistyped.
template <typename T>
T field(const json& object, const std::string& key, const fs::path& file, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) throw source_error(fmt::format("{}: {} has no \"{}\"", file.string(), where, key));
  const bool ok = std::is_same_v<T, int> ? it->is_number_integer() && it->get<std::int64_t>() >= 0 &&
                                               it->get<std::int64_t>() <= 1'000'000
                  : std::is_same_v<T, std::string> ? it->is_string()
                                                   : true;
  if (!ok)
    throw source_error(fmt::format("{}: {}.{} is {}, not the expected type", file.string(), where, key,
                                   it->is_number() ? "the number " + it->dump() : it->type_name()));
  return it->get<T>();
}

std::string public_line(const json& r, const fs::path& file, const std::string& where) {
  if (!r.is_object()) throw source_error(fmt::format("{}: {} is not an object", file.string(), where));
  const auto source = field<std::string>(r, "source", file, where);
  const auto claim = field<std::string>(r, "claim", file, where);
  const auto agrees = r.find("agrees");
  if (agrees != r.end() && !agrees->is_null() && !agrees->is_boolean())
    throw source_error(fmt::format("{}: {}.agrees is {}, not true, false or null", file.string(), where,
                                   agrees->type_name()));
  const std::string verdict = agrees == r.end() || agrees->is_null()
                                  ? "not audited at " + field<std::string>(r, "precision", file, where)
                              : agrees->get<bool>() ? "agrees"
                                                    : "disagrees";
  return fmt::format("{} ({}): {}", source, verdict, claim);
}

verified_problem problem_of(const json& p, const fs::path& file, std::size_t index) {
  const std::string where = fmt::format("problems[{}]", index);
  if (!p.is_object()) throw source_error(fmt::format("{}: {} is not an object", file.string(), where));
  verified_problem out{.level = field<int>(p, "level", file, where),
                       .number = field<int>(p, "id", file, where),
                       .name = field<std::string>(p, "name", file, where),
                       .sha256 = field<std::string>(p, "sha256", file, where)};
  const json audits = field<json>(p, "audits", file, where);
  if (!audits.is_object())
    throw source_error(fmt::format("{}: {}.audits is not an object", file.string(), where));
  for (const auto& [precision, audit] : audits.items()) {
    const std::string at = where + ".audits." + precision;
    if (!is_verified_precision(precision))
      throw source_error(
          fmt::format("{}: {}: '{}' is not fp32, tf32, bf16 or fp16", file.string(), at, precision));
    if (!audit.is_object()) throw source_error(fmt::format("{}: {} is not an object", file.string(), at));
    const auto status = field<std::string>(audit, "status", file, at);
    if (std::find(k_statuses.begin(), k_statuses.end(), status) == k_statuses.end())
      throw source_error(
          fmt::format("{}: {}.status is '{}', not one of sound, weak, unsound, error, unaudited",
                      file.string(), at, status));
    out.status[precision] = status;
    std::string why;
    const json lines = audit.value("why", json::array());
    if (!lines.is_array()) throw source_error(fmt::format("{}: {}.why is not an array", file.string(), at));
    for (const auto& line : lines) {
      if (!line.is_string())
        throw source_error(fmt::format("{}: {}.why holds a non-string", file.string(), at));
      why += (why.empty() ? "" : "\n") + line.get<std::string>();
    }
    out.why[precision] = why;
  }
  const json reports = p.value("public", json::array());
  if (!reports.is_array())
    throw source_error(fmt::format("{}: {}.public is not an array", file.string(), where));
  for (std::size_t i = 0; i < reports.size(); ++i)
    out.public_reports.push_back(public_line(reports[i], file, fmt::format("{}.public[{}]", where, i)));
  return out;
}

} // namespace

verified_status verified_set::status_of(int level, int number, const std::string& name,
                                        const std::string& sha256, kj::precision at) const {
  const std::string precision = kj::name_of(at); // the file's key
  for (const auto& p : problems) {
    if (p.level != level || p.number != number || p.name != name) continue;
    if (p.sha256 != sha256) return {"changed", "its source differs from the one audited", ""};
    const auto it = p.status.find(precision); // no fallback: verified at this precision, or not verified
    if (it == p.status.end())
      return {"unaudited", fmt::format("no {} audit of it in the set", precision), ""};
    return {it->second, p.why.at(precision), precision};
  }
  return {"absent", "not in the set", ""};
}

bool is_verified_precision(const std::string& precision) {
  return kj::parse_precision(precision).has_value();
}

verified_set load_verified_set(const fs::path& file) {
  std::error_code ec;
  if (fs::exists(file, ec) && !fs::is_regular_file(file, ec))
    throw source_error(
        fmt::format("{}: not a file (the verified problem set is one JSON file)", file.string()));
  std::ifstream in(file);
  if (!in) throw source_error(fmt::format("{}: cannot read the verified problem set", file.string()));
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw source_error(fmt::format("{}: not JSON ({})", file.string(), e.what()));
  }
  if (!doc.is_object()) throw source_error(fmt::format("{}: not a JSON object", file.string()));
  const int format = field<int>(doc, "format", file, "the file");
  if (format != 1)
    throw source_error(fmt::format("{}: format {} is not one this kj reads (1)", file.string(), format));
  verified_set set{.file = file,
                   .version = field<std::string>(doc, "version", file, "the file"),
                   .kernelbench_commit = doc.value("kernelbench_commit", std::string()),
                   .audited_on = doc.value("audited_on", std::string())};
  const auto problems = field<json>(doc, "problems", file, "the file");
  if (!problems.is_array())
    throw source_error(fmt::format("{}: \"problems\" is not an array", file.string()));
  std::set<std::tuple<int, int, std::string>> seen;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    set.problems.push_back(problem_of(problems[i], file, i));
    const auto& p = set.problems.back();
    if (!seen.insert({p.level, p.number, p.name}).second)
      throw source_error(fmt::format("{}: problems[{}] (L{} {}_{}) is listed twice", file.string(), i,
                                     p.level, p.number, p.name));
  }
  return set;
}

fs::path default_verified_file() {
  if (const char* env = std::getenv("KJ_VERIFIED_SET"); env && *env) return env;
  return fs::path(KJ_SOURCE_DIR) / "kernelbench" / "verified" / "kernelbench-main.json";
}

} // namespace kj::kb
