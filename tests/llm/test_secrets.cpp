// An API key planted in the environment must reach the provider and nothing else: not the DB, not kj's
// output, not the scratch folders and worker logs (candidate code runs there and prints its environment), not
// reports, even when the server quotes the key back in an error.
#include "llm_test_support.hpp"
#include "tests/support/catch_compat.hpp"

#include <cstdlib>
#include <random>

using namespace kj;
using namespace kj::test;
namespace fs = std::filesystem;

namespace {

std::string planted_key() {
  std::random_device rd;
  return "sk-ant-kjtest-" + std::to_string(rd()) + std::to_string(rd());
}

} // namespace

TEST_CASE("a planted API key is found nowhere kj writes, though the server received it") {
  fake_llm_server server(llm_fixtures(), llm_fixtures() / "answers_env");
  scratch_dir dir;
  const std::string key = planted_key();
  ::setenv("ANTHROPIC_API_KEY", key.c_str(), 1);
  const std::string db = (dir / "kj.sqlite").string();
  std::vector<command_result> outputs;
  // A generation judged by kj run (sample 0 prints its environment; sample 1 has no code) ...
  outputs.push_back(run_kj({"run",
                            "--adapter",
                            "anthropic",
                            "--base-url",
                            server.base_url("anthropic"),
                            "--model",
                            "claude-test",
                            "--samples",
                            "2",
                            "--level",
                            "1",
                            "--ids",
                            "1",
                            "--device",
                            "cpu",
                            "--no-timing",
                            "--no-strict",
                            "--keep-scratch",
                            "--cache-dir",
                            (dir / "cache").string(),
                            "--prices",
                            (llm_fixtures() / "prices.json").string(),
                            "--db",
                            db,
                            "--run-id",
                            "secret"}));
  INFO(outputs.back().err);
  REQUIRE(outputs.back().exit_code == 0);
  // ... a server that quotes the key back in its 401 ...
  outputs.push_back(
      run_kj({"generate", "--adapter", "anthropic", "--base-url", server.base_url("anthropic"), "--model",
              "echo_key", "--level", "1", "--ids", "1", "--db", db, "--run-id", "echo"}));
  CHECK(outputs.back().exit_code == 1);
  CHECK(outputs.back().err.find("invalid x-api-key: [redacted]") != std::string::npos);
  // ... and every report of them.
  for (const char* format : {"table", "json", "csv"})
    outputs.push_back(run_kj({"results", "--db", db, "--run", "secret", "--format", format}));
  outputs.push_back(run_kj({"costs", "--db", db, "--run", "secret"}));
  outputs.push_back(run_kj({"costs", "--db", db, "--run", "echo", "--format", "json"}));
  ::unsetenv("ANTHROPIC_API_KEY");

  // The key did go where it belongs.
  std::size_t sent = 0;
  for (const auto& r : server.requests())
    sent += r.headers.count("x-api-key") && r.headers.at("x-api-key") == key;
  CHECK(sent == 3);
  // The scan covers what it must: the worker logs with the candidate's environment dump, the recorded error.
  std::size_t files = 0, dumps = 0;
  bool redacted_in_db = false;
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    if (!entry.is_regular_file()) continue;
    ++files;
    const std::string text = read_file(entry.path());
    INFO(entry.path().string());
    CHECK(text.find(key) == std::string::npos);
    dumps += text.find("KJ-ENVIRONMENT-DUMP") != std::string::npos;
    redacted_in_db |= entry.path().filename().string().rfind("kj.sqlite", 0) == 0 &&
                      text.find("invalid x-api-key: [redacted]") != std::string::npos;
  }
  CHECK(files > 3);
  CHECK(dumps >= 1);
  CHECK(redacted_in_db);
  for (const auto& r : outputs) {
    CHECK(r.out.find(key) == std::string::npos);
    CHECK(r.err.find(key) == std::string::npos);
  }
  CHECK(outputs[2].out.find("anthropic/claude-test") != std::string::npos); // the report itself was written
}
