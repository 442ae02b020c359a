// The record is typed (issue 43): a verdict, a strict verdict, a precision or a protocol is compared as
// kj::verdict, kj::strict_verdict (core/verdict.hpp), kj::precision (core/precision.hpp) or kj::protocol_kind
// (core/protocol.hpp), never as its name, outside the two edges where names live: the worker's JSON
// (engine/worker/, whose Python and C++ speak names to each other) and SQL (db/). Names kj's other statuses
// share with the verdicts (a baseline's status) are parsed where they are compared; a strict case's status is
// kj::case_status.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::regex
    verdict_names(R"re((==|!=)\s*"(correct|incorrect|compile_error|load_error|runtime_error|)re"
                  R"re(timeout|crashed|problem_error|harness_error|oom|needs_weights|no_code)")re");
// kj::precision's names, either side of the comparison
const std::regex
    precision_names(R"re((==|!=)\s*"(fp32|tf32|fp16|bf16)"|"(fp32|tf32|fp16|bf16)"\s*(==|!=))re");
// a protocol (kj::protocol_kind, or a protocol's recorded name) compared with a name
const std::regex protocol_names(R"re(protocol[\w.()]*\s*(==|!=)\s*"|(==|!=)\s*"(cuda-agent|kernelbench-))re");

// Every line of a C++ source outside the edges and the tests that compares something with one of the names
// `compared` matches, as "file:line: text".
std::vector<std::string> name_comparisons(const std::regex& compared) {
  static const std::vector<std::string> outside{"tests",    "build",   "db",   "docs",
                                                "examples", "scripts", "cmake"};
  std::vector<std::string> out;
  const fs::path root = kj::test::source_dir();
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const fs::path rel = fs::relative(entry.path(), root);
    const std::string top = rel.begin()->string();
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp") || top.starts_with(".") ||
        top.starts_with("build") || std::find(outside.begin(), outside.end(), top) != outside.end() ||
        rel.string().starts_with("engine/worker/"))
      continue;
    std::ifstream in(entry.path());
    int n = 0;
    for (std::string line; std::getline(in, line);)
      if (++n; std::regex_search(line, compared))
        out.push_back(rel.string() + ":" + std::to_string(n) + ": " + line);
  }
  return out;
}

// The comparisons of names `compared` matches outside the edges, one per line ("" when none).
std::string listed(const std::regex& compared) {
  std::ostringstream list;
  for (const auto& f : name_comparisons(compared))
    list << f << "\n";
  return list.str();
}

} // namespace

// None for verdicts: a build's end is exec::build_end with the failure's kj::verdict
// (engine/exec/build_cache.hpp); a precision is kj::precision (core/precision.hpp); a protocol is
// kj::protocol_kind (core/protocol.hpp).
TEST_CASE("no verdict is compared by its name outside the worker's JSON and SQL") {
  CHECK(listed(verdict_names) == "");
}

TEST_CASE("no precision is compared by its name outside the worker's JSON and SQL") {
  CHECK(listed(precision_names) == "");
}

TEST_CASE("no protocol is compared by its name outside the worker's JSON and SQL") {
  CHECK(listed(protocol_names) == "");
}
