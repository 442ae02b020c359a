// Implements the CUDA-Agent workdir import: embed the sources, build them as one extension, append ModelNew.
#include "adapters/workdir.hpp"

#include "core/hashing.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kj::adapters {
namespace {

namespace fs = std::filesystem;

bool is_embedded(const fs::path& file) {
  static const char* const extensions[] = {".cu", ".cpp", ".cc", ".h", ".hpp", ".cuh"};
  const std::string ext = file.extension().string();
  return std::any_of(std::begin(extensions), std::end(extensions), [&](const char* e) { return ext == e; });
}

bool is_compiled(const std::string& relative) {
  return relative.ends_with(".cu") || relative.ends_with(".cpp") || relative.ends_with(".cc");
}

// The workdir's root and kernels/ files that the extension is built from, by relative path (sorted).
std::map<std::string, std::string> embedded_files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const fs::path& folder : {dir, dir / "kernels"}) {
    if (!fs::is_directory(folder)) continue;
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.is_regular_file() && is_embedded(entry.path()))
        files[fs::relative(entry.path(), dir).generic_string()] =
            kb::read_file_bytes(entry.path(), "workdir file");
  }
  return files;
}

// A Python literal of `text`: a raw triple-quoted string where that is exact, else a JSON string (a valid
// Python literal: JSON's escapes are a subset of Python's).
std::string python_literal(const std::string& text) {
  std::size_t trailing_backslashes = 0;
  while (trailing_backslashes < text.size() && text[text.size() - 1 - trailing_backslashes] == '\\')
    ++trailing_backslashes;
  if (text.find("\"\"\"") == std::string::npos && trailing_backslashes % 2 == 0 && !text.ends_with("\""))
    return "r\"\"\"" + text + "\"\"\"";
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `from __future__` imports must open a module, so they move above the header.
std::pair<std::string, std::string> split_future_imports(const std::string& model_new) {
  std::istringstream in(model_new);
  std::string line, future, rest;
  while (std::getline(in, line))
    (line.rfind("from __future__ import", 0) == 0 ? future : rest) += line + "\n";
  return {future, rest};
}

constexpr const char* builder = R"(

def _kj_build_workdir_extension():
    # Where torch keeps its extension builds: TORCH_EXTENSIONS_DIR (kj's build cache), else torch's default.
    build_root = _kj_os.environ.get("TORCH_EXTENSIONS_DIR") or _kj_cpp_extension.get_default_build_root()
    root = _kj_os.path.join(build_root, _KJ_FOLDER)
    for relative, text in sorted(_KJ_WORKDIR_FILES.items()):
        path = _kj_os.path.join(root, relative)
        _kj_os.makedirs(_kj_os.path.dirname(path), exist_ok=True)
        # Rewriting an unchanged file would make ninja rebuild the extension; a new one is renamed in whole.
        if _kj_os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                if f.read() == text:
                    continue
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        _kj_os.replace(path + ".tmp", path)
    sources = [_kj_os.path.join(root, r) for r in sorted(_KJ_WORKDIR_FILES) if r.endswith((".cu", ".cpp", ".cc"))]
    build = _kj_os.path.join(root, "build")
    _kj_os.makedirs(build, exist_ok=True)
    return _kj_cpp_extension.load(
        name="cuda_extension",
        sources=sources,
        build_directory=build,
        extra_cflags=["-O3", "-std=c++17"],
        extra_cuda_cflags=["-O3", "--use_fast_math"],
        with_cuda=_KJ_WITH_CUDA,
        verbose=False,
    )


cuda_extension = _kj_build_workdir_extension()
_kj_sys.modules["cuda_extension"] = cuda_extension

)";

} // namespace

bool is_workdir(const fs::path& dir) {
  return fs::is_directory(dir) && fs::is_regular_file(dir / "model_new.py");
}

std::string workdir_candidate_source(const fs::path& dir) {
  if (!is_workdir(dir))
    throw kb::source_error(fmt::format("{}: not a CUDA-Agent workdir (no model_new.py)", dir.string()));
  const std::map<std::string, std::string> files = embedded_files(dir);
  if (std::none_of(files.begin(), files.end(), [](const auto& f) { return is_compiled(f.first); }))
    throw kb::source_error(
        fmt::format("{}: no .cu, .cpp or .cc source in the workdir or its kernels/ folder", dir.string()));
  std::string listing, hashed;
  bool with_cuda = false;
  for (const auto& [relative, text] : files) {
    listing += fmt::format("    {}: {},\n", python_literal(relative), python_literal(text));
    hashed += relative + "\n" + std::to_string(text.size()) + "\n" + text;
    with_cuda |= relative.ends_with(".cu");
  }
  const auto [future, model_new] =
      split_future_imports(kb::read_file_bytes(dir / "model_new.py", "workdir file"));
  return fmt::format(
      "{}# kerneljudge: a CUDA-Agent workdir as one candidate. Its sources are embedded below; at import\n"
      "# they are written to a folder named by their hash and compiled together as one extension with\n"
      "# torch.utils.cpp_extension.load (CUDA-Agent's flags); then the workdir's model_new.py follows "
      "unchanged.\n"
      "import os as _kj_os\nimport sys as _kj_sys\n\nimport torch.utils.cpp_extension as "
      "_kj_cpp_extension\n\n"
      "_KJ_FOLDER = \"kj_workdir_{}\"\n_KJ_WITH_CUDA = {}\n_KJ_WORKDIR_FILES = {{\n{}}}\n{}"
      "# ---- model_new.py ----\n{}",
      future, core::sha256_hex(hashed).substr(0, 16), with_cuda ? "True" : "False", listing, builder,
      model_new);
}

} // namespace kj::adapters
