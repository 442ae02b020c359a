// The processes below the judge (the runner, what it started, orphans reparented to the judge): listed from
// /proc, measured, killed; and the words for how a process ended.
#pragma once

#include "engine/exec/process.hpp"

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kj::worker {

using exec::descendants; // engine/exec/process.hpp

// SIGKILLs them, repeatedly until none is left (a fork bomb keeps forking while it is killed), and reaps.
void kill_descendants(int root);

// Runners started ahead for a later candidate (engine/worker/runner_pool.hpp) are the judge's children too:
// while one waits, its tree is not the running candidate's (not counted against its limits, not stopped or
// killed with it). `spare(pid, true)` marks a runner's root as such, `spare(pid, false)` gives it to its
// candidate.
void spare(int pid, bool waiting);
// The same with the lock hold_spares() returned already held: a spare's launch takes it before its fork and
// marks the new pid before it lets go, so that no listing of the candidate's processes counts the new one.
std::unique_lock<std::mutex> hold_spares();
void spare_held(int pid, bool waiting);
// `root` and every process below it.
std::vector<int> tree_of(int root);
// The running candidate's processes: every descendant of the judge outside the spares' trees.
std::vector<int> candidate_tree();
// SIGKILLs what `list` returns, repeatedly until it returns nothing, and reaps.
void kill_all(const std::function<std::vector<int>()>& list);
// Resident memory of one process [bytes] (0 when it is gone).
std::uint64_t resident_bytes(int pid);
// Its proportional set size [bytes]: pages shared with other processes counted by their share, so that a
// sum over forked children counts a shared page once (/proc/PID/smaps_rollup; resident_bytes when
// unreadable).
std::uint64_t proportional_bytes(int pid);
// "was killed by signal 11 (Segmentation fault)", "exited with code 7": bubblewrap passes its child's end on
// as an exit code, 128 + the signal that killed it, which `sandboxed` reads as that signal.
std::string describe_status(int status, bool sandboxed);
// A process that closed its socket is usually ending: its own status says how, where a kill would hide it.
// Waits up to 2 s, then kills its group.
int wait_briefly_then_kill(pid_t pid);

} // namespace kj::worker
