// Implements check_builtin_suite with the real `kj` binary.
#include "tests/support/suite_check.hpp"

#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>

using nlohmann::json;
namespace fs = std::filesystem;

namespace kj::test {

void check_builtin_suite(const std::string& device) {
  scratch_dir dir;
  // The extension build cache outlives the test (KJ_CACHE_DIR from scripts/test), so reruns do not recompile.
  const char* cache = std::getenv("KJ_CACHE_DIR");
  const std::string cache_dir = cache && *cache ? cache : (dir / "cache").string();
  std::vector<std::string> args{"run", "--device", device, "--db", (dir / "kj.sqlite").string()};
  args.insert(args.end(), {"--cache-dir", cache_dir, "--min-samples", "5", "--max-time-ms", "200"});
  // On the CPU every sample starts after a flush of the last-level cache (timing/cache_flush.hpp, a few ms):
  // the default 100 ms and 0.5% take hundreds of them for these sub-millisecond examples. The verdicts are
  // this test's subject, so a 2% interval after 10 ms will do (judging 92 s -> 63 s on two cores).
  if (device == "cpu") args.insert(args.end(), {"--min-time-ms", "10", "--target-ci", "0.02"});
  const auto r = run_kj(args, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("results are in") != std::string::npos);

  const auto results = run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--format", "json"});
  REQUIRE(results.exit_code == 0);
  const json rows = json::parse(results.out);
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(source_dir() / "examples" / "candidates" / device))
    files += entry.path().extension() == ".py";
  REQUIRE(rows.size() == files);
  static const std::regex expect(R"(# kj-expect: (\w+))");
  std::size_t correct = 0, moved = 0;
  for (const auto& row : rows) {
    const std::string path = row["candidate"];
    std::smatch m;
    const std::string text = read_file(path);
    REQUIRE(std::regex_search(text, m, expect));
    INFO(path << ": " << row["error"].get<std::string>()
              << " untrusted: " << row["untrusted"].get<std::string>());
    CHECK(row["device"] == device);
    CHECK(row["verdict"] == m[1].str());
    if (row["verdict"] != "correct") continue;
    // a speedup, unless the shared machine moved under all of kj's attempts at a comparable pair (CPU)
    const bool host_moved = device == "cpu" && speedup_withheld_for_host(row);
    CHECK((row["speedup"].is_number() || host_moved));
    ++correct;
    moved += host_moved ? 1 : 0;
    // the GPU-busy share comes from the kernel trace: none on the CPU
    if (device == "cuda")
      CHECK(row["gpu_busy_share"].get<double>() > 0);
    else
      CHECK(row["gpu_busy_share"].is_null());
  }
  // a machine that moves under every pair is a broken probe, not a busy neighbour: most rows keep a speedup
  INFO(moved << " of " << correct << " correct rows without a speedup because the host moved");
  CHECK(2 * moved <= correct);
}

bool speedup_withheld_for_host(const nlohmann::json& row) {
  return row.value("untrusted", std::string()).starts_with("the host's speed moved") &&
         row["speedup"].is_null();
}

} // namespace kj::test
