// The agent's workspace: one folder per trajectory in CUDA-Agent's layout (model.py read-only, model_new.py,
// kernels/), the only place its file tools reach, and the candidate source it amounts to.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::agent {

// A tool request the workspace will not carry out; the message goes back to the model as the tool's error.
class refused : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct workspace_limits {
  std::uintmax_t max_file_bytes = 256 * 1024; // a file read or written
  std::size_t max_files = 64;                 // files in the workspace
};

struct file_entry {
  std::string path; // relative, with '/'
  std::uintmax_t bytes = 0;
  bool read_only = false;
};

class workspace {
public:
  // Creates `root` (which must not exist yet) with model.py (the problem's reference, read-only) and an empty
  // kernels/ folder. There is no model_new.py until the agent writes one.
  static workspace create(const std::filesystem::path& root, const std::string& reference_source,
                          workspace_limits limits = {});

  const std::filesystem::path& root() const { return m_root; }

  // The file a tool names, checked. Refused: an empty or absolute path, one that leaves the workspace, passes
  // through a symbolic link (or names one), names a hidden entry (a component starting with '.'), and, for
  // writing, model.py. The candidate's own code runs as the same user and could plant links: every component
  // is checked at each use, and the final open does not follow links either.
  std::filesystem::path resolve(const std::string& path, bool for_writing) const;

  std::vector<file_entry> list() const; // regular files, hidden ones and links left out, sorted
  std::string read(const std::string& path) const;
  // Creates the parent folders; returns the bytes written.
  std::size_t write(const std::string& path, const std::string& content) const;
  // Replaces the one occurrence of `old_text` by `new_text`; refused when it occurs zero or several times.
  // Returns the file's new text.
  std::string edit(const std::string& path, const std::string& old_text, const std::string& new_text) const;

  // The candidate the workspace is now: none without model_new.py; model_new.py alone when no C++/CUDA file
  // is in the root or kernels/; else the workspace as a CUDA-Agent workdir, embedded into one source
  // (adapters::workdir_candidate_source). Throws refused when the files cannot be read.
  std::optional<std::string> candidate_source() const;

private:
  workspace(std::filesystem::path root, workspace_limits limits)
      : m_root(std::move(root)), m_limits(limits) {}
  std::filesystem::path m_root; // canonical
  workspace_limits m_limits;
};

// Whether a workspace-relative path names kernel sources (.cu, .cpp, .cc) that make it a workdir.
bool is_kernel_source(const std::filesystem::path& relative);

} // namespace kj::agent
