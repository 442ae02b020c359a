// docs/usage.md's table of exit codes is true: every example in it, run by the real `kj` in a folder holding
// a results DB (kj.sqlite) and a plain file (a-file), exits with the code its row names; every code kj uses
// (0, 1, 2, 130) has a row.
#include "tests/reports/report_fixture.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace kj::test;

namespace {

struct example {
  int code = 0;
  std::string command; // as written in the table, e.g. "KJ_PYTHON=/x kj run"
};

// The rows of the "## Exit codes" section: each row's code, and its example when it has one.
std::vector<example> documented(std::set<int>& codes) {
  const std::string usage = read_file(source_dir() / "docs" / "usage.md");
  const std::size_t start = usage.find("## Exit codes");
  REQUIRE(start != std::string::npos);
  const std::string section = usage.substr(start, usage.find("\n## ", start + 1) - start);
  static const std::regex row(R"(^\| (\d+) \|.*\| (`([^`]*)`)? *\|$)");
  std::vector<example> out;
  std::istringstream lines(section);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    codes.insert(std::stoi(m[1]));
    if (m[3].matched) out.push_back({std::stoi(m[1]), m[3]});
  }
  return out;
}

// "VAR=value kj args..." as an argv for the real binary and its environment.
std::vector<std::string> argv_of(const std::string& command, std::map<std::string, std::string>& env) {
  std::istringstream words(command);
  std::vector<std::string> argv;
  for (std::string w; words >> w;) {
    if (argv.empty() && w != "kj" && w.find('=') != std::string::npos) {
      env[w.substr(0, w.find('='))] = w.substr(w.find('=') + 1);
      continue;
    }
    argv.push_back(argv.empty() ? kj_binary().string() : w);
  }
  return argv;
}

} // namespace

TEST_CASE("every example in docs/usage.md's exit-code table exits with its documented code") {
  std::set<int> codes;
  const auto examples = documented(codes);
  CHECK(codes == std::set<int>{0, 1, 2, 130});
  CHECK(examples.size() >= 10);
  scratch_dir dir;
  reports::build_report_db(dir / "kj.sqlite");
  write_file(dir / "a-file", "");
  for (const auto& e : examples) {
    std::map<std::string, std::string> env{{"KJ_CACHE_DIR", (dir / "cache").string()}};
    const auto argv = argv_of(e.command, env);
    const auto r = run_program(argv, dir.path(), env);
    INFO(e.command << "\n" << r.err);
    CHECK(r.exit_code == e.code);
    if (e.code == 2) CHECK(r.err.rfind("kj: ", 0) == 0); // a message that names the cause
  }
}
