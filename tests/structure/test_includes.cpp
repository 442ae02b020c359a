// Include what you use, checked on every build: a file that uses a standard library name must include its
// header itself or through one of the project's own headers. libstdc++ 12 (here and in CI) reaches many
// headers through others; libstdc++ 13 (the GPU machine) does not, so a missing include would first fail
// there.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace kj::test;

namespace {

// A name and the header that declares it (the names libstdc++ 13 stopped providing transitively, and more).
const std::vector<std::pair<std::string, std::string>> k_names = {
    {"function", "functional"},
    {"uint64_t", "cstdint"},
    {"int64_t", "cstdint"},
    {"uint32_t", "cstdint"},
    {"int32_t", "cstdint"},
    {"uint8_t", "cstdint"},
    {"uint16_t", "cstdint"},
    {"int16_t", "cstdint"},
    {"uintptr_t", "cstdint"},
    {"map", "map"},
    {"multimap", "map"},
    {"set", "set"},
    {"unordered_map", "unordered_map"},
    {"unordered_set", "unordered_set"},
    {"vector", "vector"},
    {"string", "string"},
    {"string_view", "string_view"},
    {"optional", "optional"},
    {"variant", "variant"},
    {"array", "array"},
    {"deque", "deque"},
    {"unique_ptr", "memory"},
    {"shared_ptr", "memory"},
    {"make_unique", "memory"},
    {"make_shared", "memory"},
    {"thread", "thread"},
    {"mutex", "mutex"},
    {"lock_guard", "mutex"},
    {"unique_lock", "mutex"},
    {"condition_variable", "condition_variable"},
    {"atomic", "atomic"},
    {"chrono", "chrono"},
    {"filesystem", "filesystem"},
    {"ifstream", "fstream"},
    {"ofstream", "fstream"},
    {"ostringstream", "sstream"},
    {"istringstream", "sstream"},
    {"stringstream", "sstream"},
    {"sort", "algorithm"},
    {"find_if", "algorithm"},
    {"any_of", "algorithm"},
    {"all_of", "algorithm"},
    {"none_of", "algorithm"},
    {"count_if", "algorithm"},
    {"remove_if", "algorithm"},
    {"max_element", "algorithm"},
    {"min_element", "algorithm"},
    {"accumulate", "numeric"},
    {"iota", "numeric"},
    {"runtime_error", "stdexcept"},
    {"invalid_argument", "stdexcept"},
    {"out_of_range", "stdexcept"},
    {"logic_error", "stdexcept"},
    {"numeric_limits", "limits"},
    {"tuple", "tuple"},
    {"regex", "regex"},
    {"smatch", "regex"},
    {"mt19937_64", "random"},
    {"mt19937", "random"},
    {"random_device", "random"},
    {"span", "span"},
    {"strerror", "cstring"},
    {"memcpy", "cstring"},
    {"getenv", "cstdlib"},
    {"sqrt", "cmath"},
    {"isfinite", "cmath"},
    {"isnan", "cmath"},
    {"cout", "iostream"},
    {"cerr", "iostream"}};

// Folders whose sources the project builds (not build trees, virtual environments or carried files).
const std::vector<std::string> k_folders = [] {
  auto folders = k_source_folders;
  folders.insert(folders.end(), {"tests", "bench"});
  return folders;
}();

struct source {
  std::set<std::string> std_headers;        // <header> included directly
  std::vector<std::string> project_headers; // "path" included directly, as written
  std::string code;                         // without comments and string literals
};

std::string strip(const std::string& text) {
  static const std::regex noise(R"(//[^\n]*|/\*[\s\S]*?\*/|R"\w*\([\s\S]*?\)\w*"|"(\\.|[^"\\\n])*")");
  return std::regex_replace(text, noise, " ");
}

source read_source(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  source s;
  static const std::regex include(R"(#\s*include\s*([<"])([^>"]+)[>"])");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), include); it != std::sregex_iterator(); ++it)
    ((*it)[1] == "<" ? s.std_headers.insert((*it)[2].str()), void() : s.project_headers.push_back((*it)[2]));
  s.code = strip(text);
  return s;
}

class include_graph {
public:
  explicit include_graph(fs::path root) : m_root(std::move(root)) {}

  // Every standard header `path` reaches through itself and the project's headers it includes.
  std::set<std::string> reached(const fs::path& path) {
    std::set<std::string> out;
    std::set<fs::path> seen;
    visit(path, out, seen);
    return out;
  }
  const source& at(const fs::path& path) {
    auto it = m_sources.find(path);
    if (it == m_sources.end()) it = m_sources.emplace(path, read_source(path)).first;
    return it->second;
  }

private:
  void visit(const fs::path& path, std::set<std::string>& out, std::set<fs::path>& seen) {
    if (!seen.insert(path).second) return;
    const source& s = at(path);
    out.insert(s.std_headers.begin(), s.std_headers.end());
    for (const auto& header : s.project_headers)
      for (const fs::path& candidate : {m_root / header, path.parent_path() / header})
        if (fs::exists(candidate)) {
          visit(fs::weakly_canonical(candidate), out, seen);
          break;
        }
  }
  fs::path m_root;
  std::map<fs::path, source> m_sources;
};

} // namespace

TEST_CASE("every file includes the standard header of each standard name it uses") {
  include_graph graph(source_dir());
  std::vector<std::string> missing;
  std::size_t files = 0;
  for (const auto& folder : k_folders)
    for (const auto& entry : fs::recursive_directory_iterator(source_dir() / folder)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      if (entry.path().string().find("/fixtures/") != std::string::npos) continue; // candidates' own code
      const fs::path path = fs::weakly_canonical(entry.path());
      ++files;
      const std::set<std::string> reached = graph.reached(path);
      const std::string& code = graph.at(path).code;
      for (const auto& [name, header] : k_names) {
        const std::regex use("std::" + name + "\\b(?!::)");
        if (name == "chrono" || name == "filesystem") { // namespaces: std::chrono::..., std::filesystem::...
          if (code.find("std::" + name + "::") == std::string::npos || reached.contains(header)) continue;
        } else if (reached.contains(header) || !std::regex_search(code, use)) {
          continue;
        }
        missing.push_back(fs::relative(path, source_dir()).string() + ": std::" + name + " needs <" + header +
                          ">");
      }
    }
  INFO(files << " files checked");
  std::string report;
  for (const auto& m : missing)
    report += m + "\n";
  INFO(report);
  CHECK(files > 300);
  CHECK(missing.empty());
}
