// The candidates' second seccomp filter: calls that name a process may name only the caller (its pid, or 0
// for "myself"; kill also its own group). libseccomp 2.5 refuses two comparisons of one argument in a rule
// ("not 0 and not self"), so this one is a small classic-BPF program of its own; stacked filters take the
// most restrictive answer, so it only adds refusals to libseccomp's (sandbox.cpp).
#include "engine/exec/sandbox.hpp"

#include <string>

#if defined(__x86_64__)
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fmt/core.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>
#endif

namespace kj::exec {

#if defined(__x86_64__)
namespace {

// A system call whose argument `arg` names a process (32 bits compared), allowed only for `allowed` values;
// with `selector` >= 0, argument 0 must also equal it (setpriority's and ioprio_set's "which": a process).
struct self_rule {
  long nr;
  unsigned arg;
  std::vector<std::uint32_t> allowed;
  long selector = -1;
};

constexpr std::uint32_t k_deny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);

std::uint32_t low_word(unsigned arg) {
  return static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8 * arg); // little-endian: the low half
}

// [nr == rule.nr ? check : next]: the rule's block, which ends in ALLOW or the refusal.
void emit_rule(std::vector<sock_filter>& p, const self_rule& r) {
  std::vector<sock_filter> body;
  if (r.selector >= 0) {
    body.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, low_word(0)));
    body.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(r.selector), 1, 0));
    body.push_back(BPF_STMT(BPF_RET | BPF_K, k_deny));
  }
  body.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, low_word(r.arg)));
  for (std::uint32_t value : r.allowed) {
    body.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 1));
    body.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  body.push_back(BPF_STMT(BPF_RET | BPF_K, k_deny));
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(offsetof(seccomp_data, nr))));
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(r.nr), 0,
                       static_cast<std::uint8_t>(body.size())));
  p.insert(p.end(), body.begin(), body.end());
}

} // namespace

bool install_self_only_filter(std::string& error) {
  const auto self = static_cast<std::uint32_t>(::getpid());
  const std::vector<std::uint32_t> me{0, self};
  const std::vector<self_rule> rules{
      {SYS_kill, 0, {0, self, static_cast<std::uint32_t>(-static_cast<std::int32_t>(self))}},
      {SYS_prlimit64, 0, me},
      {SYS_sched_setaffinity, 0, me},
      {SYS_sched_setscheduler, 0, me},
      {SYS_sched_setparam, 0, me},
      {SYS_sched_setattr, 0, me},
      {SYS_migrate_pages, 0, me},
      {SYS_move_pages, 0, me},
      {SYS_get_robust_list, 0, me},
      {SYS_setpriority, 1, me, 0 /* PRIO_PROCESS */},
      {SYS_ioprio_set, 1, me, 1 /* IOPRIO_WHO_PROCESS */}};
  std::vector<sock_filter> p;
  // Another ABI's numbers (i386, x32) would dodge every rule: those calls kill the process.
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(offsetof(seccomp_data, arch))));
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(offsetof(seccomp_data, nr))));
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u /* __X32_SYSCALL_BIT */, 0, 1));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  for (const auto& r : rules)
    emit_rule(p, r);
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  const sock_fprog program{static_cast<unsigned short>(p.size()), p.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) {
    error = fmt::format("the self-only seccomp filter was refused: {}", std::strerror(errno));
    return false;
  }
  return true;
}

#else

bool install_self_only_filter(std::string& error) {
  error = "the self-only seccomp filter is written for x86-64";
  return false;
}

#endif

} // namespace kj::exec
