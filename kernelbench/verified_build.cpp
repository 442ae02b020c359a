// Implements build_verified_set: audits per precision merged by problem, public reports attached.
#include "kernelbench/verified_build.hpp"

#include "kernelbench/problems.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <tuple>

using nlohmann::json;

namespace kj::kb {
namespace {

std::string sha_of(const json& a, const verified_build_input& input) {
  if (a.contains("sha256")) return a["sha256"].get<std::string>();
  const int level = a.at("level").get<int>(), id = a.at("id").get<int>();
  const std::string name = a.at("name").get<std::string>();
  const auto it = input.source_sha256.find({level, id, name});
  if (it == input.source_sha256.end())
    throw source_error(fmt::format("the audit of L{} {}_{} carries no sha256 and the problem is not in "
                                   "--kernelbench to hash",
                                   level, id, name));
  return it->second;
}

bool names(const json& report, int level, int id) {
  for (const auto& p : report.value("problems", json::array()))
    if (p.value("level", 0) == level && p.value("id", 0) == id) return true;
  return false;
}

} // namespace

std::pair<std::string, std::vector<std::string>> audit_standing(const json& a) {
  const auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      if (end > start) out.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return out;
  };
  const std::string error = a.value("error", std::string());
  if (error.find("OutOfMemoryError") != std::string::npos || error.find("out of memory") != std::string::npos)
    return {"unaudited",
            {"kj's audit ran out of device memory on it (kj's own limit, not the problem's): " +
             lines(error).back()}};
  if (!error.empty()) return {"error", {lines(error).back()}}; // a traceback's last line: the exception
  if (a.value("unsound", false)) return {"unsound", lines(a.value("reasons", std::string()))};
  for (const char* n : {"zeros", "mean", "input"})
    if (a.value("nulls", json::object()).value(n, json::object()).value("compatible", json()) == true)
      return {"weak", lines(a.value("notes", std::string()))};
  return {"sound", lines(a.value("notes", std::string()))};
}

json build_verified_set(const verified_build_input& input) {
  std::map<std::tuple<int, int, std::string>, json> problems;
  for (const auto& [precision, audits] : input.audits)
    for (const auto& a : audits) {
      if (a.value("suite", std::string("kernelbench")) != "kernelbench") continue;
      const int level = a.at("level").get<int>(), id = a.at("id").get<int>();
      const std::string name = a.at("name").get<std::string>();
      json& p = problems[{level, id, name}];
      if (p.is_null())
        p = {{"level", level},
             {"id", id},
             {"name", name},
             {"sha256", sha_of(a, input)},
             {"audits", json::object()},
             {"public", json::array()}};
      auto [status, why] = audit_standing(a);
      p["audits"][precision] = {{"status", status},
                                {"why", why},
                                {"nulls", a.value("nulls", json::object())},
                                {"tolerance_use", a.value("tolerance_use", json())}};
    }
  for (const auto& r : input.public_reports) {
    if (r.value("problems", json::array()).empty())
      throw source_error(
          fmt::format("public report '{}' names no problem", r.value("source", std::string())));
    for (auto& [key, p] : problems) {
      if (!names(r, std::get<0>(key), std::get<1>(key))) continue;
      const std::string at = r.value("precision", std::string("fp32"));
      const auto audit = p["audits"].find(at); // the report's own precision: no fallback
      const std::string ours = audit == p["audits"].end() ? "" : (*audit)["status"].get<std::string>();
      p["public"].push_back({{"source", r.value("source", std::string())},
                             {"url", r.value("url", std::string())},
                             {"claim", r.value("claim", std::string())},
                             {"precision", at},
                             {"agrees", ours.empty() || ours == "unaudited" || ours == "error"
                                            ? json() // not audited there: neither agrees nor disagrees
                                            : json(ours == "unsound" || ours == "weak")}});
    }
  }
  json doc{{"format", 1},
           {"version", input.version},
           {"kernelbench_commit", input.kernelbench_commit},
           {"audited_on", input.audited_on},
           {"command", input.command},
           {"problems", json::array()}};
  for (auto& [key, p] : problems)
    doc["problems"].push_back(std::move(p));
  return doc;
}

} // namespace kj::kb
