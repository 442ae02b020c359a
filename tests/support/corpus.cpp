// Implements the corpus helpers: header parsing, the `kj run` over a corpus, and the per-row checks.
#include "tests/support/corpus.hpp"

#include "tests/support/catch_compat.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

using nlohmann::json;
namespace fs = std::filesystem;

namespace kj::test {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

bool list_contains(const std::string& list, const std::string& item) {
  const auto items = split_list(list);
  return std::find(items.begin(), items.end(), item) != items.end();
}

corpus_expectation read_corpus_expectation(const fs::path& candidate) {
  static const std::regex compatible(R"(# kj-expect: (\w+))"),
      strict(R"(# kj-strict: (pass|fail) ?([\w,]*))"), finding(R"(# kj-finding: ([\w,]+))");
  const std::string text = read_file(candidate);
  std::smatch m;
  corpus_expectation e;
  INFO(candidate.string());
  REQUIRE(std::regex_search(text, m, compatible));
  e.compatible = m[1];
  REQUIRE(std::regex_search(text, m, strict));
  e.strict = m[1];
  e.classes = split_list(m[2]);
  if (std::regex_search(text, m, finding)) e.findings = split_list(m[1]);
  return e;
}

namespace {

// Compiles <root>/kernels.py once into a folder that kj's workers see (PYTHONPATH is on their Python path,
// which the sandbox shows read-only): a candidate's process may load only what a build step compiled, and the
// shared module of a corpus is not a candidate's own load_inline. Returns the build's log where it failed.
std::string prebuild_kernels(const fs::path& root, const fs::path& cache) {
  const fs::path out = cache / "fixture-kernels" / root.filename();
  const fs::path log = cache / "fixture-kernels" / (root.filename().string() + ".log");
  fs::create_directories(out);
  const std::string command = std::string(KJ_TEST_PYTHON) + " " + (root / "kernels.py").string() +
                              " --build " + out.string() + " > " + log.string() + " 2>&1";
  const bool ok = std::system(command.c_str()) == 0;
  // The module beside its build: PYTHONPATH names only that folder, never the fixture's (kj refuses a
  // candidates folder under a path the sandbox exposes, and Python's path is exposed).
  std::error_code ec;
  fs::copy_file(root / "kernels.py", out / "kernels.py", fs::copy_options::overwrite_existing, ec);
  ::setenv("PYTHONPATH", out.string().c_str(), 1);
  return ok ? "" : "building " + (root / "kernels.py").string() + " failed:\n" + read_file(log);
}

} // namespace

command_result run_corpus(const fs::path& root, const std::vector<std::string>& args,
                          const scratch_dir& dir) {
  const char* cache = std::getenv("KJ_CACHE_DIR");
  const std::string cache_dir = cache && *cache ? cache : (dir / "cache").string();
  const std::string build_error = prebuild_kernels(root, cache_dir);
  std::vector<std::string> full{"run"};
  full.insert(full.end(), args.begin(), args.end());
  full.insert(full.end(),
              {"--kernelbench", (root / "problems").string(), "--candidates", (root / "candidates").string(),
               "--db", (dir / "kj.sqlite").string(), "--cache-dir", cache_dir});
  command_result r = run_kj(full, dir.path());
  r.err = build_error + r.err;
  return r;
}

namespace {

// An incorrect candidate's strict list: `compatible`, at most one failing class, and the `output` summary.
bool first_failure_only(const std::string& failed) {
  std::size_t classes = 0;
  for (std::size_t at = 0; at <= failed.size();) {
    const auto comma = std::min(failed.find(',', at), failed.size());
    const auto cls = failed.substr(at, comma - at);
    classes += !cls.empty() && cls != "compatible" && cls != "output";
    at = comma + 1;
  }
  return classes <= 1;
}

} // namespace

corpus_counts check_corpus_results(const fs::path& root, const fs::path& db, const std::string& device) {
  const auto results = run_kj({"results", "--db", db.string(), "--format", "json"});
  INFO(results.err);
  REQUIRE(results.exit_code == 0);
  const json rows = json::parse(results.out);

  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(root / "candidates"))
    files += entry.path().extension() == ".py" && entry.path().filename().string().rfind("level_", 0) == 0;
  REQUIRE(rows.size() == files);

  corpus_counts counts;
  for (const auto& row : rows) {
    const std::string path = row["candidate"];
    const corpus_expectation e = read_corpus_expectation(path);
    INFO(fs::path(path).filename().string()
         << ": verdict " << row["verdict"] << ", strict " << row["strict_verdict"] << " ["
         << row["strict_failed"] << "], findings [" << row["findings"]
         << "], error: " << row["error"].get<std::string>());
    if (!device.empty()) CHECK(row["device"] == device);
    if (e.compatible != "any") CHECK(row["verdict"] == e.compatible);
    CHECK(row["strict_verdict"] == e.strict);
    for (const auto& cls : e.classes)
      CHECK(list_contains(row["strict_failed"], cls));
    if (row["verdict"] != "correct") // strict stops at its first failing case once compatible failed
      CHECK(first_failure_only(row["strict_failed"].get<std::string>()));
    for (const auto& kind : e.findings)
      CHECK(list_contains(row["findings"], kind));
    (e.strict == "pass" ? counts.honest : counts.bad)++;
  }
  return counts;
}

bool no_cuda_device(const command_result& run) {
  return run.exit_code != 0 && run.err.find("sees no CUDA device") != std::string::npos;
}

void skip_test(const std::string& why) {
  std::cout << "kj-test-skipped: " << why
            << std::endl; // CTest's SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt)
#if defined(SKIP)
  SKIP(why);
#else
  WARN("skipped: " << why);
#endif
}

} // namespace kj::test
