// Implements the verified problem set's reader and lookup.
#include "kernelbench/verified.hpp"

#include "kernelbench/problems.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/core.h>
#include <fstream>
#include <nlohmann/json.hpp>

using nlohmann::json;
namespace fs = std::filesystem;

namespace kj::kb {
namespace {

const std::vector<std::string> k_statuses{"sound", "weak", "unsound", "error", "unaudited"};

// The value of `key` in `object` as T; a source_error naming the file and the field when absent or mistyped.
template <typename T>
T field(const json& object, const std::string& key, const fs::path& file, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) throw source_error(fmt::format("{}: {} has no \"{}\"", file.string(), where, key));
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw source_error(fmt::format("{}: {}.\"{}\" is {}, not the expected type", file.string(), where, key,
                                   it->type_name()));
  }
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
    const auto status = field<std::string>(audit, "status", file, at);
    if (std::find(k_statuses.begin(), k_statuses.end(), status) == k_statuses.end())
      throw source_error(
          fmt::format("{}: {}.status is '{}', not one of sound, weak, unsound, error, unaudited",
                      file.string(), at, status));
    out.status[precision] = status;
    std::string why;
    for (const auto& line : audit.value("why", json::array()))
      why += (why.empty() ? "" : "\n") + line.get<std::string>();
    out.why[precision] = why;
  }
  for (const auto& r : p.value("public", json::array()))
    out.public_reports.push_back(
        fmt::format("{} ({}): {}", r.value("source", std::string()),
                    !r.contains("agrees") || r["agrees"].is_null()
                        ? "not audited at " + r.value("precision", std::string("fp32"))
                    : r["agrees"].get<bool>() ? "agrees"
                                              : "disagrees",
                    r.value("claim", std::string())));
  return out;
}

} // namespace

verified_status verified_set::status_of(int level, int number, const std::string& name,
                                        const std::string& sha256, const std::string& precision) const {
  for (const auto& p : problems) {
    if (p.level != level || p.number != number || p.name != name) continue;
    if (p.sha256 != sha256)
      return {"changed", fmt::format("its source differs from the one the verified set {} audited", version),
              ""};
    const std::string at = p.status.contains(precision) ? precision : "fp32";
    const auto it = p.status.find(at);
    if (it == p.status.end()) return {"absent", "the verified set has no audit of it at " + precision, ""};
    return {it->second, p.why.at(at), at};
  }
  return {"absent", fmt::format("not in the verified set {}", version), ""};
}

verified_set load_verified_set(const fs::path& file) {
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
  for (std::size_t i = 0; i < problems.size(); ++i)
    set.problems.push_back(problem_of(problems[i], file, i));
  return set;
}

fs::path default_verified_file() {
  if (const char* env = std::getenv("KJ_VERIFIED_SET"); env && *env) return env;
  return fs::path(KJ_SOURCE_DIR) / "kernelbench" / "verified" / "kernelbench-main.json";
}

} // namespace kj::kb
