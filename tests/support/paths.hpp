// Paths and helpers shared by the tests: the source tree, the built `kj`, scratch folders, running commands.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kj::test {

std::filesystem::path source_dir();
std::filesystem::path kj_binary();
std::filesystem::path fixtures_dir();
// The top-level folders of kj's own sources, from the base up (docs/design.md, "Layers").
inline const std::vector<std::string> k_source_folders = {"core",     "timing", "db",       "kernelbench",
                                                          "cuda",     "engine", "adapters", "reports",
                                                          "planning", "agent",  "app"};

// A fresh, empty directory under the system temp dir, removed when the object goes out of scope.
class scratch_dir {
public:
  scratch_dir();
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

private:
  std::filesystem::path m_path;
};

struct command_result {
  int exit_code = -1;
  std::string out; // stdout
  std::string err; // stderr
};

// Starts `kj args...` in the background with stdout and stderr in `log`; returns its pid (waitpid it).
pid_t start_kj(const std::vector<std::string>& args, const std::filesystem::path& log);

// Runs the real `kj` binary with these arguments in `cwd`, capturing stdout and stderr.
command_result run_kj(const std::vector<std::string>& args, const std::filesystem::path& cwd = {});
// Runs a program (argv[0] is looked up on PATH) in `cwd` with these environment variables set.
command_result run_program(const std::vector<std::string>& argv, const std::filesystem::path& cwd = {},
                           const std::map<std::string, std::string>& env = {});

void write_file(const std::filesystem::path& path, const std::string& text);
// Whether `part` occurs in `text`, and how many times (overlaps counted).
bool contains(const std::string& text, const std::string& part);
std::size_t count_of(const std::string& text, const std::string& part);
std::string read_file(const std::filesystem::path& path);

} // namespace kj::test
