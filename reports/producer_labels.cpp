// Implements the separation of colliding producer labels (see producer_labels.hpp).
#include "reports/producer_labels.hpp"

#include <filesystem>
#include <fmt/core.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace kj::reports {
namespace {

// The candidates folder a run judged ("" for an adapter's, the built-in ones, or an unreadable config).
std::string candidates_of(const db::run_row& run) {
  const auto config = nlohmann::json::parse(run.config_json, nullptr, false);
  if (!config.is_object()) return "";
  const std::string c = config.value("candidates", std::string());
  return c == "identity" || c == "examples" ? "" : c;
}

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& part : std::filesystem::path(path).lexically_normal())
    if (!part.empty() && part != "/") parts.push_back(part.string());
  return parts;
}

std::string suffix(const std::vector<std::string>& parts, std::size_t n) {
  std::string out;
  for (std::size_t i = parts.size() - std::min(n, parts.size()); i < parts.size(); ++i)
    out += (out.empty() ? "" : "/") + parts[i];
  return out;
}

} // namespace

std::vector<std::string> distinguishing_suffixes(const std::vector<std::string>& paths) {
  std::vector<std::vector<std::string>> parts;
  std::size_t longest = 1;
  for (const auto& p : paths) {
    parts.push_back(components(p));
    longest = std::max(longest, parts.back().size());
  }
  for (std::size_t n = 1; n <= longest; ++n) {
    std::set<std::string> seen;
    std::vector<std::string> out;
    for (const auto& p : parts)
      out.push_back(suffix(p, n));
    seen.insert(out.begin(), out.end());
    if (seen.size() == out.size() || n == longest) return out;
  }
  return {};
}

std::vector<std::string> separate_colliding_producers(std::vector<result_row>& rows,
                                                      const std::vector<db::run_row>& runs) {
  std::map<std::string, std::string> folder_of_run;
  for (const auto& run : runs)
    folder_of_run[run.run_uid] = candidates_of(run);
  std::map<std::string, std::map<std::string, std::set<std::string>>> folders; // label -> folder -> runs
  for (const auto& row : rows)
    folders[row.producer][folder_of_run[row.run_uid]].insert(row.run_uid);
  std::vector<std::string> warnings;
  std::set<std::string> taken; // every label the rows hold: a new one must not fall onto another producer's
  for (const auto& row : rows)
    taken.insert(row.producer);
  for (const auto& [label, by_folder] : folders) {
    if (by_folder.size() < 2) continue;
    std::vector<std::string> paths;
    for (const auto& [folder, run_uids] : by_folder)
      paths.push_back(folder.empty() ? label : folder);
    std::vector<std::string> labels = distinguishing_suffixes(paths);
    std::map<std::string, std::string> relabel; // folder -> new label
    std::string listed;
    std::size_t i = 0;
    for (const auto& [folder, run_uids] : by_folder) {
      std::string& chosen = labels[i];
      if (chosen != label && taken.contains(chosen)) chosen += " (run " + *run_uids.begin() + ")";
      taken.insert(chosen);
      relabel[folder] = chosen;
      listed += fmt::format("{}{} ({}, run {})", listed.empty() ? "" : "; ", labels[i], paths[i],
                            *run_uids.begin());
      ++i;
    }
    for (auto& row : rows)
      if (row.producer == label) row.producer = relabel[folder_of_run[row.run_uid]];
    warnings.push_back(fmt::format("producer label '{}' names {} candidate folders: reported apart as {} "
                                   "(kj run --producer LABEL names a run's candidates)",
                                   label, by_folder.size(), listed));
  }
  return warnings;
}

} // namespace kj::reports
