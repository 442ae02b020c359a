// Implements the bubblewrap plan (a minimal root of read-only system folders plus what the policy names) and
// the seccomp filter (libseccomp).
#include "engine/exec/sandbox.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fmt/core.h>
#include <mutex>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

#if defined(KJ_HAVE_SECCOMP)
#include <seccomp.h>
#include <sys/socket.h>
#endif

namespace fs = std::filesystem;

namespace kj::exec {
namespace {

// The folders every process needs to start a dynamically linked program and Python's standard library.
const char* const k_system_dirs[] = {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt", "/etc"};
// Files of /etc a candidate has no business reading.
const char* const k_hidden_files[] = {"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh"};

std::string find_bwrap() {
  for (const char* dir : {"/usr/bin", "/bin", "/usr/local/bin"}) {
    const fs::path p = fs::path(dir) / "bwrap";
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// Runs `bwrap ... true` once: namespaces may be forbidden (a container without CAP_SYS_ADMIN, userns off).
std::string probe_bwrap(const std::string& bwrap, bool pid_namespace) {
  const std::string command = fmt::format(
      "'{}' --ro-bind / / --unshare-net --unshare-ipc {}--die-with-parent --dev /dev --proc /proc "
      "/bin/true >/dev/null 2>&1",
      bwrap, pid_namespace ? "--unshare-pid " : "");
  const int status = std::system(command.c_str());
  return status == 0
             ? ""
             : fmt::format("bwrap cannot create namespaces here (exit status {})", WEXITSTATUS(status));
}

struct availability {
  std::string bwrap;          // path when usable
  std::string why_none;       // else why
  bool pid_namespace = false; // bwrap can give each sandbox a PID namespace of its own
};

const availability& sandbox_availability() {
  static availability a;
  static std::once_flag once;
  std::call_once(once, [] {
    if (const char* forced = std::getenv("KJ_SANDBOX"); forced && std::string(forced) == "none") {
      a.why_none = "KJ_SANDBOX=none";
      return;
    }
    const std::string bwrap = find_bwrap();
    if (bwrap.empty()) {
      a.why_none = "bubblewrap (bwrap) is not installed";
      return;
    }
    a.why_none = probe_bwrap(bwrap, true);
    a.pid_namespace = a.why_none.empty();
    if (!a.pid_namespace) a.why_none = probe_bwrap(bwrap, false);
    if (a.why_none.empty()) a.bwrap = bwrap;
  });
  return a;
}

void add(std::vector<std::string>& argv, std::initializer_list<std::string> items) {
  argv.insert(argv.end(), items);
}

// Whether `path` is `root` or lies under it (both absolute).
bool under(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p)
    if (p == path.end() || *p != *r) return false;
  return true;
}

// A process with an identity of its own must reach what the sandbox binds for it: bubblewrap makes the
// folders above a bind that no other bind holds mode 0700 (the host's /root is), so they are made 0755 first,
// parents before children. They are empty folders of the sandbox's own root, nothing of the host's.
void add_parent_dirs(std::vector<std::string>& v, const sandbox_policy& policy) {
  std::vector<fs::path> binds;
  for (const char* dir : k_system_dirs)
    binds.emplace_back(dir);
  for (const char* dir : {"/sys", "/proc", "/dev"}) // /tmp is the sandbox's own tmpfs: its folders are made
    binds.emplace_back(dir);
  for (const auto* list : {&policy.read_only, &policy.writable})
    for (const auto& p : *list)
      if (!p.empty()) binds.push_back(fs::absolute(p));
  binds.push_back(fs::absolute(policy.scratch));
  std::set<fs::path> dirs;
  for (const auto& b : binds)
    for (fs::path a = b.parent_path(); a.has_relative_path(); a = a.parent_path()) {
      const bool covered =
          std::any_of(binds.begin(), binds.end(), [&](const fs::path& other) { return under(a, other); });
      if (!covered) dirs.insert(a);
    }
  for (const auto& d : dirs) // std::set orders a parent before its children
    add(v, {"--perms", "0755", "--dir", d.string()});
}

} // namespace

sandbox_plan plan_sandbox(const sandbox_policy& policy) {
  sandbox_plan plan;
  const availability& a = sandbox_availability();
  if (a.bwrap.empty()) {
    plan.why_none = a.why_none;
    return plan;
  }
  plan.kind = "bwrap";
  auto& v = plan.argv_prefix;
  add(v, {a.bwrap, "--die-with-parent", "--unshare-net", "--unshare-ipc", "--unshare-uts",
          "--unshare-cgroup-try"});
  if (::geteuid() != 0) add(v, {"--unshare-user"});
  // A PID namespace: no process of kj's or of another job's is visible, and when its first process ends the
  // kernel kills everything the candidate started (a daemon that left its session included). The output
  // arena crosses it as a descriptor (a memfd, or CUDA memory exported as a file descriptor).
  if (a.pid_namespace && policy.pid_namespace) add(v, {"--unshare-pid"});
  for (const char* dir : k_system_dirs)
    add(v, {"--ro-bind-try", dir, dir});
  for (const char* file : k_hidden_files) {
    if (fs::is_directory(file))
      add(v, {"--tmpfs", file});
    else if (fs::exists(file))
      add(v, {"--ro-bind", "/dev/null", file});
  }
  // /tmp is the job's own, and writable by it as a host's /tmp is (sticky, world-writable): a tmpfs is made
  // 0755 for bubblewrap's user, so a candidate running under an identity of its own could not write there,
  // and released kernels that write their sources to /tmp/... failed to load under kj only (CUDA-L1's L3 43).
  add(v, {"--ro-bind", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs",
          "/tmp"});
  if (policy.gpu)
    for (const auto& entry : fs::directory_iterator("/dev"))
      if (entry.path().filename().string().starts_with("nvidia"))
        add(v, {"--dev-bind", entry.path().string(), entry.path().string()});
  if (policy.identity.own) add_parent_dirs(v, policy);
  for (const auto& p : policy.read_only)
    if (!p.empty() && fs::exists(p)) add(v, {"--ro-bind", p.string(), p.string()});
  for (const auto& p : policy.writable)
    if (!p.empty() && fs::exists(p)) add(v, {"--bind", p.string(), p.string()});
  add(v, {"--bind", policy.scratch.string(), policy.scratch.string(), "--chdir", policy.scratch.string()});
  if (::geteuid() == 0) { // root without capabilities: no ptrace of kj, no mounts
    add(v, {"--cap-drop", "ALL"});
    // Only to become its own uid and gid first thing (enter_identity), which ends these two as well.
    if (policy.identity.own) add(v, {"--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"});
  }
  add(v, {"--"});
  return plan;
}

std::vector<fs::path> system_folders() {
  std::vector<fs::path> out;
  for (const char* dir : k_system_dirs)
    if (fs::exists(dir)) out.emplace_back(dir);
  out.emplace_back("/sys");
  return out;
}

fs::path exposed_under(const fs::path& path, const std::vector<fs::path>& exposed) {
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(path, ec), ec);
  for (const auto& e : exposed) {
    if (e.empty()) continue;
    const fs::path root = fs::weakly_canonical(fs::absolute(e, ec), ec);
    auto t = target.begin();
    bool inside = true;
    for (auto r = root.begin(); r != root.end() && inside; ++r, ++t)
      inside = t != target.end() && *t == *r;
    if (inside) return e;
  }
  return {};
}

bool sandbox_pid_namespace() {
  const availability& a = sandbox_availability();
  return !a.bwrap.empty() && a.pid_namespace;
}

std::string sandbox_kind() {
  const availability& a = sandbox_availability();
  return a.bwrap.empty() ? "none: " + a.why_none : "bwrap";
}

bool have_seccomp() {
#if defined(KJ_HAVE_SECCOMP)
  return true;
#else
  return false;
#endif
}

bool install_candidate_seccomp(std::string& error) {
#if defined(KJ_HAVE_SECCOMP)
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    error = "seccomp_init failed";
    return false;
  }
  const auto deny = SCMP_ACT_ERRNO(EPERM);
  int rc = 0;
  for (int sys : {SCMP_SYS(ptrace),
                  SCMP_SYS(process_vm_readv),
                  SCMP_SYS(process_vm_writev),
                  SCMP_SYS(kcmp),
                  SCMP_SYS(bpf),
                  SCMP_SYS(userfaultfd),
                  SCMP_SYS(keyctl),
                  SCMP_SYS(add_key),
                  SCMP_SYS(request_key),
                  SCMP_SYS(mount),
                  SCMP_SYS(umount2),
                  SCMP_SYS(pivot_root),
                  SCMP_SYS(chroot),
                  SCMP_SYS(unshare),
                  SCMP_SYS(setns),
                  SCMP_SYS(init_module),
                  SCMP_SYS(finit_module),
                  SCMP_SYS(delete_module),
                  SCMP_SYS(kexec_load),
                  SCMP_SYS(reboot),
                  SCMP_SYS(swapon),
                  SCMP_SYS(swapoff),
                  SCMP_SYS(syslog),
                  SCMP_SYS(acct),
                  SCMP_SYS(settimeofday),
                  SCMP_SYS(clock_settime),
                  SCMP_SYS(clock_adjtime),
                  SCMP_SYS(adjtimex),
                  SCMP_SYS(pidfd_send_signal),
                  SCMP_SYS(pidfd_getfd),
                  SCMP_SYS(tkill),
                  SCMP_SYS(open_by_handle_at),
                  SCMP_SYS(name_to_handle_at)})
    rc |= ::seccomp_rule_add(ctx, deny, sys, 0);
  // Signals by thread id or with a payload: to itself only (one comparison per argument, all libseccomp 2.5
  // takes); kill, limits, scheduling and priorities of itself only: the self-only filter below.
  const auto self = static_cast<scmp_datum_t>(static_cast<std::uint32_t>(::getpid()));
  rc |= ::seccomp_rule_add(ctx, deny, SCMP_SYS(tgkill), 1, SCMP_A0_32(SCMP_CMP_NE, self));
  rc |= ::seccomp_rule_add(ctx, deny, SCMP_SYS(rt_sigqueueinfo), 1, SCMP_A0_32(SCMP_CMP_NE, self));
  rc |= ::seccomp_rule_add(ctx, deny, SCMP_SYS(rt_tgsigqueueinfo), 1, SCMP_A0_32(SCMP_CMP_NE, self));
  for (int sys : {SCMP_SYS(perf_event_open), SCMP_SYS(process_madvise), SCMP_SYS(process_mrelease)})
    rc |= ::seccomp_rule_add(ctx, deny, sys, 0);
  // No network: IPv4, IPv6 and raw packets (Unix sockets stay: Python and CUDA use them locally).
  for (int domain : {AF_INET, AF_INET6, AF_PACKET})
    rc |= ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
                             SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(domain)));
  if (rc == 0) rc = ::seccomp_load(ctx);
  ::seccomp_release(ctx);
  if (rc != 0) {
    error = fmt::format("seccomp filter not installed (libseccomp error {})", rc);
    return false;
  }
  return install_self_only_filter(error);
#else
  install_self_only_filter(error); // no libseccomp: only the calls that name a process are filtered
  error = "kj was built without libseccomp (only the self-only filter is on)";
  return false;
#endif
}

} // namespace kj::exec
