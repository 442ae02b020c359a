// Implements `kj run --summary-json` (see run_summary.hpp).
#include "app/cli/run_summary.hpp"

#include "app/cli/common.hpp"
#include "db/store.hpp"
#include "reports/metrics.hpp"

#include <fmt/core.h>
#include <fstream>
#include <optional>
#include <unistd.h>

using nlohmann::json;

namespace kj::cli {

json run_summary(const std::string& db_path, const std::string& run_uid, int exit_code,
                 const std::string& error) {
  json summary{{"run", run_uid},
               {"db", db_path},
               {"exit_code", exit_code},
               {"error", error},
               {"status", nullptr},
               {"evaluations", 0},
               {"verdicts", json::object()},
               {"strict", json::object()},
               {"counted_correct", 0},
               {"rows", json::array()}};
  summary["run"] = nullptr; // until the database shows the run was recorded
  if (run_uid.empty() || !std::filesystem::exists(db_path)) return summary;
  std::optional<db::store> opened;
  try {
    opened.emplace(db::store::open_read_only(db_path)); // a file that is not kj's was refused: no rows
  } catch (const std::exception&) {
    return summary;
  }
  const db::store& store = *opened;
  const auto id = store.find_run(run_uid);
  if (!id) return summary;
  summary["run"] = run_uid;
  if (const auto run = store.get_run(*id)) summary["status"] = run->status;
  db::evaluation_filter filter;
  filter.run_uid = run_uid;
  filter.samples = true; // the speedups' intervals: is a speedup noise
  for (const auto& e : store.evaluation_rows(filter)) {
    const reports::result_row r = reports::derive(e);
    summary["evaluations"] = summary["evaluations"].get<int>() + 1;
    summary["verdicts"][name_of(r.verdict)] = summary["verdicts"].value(name_of(r.verdict), 0) + 1;
    if (r.strict_verdict != kj::strict_verdict::none)
      summary["strict"][name_of(r.strict_verdict)] =
          summary["strict"].value(name_of(r.strict_verdict), 0) + 1;
    if (r.counted_correct()) summary["counted_correct"] = summary["counted_correct"].get<int>() + 1;
    summary["rows"].push_back({{"level", r.level},
                               {"problem_id", r.number},
                               {"problem", r.problem_name},
                               {"candidate", reports::candidate_text(r)},
                               {"producer", r.producer},
                               {"sample", r.sample},
                               {"verdict", name_of(r.verdict)},
                               {"strict_verdict", name_of(r.strict_verdict)},
                               {"speedup", r.speedup ? json(*r.speedup) : json()},
                               {"speedup_noisy", kj::reports::may_be_noise(r)},
                               {"untrusted", r.untrusted}});
  }
  return summary;
}

void check_summary_path(const std::filesystem::path& file) {
  std::error_code ec;
  const std::filesystem::path folder = file.parent_path().empty() ? "." : file.parent_path();
  if (std::filesystem::is_directory(file, ec))
    throw usage_error(fmt::format("--summary-json {}: is a folder; name a file in it", file.string()));
  if (!std::filesystem::is_directory(folder, ec))
    throw usage_error(
        fmt::format("--summary-json {}: its folder {} does not exist", file.string(), folder.string()));
  if (::access(folder.c_str(), W_OK) != 0)
    throw usage_error(
        fmt::format("--summary-json {}: its folder {} is not writable", file.string(), folder.string()));
}

void write_refused_summary(const std::vector<std::string>& args, const std::string& error) {
  if (args.size() < 2 || args[1] != "run") return;
  std::string file, db = default_db_path();
  for (std::size_t i = 2; i < args.size(); ++i) {
    const auto value = [&](const std::string& flag, std::string& out) {
      if (args[i] == flag && i + 1 < args.size()) out = args[i + 1];
      if (args[i].starts_with(flag + "=")) out = args[i].substr(flag.size() + 1);
    };
    value("--summary-json", file);
    value("--db", db);
  }
  if (file.empty()) return;
  try {
    write_run_summary(file, run_summary(db, "", 2, error));
  } catch (const std::exception&) {
  }
}

void write_run_summary(const std::filesystem::path& file, const json& summary) {
  write_text_file(file.string(), summary.dump(2) + "\n", "--summary-json");
}

} // namespace kj::cli
