// Implements the directory import adapter (files and CUDA-Agent workdirs) and the identity producer.
#include "adapters/candidates.hpp"

#include "adapters/workdir.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/core.h>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

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

namespace {

// The file name a workdir folder stands for: level_L_problem_N_sample_S(_kernel) names a generated candidate,
// anything else a problem file (`<id>_<Name>` for `<id>_<Name>.py`).
std::string workdir_name(const fs::path& folder) {
  static const std::regex generated(R"(level_\d+_problem_\d+_sample_\d+)");
  std::string name = folder.filename().string();
  if (name.ends_with("_kernel")) name.resize(name.size() - 7);
  return std::regex_match(name, generated) ? name + "_kernel.py" : folder.filename().string() + ".py";
}

// The problems a (file) name points at: KernelBench's generated name, else a problem's file name.
std::vector<std::size_t> matches(const std::string& name, const std::vector<kb::problem>& problems,
                                 int& sample, bool& generated, int& level, int& number) {
  generated = parse_generated_name(name, level, number, sample);
  if (!generated) sample = 0;
  std::vector<std::size_t> hits;
  for (std::size_t i = 0; i < problems.size(); ++i)
    if (generated ? (problems[i].level == level && problems[i].number == number)
                  : problems[i].file_name == name)
      hits.push_back(i);
  return hits;
}

// Workdirs are producer "workdir" unless the import is labelled (kj run --producer, or the folder's name).
std::string workdir_producer(const std::string& producer) {
  return producer == "directory" ? "workdir" : producer;
}

// One candidate file given as --candidates FILE: named like a candidate, or for the one selected problem.
import_report candidate_file(const fs::path& file, const std::vector<kb::problem>& problems,
                             const std::string& producer) {
  int sample = 0, level = 0, number = 0;
  bool generated = false;
  auto hits = matches(file.filename().string(), problems, sample, generated, level, number);
  // A file named for another KernelBench problem is never judged against the one selected problem.
  if (hits.empty() && generated)
    throw kb::source_error(fmt::format(
        "candidate file {} is named for level {} problem {}, which is not selected ({} selected: {}): select "
        "that problem (--level {} --ids {}) or rename the file",
        file.string(), level, number, problems.size(),
        problems.size() == 1 ? fmt::format("level {} problem {}", problems[0].level, problems[0].number)
                             : std::string("see kj run --collect-only"),
        level, number));
  // Named like another KernelBench problem's file ("4_Softmax.py" with problem 2 selected): refused too.
  static const std::regex problem_file(R"((\d+)_\w+\.py)");
  const std::string file_name = file.filename().string();
  if (std::smatch m; hits.empty() && problems.size() == 1 && std::regex_match(file_name, m, problem_file) &&
                     std::stoi(m[1]) != problems[0].number)
    throw kb::source_error(fmt::format(
        "candidate file {} is named like KernelBench problem {}'s file, but the selected problem is {} ({}): "
        "select that problem or rename the file",
        file.string(), m[1].str(), problems[0].number, problems[0].file_name));
  if (hits.empty() && problems.size() == 1) hits.push_back(0);
  if (hits.empty())
    throw kb::source_error(
        fmt::format("candidate file {} names none of the {} selected problems: name it "
                    "level_L_problem_N_sample_S_kernel.py "
                    "or <problem file>.py, or select one problem (--problem FILE, or --level and --ids)",
                    file.string(), problems.size()));
  import_report report;
  const std::string bytes = kb::read_file_bytes(file, "candidate file");
  for (std::size_t i : hits)
    report.candidates.push_back(candidate_of_bytes(i, producer, sample, fs::absolute(file), bytes));
  return report;
}

// Two files of one folder that give one problem the same sample number with different code would be stored as
// one sample twice (exports, reports and comparisons keep one of them): refused, naming both. The same code
// twice is one candidate, judged once (run_plan).
void refuse_sample_clashes(const std::vector<candidate>& candidates,
                           const std::vector<kb::problem>& problems) {
  std::map<std::tuple<std::size_t, std::string, int>, const candidate*> seen;
  for (const auto& c : candidates) {
    const auto [it, fresh] = seen.emplace(std::make_tuple(c.problem_index, c.producer, c.sample), &c);
    if (fresh || it->second->source == c.source) continue;
    throw kb::source_error(
        fmt::format("{} and {} both give problem {} ({}) sample {}, with different code: rename one "
                    "(level_L_problem_N_sample_S_kernel.py with another S)",
                    it->second->path.filename().string(), c.path.filename().string(),
                    problems[c.problem_index].number, problems[c.problem_index].name, c.sample));
  }
}

} // namespace

candidate candidate_of_bytes(std::size_t problem_index, std::string producer, int sample, fs::path path,
                             const std::string& bytes) {
  kb::source_text text = kb::python_source_text(bytes);
  candidate c{problem_index, std::move(producer), sample, std::move(path), std::move(text.text), ""};
  if (!text.exact) {
    c.bytes = bytes;
    c.encoding_note = std::move(text.note);
    c.encoding_line = text.line;
  }
  return c;
}

import_report candidates_from_directory(const fs::path& dir, const std::vector<kb::problem>& problems,
                                        const std::string& producer) {
  if (fs::is_regular_file(dir)) return candidate_file(dir, problems, producer);
  if (!fs::is_directory(dir))
    throw kb::source_error(
        fmt::format("candidate directory {} does not exist (nor a file of that name)", dir.string()));
  import_report report;
  const fs::path root = fs::absolute(dir).lexically_normal();
  // The directory itself a workdir: named like a candidate, or the one selected problem.
  if (is_workdir(root)) {
    const fs::path named = root.filename().empty() ? root.parent_path() : root;
    int sample = 0, level = 0, number = 0;
    bool generated = false;
    auto hits = matches(workdir_name(named), problems, sample, generated, level, number);
    if (hits.empty() && problems.size() == 1) hits.push_back(0);
    if (hits.empty())
      throw kb::source_error(
          fmt::format("{} is a CUDA-Agent workdir for none of the {} selected problems: name it "
                      "level_L_problem_N_sample_S or <problem file stem>, or select one problem",
                      dir.string(), problems.size()));
    for (std::size_t i : hits)
      report.candidates.push_back(
          candidate_of_bytes(i, workdir_producer(producer), sample, named, workdir_candidate_source(named)));
    return report;
  }
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir))
    if ((entry.is_regular_file() && entry.path().extension() == ".py") || is_workdir(entry.path()))
      entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());

  for (const auto& entry : entries) {
    const bool workdir = fs::is_directory(entry);
    const std::string name = workdir ? workdir_name(entry) : entry.filename().string();
    int sample = 0, level = 0, number = 0;
    bool generated = false;
    const auto hits = matches(name, problems, sample, generated, level, number);
    if (!hits.empty()) {
      const std::string bytes =
          workdir ? workdir_candidate_source(entry) : kb::read_file_bytes(entry, "candidate file");
      for (std::size_t i : hits)
        report.candidates.push_back(candidate_of_bytes(i, workdir ? workdir_producer(producer) : producer,
                                                       sample, fs::absolute(entry), bytes));
    }
    int file_number = 0;
    std::string file_stem;
    if (hits.empty() && generated)
      report.unselected.push_back(
          fmt::format("{}: level {} problem {} is not selected", entry.filename().string(), level, number));
    else if (hits.empty() && kb::parse_problem_file_name(name, file_number, file_stem))
      report.unselected.push_back(
          fmt::format("{}: no selected problem has that file name", entry.filename().string()));
    else if (hits.empty())
      report.skipped.push_back(
          fmt::format("{}: not a KernelBench candidate name (level_L_problem_N_sample_S_kernel.py, "
                      "<problem file>.py, or a CUDA-Agent workdir folder level_L_problem_N_sample_S "
                      "or <problem file stem>)",
                      entry.filename().string()));
  }
  refuse_sample_clashes(report.candidates, problems);
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
