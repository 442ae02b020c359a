// The compatible verdict follows the chosen protocol: the same candidates judged under KernelBench's rules
// and under CUDA Agent's get the verdicts each fixture's header promises
// (tests/fixtures/candidates/protocols).
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <nlohmann/json.hpp>
#include <regex>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace kj::test;

TEST_CASE("the kernelbench and cuda-agent protocols judge by their own rules") {
  const fs::path candidates = fixtures_dir() / "candidates" / "protocols";
  scratch_dir dir;
  for (const std::string protocol : {"kernelbench", "cuda-agent"}) {
    DYNAMIC_SECTION(protocol) {
      const auto r = run_kj(
          {"run", "--device", "cpu", "--kernelbench", (fixtures_dir() / "problems").string(), "--level", "1",
           "--candidates", candidates.string(), "--protocol", protocol, "--no-timing", "--db",
           (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string(), "--run-id", protocol},
          dir.path());
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto results =
          run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--run", protocol, "--format", "json"});
      REQUIRE(results.exit_code == 0);
      const json rows = json::parse(results.out);
      REQUIRE(rows.size() == 7);
      const std::regex header("# kj-expect-" + protocol + ": (\\w+)");
      for (const auto& row : rows) {
        const std::string text = read_file(row["candidate"].get<std::string>());
        std::smatch m;
        REQUIRE(std::regex_search(text, m, header));
        INFO(row["candidate"].get<std::string>() << ": " << row["error"].get<std::string>());
        CHECK(row["verdict"] == m[1].str());
      }
      for (const auto& row : rows) // flipping process-wide numerics flags is reported, whatever the protocol
        if (row["candidate"].get<std::string>().find("problem_2_sample_3") != std::string::npos)
          CHECK(row["findings"].get<std::string>().find("global_flags") != std::string::npos);
      if (protocol == "cuda-agent") {
        CHECK(r.err.find("incorrect") != std::string::npos);
        const std::string all = results.out;
        CHECK(all.find("torch.nn.functional.linear") != std::string::npos);
        CHECK(all.find("load_state_dict") != std::string::npos);
        CHECK(all.find("dtype") != std::string::npos);
      }
    }
  }
}
