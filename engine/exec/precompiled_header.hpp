// kj's precompiled torch/extension.h for CPU extension builds. Parsing torch's headers is most of a CPU
// load_inline build (a one-function extension at -O3: 29 s, 15 s with the header precompiled; 2 cores,
// 2026-12-05). kj makes the header itself, once per stack, with the exact flags torch's load_inline compiles
// main.cpp with (one .gch per variant of extra_cflags: none, and -O3), and checks that gcc takes it. A build
// then gets CPATH=<folder> and the folder read-only in its sandbox: gcc finds torch/extension.h.gch there
// before torch's own header and uses the variant whose flags match the build's; a build whose flags match
// none (another -std, -fopenmp, a define torch's headers read) reads the header as before. Only under bwrap,
// whose read-only bind keeps a candidate from rewriting the header its neighbours compile with.
#pragma once

#include "engine/exec/job_runner.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kj::exec {

class precompiled_header {
public:
  // The folder of the stack `stack_key` names (a hash of what the header depends on) under `root`.
  precompiled_header(const std::filesystem::path& root, const std::string& stack_key);
  const std::filesystem::path& folder() const { return m_folder; }

  // The extra_cflags variants kj precompiles for (the flags of most LLM-written load_inline calls).
  static const std::vector<std::vector<std::string>>& variants();

  // Whether a made and checked header is there: builds are offered it only then.
  bool ready() const;
  // Makes the header unless it is ready or failed before for this stack, by kj's own precompile job (no
  // candidate code), under an exclusive lock (other kj processes on this folder wait, then find it made).
  // Returns "" when made, else why not.
  std::string make(const job_runner& runner) const;

private:
  std::filesystem::path m_folder;
};

// The folder kj's precompiled headers lie in: $KJ_PCH_DIR, else <cache dir>/pch.
std::filesystem::path precompiled_header_root(const std::filesystem::path& cache_dir);

} // namespace kj::exec
