// Implements sandbox identities: a uid and gid per sandboxed process when kj is root, folders handed over and
// taken back, and the switch a sandboxed kj process makes before any candidate code runs.
#include "engine/exec/identity.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/core.h>
#include <grp.h>
#include <sstream>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kj::exec {
namespace {

constexpr std::uint32_t k_default_base = 1509949440; // 0x5A000000: far above any distribution's range
constexpr std::uint32_t k_span = 65536;

std::uint32_t uid_base() {
  const char* text = std::getenv("KJ_SANDBOX_UID_BASE");
  if (!text || !*text) return k_default_base;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  return end && *end == '\0' && v >= 1000 && v + k_span < 0xFFFFFFFFull ? static_cast<std::uint32_t>(v)
                                                                        : k_default_base;
}

bool shared_by_choice() {
  const char* text = std::getenv("KJ_SANDBOX_IDS");
  return text && std::string(text) == "shared";
}

// The groups of GPU device nodes that others may not read and write: the identity joins them.
std::vector<std::uint32_t> device_groups() {
  std::vector<std::uint32_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    if (!entry.path().filename().string().starts_with("nvidia")) continue;
    struct stat st{};
    if (::stat(entry.path().c_str(), &st) != 0 || (st.st_mode & S_IROTH && st.st_mode & S_IWOTH)) continue;
    bool seen = false;
    for (auto g : out)
      seen = seen || g == st.st_gid;
    if (!seen) out.push_back(st.st_gid);
  }
  return out;
}

bool parse_identity(const std::string& text, sandbox_identity& id) {
  unsigned long uid = 0, gid = 0;
  char sep = 0;
  std::istringstream in(text);
  if (!(in >> uid >> sep >> gid) || sep != ':') return false;
  id.uid = static_cast<std::uint32_t>(uid);
  id.gid = static_cast<std::uint32_t>(gid);
  if (in.peek() == ':') {
    in.get();
    unsigned long g = 0;
    while (in >> g) {
      id.groups.push_back(static_cast<std::uint32_t>(g));
      if (in.peek() == ',') in.get();
    }
  }
  id.own = true;
  return true;
}

} // namespace

std::string sandbox_identity::text() const {
  if (!own) return "";
  std::string out = fmt::format("{}:{}", uid, gid);
  for (std::size_t i = 0; i < groups.size(); ++i)
    out += fmt::format("{}{}", i == 0 ? ":" : ",", groups[i]);
  return out;
}

sandbox_identity next_identity(bool sandboxed) {
  sandbox_identity id;
  if (!sandboxed || ::geteuid() != 0 || shared_by_choice()) return id;
  static std::atomic<std::uint32_t> next{static_cast<std::uint32_t>(::getpid()) * 7919u % k_span};
  const std::uint32_t n = uid_base() + next++ % k_span;
  id.uid = id.gid = n;
  id.groups = device_groups();
  id.own = true;
  return id;
}

void hand_to(const sandbox_identity& id, const fs::path& path, bool recursive) {
  if (!id.own) return;
  const auto give = [&](const fs::path& p) {
    if (::lchown(p.c_str(), id.uid, id.gid) != 0)
      throw std::runtime_error(fmt::format("cannot hand {} to the sandbox's uid {}: {}", p.string(), id.uid,
                                           std::strerror(errno)));
  };
  give(path);
  if (!recursive || !fs::is_directory(path)) return;
  for (const auto& entry : fs::recursive_directory_iterator(path))
    give(entry.path());
}

void take_back(const fs::path& path) {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  const auto take = [&](const fs::path& p) {
    struct stat st{};
    if (::lstat(p.c_str(), &st) != 0) return;
    if (st.st_uid != uid || st.st_gid != gid) (void)::lchown(p.c_str(), uid, gid);
    if (S_ISLNK(st.st_mode)) return;
    // No set-id bits, nothing writable by others; readable (and enterable) by every identity.
    mode_t mode = st.st_mode & 0755;
    mode |= S_ISDIR(st.st_mode) || (st.st_mode & S_IXUSR) ? 0555 : 0444;
    if ((st.st_mode & 07777) != mode) (void)::chmod(p.c_str(), mode | S_IWUSR);
  };
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  take(path);
  if (!fs::is_directory(path, ec)) return;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec))
    take(it->path());
}

bool enter_identity(std::string& error) {
  const char* text = std::getenv("KJ_SANDBOX_ID");
  if (!text || !*text) return true;
  sandbox_identity id;
  if (!parse_identity(text, id)) {
    error = fmt::format("KJ_SANDBOX_ID='{}' is not uid:gid[:groups]", text);
    return false;
  }
  std::vector<gid_t> groups(id.groups.begin(), id.groups.end());
  // Groups first (setgroups needs the capability that setresuid gives up), then the uid: every capability
  // goes with it, and no_new_privs keeps a set-id program from bringing one back.
  if (::setgroups(groups.size(), groups.data()) != 0 || ::setresgid(id.gid, id.gid, id.gid) != 0 ||
      ::setresuid(id.uid, id.uid, id.uid) != 0) {
    error = fmt::format("taking the sandbox's identity {} failed: {}", text, std::strerror(errno));
    return false;
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    error = fmt::format("no_new_privs: {}", std::strerror(errno));
    return false;
  }
  ::unsetenv("KJ_SANDBOX_ID");
  // The uid has no name in the password file, so Python's getpass.getuser() (torch.compile asks it for
  // inductor's cache folder) would raise KeyError: kj's failure, never the candidate's. It reads these first.
  const std::string name = fmt::format("kj-sandbox-{}", id.uid);
  ::setenv("USER", name.c_str(), 1);
  ::setenv("LOGNAME", name.c_str(), 1);
  return true;
}

std::string identity_kind(bool sandboxed) {
  if (!sandboxed) return "kj's uid (no sandbox)";
  if (::geteuid() != 0) return "kj's uid in a user namespace (kj is not root)";
  if (shared_by_choice()) return "kj's uid without capabilities (KJ_SANDBOX_IDS=shared)";
  return "a uid of its own per process";
}

} // namespace kj::exec
