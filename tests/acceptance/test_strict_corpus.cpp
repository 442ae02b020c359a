// The strict-verification corpus: every deliberately bad candidate gets the verdicts and failing classes its
// header promises, and every honest one passes both verdicts (tests/fixtures/strict/README.md lists them).
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace kj::test;

namespace {

struct expectation {
  std::string compatible;
  std::string strict;                // "pass" or "fail"
  std::vector<std::string> classes;  // classes that must be among the failing ones
  std::vector<std::string> findings; // static findings that must be reported
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

expectation read_expectation(const fs::path& file) {
  static const std::regex compatible(R"(# kj-expect: (\w+))"),
      strict(R"(# kj-strict: (pass|fail) ?([\w,]*))"), finding(R"(# kj-finding: ([\w,]+))");
  const std::string text = read_file(file);
  std::smatch m;
  expectation e;
  REQUIRE(std::regex_search(text, m, compatible));
  e.compatible = m[1];
  REQUIRE(std::regex_search(text, m, strict));
  e.strict = m[1];
  e.classes = split(m[2]);
  if (std::regex_search(text, m, finding)) e.findings = split(m[1]);
  return e;
}

bool contains_item(const std::string& list, const std::string& item) {
  const auto items = split(list);
  return std::find(items.begin(), items.end(), item) != items.end();
}

} // namespace

TEST_CASE("the strict corpus: bad candidates fail the classes they target, honest ones pass everything") {
  const fs::path root = fixtures_dir() / "strict";
  scratch_dir dir;
  const char* cache = std::getenv("KJ_CACHE_DIR");
  const std::string cache_dir = cache && *cache ? cache : (dir / "cache").string();
  const auto r = run_kj({"run", "--device", "cpu", "--kernelbench", (root / "problems").string(),
                         "--candidates", (root / "candidates").string(), "--no-timing", "--timeout", "120",
                         "--db", (dir / "kj.sqlite").string(), "--cache-dir", cache_dir},
                        dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto results = run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--format", "json"});
  REQUIRE(results.exit_code == 0);
  const json rows = json::parse(results.out);

  std::size_t files = 0, honest = 0, bad = 0;
  for (const auto& entry : fs::directory_iterator(root / "candidates"))
    files += entry.path().extension() == ".py" && entry.path().filename().string().rfind("level_", 0) == 0;
  REQUIRE(rows.size() == files);
  for (const auto& row : rows) {
    const std::string path = row["candidate"];
    const expectation e = read_expectation(path);
    INFO(fs::path(path).filename().string()
         << ": verdict " << row["verdict"] << ", strict " << row["strict_verdict"] << " ["
         << row["strict_failed"] << "], findings [" << row["findings"]
         << "], error: " << row["error"].get<std::string>());
    CHECK(row["verdict"] == e.compatible);
    CHECK(row["strict_verdict"] == e.strict);
    for (const auto& cls : e.classes)
      CHECK(contains_item(row["strict_failed"], cls));
    for (const auto& kind : e.findings)
      CHECK(contains_item(row["findings"], kind));
    (e.strict == "pass" ? honest : bad)++;
  }
  CHECK(bad >= 25);
  CHECK(honest >= 10);
}
