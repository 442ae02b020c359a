// The tree's shape (issue 43): every source folder has its test folder (cuda/'s is tests/gpu, which needs a
// GPU; bench/ holds benchmarks, not code under test), and no source file kj is built from, nor any of its
// tests, is over 400 lines: a newcomer reads each on a few screens.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace kj::test;

namespace {

// The folders kj's sources live in: those at the top with a C++ or Python source.
std::set<std::string> source_folders() {
  static const std::set<std::string> not_source{"tests", "build", "docs", "examples", "scripts", "cmake"};
  std::set<std::string> out;
  for (const auto& top : fs::directory_iterator(source_dir())) {
    const std::string name = top.path().filename().string();
    if (!top.is_directory() || name.starts_with(".") || not_source.count(name) || name.starts_with("build"))
      continue;
    for (const auto& entry : fs::recursive_directory_iterator(top.path())) {
      const auto ext = entry.path().extension();
      if (entry.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".py")) {
        out.insert(name);
        break;
      }
    }
  }
  return out;
}

std::size_t lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);)
    ++n;
  return n;
}

} // namespace

TEST_CASE("every source folder has its test folder") {
  static const std::map<std::string, std::string> tested_in{{"cuda", "gpu"}, {"bench", ""}};
  const auto folders = source_folders();
  CHECK(folders.count("engine") == 1);
  for (const auto& folder : folders) {
    const auto mapped = tested_in.find(folder);
    const std::string tests = mapped == tested_in.end() ? folder : mapped->second;
    if (tests.empty()) continue;
    INFO(folder << "/ has no tests/" << tests << "/");
    CHECK(fs::is_directory(source_dir() / "tests" / tests));
  }
}

TEST_CASE("no source file is over 400 lines") {
  std::vector<std::string> long_files;
  std::size_t files = 0;
  const auto look = [&](const fs::path& root) {
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
      if (it->is_directory() &&
          it->path().filename() == "fixtures") { // other people's code, as they wrote it
        it.disable_recursion_pending();
        continue;
      }
      const auto ext = it->path().extension();
      if (!it->is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".py")) continue;
      ++files;
      if (const auto n = lines_of(it->path()); n > 400)
        long_files.push_back(fs::relative(it->path(), source_dir()).string() + ": " + std::to_string(n));
    }
  };
  for (const auto& folder : source_folders())
    look(source_dir() / folder);
  look(source_dir() / "tests");
  CHECK(files > 300);
  std::string listed;
  for (const auto& f : long_files)
    listed += "\n  " + f;
  INFO("over 400 lines:" << listed);
  CHECK(long_files.empty());
}
