// One run of the hostile corpus through the real `kj`, on the CPU or on CUDA, and every check of its
// manifest.
#include "tests/acceptance/hostile_checks.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"

#include <chrono>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::test::hostile {

command_result run_and_check(const std::string& device, const fs::path& corpus) {
  return run_and_check(device, corpus, select(corpus, hostile::manifest(corpus), device));
}

command_result run_and_check(const std::string& device, const fs::path& corpus,
                             const std::vector<std::string>& files, const std::vector<fs::path>& extra,
                             const fs::path& own_cache) {
  const json manifest = hostile::manifest(corpus);
  scratch_dir dir;
  const fs::path home = dir / "home", cwd = dir / "cwd", candidates = dir / "candidates";
  for (const auto& d : {home, cwd, candidates})
    fs::create_directories(d);
  for (const auto& f : files)
    fs::copy_file(corpus / f, candidates / fs::path(f).filename());
  for (const auto& f : extra)
    fs::copy_file(f, candidates / f.filename());
  listener listener;
  // its own: the cache attacks must not reach other tests
  const fs::path cache = own_cache.empty() ? dir / "cache" : own_cache;
  environment env(manifest, home, cache, listener.port(), device == "cuda" ? 12 : 2);
  remove_markers(manifest, files, home, cwd, cache);

  const fs::path db = dir / "kj.sqlite";
  const auto r = run_kj(
      {"run", "--device", device, "--builtin", "--candidates", candidates.string(), "--db", db.string(),
       "--cache-dir", cache.string(), "--build-jobs", device == "cuda" ? "8" : "2",
       // the spinning attack runs into --timeout; on the CPU no other candidate of these corpora takes 13 s
       // (a whole evaluation, kj's own work included, which --timeout does not count); CUDA keeps room for a
       // first forward's library loads (it was 60 s, which the gate's hostile check waited out)
       "--timeout", device == "cuda" ? "30" : "25", "--build-timeout", "600", "--max-time-ms", "200",
       // Below the attacks' guards (KJ_HOSTILE_OOM_CAP_GB 2 or 12 GiB, KJ_HOSTILE_FORK_CAP 32),
       // above what an honest runner holds: a CUDA runner's libraries alone are about 1.5 GiB.
       "--memory-limit", device == "cuda" ? "6" : "1", "--process-limit", "16", "--run-id", "hostile"},
      cwd);
  if (no_cuda_device(r)) return r;
  INFO(r.err.substr(r.err.size() > 6000 ? r.err.size() - 6000 : 0));
  REQUIRE(r.exit_code == 0); // run_completes
  std::this_thread::sleep_for(std::chrono::seconds(check_after_s(manifest, files)));

  const auto results = run_kj({"results", "--db", db.string(), "--run", "hostile", "--format", "json"});
  REQUIRE(results.exit_code == 0);
  const json rows = json::parse(results.out);
  CHECK(rows.size() == files.size() + extra.size());
  for (const auto& f : files)
    check_row(manifest.at("files").at(f), f, rows);
  for (const auto& f : files)
    check_leftovers(manifest.at("files").at(f), f, home, cwd, cache);
  check_no_secret(manifest, {db, cache, fs::path("/tmp")}, r.out + r.err + results.out);
  CHECK(listener.connections() == 0);
  check_db(db, 20);
  return r;
}

} // namespace kj::test::hostile
