// The arena of a runner_link: the memory the runner writes a request's outputs into (device memory shared by
// IPC or descriptor on CUDA, a memfd on the host), its growth on request, the timing's snapshot slots and the
// judge's vault (docs/design.md, "Memory model").
#include "engine/worker/runner_link.hpp"

#include <cstring>
#include <fcntl.h>
#include <fmt/core.h>
#include <pybind11/embed.h>
#include <sys/mman.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::worker {
namespace {

std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes)
    out += fmt::format("{:02x}", c);
  return out;
}

// Device memory (through the plugin; `shared`: exported by descriptor) or a host memfd of the judge's: freed,
// and the handles zeroed.
void free_memory(const cuda::plugin* plugin, std::uint64_t& ptr, int& fd, bool shared = false) noexcept {
  if (ptr && plugin) {
    try {
      if (shared)
        plugin->share_free(ptr);
      else
        plugin->mem_free(ptr);
    } catch (const std::exception&) { // the context may be gone with a crash; nothing to do
    }
  }
  if (fd >= 0) ::close(fd);
  fd = -1;
  ptr = 0;
}

} // namespace

void runner_link::free_arena() noexcept {
  free_memory(m_plugin, m_arena_ptr, m_arena_fd, m_arena_shared);
  m_arena_shared = false;
  m_arena_bytes = 0;
  m_arena_path.clear();
}

void runner_link::release_arena() {
  if (m_arena_bytes <= k_first_arena) return; // small: kept for the next outputs
  // A large arena goes (the runner unmaps it first): the judge's own copy and the next case's inputs need the
  // room. The host does as the device does, so that every large output takes the same way through the arena's
  // growth on both (the CPU tests cover the GPU's protocol).
  if (!m_dead) exchange({{"op", "release"}});
  free_arena();
  free_vault();
  m_arena_spec = json(); // never described again: the next outputs need a new one
}

json runner_link::request(const json& message) {
  json reply = exchange(message);
  if (reply.value("ok", false) && reply.contains("need_bytes")) {
    const std::uint64_t need = reply.value("need_bytes", std::uint64_t{0});
    // The runner's word: more than the limit, or than the whole device, is its own failure, never kj's.
    const bool past_device = m_plugin != nullptr && need > m_plugin->mem_info().second;
    if (need > m_spec.limits.memory_bytes || past_device)
      return {{"ok", false},
              {"kind", "runtime_error"},
              {"reason", "out_of_memory"},
              {"error", fmt::format("the candidate's outputs take {} bytes, more than the limit", need)}};
    json grown;
    try {
      grown = grow_arena(need);         // released after the judge takes the outputs: no headroom needed
    } catch (const std::exception& e) { // kj's own allocation: never the candidate's failure
      return {{"ok", false},
              {"kind", "harness_error"},
              {"reason", "out_of_memory"},
              {"error",
               fmt::format("allocating {} bytes for the candidate's outputs failed: {}", need, e.what())}};
    }
    if (!grown.value("ok", false)) return grown;
    reply = exchange({{"op", "deliver"}});
  }
  if (reply.value("ok", false) && (reply.contains("outputs") || reply.contains("snapshots"))) {
    if (reply.value("arena_id", -1) != m_arena_id)
      return {{"ok", false}, {"kind", "runtime_error"}, {"error", "the runner answered for another arena"}};
    if (m_arena_bytes > 0) reply["arena"] = m_arena_spec; // a released arena is never described again
  }
  return reply;
}

json runner_link::reserve_arena(std::uint64_t bytes) {
  try {
    if (bytes > m_vault_bytes) {
      free_vault();
      if (m_spec.device == device_kind::cuda) {
        m_vault_ptr = m_plugin->mem_alloc(bytes);
      } else {
        m_vault_fd = ::memfd_create("kj-vault", MFD_CLOEXEC);
        if (m_vault_fd < 0 || ::ftruncate(m_vault_fd, static_cast<off_t>(bytes)) != 0)
          throw std::runtime_error(
              fmt::format("memfd_create/ftruncate of {} bytes: {}", bytes, std::strerror(errno)));
      }
      m_vault_bytes = bytes;
    }
    if (bytes <= m_arena_bytes) return {{"ok", true}};
    return grow_arena(bytes);
  } catch (const std::exception& e) { // kj's own allocation: never the candidate's failure
    return {{"ok", false},
            {"kind", "harness_error"},
            {"reason", "out_of_memory"},
            {"error", fmt::format("allocating {} bytes for the timed outputs' snapshots failed: {}", bytes,
                                  e.what())}};
  }
}

void runner_link::take_snapshot(std::uint64_t offset, std::uint64_t bytes) {
  if (offset + bytes > m_arena_bytes || offset + bytes > m_vault_bytes)
    throw std::runtime_error("a snapshot outside the arena or the vault");
  if (m_spec.device == device_kind::cuda) {
    m_plugin->copy_sync(m_vault_ptr + offset, m_arena_ptr + offset, bytes);
    return;
  }
  std::vector<char> buffer(std::min<std::uint64_t>(bytes, 1 << 20));
  for (std::uint64_t done = 0; done < bytes;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), bytes - done));
    const auto at = static_cast<off_t>(offset + done);
    if (::pread(m_arena_fd, buffer.data(), n, at) != static_cast<ssize_t>(n) ||
        ::pwrite(m_vault_fd, buffer.data(), n, at) != static_cast<ssize_t>(n))
      throw std::runtime_error(fmt::format("copying a snapshot into the vault: {}", std::strerror(errno)));
    done += n;
  }
}

json runner_link::vault_spec() const {
  json spec{{"kind", m_spec.device == device_kind::cuda ? "cuda" : "file"}, {"bytes", m_vault_bytes}};
  if (m_spec.device == device_kind::cuda)
    spec["ptr"] = m_vault_ptr;
  else
    spec["path"] = fmt::format("/proc/self/fd/{}", m_vault_fd);
  return spec;
}

void runner_link::free_vault() noexcept {
  free_memory(m_plugin, m_vault_ptr, m_vault_fd);
  m_vault_bytes = 0;
}

json runner_link::grow_arena(std::uint64_t bytes) {
  bytes = std::max(bytes, k_first_arena);
  json message{{"op", "arena"}, {"id", m_arena_id + 1}, {"bytes", bytes}};
  const bool cuda = m_spec.device == device_kind::cuda;
  std::uint64_t ptr = 0;
  int fd = -1;
  fs::path path;
  bool shared = false;
  if (cuda && m_share_fd) { // by descriptor: it crosses the runner's PID namespace
    const cuda::shared_memory memory = m_plugin->share_alloc(bytes);
    ptr = memory.ptr;
    fd = memory.fd;
    bytes = memory.bytes;
    shared = true;
    message["bytes"] = bytes;
    message["kind"] = "cuda";
    message["fd"] = true;
  } else if (cuda) {
    ptr = m_plugin->mem_alloc(bytes);
    message["kind"] = "cuda";
    message["handle"] = hex(m_plugin->ipc_handle(ptr));
  } else { // shared memory with no path (never written back to a disk), handed over with the message
    fd = ::memfd_create("kj-arena", MFD_CLOEXEC);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      const std::string error = std::strerror(errno);
      if (fd >= 0) ::close(fd);
      throw std::runtime_error(fmt::format("memfd_create/ftruncate of {} bytes: {}", bytes, error));
    }
    message["kind"] = "file";
    message["fd"] = true;
    path = fmt::format("/proc/self/fd/{}", fd); // the judge's own way in
  }
  // Device memory may come back holding what this process freed (a warm judge's reference outputs): zeroed
  // before the runner sees it (a memfd always starts zeroed).
  if (cuda) pybind11::module_::import("kj_judge").attr("clear_device_memory")(ptr, bytes);
  const json reply = exchange(message, fd);
  if (shared) { // the runner has its own descriptor now (or none): the judge keeps only the mapping
    ::close(fd);
    fd = -1;
  }
  if (!reply.value("ok", false)) {
    std::uint64_t failed = ptr;
    free_memory(m_plugin, failed, fd, shared);
    return reply;
  }
  free_arena();
  m_arena_shared = shared;
  m_arena_fd = fd;
  m_arena_ptr = ptr;
  m_arena_path = path;
  m_arena_bytes = bytes;
  ++m_arena_id;
  m_arena_spec = {{"id", m_arena_id}, {"kind", cuda ? "cuda" : "file"}, {"bytes", bytes}};
  if (cuda)
    m_arena_spec["ptr"] = ptr;
  else
    m_arena_spec["path"] = path.string();
  return reply;
}

} // namespace kj::worker
