// The checks the hostile corpus's manifest asks for (tests/fixtures/hostile/manifest.json, its "schema").
#pragma once

#include "tests/support/paths.hpp"

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace kj::test::hostile {

// A corpus is a folder with a manifest.json (tests/fixtures/hostile/manifest.json's "schema") and the files
// it names, cpu/ and cuda/ candidates for the built-in suite: the hostile corpus (root()) or the outside one.
std::filesystem::path root();
nlohmann::json manifest(const std::filesystem::path& corpus = root());

// The files of `device` ("cpu" or "cuda") to run. On CUDA every file. On the CPU, where the manifest has
// "ci_attacks", what a CI run can afford: those attacks among the files that compile no extension, and the
// bystanders of levels 1 and 2 (KJ_HOSTILE_ALL=1: every file that compiles nothing, every bystander); without
// "ci_attacks", every file that compiles nothing. fork_bomb and host_oom run with their caps on.
std::vector<std::string> select(const std::filesystem::path& corpus, const nlohmann::json& manifest,
                                const std::string& device);

// Runs `kj run --device DEVICE` over the corpus's selection beside a listener, with the planted secrets, and
// checks everything the manifest asks. Returns kj's result (for a caller that skips when there is no GPU).
command_result run_and_check(const std::string& device, const std::filesystem::path& corpus = root());
// The same over `files` of the corpus (its manifest's names) plus `extra` candidates from elsewhere (judged,
// not checked against this manifest), in a cache folder of its own: `cache` when given (kept, for a second
// run).
command_result run_and_check(const std::string& device, const std::filesystem::path& corpus,
                             const std::vector<std::string>& files,
                             const std::vector<std::filesystem::path>& extra = {},
                             const std::filesystem::path& cache = {});

// A TCP listener on 127.0.0.1 that counts connections (the network attacks' target).
class listener {
public:
  listener();
  ~listener();
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;
  int port() const { return m_port; }
  int connections() const { return m_connections.load(); }

private:
  int m_fd = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_connections{0};
  std::thread m_thread;
};

// The attacks' environment for the run: planted keys, the listener's port, HOME, short guard delays, the
// memory the OOM attack stops at (above the run's --memory-limit); restored when it goes.
class environment {
public:
  environment(const nlohmann::json& manifest, const std::filesystem::path& home,
              const std::filesystem::path& cache, int port, int oom_cap_gb);
  ~environment();
  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;

private:
  std::vector<std::pair<std::string, std::string>> m_saved; // name, old value ("\x01" when unset)
};

void remove_markers(const nlohmann::json& manifest, const std::vector<std::string>& files,
                    const std::filesystem::path& home, const std::filesystem::path& cwd,
                    const std::filesystem::path& cache);
int check_after_s(const nlohmann::json& manifest, const std::vector<std::string>& files);

void check_row(const nlohmann::json& entry, const std::string& file, const nlohmann::json& rows);
void check_leftovers(const nlohmann::json& entry, const std::string& file, const std::filesystem::path& home,
                     const std::filesystem::path& cwd, const std::filesystem::path& cache);
void check_no_secret(const nlohmann::json& manifest, const std::vector<std::filesystem::path>& places,
                     const std::string& printed);
void check_db(const std::filesystem::path& db, double max_mb);

} // namespace kj::test::hostile
