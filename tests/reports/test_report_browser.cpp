// Opens `kj report`'s pages in headless Chromium (Debian's `chromium`, flags of PLATFORMS.md) the way a user
// would: no console errors, both charts drawn, a screenshot in the test output folder, and every injection
// attempt in the fixture shown as text. Skips where Chromium or Chart.js is missing (the GPU machine).
#include "tests/reports/report_fixture.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

using namespace kj::test;
using namespace kj::test::reports;
namespace fs = std::filesystem;

namespace {

std::string chromium_binary() {
  if (const char* env = std::getenv("KJ_CHROMIUM"); env && *env) return env;
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (fs::exists(path)) return path;
  return "";
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs Chromium headless on a page with a fresh profile; `mode` is --dump-dom or --screenshot=FILE.
// Returns stdout (the DOM for --dump-dom); stderr, with the page's console messages, goes to `log`.
std::string chromium(const std::string& binary, const fs::path& page, const std::string& mode,
                     const fs::path& work, const fs::path& log) {
  static int profile = 0;
  const fs::path out = work / ("chromium-" + std::to_string(profile) + ".out");
  const std::string command =
      "timeout 120 " + quoted(binary) +
      " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --enable-logging=stderr --v=0 --window-size=1400,2400"
      " --user-data-dir=" +
      quoted((work / ("profile-" + std::to_string(profile++))).string()) + " " + mode + " " +
      quoted("file://" + page.string()) + " >" + quoted(out.string()) + " 2>" + quoted(log.string());
  const int status = std::system(command.c_str());
  INFO(command << "\n" << read_file(log));
  REQUIRE(status == 0);
  return read_file(out);
}

// Console messages of the page: Chromium logs them as "...:CONSOLE(line)] ...".
std::vector<std::string> console_lines(const std::string& log) {
  std::vector<std::string> lines;
  std::regex console(R"(CONSOLE\(\d+\)\].*)");
  for (std::sregex_iterator it(log.begin(), log.end(), console), end; it != end; ++it)
    lines.push_back(it->str());
  return lines;
}

int attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex(name + R"(="(\d+))"))) return -1;
  return std::stoi(m[1]);
}

} // namespace

TEST_CASE("Chromium opens the report: charts drawn, no console errors, injected scripts shown as text") {
  const std::string binary = chromium_binary();
  if (binary.empty()) return skip_test("no chromium (Debian package chromium) on this machine");
  scratch_dir dir;
  build_report_db(dir / "kj.sqlite");
  const fs::path out = dir / "report";
  const auto r = run_kj({"report", "--db", (dir / "kj.sqlite").string(), "-o", out.string()});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  if (r.out.find("charts left out") != std::string::npos)
    return skip_test("no Chart.js (Debian package libjs-chart.js) on this machine");

  const fs::path output = fs::path(KJ_TEST_OUTPUT_DIR) / "reports";
  fs::create_directories(output);
  const std::string dom = chromium(binary, out / "index.html", "--dump-dom", dir.path(), dir / "index.log");
  const std::string log = read_file(dir / "index.log");
  CHECK(console_lines(log).empty());
  CHECK(attribute(dom, "data-charts") == 2);
  CHECK(attribute(dom, "data-errors") == -1); // the page's error listener never fired
  std::smatch inked;
  REQUIRE(std::regex_search(dom, inked, std::regex(R"re(data-inked="(\d+),(\d+)")re")));
  CHECK(std::stoi(inked[1]) > 2000); // pixels drawn on each canvas
  CHECK(std::stoi(inked[2]) > 2000);
  // The payload is text: escaped in the DOM, never an element. Our page has exactly three scripts.
  CHECK(dom.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(dom.find("<script>alert(1)") == std::string::npos);
  std::size_t scripts = 0;
  for (std::size_t at = dom.find("<script"); at != std::string::npos; at = dom.find("<script", at + 1))
    ++scripts;
  CHECK(scripts == 3);

  // The evaluation page of the injecting candidate: its source, error and finding are text too.
  const auto report = nlohmann::json::parse(read_file(out / "report.json"));
  std::int64_t evil = 0;
  for (const auto& p : report["problems"])
    if (p["producer"].get<std::string>().rfind("evil", 0) == 0) evil = p["evaluation_id"];
  REQUIRE(evil > 0);
  const fs::path page = out / "e" / (std::to_string(evil) + ".html");
  const std::string evil_dom = chromium(binary, page, "--dump-dom", dir.path(), dir / "page.log");
  CHECK(console_lines(read_file(dir / "page.log")).empty());
  CHECK(evil_dom.find("<script>alert(1)") == std::string::npos);
  CHECK(evil_dom.find("# &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;") !=
        std::string::npos);                             // source
  CHECK(evil_dom.find("<script") == std::string::npos); // evaluation pages run no script at all

  const fs::path shot = output / "report.png";
  fs::remove(shot);
  chromium(binary, out / "index.html", "--screenshot=" + quoted(shot.string()), dir.path(), dir / "shot.log");
  REQUIRE(fs::exists(shot));
  CHECK(fs::file_size(shot) > 20000);
}
