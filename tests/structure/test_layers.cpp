// The layer table of docs/design.md, held against the code: every project include in a layer's files must
// name a header of the same layer, of a layer the table lets it include, or of `base`. The table is read from
// the doc, so the doc and the code cannot drift apart silently.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace kj::test;

namespace {

struct layer {
  std::string name;
  std::vector<std::string> paths; // folders end with '/', single files do not
  std::set<std::string> may_include;
  bool everything = false;
};

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream in(row);
  std::string cell;
  while (std::getline(in, cell, '|'))
    out.push_back(cell);
  return out;
}

std::string short_name(const std::string& cell) {
  static const std::regex target("`kj_(\\w+)`");
  std::smatch m;
  if (std::regex_search(cell, m, target)) return m[1].str();
  return std::regex_replace(cell, std::regex("^\\s+|\\s+$"), "");
}

std::vector<layer> read_table() {
  std::stringstream doc(read_file(source_dir() / "docs" / "design.md"));
  std::vector<layer> layers;
  std::string line;
  bool in_table = false;
  static const std::regex path("`([^`]+)`");
  while (std::getline(doc, line)) {
    if (line.starts_with("| layer (target)")) in_table = true;
    if (!in_table || line.starts_with("| layer") || line.starts_with("|---")) continue;
    if (!line.starts_with("|")) break;
    const auto c = cells(line);
    REQUIRE(c.size() >= 4);
    layer l{short_name(c[1]), {}, {}, false};
    for (std::sregex_iterator m(c[2].begin(), c[2].end(), path), end; m != end; ++m)
      l.paths.push_back((*m)[1].str());
    std::stringstream names(c[3]);
    std::string name;
    while (std::getline(names, name, ',')) {
      name = std::regex_replace(name, std::regex("^\\s+|\\s+$"), "");
      if (name == "everything")
        l.everything = true;
      else if (name == "cuda loader")
        l.may_include.insert("cuda");
      else if (name != "—")
        l.may_include.insert(name);
    }
    layers.push_back(l);
  }
  return layers;
}

// The layer a repository path belongs to: the longest folder (or the file itself) that names it.
const layer* layer_of(const std::vector<layer>& layers, const std::string& path) {
  const layer* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& l : layers)
    for (const auto& p : l.paths)
      if ((p.ends_with('/') ? path.starts_with(p) : path == p) && p.size() > best_len) {
        best = &l;
        best_len = p.size();
      }
  return best;
}

} // namespace

TEST_CASE("no layer includes a header of a layer that docs/design.md does not let it include") {
  const auto layers = read_table();
  REQUIRE(layers.size() >= 12);
  static const std::regex include("#include \"([^\"]+)\"");
  std::string broken;
  std::size_t checked = 0;
  for (const auto& folder : k_source_folders)
    for (const auto& entry : fs::recursive_directory_iterator(source_dir() / folder)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      const std::string file = fs::relative(entry.path(), source_dir()).string();
      const layer* from = layer_of(layers, file);
      INFO(file);
      REQUIRE(from != nullptr); // every source file is in a layer of the table
      const std::string code = read_file(entry.path());
      for (std::sregex_iterator m(code.begin(), code.end(), include), end; m != end; ++m) {
        const layer* to = layer_of(layers, (*m)[1].str());
        if (!to || to == from || from->everything || to->name == "base") continue;
        ++checked;
        if (!from->may_include.contains(to->name))
          broken += file + " (" + from->name + ") includes " + (*m)[1].str() + " (" + to->name + ")\n";
      }
    }
  INFO(broken);
  CHECK(checked > 100);
  CHECK(broken.empty());
}
