// The identity of a process that runs candidate code. When kj runs as root, each such process (a runner, a
// build) takes a uid and gid of its own, none of kj's and none of another sandbox's: no credential check then
// lets it reach kj's processes (prlimit, scheduler calls, /proc/<pid>/mem) or another candidate's files. An
// unprivileged kj's user namespace maps only kj's own uid; its candidates keep it (the PID namespace and the
// seccomp filter keep them from the rest, docs/security.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kj::exec {

struct sandbox_identity {
  std::uint32_t uid = 0, gid = 0;
  std::vector<std::uint32_t> groups; // supplementary groups: those of GPU device nodes closed to others
  bool own = false;                  // false: the process keeps kj's identity
  // KJ_SANDBOX_ID's value ("uid:gid[:group,...]"); "" when not own.
  std::string text() const;
};

// A fresh identity per call when kj is root and runs bubblewrap (KJ_SANDBOX_IDS=shared: kj's own), else kj's.
// Uids come from [KJ_SANDBOX_UID_BASE, +65536) (default 1509949440), a different one each call.
sandbox_identity next_identity(bool sandboxed);

// Gives `path` (with `recursive`, everything under it) to the identity; nothing when it is kj's own.
void hand_to(const sandbox_identity& id, const std::filesystem::path& path, bool recursive);

// Takes `path` and everything under it back to kj's own uid and gid, readable (and folders enterable) by
// every identity: a build's folder once its build has ended, so that no later process can change it.
void take_back(const std::filesystem::path& path);

// Called first thing by a sandboxed kj process (the runner, a build worker): takes the identity KJ_SANDBOX_ID
// names, with no other groups and no capabilities, and sets no_new_privs; unset or empty: keeps its own.
// False with `error` when it could not (the caller refuses to run candidate code then).
bool enter_identity(std::string& error);

// What sandboxed processes get here, for the run's record and kj doctor.
std::string identity_kind(bool sandboxed);

} // namespace kj::exec
