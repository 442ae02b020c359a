// Implements the directory import adapter and the identity producer.
#include "adapters/candidates.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/core.h>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace kj::adapters {

bool parse_generated_name(const std::string& file_name, int& level, int& problem, int& sample) {
  static const std::regex pattern(R"(level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py)");
  std::smatch m;
  if (!std::regex_match(file_name, m, pattern)) return false;
  level = std::stoi(m[1]);
  problem = std::stoi(m[2]);
  sample = std::stoi(m[3]);
  return true;
}

import_report candidates_from_directory(const fs::path& dir, const std::vector<kb::problem>& problems,
                                        const std::string& producer) {
  if (!fs::is_directory(dir))
    throw kb::source_error(
        fmt::format("candidate directory {} does not exist or is not a directory", dir.string()));
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".py") files.push_back(entry.path());
  std::sort(files.begin(), files.end());

  import_report report;
  for (const auto& file : files) {
    const std::string name = file.filename().string();
    int level = 0, number = 0, sample = 0;
    const bool generated = parse_generated_name(name, level, number, sample);
    bool matched = false;
    for (std::size_t i = 0; i < problems.size(); ++i) {
      const auto& p = problems[i];
      const bool hit = generated ? (p.level == level && p.number == number) : (p.file_name == name);
      if (!hit) continue;
      std::ifstream in(file, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      report.candidates.push_back({i, producer, generated ? sample : 0, fs::absolute(file), text.str()});
      matched = true;
    }
    if (!matched)
      report.skipped.push_back(
          generated ? fmt::format("{}: level {} problem {} is not selected", name, level, number)
                    : fmt::format("{}: not a KernelBench candidate name "
                                  "(level_L_problem_N_sample_S_kernel.py or <problem file>.py)",
                                  name));
  }
  return report;
}

std::vector<candidate> identity_candidates(const std::vector<kb::problem>& problems) {
  std::vector<candidate> out;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    // The problem's own code, loaded as a separate module: same weights under the same seed, same arithmetic.
    std::string source = problems[i].source + "\n\n# kerneljudge identity candidate\nModelNew = Model\n";
    out.push_back({i, "identity", 0, {}, std::move(source)});
  }
  return out;
}

fs::path examples_dir(const std::string& device) {
  if (const char* env = std::getenv("KJ_EXAMPLES_DIR"); env && *env) return fs::path(env) / device;
  return fs::path(KJ_SOURCE_DIR) / "examples" / "candidates" / device;
}

} // namespace kj::adapters
