// Batch generation through the real `kj generate` against the fake provider: one Anthropic or Gemini batch at
// half the price, and an OpenAI batch polled again after kj was killed, billed once.
#include "llm_test_support.hpp"
#include "tests/support/catch_compat.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <thread>
#include <tuple>

using namespace kj;
using namespace kj::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json costs_of(const scratch_dir& dir, const std::string& db, const std::string& run) {
  const auto r = run_kj({"costs", "--db", (dir / db).string(), "--run", run, "--format", "json"});
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out)["models"][0];
}

} // namespace

TEST_CASE(
    "batch generation: one Anthropic or Gemini batch at half the price, candidates as if asked one by one") {
  const std::tuple<const char*, const char*, const char*, const char*> providers[] = {
      {"anthropic", "claude-test-batch", "ANTHROPIC_API_KEY", "msgbatch_fake0001"},
      {"gemini", "gemini-test-batch", "GEMINI_API_KEY", "batches/fake0001"}};
  for (const auto& [adapter, model, key, batch_id] : providers) {
    INFO(adapter);
    ::setenv(key, "test-key", 1);
    const auto args = [&](const fake_llm_server& server, const scratch_dir& dir, const std::string& db,
                          std::vector<std::string> more) {
      auto a = generate_args(
          server, dir, adapter, model,
          {"--samples", "2", "--level", "1", "--ids", "1-2", "--out", (dir / db).string() + ".out"});
      a.insert(a.end(), more.begin(), more.end());
      std::replace(a.begin(), a.end(), (dir / "kj.sqlite").string(), (dir / db).string());
      return a;
    };
    scratch_dir dir;
    fake_llm_server live_server(llm_fixtures(), source_dir() / "examples" / "candidates" / "cpu");
    // One at a time: the fake answers the K-th request of a problem with its sample K file, as a batch does.
    const auto live =
        run_kj(args(live_server, dir, "live.sqlite", {"--run-id", "live", "--concurrency", "1"}));
    INFO(live.err);
    REQUIRE(live.exit_code == 0);
    fake_llm_server server(llm_fixtures(), source_dir() / "examples" / "candidates" / "cpu");
    const auto batched =
        run_kj(args(server, dir, "batch.sqlite", {"--run-id", "batched", "--batch", "--batch-poll", "0.05"}));
    INFO(batched.err);
    REQUIRE(batched.exit_code == 0);
    CHECK(server.batch_submissions() == 1);
    CHECK(server.batch_polls() == 2);
    CHECK(server.violations().empty()); // each item is a documented request
    CHECK(batched.err.find(fmt::format("submitted batch {} of 4 requests", batch_id)) != std::string::npos);
    // The same candidates as the live run, at half its cost.
    for (const auto& entry : fs::directory_iterator(dir / "live.sqlite.out"))
      CHECK(read_file(dir / "batch.sqlite.out" / entry.path().filename()) == read_file(entry.path()));
    const json a = costs_of(dir, "live.sqlite", "live"), b = costs_of(dir, "batch.sqlite", "batched");
    CHECK(b["calls"] == 4);
    CHECK(
        (b["batch_calls"] == 4 && a["batch_calls"] == 0)); // kj costs says which calls the batch tier priced
    const auto table = run_kj({"costs", "--db", (dir / "batch.sqlite").string(), "--run", "batched"});
    CHECK(table.out.find("4 calls were answered through the provider's batch API") != std::string::npos);
    CHECK(b["output_tokens"] == a["output_tokens"]);
    CHECK(b["cost_usd"].get<double>() == Approx(a["cost_usd"].get<double>() / 2));
    // Asked again: every answer is recorded, no new batch.
    const auto again =
        run_kj(args(server, dir, "batch.sqlite", {"--run-id", "batched", "--batch", "--batch-poll", "0.05"}));
    ::unsetenv(key);
    INFO(again.err);
    CHECK(again.exit_code == 0);
    CHECK(server.batch_submissions() == 1);
  }
}

TEST_CASE("batch generation: kj killed while it polls an OpenAI batch resumes the same batch, billed once") {
  ::setenv("OPENAI_API_KEY", "test-key", 1);
  fake_llm_server server(llm_fixtures(), source_dir() / "examples" / "candidates" / "cpu");
  server.set_batch_polls(1000); // until the test lets it end
  scratch_dir dir;
  const auto args = generate_args(server, dir, "openai", "gpt-5.4",
                                  {"--samples", "2", "--level", "1", "--ids", "1-2", "--run-id", "b",
                                   "--batch", "--batch-poll", "0.1", "--effort", "high"});
  const pid_t pid = start_kj(args, dir / "first.log");
  REQUIRE(pid > 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (server.batch_polls() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  INFO(read_file(dir / "first.log"));
  REQUIRE(server.batch_polls() >= 2);
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  server.set_batch_polls(0); // the next poll finds it ended
  const auto resumed = run_kj(args);
  ::unsetenv("OPENAI_API_KEY");
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("resuming batch batch_fake0001") != std::string::npos);
  CHECK(server.batch_submissions() == 1); // never submitted twice
  for (const auto& r : server.requests())
    CHECK(r.path == "(batch)"); // every request went in the batch, to the Responses API
  CHECK(server.requests().size() == 4);
  CHECK(server.violations().empty());
  const json c = costs_of(dir, "kj.sqlite", "b");
  CHECK(c["calls"] == 4); // billed once
  CHECK(c["reasoning_tokens"].get<int>() >= 0);
  CHECK(c["cost_usd"].get<double>() > 0);
}
