// Runs the real `kj run` on the built-in suite's CPU sizes (identity candidates, no timing) four ways:
// without interruption; killed with SIGKILL after its first evaluation and resumed; and as shards 1/2 and 2/2
// merged with `kj merge`. Each must judge the same candidates with the same verdicts, once. Shard 1 runs on a
// pseudo-terminal (util-linux `script`), where the progress view shows; elsewhere it stays quiet.
#include "db/sqlite.hpp"
#include "db/store.hpp"
#include "tests/acceptance/live_kj.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fmt/core.h>
#include <map>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace kj::test;
using kj::db::sqlite::connection;

namespace {

std::vector<std::string> run_args(const scratch_dir& dir, const std::string& db, const std::string& run_id) {
  return {"run",
          "--device",
          "cpu",
          "--level",
          "1",
          "--ids",
          "1-3",
          "--candidates",
          "identity",
          "--no-timing",
          "--no-strict",
          "--timeout",
          "600",
          "--cache-dir",
          (dir / "cache").string(),
          "--db",
          (dir / db).string(),
          "--run-id",
          run_id};
}

// The run's evaluations as (level/number/producer/sample -> verdict), and whether any candidate is twice.
std::map<std::string, std::string> verdicts(const fs::path& db, const std::string& run_id) {
  const auto store = kj::db::store::open_read_only(db);
  std::map<std::string, std::string> out;
  kj::db::evaluation_filter filter;
  filter.run_uid = run_id;
  filter.samples = false;
  for (const auto& row : store.evaluation_rows(filter)) {
    const std::string key = fmt::format("L{}/{} {} s{}", row.level, row.number, row.producer, row.sample);
    INFO(key);
    CHECK(out.emplace(key, kj::name_of(row.verdict)).second);
  }
  return out;
}

std::string query_text(const fs::path& db, const std::string& sql) {
  auto c = connection::open(db, connection::open_mode::read_only);
  return c.query_text(sql, "test query");
}

// Runs a shell command line (through util-linux `script` for a pseudo-terminal), returning its output.
std::pair<int, std::string> shell(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string quoted(const std::vector<std::string>& args) {
  std::string line = kj_binary().string();
  for (const auto& a : args)
    line += " '" + a + "'";
  return line;
}

} // namespace

TEST_CASE("a killed and resumed run, and a sharded and merged one, judge what an uninterrupted run does") {
  scratch_dir dir;
  const auto whole = run_kj(run_args(dir, "whole.sqlite", "whole"));
  INFO(whole.err);
  REQUIRE(whole.exit_code == 0);
  const auto expected = verdicts(dir / "whole.sqlite", "whole");
  REQUIRE(expected.size() == 3);
  CHECK_FALSE(contains(whole.err, "/min, ETA")); // stderr is a pipe: no progress lines
  CHECK(contains(whole.err, "kj: judged 3 of 3 evaluations"));

  // kill -9 once the first evaluation is in the DB (polled: a loaded machine may take a while).
  const fs::path killed_db = dir / "killed.sqlite";
  const pid_t pid = start_kj(run_args(dir, "killed.sqlite", "killed"), dir / "killed.log");
  REQUIRE(pid > 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  int status = 0;
  bool exited = false;
  while (evaluations_so_far(killed_db, "killed") < 1 && std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(read_file(dir / "killed.log"));
  REQUIRE_FALSE(exited);
  ::kill(pid, SIGKILL);
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  const std::int64_t kept = evaluations_so_far(killed_db, "killed");
  CHECK((kept >= 1 && kept < 3));
  CHECK(query_text(killed_db, "PRAGMA integrity_check") == "ok");
  CHECK(query_text(killed_db, "SELECT status FROM runs WHERE run_uid = 'killed'") == "running");

  const auto resumed = run_kj(run_args(dir, "killed.sqlite", "killed"));
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "resuming run killed (interrupted"));
  CHECK(contains(resumed.err, fmt::format("{} evaluations already in this run are kept", kept)));
  CHECK(verdicts(killed_db, "killed") == expected);
  CHECK(query_text(killed_db, "SELECT count(*) = count(DISTINCT candidate_id) FROM evaluations") == "1");
  CHECK(query_text(killed_db, "PRAGMA integrity_check") == "ok");
  CHECK(query_text(killed_db, "SELECT status FROM runs WHERE run_uid = 'killed'") == "finished");

  // Shards: 1/2 on a pseudo-terminal (progress lines), 2/2 with --progress always into a pipe.
  auto first = run_args(dir, "shard-1.sqlite", "sharded");
  first.insert(first.end(), {"--shard", "1/2"});
  const auto [first_code, first_out] = shell("script -qec \"" + quoted(first) + "\" /dev/null 2>&1");
  INFO(first_out);
  REQUIRE(first_code == 0);
  auto second = run_args(dir, "shard-2.sqlite", "sharded");
  second.insert(second.end(), {"--shard", "2/2", "--progress", "always"});
  const auto two = run_kj(second);
  INFO(two.err);
  REQUIRE(two.exit_code == 0);
  const auto one = verdicts(dir / "shard-1.sqlite", "sharded");
  const auto other = verdicts(dir / "shard-2.sqlite", "sharded");
  CHECK(one.size() + other.size() == 3);
  CHECK(contains(first_out, fmt::format("kj: shard 1/2: {} of the plan's 3 candidates", one.size())));
  if (!one.empty()) CHECK(contains(first_out, fmt::format("| {} correct | ", one.size()))); // the tally
  if (!one.empty()) CHECK(contains(first_out, "/min, ETA"));
  if (!other.empty()) CHECK(contains(two.err, "/min, ETA"));

  const auto merge = run_kj({"merge", (dir / "shard-1.sqlite").string(), (dir / "shard-2.sqlite").string(),
                             "-o", (dir / "all.sqlite").string()});
  INFO(merge.out << merge.err);
  REQUIRE(merge.exit_code == 0);
  CHECK(contains(merge.out, "run sharded: finished, 3 evaluations; parts: shard 1/2"));
  CHECK(verdicts(dir / "all.sqlite", "sharded") == expected);
  const auto again =
      run_kj({"merge", (dir / "shard-2.sqlite").string(), "-o", (dir / "all.sqlite").string()});
  CHECK(again.exit_code == 0);
  CHECK(contains(again.out, "nothing new"));
  CHECK(verdicts(dir / "all.sqlite", "sharded") == expected);
}
