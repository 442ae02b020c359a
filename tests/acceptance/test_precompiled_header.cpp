// kj's precompiled torch/extension.h (engine/exec/precompiled_header.hpp): a CPU run that compiles enough
// candidates (KJ_PCH_MIN_BUILDS) makes it once per stack, every build is offered it, and no build can write
// it.
#include "engine/exec/sandbox.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace kj::test;

namespace {

// A load_inline candidate at -O3 (the flags of most LLM-written ones); `salt` makes each source its own
// build. `probe`: its module code, at import in the build, first checks the header it is offered and tries to
// write it.
std::string candidate(int salt, bool probe) {
  const std::string check = R"(import os
folder = os.environ.get("CPATH", "")
if folder:  # in its build (the runner imports it again, without)
    assert os.access(os.path.join(folder, "torch", "extension.h.gch"), os.R_OK), "the header is not readable"
    for target in (os.path.join(folder, "torch", "extension.h.gch", "0.gch"), os.path.join(folder, "mine")):
        try:
            open(target, "ab").close()
        except OSError:
            continue
        raise RuntimeError("wrote " + target)
    open(os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "offered"), "w").close()
)";
  return fmt::format(R"({}import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_ext = load_inline(
    name="kj_pch_{}",
    cpp_sources="torch::Tensor twice(torch::Tensor x) {{ return x * {}.0 / {}.0; }}",
    functions=["twice"],
    extra_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.twice(x)
)",
                     probe ? check : "", salt, 2 * (salt + 1), salt + 1);
}

} // namespace

TEST_CASE("a CPU run's builds are offered kj's precompiled torch/extension.h, which none can write") {
  if (kj::exec::sandbox_kind() != "bwrap") {
    WARN("no bwrap here: kj offers no precompiled header without its read-only bind");
    return;
  }
  scratch_dir dir;
  fs::create_directories(dir / "kb" / "level1");
  write_file(dir / "kb" / "level1" / "1_Twice.py",
             "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
             "    def forward(self, x):\n        return x * 2\n\n\n"
             "def get_inputs():\n    return [torch.rand(64, 64)]\n\n\n"
             "def get_init_inputs():\n    return []\n");
  fs::create_directories(dir / "candidates");
  // Two builds, and KJ_PCH_MIN_BUILDS=2: a run with as many builds as the setting asks for makes the header
  // (a user's run needs 6 by default; tests/planning/test_pch_setting.cpp reads the setting).
  for (int s = 0; s < 2; ++s)
    write_file(dir / "candidates" / fmt::format("level_1_problem_1_sample_{}_kernel.py", s),
               candidate(s, s == 0));
  const char* shared = std::getenv("KJ_PCH_DIR"); // scripts/test shares one across the tests
  const fs::path root = shared && *shared ? fs::path(shared) : dir / "cache" / "pch";
  const auto r =
      run_program({kj_binary().string(), "run", "--device", "cpu", "--kernelbench", (dir / "kb").string(),
                   "--candidates", (dir / "candidates").string(), "--no-timing", "--no-strict", "--db",
                   (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()},
                  dir.path(), {{"KJ_PCH_MIN_BUILDS", "2"}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json rows =
      json::parse(run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--format", "json"}).out);
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) {
    INFO(row["candidate"] << ": " << row["error"]);
    CHECK(row["verdict"] == "correct");
  }
  bool offered = false; // sample 0's build saw the header, and wrote none of it
  for (const auto& entry : fs::recursive_directory_iterator(dir / "cache" / "builds"))
    offered = offered || entry.path().filename() == "offered";
  CHECK(offered);
  int ready = 0;
  for (const auto& entry : fs::directory_iterator(root))
    if (fs::exists(entry.path() / "ready")) {
      ++ready;
      CHECK_FALSE(fs::exists(entry.path() / "mine"));
      CHECK(fs::file_size(entry.path() / "torch" / "extension.h.gch" / "0.gch") > 1'000'000);
    }
  CHECK(ready >= 1);
}
