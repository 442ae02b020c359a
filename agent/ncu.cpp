// Implements the Nsight Compute pieces: the wrapper command, reading a report back, parsing its raw CSV page.
#include "agent/ncu.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fmt/core.h>
#include <map>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kj::agent {
namespace {

constexpr const char* stall_prefix = "smsp__average_warps_issue_stalled_";
constexpr const char* stall_suffix = "_per_issue_active.ratio";

// One CSV line: comma-separated fields, each maybe in double quotes (a quote inside doubled).
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

// A metric value: ncu may print thousands separators ("1,234.5") or "n/a".
std::optional<double> number(const std::string& text) {
  std::string digits;
  for (char c : text)
    if (c != ',' && c != ' ') digits += c;
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return std::nullopt;
  return value;
}

std::string shell_quote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string join_metrics() {
  std::string list;
  for (const auto& m : ncu_metrics())
    list += (list.empty() ? "" : ",") + m;
  return list;
}

} // namespace

const std::vector<std::string>& ncu_metrics() {
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> m{"gpu__time_duration.sum",
                               "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                               "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                               "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                               "sm__warps_active.avg.pct_of_peak_sustained_active",
                               "launch__registers_per_thread"};
    for (const char* reason :
         {"long_scoreboard", "short_scoreboard", "wait", "barrier", "mio_throttle", "lg_throttle",
          "math_pipe_throttle", "not_selected", "dispatch_stall", "no_instruction", "membar", "tex_throttle",
          "imc_miss", "drain", "branch_resolving", "sleeping"})
      m.push_back(std::string(stall_prefix) + reason + stall_suffix);
    return m;
  }();
  return metrics;
}

std::string find_ncu(const std::string& requested) {
  if (requested == "off") return "";
  if (!requested.empty() && requested != "auto")
    return requested.find('/') == std::string::npos || fs::exists(requested) ? requested : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / "ncu").c_str(), X_OK) == 0)
      return (fs::path(dir) / "ncu").string();
  return "";
}

std::vector<std::string> ncu_wrapper(const std::string& ncu, const fs::path& report, int launches) {
  return {ncu,
          "--target-processes",
          "all",
          "--force-overwrite",
          "--export",
          report.string(),
          "--launch-count",
          std::to_string(launches),
          "--metrics",
          join_metrics()};
}

std::string import_ncu_report(const std::string& ncu, const fs::path& report) {
  const std::string command = fmt::format(
      "{} --import {} --csv --page raw --print-units base --metrics {} 2>&1", shell_quote(ncu),
      shell_quote(report.string().ends_with(".ncu-rep") ? report.string() : report.string() + ".ncu-rep"),
      shell_quote(join_metrics()));
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start " + ncu);
  std::string out;
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (status != 0)
    throw std::runtime_error(
        fmt::format("ncu --import exited with status {}: {}", WEXITSTATUS(status), out.substr(0, 2000)));
  return out;
}

std::vector<ncu_kernel> parse_ncu_csv(const std::string& csv) {
  std::istringstream in(csv);
  std::vector<std::string> header;
  std::vector<ncu_kernel> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '"') continue; // ==PROF==, ==WARNING== and other lines around the table
    std::vector<std::string> fields = split_csv_line(line);
    if (header.empty()) {
      header = std::move(fields);
      if (std::find(header.begin(), header.end(), "Kernel Name") == header.end())
        throw std::runtime_error("ncu's CSV has no \"Kernel Name\" column: " + line.substr(0, 200));
      continue;
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i)
      row[header[i]] = fields[i];
    if (row["ID"].empty()) continue; // the units row
    ncu_kernel k;
    k.name = row["Kernel Name"];
    k.process_id = row["Process ID"];
    k.duration_us = number(row["gpu__time_duration.sum"]);
    if (k.duration_us) *k.duration_us /= 1000.0; // --print-units base: nanoseconds
    k.compute_pct = number(row["sm__throughput.avg.pct_of_peak_sustained_elapsed"]);
    k.memory_pct = number(row["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"]);
    k.dram_pct = number(row["dram__throughput.avg.pct_of_peak_sustained_elapsed"]);
    k.occupancy_pct = number(row["sm__warps_active.avg.pct_of_peak_sustained_active"]);
    k.registers = number(row["launch__registers_per_thread"]);
    for (const auto& [column, value] : row) {
      if (!column.starts_with(stall_prefix) || !column.ends_with(stall_suffix)) continue;
      const std::string reason =
          column.substr(std::string(stall_prefix).size(),
                        column.size() - std::string(stall_prefix).size() - std::string(stall_suffix).size());
      if (const auto v = number(value); v && *v > 0) k.stalls.emplace_back(reason, *v);
    }
    std::sort(k.stalls.begin(), k.stalls.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    if (k.stalls.size() > 3) k.stalls.resize(3);
    out.push_back(std::move(k));
  }
  return out;
}

std::string kernel_base_name(const std::string& name) {
  std::string s = name.substr(0, name.find('('));
  // Template arguments, innermost first.
  for (std::size_t close; (close = s.rfind('>')) != std::string::npos;) {
    int depth = 0;
    std::size_t open = close;
    for (std::size_t i = close + 1; i-- > 0;) {
      depth += s[i] == '>' ? 1 : s[i] == '<' ? -1 : 0;
      if (depth == 0) {
        open = i;
        break;
      }
    }
    s.erase(open, close - open + 1);
  }
  if (const std::size_t space = s.rfind(' '); space != std::string::npos) s.erase(0, space + 1);
  if (const std::size_t colon = s.rfind("::"); colon != std::string::npos) s.erase(0, colon + 2);
  return s;
}

} // namespace kj::agent
