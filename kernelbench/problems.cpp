// Implements problem discovery and loading for the three kinds of source.
#include "kernelbench/problems.hpp"

#include "kernelbench/source_text.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fmt/core.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace kj::kb {
namespace {

// The problem's text as Python reads it (a file that is not UTF-8 as kb::python_source_text decodes it).
std::string read_text(const fs::path& path) {
  return python_source_text(read_file_bytes(path, "problem file")).text;
}

// The folder that holds level1/, level2/, ... : the checkout's KernelBench/ or the given folder itself.
fs::path levels_root(const fs::path& dir) {
  if (!fs::is_directory(dir))
    throw source_error(
        fmt::format("KernelBench path {} does not exist or is not a directory (--kernelbench or "
                    "KERNELBENCH_DIR should name a KernelBench checkout)",
                    dir.string()));
  for (const fs::path& candidate : {dir / "KernelBench", dir})
    for (int level = 1; level <= 4; ++level)
      if (fs::is_directory(candidate / fmt::format("level{}", level))) return candidate;
  throw source_error(fmt::format(
      "{} is not a KernelBench checkout: no KernelBench/level1 ... level4 folders in it", dir.string()));
}

std::map<std::string, std::map<std::string, std::int64_t>> read_cpu_sizes(const fs::path& file) {
  std::map<std::string, std::map<std::string, std::int64_t>> sizes;
  if (!fs::exists(file)) return sizes;
  try {
    std::ifstream in(file);
    const nlohmann::json document = nlohmann::json::parse(in);
    for (const auto& [key, value] : document.items())
      sizes[key] = value.get<std::map<std::string, std::int64_t>>();
  } catch (const nlohmann::json::exception& e) {
    throw source_error(fmt::format("{}: expected {{\"levelN/<file>.py\": {{\"name\": integer, ...}}}}: {}",
                                   file.string(), e.what()));
  }
  return sizes;
}

void load_level_folders(const fs::path& root, const std::string& suite, const source_options& options,
                        std::vector<problem>& out) {
  const auto cpu_sizes =
      suite == "builtin" ? read_cpu_sizes(root / "cpu_sizes.json") : decltype(read_cpu_sizes({})){};
  const std::string commit = git_commit_of(root);
  std::vector<int> levels = options.levels;
  if (levels.empty())
    for (int level = 1; level <= 4; ++level)
      if (fs::is_directory(root / fmt::format("level{}", level))) levels.push_back(level);
  for (int level : levels) {
    const fs::path folder = root / fmt::format("level{}", level);
    if (!fs::is_directory(folder))
      throw source_error(fmt::format("level {} requested but {} does not exist", level, folder.string()));
    for (const auto& entry : fs::directory_iterator(folder)) {
      problem p;
      p.file_name = entry.path().filename().string();
      if (!entry.is_regular_file() || entry.path().extension() != ".py" ||
          !parse_problem_file_name(p.file_name, p.number, p.name))
        continue;
      if (!options.ids.empty() && !options.ids.contains(p.number)) continue;
      p.suite = suite;
      p.kb_version = suite == "kernelbench" ? options.kb_version : "main";
      p.level = level;
      p.path = entry.path();
      p.source = read_text(p.path);
      p.source_commit = commit;
      if (auto it = cpu_sizes.find(fmt::format("level{}/{}", level, p.file_name)); it != cpu_sizes.end())
        p.cpu_overrides = it->second;
      out.push_back(std::move(p));
    }
  }
}

problem load_single_file(const fs::path& path, const std::string& kb_version) {
  if (!fs::is_regular_file(path))
    throw source_error(fmt::format("problem file {} does not exist or is not a file", path.string()));
  problem p;
  p.suite = "file";
  p.kb_version = kb_version;
  p.path = fs::absolute(path);
  p.file_name = path.filename().string();
  if (!parse_problem_file_name(p.file_name, p.number, p.name)) p.name = path.stem().string();
  const std::string parent = path.parent_path().filename().string();
  if (parent.rfind("level", 0) == 0) p.level = std::atoi(parent.c_str() + 5);
  p.source = read_text(path);
  return p;
}

} // namespace

std::string read_file_bytes(const fs::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw source_error(fmt::format("cannot read {} {}", what, path.string()));
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string problem::key() const {
  return fmt::format("L{}/{}", level, file_name);
}

std::map<std::string, std::int64_t>
problem::overrides_for(const std::string& device, const std::map<std::string, std::int64_t>& user) const {
  auto overrides = device == "cpu" ? cpu_overrides : std::map<std::string, std::int64_t>{};
  for (const auto& [k, v] : user)
    overrides[k] = v;
  return overrides;
}

bool parse_problem_file_name(const std::string& file_name, int& number, std::string& name) {
  const std::size_t underscore = file_name.find('_');
  if (underscore == std::string::npos || underscore == 0 || file_name.size() < 4 ||
      file_name.substr(file_name.size() - 3) != ".py")
    return false;
  const std::string digits = file_name.substr(0, underscore);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  number = std::stoi(digits);
  name = file_name.substr(underscore + 1, file_name.size() - underscore - 4);
  return true;
}

std::string git_commit_of(const fs::path& dir) {
  // Only when git tracks the folder's files: a KernelBench copy inside another repository (untracked or
  // ignored there) is not at that repository's commit.
  const std::string command =
      fmt::format("git -C '{0}' ls-files --error-unmatch . >/dev/null 2>&1 && git -C '{0}' rev-parse HEAD "
                  "2>/dev/null",
                  dir.string());
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return "";
  std::array<char, 128> buffer{};
  std::string out;
  while (std::fgets(buffer.data(), buffer.size(), pipe))
    out += buffer.data();
  ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  return out.size() == 40 ? out : "";
}

fs::path builtin_suite_dir() {
  if (const char* env = std::getenv("KJ_SUITE_DIR"); env && *env) return env;
  return fs::path(KJ_SOURCE_DIR) / "kernelbench" / "suite";
}

std::vector<problem> load_problems(const source_options& options) {
  if (options.kb_version != "main" && options.kb_version != "v0.1" && options.kb_version != "v0")
    throw source_error(fmt::format("--kb-version '{}' is not one of main, v0.1, v0", options.kb_version));
  std::vector<problem> problems;
  if (!options.kernelbench_dir.empty())
    load_level_folders(levels_root(options.kernelbench_dir), "kernelbench", options, problems);
  for (const auto& file : options.files)
    problems.push_back(load_single_file(file, options.kb_version));
  if (options.builtin) load_level_folders(builtin_suite_dir(), "builtin", options, problems);
  std::sort(problems.begin(), problems.end(), [](const problem& a, const problem& b) {
    return std::tie(a.suite, a.level, a.number, a.file_name) <
           std::tie(b.suite, b.level, b.number, b.file_name);
  });
  if (problems.empty()) throw source_error("no problems match the selection (check --level and --ids)");
  return problems;
}

std::vector<std::string> unmatched_overrides(const std::vector<problem>& problems,
                                             const std::map<std::string, std::int64_t>& overrides) {
  std::vector<std::string> unmatched;
  for (const auto& [name, value] : overrides) {
    const std::regex assigned("(^|\\n)" + name + R"([ \t]*(:[^=\n]*)?=[^=])");
    if (std::none_of(problems.begin(), problems.end(),
                     [&](const problem& p) { return std::regex_search(p.source, assigned); }))
      unmatched.push_back(name);
  }
  return unmatched;
}

} // namespace kj::kb
