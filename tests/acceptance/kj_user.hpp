// A new user in a scratch folder: `kj ARGS --db DB` there, with the shared build cache and the environment
// variables given (the first-hour acceptance tests).
#pragma once

#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::test {

struct user {
  const scratch_dir& dir;
  std::map<std::string, std::string> env;
  std::string db() const { return (dir / "kj.sqlite").string(); }
  command_result kj(std::vector<std::string> args) const {
    args.insert(args.end(), {"--db", db()});
    args.insert(args.begin(), kj_binary().string());
    auto all = env;
    if (const char* cache = std::getenv("KJ_CACHE_DIR"); cache && *cache) all.emplace("KJ_CACHE_DIR", cache);
    const auto r = run_program(args, dir.path(), all);
    INFO("kj " << args[1] << "\n" << r.err);
    return r;
  }
  command_result run(std::vector<std::string> args) const {
    args.insert(args.begin(), {"run", "--device", "cpu", "--level", "1"});
    return kj(args);
  }
  nlohmann::json runs() const { return nlohmann::json::parse(kj({"runs", "--format", "json"}).out); }
  nlohmann::json results() const { return nlohmann::json::parse(kj({"results", "--format", "json"}).out); }
};

} // namespace kj::test
