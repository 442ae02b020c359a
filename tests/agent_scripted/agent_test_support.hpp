// Shared by the scripted agent tests: the fake provider with the agent's scripts, `kj agent`'s arguments, and
// reading a run's trajectories back.
#pragma once

#include "db/store.hpp"
#include "tests/fake_llm/fake_llm_server.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <string>
#include <vector>

namespace kj::test {

inline std::filesystem::path agent_fixtures() {
  return fixtures_dir() / "agent";
}

// The build cache: $KJ_CACHE_DIR when set (the scripts' kernels are built once for all tests), else the
// test's own folder.
inline std::string agent_cache(const scratch_dir& dir) {
  const char* shared = std::getenv("KJ_CACHE_DIR");
  return shared && *shared ? shared : (dir / "cache").string();
}

// `kj agent` against the fake provider on the CPU with short timings; `more` adds or overrides options.
inline std::vector<std::string> agent_args(const fake_llm_server& server, const scratch_dir& dir,
                                           const std::string& adapter, const std::string& model,
                                           const std::vector<std::string>& more) {
  std::vector<std::string> args{"agent",
                                "--adapter",
                                adapter,
                                "--base-url",
                                server.base_url(adapter),
                                "--model",
                                model,
                                "--device",
                                "cpu",
                                "--db",
                                (dir / "kj.sqlite").string(),
                                "--cache-dir",
                                agent_cache(dir),
                                "--workspaces",
                                (dir / "ws").string(),
                                "--prices",
                                (agent_fixtures() / "prices.json").string(),
                                "--retry-base",
                                "0.01",
                                "--max-time-ms",
                                "150",
                                "--min-time-ms",
                                "20",
                                "--level",
                                "1"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Every assistant text of a trajectory: a "SCRIPT MISMATCH" there means kj did not send what the script
// expected (the fake server says what was missing).
inline void require_script_followed(const db::trajectory_transcript& t) {
  for (const auto& turn : t.turns) {
    INFO("turn " << turn.turn << ": " << turn.text);
    REQUIRE(turn.text.find("SCRIPT MISMATCH") == std::string::npos);
  }
}

// The tools called in a trajectory, in order.
inline std::vector<std::string> tools_called(const db::trajectory_transcript& t) {
  std::vector<std::string> tools;
  for (const auto& calls : t.calls)
    for (const auto& c : calls)
      tools.push_back(c.tool);
  return tools;
}

} // namespace kj::test
