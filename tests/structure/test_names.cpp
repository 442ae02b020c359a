// Unique source file names (a newcomer's search for evaluate.cpp must find one file), and test names that
// ctest can run: catch_discover_tests turns every TEST_CASE name into a CMake list item, so a
// ';' splits one test into two that each match nothing and pass without running (a slow acceptance test was
// silently skipped this way), and a leading or trailing space makes the name differ from its filter.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace kj::test;

TEST_CASE("no test name holds a character that would split or rename its ctest entry") {
  // the name, as one literal or several adjacent ones
  const std::regex test_case(R"re(TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+))re");
  const std::regex literal(R"re("((?:[^"\\]|\\.)*)")re");
  std::vector<std::string> bad;
  std::size_t names = 0;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir() / "tests")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    if (entry.path().string().find("/fixtures/") != std::string::npos) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string code = text.str();
    for (std::sregex_iterator m(code.begin(), code.end(), test_case), end; m != end; ++m) {
      std::string name;
      const std::string literals = (*m)[1].str();
      for (std::sregex_iterator l(literals.begin(), literals.end(), literal), none; l != none; ++l)
        name += (*l)[1].str();
      ++names;
      if (name.find(';') != std::string::npos || name.empty() || name.front() == ' ' || name.back() == ' ')
        bad.push_back(entry.path().filename().string() + ": \"" + name + "\"");
    }
  }
  std::string listed;
  for (const auto& b : bad)
    listed += b + "\n";
  INFO(listed);
  CHECK(names > 100); // the pattern still finds the suite's tests
  CHECK(bad.empty());
}

TEST_CASE("no two source files share a name, whatever their folders") {
  std::map<std::string, std::vector<std::string>> by_name;
  std::vector<std::string> folders = k_source_folders;
  folders.insert(folders.end(), {"tests", "bench", "scripts"});
  for (const auto& folder : folders)
    for (const auto& entry : fs::recursive_directory_iterator(source_dir() / folder)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".py"))
        continue;
      if (entry.path().string().find("/fixtures/") != std::string::npos) continue; // candidates and problems
      by_name[entry.path().filename().string()].push_back(fs::relative(entry.path(), source_dir()).string());
    }
  std::string shared;
  for (const auto& [name, paths] : by_name)
    if (paths.size() > 1 && name != "__init__.py" && name != "conftest.py") {
      shared += name + ":";
      for (const auto& p : paths)
        shared += " " + p;
      shared += "\n";
    }
  INFO(shared);
  CHECK(by_name.size() > 200);
  CHECK(shared.empty());
}
