// Implements build_verified_set: audits per precision merged by problem, public reports attached.
#include "kernelbench/verified_build.hpp"

#include "kernelbench/problems.hpp"
#include "kernelbench/verified.hpp"

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

// A field of entry `where` of `label` as T, or a source_error naming them.
template <typename T>
T typed(const json& entry, const char* key, const std::string& label, const std::string& where,
        bool required) {
  const auto it = entry.find(key);
  if (it == entry.end()) {
    if (!required) return T{};
    throw source_error(fmt::format("{}: {} has no \"{}\"", label, where, key));
  }
  const bool ok = std::is_same_v<T, int>           ? it->is_number_integer()
                  : std::is_same_v<T, bool>        ? it->is_boolean()
                  : std::is_same_v<T, std::string> ? it->is_string()
                                                   : it->is_object();
  if (!ok)
    throw source_error(
        fmt::format("{}: {}.{} is {}, not the expected type", label, where, key, it->type_name()));
  return it->get<T>();
}

bool names(const json& report, int level, int id) {
  for (const auto& p : report.value("problems", json::array()))
    if (p.value("level", 0) == level && p.value("id", 0) == id) return true;
  return false;
}

} // namespace

bool audit_out_of_memory(const std::string& error) {
  return error.find("OutOfMemoryError") != std::string::npos ||
         error.find("out of memory") != std::string::npos;
}

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
  if (audit_out_of_memory(error))
    return {"unaudited",
            {"kj's audit ran out of device memory on it (kj's own limit, not the problem's): " +
             lines(error).back()}};
  if (!error.empty()) return {"error", {lines(error).back()}}; // a traceback's last line: the exception
  if (a.value("unsound", false)) return {"unsound", lines(a.value("reasons", std::string()))};
  for (const char* n : {"zeros", "mean", "input"})
    if (a.value("nulls", json::object()).value(n, json::object()).value("compatible", json()) == true) {
      std::vector<std::string> why; // the notes that make it weak, not the downcast remarks
      for (auto& line : lines(a.value("notes", std::string())))
        if (line.starts_with("KernelBench's rule")) why.push_back(std::move(line));
      return {"weak", why};
    }
  return {"sound", lines(a.value("notes", std::string()))};
}

void check_audit_entries(const json& audits, const std::string& label, const std::string& precision) {
  if (!is_verified_precision(precision))
    throw source_error(
        fmt::format("{}: the precision '{}' is not fp32, tf32, bf16 or fp16", label, precision));
  if (!audits.is_array())
    throw source_error(fmt::format("{}: not a JSON array of audits (kj audit --json)", label));
  const bool fp32 = kj::parse_precision(precision) == kj::precision::fp32;
  const std::string protocol = "kernelbench-main" + (fp32 ? "" : "-" + precision);
  for (std::size_t i = 0; i < audits.size(); ++i) {
    const std::string where = fmt::format("[{}]", i);
    const json& a = audits[i];
    if (!a.is_object()) throw source_error(fmt::format("{}: {} is not an object", label, where));
    for (const char* key : {"level", "id"})
      if (typed<int>(a, key, label, where, true) < 1)
        throw source_error(fmt::format("{}: {}.{} must be at least 1", label, where, key));
    typed<std::string>(a, "name", label, where, true);
    typed<bool>(a, "unsound", label, where, true);
    typed<json>(a, "nulls", label, where, true);
    for (const char* key : {"error", "reasons", "notes", "sha256", "suite"})
      typed<std::string>(a, key, label, where, false);
    const std::string p = typed<std::string>(a, "protocol", label, where, true);
    if (p != protocol)
      throw source_error(
          fmt::format("{}: {} was audited under protocol '{}', not '{}' (the set holds KernelBench "
                      "main's rule at {}: kj audit --precision {})",
                      label, where, p, protocol, precision, precision));
  }
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
  if (!input.public_reports.is_array()) throw source_error("--public: not a JSON array of reports");
  for (std::size_t i = 0; i < input.public_reports.size(); ++i) {
    const json& r = input.public_reports[i];
    const std::string where = fmt::format("report [{}]", i);
    if (!r.is_object()) throw source_error("--public: " + where + " is not an object");
    for (const char* key : {"source", "claim"})
      typed<std::string>(r, key, "--public", where, true);
    typed<std::string>(r, "url", "--public", where, false);
    if (!is_verified_precision(r.value("precision", std::string("fp32"))))
      throw source_error(fmt::format("--public: {}.precision is not fp32, tf32, bf16 or fp16", where));
    if (!r.contains("problems") || !r["problems"].is_array() || r["problems"].empty())
      throw source_error(fmt::format("public report '{}' names no problem", r["source"].get<std::string>()));
    for (std::size_t k = 0; k < r["problems"].size(); ++k) {
      const std::string at = fmt::format("{}.problems[{}]", where, k);
      if (!r["problems"][k].is_object()) throw source_error("--public: " + at + " is not an object");
      typed<int>(r["problems"][k], "level", "--public", at, true);
      typed<int>(r["problems"][k], "id", "--public", at, true);
    }
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
