// docs/security.md's table of the outside hack corpus stays in step with
// tests/fixtures/outside/manifest.json: every attack (files and out_of_scope) has a row that names it and
// links its first source, and every row's attack is in the manifest.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using nlohmann::json;
using namespace kj::test;

namespace {

// The rows of the section "## The outside hack corpus": the first cell's `attack`, with the whole row.
std::map<std::string, std::string> table_rows(const std::string& doc) {
  const auto start = doc.find("## The outside hack corpus");
  REQUIRE(start != std::string::npos);
  const auto end = doc.find("\n## ", start + 1);
  std::istringstream section(doc.substr(start, end == std::string::npos ? std::string::npos : end - start));
  static const std::regex row(R"(^\| `(\w+)` \|)");
  std::map<std::string, std::string> rows;
  for (std::string line; std::getline(section, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) rows[m[1].str()] += line + "\n";
  }
  return rows;
}

} // namespace

TEST_CASE("docs/security.md has a row for every class of the outside hack corpus, with its source") {
  const json manifest = json::parse(read_file(fixtures_dir() / "outside" / "manifest.json"));
  const auto rows = table_rows(read_file(source_dir() / "docs" / "security.md"));
  std::set<std::string> attacks;
  auto expect_row = [&](const json& entry) {
    const std::string attack = entry.at("attack");
    if (attack == "bystander") return;
    attacks.insert(attack);
    INFO(attack);
    REQUIRE(rows.count(attack) == 1);
    CHECK(contains(rows.at(attack), entry.at("sources").at(0).at("url").get<std::string>()));
  };
  for (const auto& [file, entry] : manifest.at("files").items())
    expect_row(entry);
  for (const auto& entry : manifest.at("out_of_scope"))
    expect_row(entry);
  for (const auto& [attack, row] : rows) {
    INFO("a row for an attack the manifest does not have: " << attack);
    CHECK(attacks.count(attack) == 1);
  }
}

TEST_CASE("docs/security.md's table of the timed window names every attack of the window corpus") {
  const json manifest = json::parse(read_file(fixtures_dir() / "window" / "manifest.json"));
  const std::string doc = read_file(source_dir() / "docs" / "security.md");
  const auto start = doc.find("## The timed window");
  REQUIRE(start != std::string::npos);
  const std::string section = doc.substr(start, doc.find("\n## ", start + 1) - start);
  for (const auto& [file, entry] : manifest.at("files").items()) {
    const std::string attack = entry.at("attack");
    if (attack == "bystander") continue;
    INFO(attack << " (" << file << ")");
    CHECK(contains(section, "`window/` " + attack));
  }
}
