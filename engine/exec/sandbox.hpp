// The sandbox of processes that run candidate code (the runner, the build worker): a private filesystem view
// and no network through bubblewrap where the machine allows it, and a seccomp filter the process installs
// itself. docs/security.md says what each layer stops and what runs when a layer is missing.
#pragma once

#include "engine/exec/identity.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kj::exec {

struct sandbox_policy {
  std::filesystem::path scratch;                // read-write; the working directory
  std::vector<std::filesystem::path> writable;  // read-write besides scratch (a build folder, for builds)
  std::vector<std::filesystem::path> read_only; // exposed read-only (Python's prefixes, a build folder, ...)
  bool gpu = false;                             // expose /dev/nvidia* (and nothing else of /dev)
  sandbox_identity identity;                    // own: the process may switch to it (enter_identity)
  bool pid_namespace =
      true; // false: share kj's (a CUDA runner whose device cannot share memory by descriptor)
};

// How to start a process under the policy: argv_prefix goes before the program's own argv (empty: no
// namespace sandbox); `kind` is "bwrap" or "none", and `why_none` says why there is none.
struct sandbox_plan {
  std::vector<std::string> argv_prefix;
  std::string kind = "none";
  std::string why_none;
};

// bwrap when it is installed and works here (checked once per process), unless KJ_SANDBOX=none.
sandbox_plan plan_sandbox(const sandbox_policy& policy);

// What plan_sandbox would use on this machine, for the run's record: "bwrap", or "none: <why>".
std::string sandbox_kind();

// Whether sandboxed processes get a PID namespace of their own (bwrap, where the machine allows it): then
// they see no process of kj's or of another job's, and the namespace's end kills all they started.
bool sandbox_pid_namespace();

// The folders plan_sandbox exposes read-only to every sandboxed process, besides a policy's own.
std::vector<std::filesystem::path> system_folders();

// The first of `exposed` (folders or files) that is `path` or holds it, both taken absolute and canonical as
// far as they exist; empty when none does.
std::filesystem::path exposed_under(const std::filesystem::path& path,
                                    const std::vector<std::filesystem::path>& exposed);

// Installs the seccomp filter of candidate processes (no-op without libseccomp; `error` then says so):
// no ptrace or process_vm_* (no reaching into other processes), signals only to itself or its own group (the
// orchestrator and the judge cannot be killed or stopped), resource limits, scheduling, priorities, I/O
// priorities and page migration only of itself (prlimit64, sched_set*, setpriority, ioprio_set,
// migrate_pages, move_pages name no other process), no perf events, no IPv4/IPv6/packet sockets, no mount,
// namespace, module, keyring, bpf or clock calls. Returns false (with `error`) when it could not be
// installed.
bool install_candidate_seccomp(std::string& error);

// The part of that filter libseccomp 2.5 cannot express (two comparisons of one argument): kill, prlimit64,
// sched_set*, setpriority, ioprio_set, migrate_pages, move_pages and get_robust_list name only the caller
// (its pid or 0; kill also its own group), a classic-BPF filter stacked on libseccomp's (seccomp_self.cpp).
bool install_self_only_filter(std::string& error);

// Whether kj was built with libseccomp.
bool have_seccomp();

} // namespace kj::exec
