// The agent's workspace: CUDA-Agent's layout, and a sandbox its file tools cannot leave (escapes, absolute
// paths, links planted by candidate code, hidden files, the read-only reference), and the candidate it
// amounts to.
#include "agent/workspace.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>
#include <functional>

using namespace kj;
using namespace kj::test;
namespace fs = std::filesystem;

namespace {

const std::string reference = "import torch\nclass Model(torch.nn.Module):\n    pass\n";

void require_refused(const std::function<void()>& action, const std::string& words) {
  try {
    action();
    FAIL("not refused; expected: " << words);
  } catch (const agent::refused& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(words) != std::string::npos);
  }
}

} // namespace

TEST_CASE("a new workspace holds the read-only reference and an empty kernels folder, no model_new.py") {
  scratch_dir dir;
  const auto ws = agent::workspace::create(dir / "ws", reference);
  CHECK(read_file(dir / "ws" / "model.py") == reference);
  CHECK(fs::is_directory(dir / "ws" / "kernels"));
  const auto files = ws.list();
  REQUIRE(files.size() == 1);
  CHECK((files[0].path == "model.py" && files[0].read_only));
  CHECK_FALSE(ws.candidate_source());
  CHECK_THROWS(agent::workspace::create(dir / "ws", reference)); // never over an existing folder
}

TEST_CASE("paths that leave the workspace, absolute paths, hidden names and model.py writes are refused") {
  scratch_dir dir;
  write_file(dir / "secret.txt", "outside\n");
  const auto ws = agent::workspace::create(dir / "ws", reference);
  require_refused([&] { ws.read("../secret.txt"); }, "leaves the workspace");
  require_refused([&] { ws.read("kernels/../../secret.txt"); }, "leaves the workspace");
  require_refused([&] { ws.write("../escape.py", "x = 1\n"); }, "leaves the workspace");
  require_refused([&] { ws.read((dir / "secret.txt").string()); }, "is absolute");
  require_refused([&] { ws.read("/proc/self/environ"); }, "is absolute");
  require_refused([&] { ws.read(".kj/state"); }, "hidden");
  require_refused([&] { ws.write("kernels/.hidden.cpp", "//\n"); }, "hidden");
  require_refused([&] { ws.write("model.py", "# mine\n"); }, "read-only");
  require_refused([&] { ws.edit("model.py", "import torch", "import os"); }, "read-only");
  require_refused([&] { ws.read(""); }, "empty path");
  CHECK(read_file(dir / "ws" / "model.py") == reference);
  CHECK_FALSE(fs::exists(dir / "escape.py"));
  CHECK(ws.read("kernels/../model.py") == reference); // normalized, and inside: fine
}

TEST_CASE("links planted in the workspace (candidate code runs as the same user) are refused at every use") {
  scratch_dir dir;
  write_file(dir / "secret.txt", "outside\n");
  fs::create_directories(dir / "elsewhere");
  const auto ws = agent::workspace::create(dir / "ws", reference);
  fs::create_symlink(dir / "secret.txt", dir / "ws" / "notes.txt");
  fs::create_directory_symlink(dir / "elsewhere", dir / "ws" / "kernels" / "lib");
  require_refused([&] { ws.read("notes.txt"); }, "symbolic link");
  require_refused([&] { ws.write("notes.txt", "overwrite\n"); }, "symbolic link");
  require_refused([&] { ws.write("kernels/lib/add.cpp", "//\n"); }, "symbolic link");
  CHECK(read_file(dir / "secret.txt") == "outside\n");
  CHECK_FALSE(fs::exists(dir / "elsewhere" / "add.cpp"));
  for (const auto& f : ws.list()) // links are not listed
    CHECK((f.path != "notes.txt" && f.path.find("lib") == std::string::npos));
  // A workdir that holds a link is not turned into a candidate (the import would read through it).
  ws.write("model_new.py", "class ModelNew: pass\n");
  ws.write("kernels/add.cpp", "// kernel\n");
  require_refused([&] { (void)ws.candidate_source(); }, "symbolic link");
}

TEST_CASE("edit_file replaces exactly one occurrence, limits on sizes and file counts hold") {
  scratch_dir dir;
  const auto ws = agent::workspace::create(dir / "ws", reference, {.max_file_bytes = 64, .max_files = 3});
  ws.write("kernels/a.cpp", "int a = 1;\nint b = 1;\n");
  CHECK(ws.edit("kernels/a.cpp", "int a = 1;", "int a = 2;") == "int a = 2;\nint b = 1;\n");
  require_refused([&] { ws.edit("kernels/a.cpp", "= 1;\nint a", "x"); }, "does not occur");
  ws.write("kernels/b.cpp", "x x\n");
  require_refused([&] { ws.edit("kernels/b.cpp", "x", "y"); }, "more than once");
  require_refused([&] { ws.write("kernels/c.cpp", "y\n"); }, "files already"); // model.py, a.cpp, b.cpp
  require_refused([&] { ws.write("kernels/a.cpp", std::string(65, 'x')); }, "bytes");
  CHECK(ws.read("kernels/b.cpp") == "x x\n");
}

TEST_CASE("the candidate is model_new.py alone, or the workspace as one CUDA-Agent workdir source") {
  scratch_dir dir;
  const auto ws = agent::workspace::create(dir / "ws", reference);
  const std::string inline_source =
      "from torch.utils.cpp_extension import load_inline\nclass ModelNew: pass\n";
  ws.write("model_new.py", inline_source);
  CHECK(ws.candidate_source() == inline_source);
  ws.write("kernels/add.cpp", "extern \"C\" void add() {}\n");
  ws.write("binding.cpp", "#include <pybind11/pybind11.h>\nPYBIND11_MODULE(cuda_extension, m) {}\n");
  const auto workdir = ws.candidate_source();
  REQUIRE(workdir);
  CHECK(workdir->find("_KJ_WORKDIR_FILES") != std::string::npos);
  CHECK(workdir->find("kernels/add.cpp") != std::string::npos);
  CHECK(workdir->find("model.py") == std::string::npos); // the reference is never part of the candidate
  CHECK(workdir->ends_with(inline_source));
  CHECK(ws.candidate_source() == workdir); // the same files, the same text (content-addressed builds)
}
