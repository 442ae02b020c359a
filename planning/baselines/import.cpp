// Importing KernelBench's published baseline timings (results/timing/<HW>/*.json) as external rows.
#include "core/hashing.hpp"
#include "planning/baselines/baselines.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <limits>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::baselines {
namespace {

std::vector<fs::path> json_files(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return {path};
  if (!fs::is_directory(path, ec))
    throw kb::source_error(fmt::format("--import {}: no such file or folder", path.string()));
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(path))
    if (entry.is_regular_file() && !mode_of_kernelbench_file(entry.path().filename().string()).empty())
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw kb::source_error(fmt::format("--import {}: no KernelBench timing file in it (expected "
                                       "baseline_time_torch.json or baseline_time_torch_compile_*.json)",
                                       path.string()));
  return files;
}

double number(const json& entry, const char* field, const std::string& where) {
  if (!entry.contains(field)) return std::numeric_limits<double>::quiet_NaN();
  if (!entry[field].is_number())
    throw kb::source_error(fmt::format("{}: field '{}' is {}, expected a number of milliseconds", where,
                                       field, entry[field].dump()));
  return entry[field].get<double>();
}

std::optional<double> present(double v) {
  return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

} // namespace

std::string mode_of_kernelbench_file(const std::string& name) {
  if (name == "baseline_time_torch.json") return "eager";
  const std::string prefix = "baseline_time_torch_compile_";
  if (!name.starts_with(prefix) || !name.ends_with(".json")) return "";
  std::string rest = name.substr(prefix.size(), name.size() - prefix.size() - 5); // inductor_default, ...
  if (rest == "inductor_default") return "compile-default";
  if (rest.starts_with("inductor_")) return rest.substr(9); // max-autotune, reduce-overhead, ...
  return "backend-" + rest;                                 // e.g. the cudagraphs backend of KernelBench v0
}

import_summary import_kernelbench_json(db::store& store, const fs::path& path, const std::string& label) {
  import_summary summary;
  std::vector<db::baseline_record> rows;
  for (const fs::path& file : json_files(path)) {
    const std::string mode = mode_of_kernelbench_file(file.filename().string());
    json doc;
    try {
      std::ifstream in(file);
      if (!in) throw kb::source_error(fmt::format("{}: cannot be read", file.string()));
      doc = json::parse(in);
    } catch (const json::parse_error& e) {
      throw kb::source_error(fmt::format("{}: not valid JSON: {}", file.string(), e.what()));
    }
    if (!doc.is_object())
      throw kb::source_error(
          fmt::format("{}: expected an object of levels (\"level1\": {{...}})", file.string()));
    ++summary.files;
    // The hardware label: given, else the folder's name (KernelBench names folders after the machine).
    const std::string folder = file.parent_path().filename().string();
    for (const auto& [level_name, problems] : doc.items()) {
      int level = 0;
      if (!level_name.starts_with("level") || std::sscanf(level_name.c_str() + 5, "%d", &level) != 1 ||
          !problems.is_object())
        throw kb::source_error(fmt::format("{}: key '{}' is not a level (expected \"level1\": {{...}})",
                                           file.string(), level_name));
      for (const auto& [file_name, entry] : problems.items()) {
        const std::string where = fmt::format("{} [{}][{}]", file.string(), level_name, file_name);
        if (!entry.is_object() || !entry.contains("mean"))
          throw kb::source_error(fmt::format("{}: expected an object with a 'mean' in ms", where));
        db::baseline_record r;
        r.origin = "imported";
        r.level = level;
        r.file_name = file_name;
        r.mode = mode;
        r.device = "cuda";
        r.precision = kj::precision::fp32;
        r.hardware = label.empty() ? folder : label;
        r.imported_from = fs::absolute(file).lexically_normal().string();
        r.method = "kernelbench";
        r.clock = "cuda-event";
        r.mean_ms = present(number(entry, "mean", where));
        r.stdev_ms = present(number(entry, "std", where));
        r.min_ms = present(number(entry, "min", where));
        r.max_ms = present(number(entry, "max", where));
        r.params_json = json{{"headline", "mean"}, {"source", entry}}.dump();
        r.key_json =
            json{{"imported", r.hardware}, {"level", level}, {"file_name", file_name}, {"mode", mode}}.dump();
        r.cache_key = "imported:" + core::sha256_hex(r.key_json + entry.dump());
        rows.push_back(std::move(r));
      }
    }
  }
  // Every file is checked before the first row is written: a bad file imports nothing.
  for (auto& r : rows) {
    if (store.find_baseline(r.cache_key)) {
      ++summary.skipped;
      continue;
    }
    if (auto id = store.find_problem(r.level, r.file_name)) {
      r.problem_id = *id;
      ++summary.matched_problems;
    }
    store.insert_baseline(r);
    ++summary.imported;
  }
  return summary;
}

} // namespace kj::baselines
