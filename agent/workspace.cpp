// Implements the workspace: path checks (no escape, no links, no hidden files), file operations, the
// candidate.
#include "agent/workspace.hpp"

#include "adapters/workdir.hpp"
#include "kernelbench/problems.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/core.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kj::agent {
namespace {

// Opens a checked path without following a link in its last component (the others were checked).
int open_checked(const fs::path& file, int flags) {
  const int fd = ::open(file.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ELOOP) throw refused("is a symbolic link: refused");
  return fd;
}

std::string read_fd(int fd, std::uintmax_t limit, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw refused(name + ": not a regular file");
  }
  if (static_cast<std::uintmax_t>(st.st_size) > limit) {
    ::close(fd);
    throw refused(fmt::format("{}: {} bytes, more than the {} a tool reads", name, st.st_size, limit));
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

bool hidden(const fs::path& relative) {
  return std::any_of(relative.begin(), relative.end(),
                     [](const fs::path& part) { return part.string().starts_with("."); });
}

} // namespace

bool is_kernel_source(const fs::path& relative) {
  const std::string ext = relative.extension().string();
  return ext == ".cu" || ext == ".cpp" || ext == ".cc";
}

workspace workspace::create(const fs::path& root, const std::string& reference_source,
                            workspace_limits limits) {
  if (fs::exists(root)) throw std::runtime_error("workspace " + root.string() + " exists already");
  fs::create_directories(root / "kernels");
  workspace ws(fs::canonical(root), limits);
  { // write() refuses model.py: the reference goes in here, into the folder just made, then turns read-only
    std::ofstream out(ws.m_root / "model.py", std::ios::binary);
    out << reference_source;
    if (!out.flush()) throw std::runtime_error("cannot write " + (ws.m_root / "model.py").string());
  }
  fs::permissions(ws.m_root / "model.py",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  return ws;
}

fs::path workspace::resolve(const std::string& path, bool for_writing) const {
  if (path.empty()) throw refused("an empty path: name a file relative to the workspace, e.g. model_new.py");
  if (path.find('\0') != std::string::npos) throw refused("a path with a NUL character");
  const fs::path given(path);
  if (given.is_absolute())
    throw refused(
        fmt::format("'{}' is absolute: paths are relative to the workspace (e.g. kernels/add.cu)", path));
  const fs::path relative = given.lexically_normal();
  if (relative.empty() || *relative.begin() == ".." || relative == ".")
    throw refused(fmt::format("'{}' leaves the workspace: refused", path));
  if (hidden(relative)) throw refused(fmt::format("'{}' names a hidden file or folder: refused", path));
  fs::path at = m_root;
  for (const fs::path& part : relative) {
    at /= part;
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(at, ec);
    if (fs::is_symlink(status))
      throw refused(fmt::format("'{}' passes through a symbolic link: refused", path));
  }
  if (for_writing && relative == "model.py")
    throw refused("model.py is the reference and read-only: write your version to model_new.py");
  return at;
}

std::vector<file_entry> workspace::list() const {
  std::vector<file_entry> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(m_root, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    const fs::path relative = fs::relative(it->path(), m_root);
    if (hidden(relative) || it->is_symlink()) {
      if (it->is_directory() && !it->is_symlink()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file())
      out.push_back({relative.generic_string(), it->file_size(), relative == "model.py"});
    if (out.size() >= 200) break;
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

std::string workspace::read(const std::string& path) const {
  const fs::path file = resolve(path, false);
  const int fd = open_checked(file, O_RDONLY);
  if (fd < 0) throw refused(fmt::format("'{}': {}", path, std::strerror(errno)));
  std::string text = read_fd(fd, m_limits.max_file_bytes, path);
  if (text.find('\0') != std::string::npos) throw refused(fmt::format("'{}' is not a text file", path));
  return text;
}

std::size_t workspace::write(const std::string& path, const std::string& content) const {
  const fs::path file = resolve(path, true);
  if (content.size() > m_limits.max_file_bytes)
    throw refused(
        fmt::format("{} bytes is more than the {} a file may hold", content.size(), m_limits.max_file_bytes));
  if (fs::is_directory(file)) throw refused(fmt::format("'{}' is a folder", path));
  if (!fs::exists(file) && list().size() >= m_limits.max_files)
    throw refused(fmt::format("the workspace holds {} files already, the most it may", m_limits.max_files));
  fs::create_directories(file.parent_path());
  resolve(path, true); // a link planted while the folders were made
  const int fd = open_checked(file, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd < 0) throw refused(fmt::format("'{}': {}", path, std::strerror(errno)));
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (done != content.size())
    throw refused(fmt::format("'{}': the write stopped after {} bytes", path, done));
  return done;
}

std::string workspace::edit(const std::string& path, const std::string& old_text,
                            const std::string& new_text) const {
  if (old_text.empty()) throw refused("`old` is empty: give the exact text to replace");
  std::string text = read(path);
  const std::size_t at = text.find(old_text);
  if (at == std::string::npos)
    throw refused(
        fmt::format("`old` does not occur in {} (it must match exactly, whitespace included)", path));
  if (text.find(old_text, at + 1) != std::string::npos)
    throw refused(
        fmt::format("`old` occurs more than once in {}: include more context to make it unique", path));
  text.replace(at, old_text.size(), new_text);
  write(path, text);
  return text;
}

std::optional<std::string> workspace::candidate_source() const {
  const fs::path model_new = resolve("model_new.py", false);
  if (!fs::is_regular_file(fs::symlink_status(model_new))) return std::nullopt;
  bool workdir = false;
  for (const file_entry& f : list()) {
    const fs::path p(f.path);
    const bool in_root_or_kernels = p.parent_path().empty() || p.parent_path() == "kernels";
    workdir |= in_root_or_kernels && is_kernel_source(p);
  }
  if (!workdir) return read("model_new.py");
  // The import reads every source of the root and kernels/ itself: none of them may be a link.
  for (const fs::path& folder : {m_root, m_root / "kernels"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (entry.is_symlink())
        throw refused(fmt::format("{} is a symbolic link: kj builds no workspace that holds one",
                                  fs::relative(entry.path(), m_root).generic_string()));
  }
  try {
    return adapters::workdir_candidate_source(m_root);
  } catch (const kb::source_error& e) {
    throw refused(e.what());
  }
}

} // namespace kj::agent
