// Content-addressed builds: each distinct candidate source compiles in a folder of its own, named by a hash
// of everything the compiled code depends on, whatever extension `name` the candidate passes to load_inline.
#pragma once

#include "core/verdict.hpp"
#include "engine/exec/job_runner.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace kj::exec {

// What a candidate's compiled extensions depend on; build_key() hashes exactly these fields.
struct build_key_fields {
  std::string source;                            // the candidate file as given
  std::map<std::string, std::int64_t> overrides; // module constants rewritten before import
  std::string device;                            // cpu or cuda
  std::string python, torch, torch_cuda;         // versions
  std::string cuda_arch;                         // e.g. "9.0" (TORCH_CUDA_ARCH_LIST, else the GPU's)
  std::string nvcc, cxx;                         // compiler versions
  std::string flags;                             // CFLAGS/CXXFLAGS/... that torch's builds read
  int recipe = 2; // bumped when kj changes how it builds, so old folders are not reused (2: content hashed)
};
std::string build_key(const build_key_fields& fields);

// How a build ended: compiled; deferred (its import needs the GPU: the runner imports and compiles it there);
// failed, with the verdict it gives its candidate (compile_error, load_error, timeout, crashed, ...); or cut
// by Ctrl-C (it says nothing of the source: never cached, never a verdict).
enum class build_end { ok, deferred, failed, interrupted };

// A build's result as the cache keeps it (status.json beside the compiled extensions).
struct build_record {
  std::string key;
  build_end end = build_end::ok;
  kj::verdict failure = kj::verdict::crashed; // when it failed
  std::string log;                            // the end of the compiler's and the import's output
  double seconds = 0;
  std::string created_at;
  bool cached = false; // found in the cache, not built now
  // sha256 over every file the build left in its folder (names, kinds, contents), taken by kj once the build
  // had ended and its folder was kj's again; a cached "ok" is used only while the folder still matches.
  std::string content;
};

// The content hash of a build folder's compiled extensions (build_record::content).
std::string build_content(const std::filesystem::path& folder);

// A build's status by name, as status.json and the DB's builds table keep it: "ok", "deferred",
// "interrupted", or the failure's verdict name.
std::string status_name(const build_record& record);

// Whether a source always ends the same way again (the next build would only repeat it): compiled, deferred,
// or failed to compile or to load. Those are cached.
bool build_is_final(const build_record& record);

class build_cache {
public:
  explicit build_cache(std::filesystem::path root); // usually <cache dir>/builds
  const std::filesystem::path& root() const { return m_root; }

  // root/<first two hex digits>/<key>
  std::filesystem::path dir(const std::string& key) const;
  // The cached result of a final build of `key`, if any: an "ok" build only while its folder still holds what
  // kj hashed after building it (a changed or damaged folder is built again).
  std::optional<build_record> lookup(const std::string& key) const;
  // Forgets the cached result of `key` (under its lock): its next use builds it again. A cached build that
  // failed to load in the runner is rebuilt once this way, never recorded as the candidate's load_error.
  void forget(const std::string& key) const;
  // Records a build's result; only final statuses are kept.
  void store(const build_record& record) const;

  // Builds `key` with `message` unless a final result is cached: an exclusive lock on the key's folder
  // (flock, so other kj processes on the same cache wait too) is held while the worker compiles. Two jobs of
  // the same key run one build; jobs of other keys never share a folder.
  build_record build(const job_runner& runner, const std::string& key, const job& message,
                     launch_spec launch) const;

private:
  std::filesystem::path m_root;
};

} // namespace kj::exec
