// CUDA-Agent-Ops-6K as a problem source (--ops6k): with pyarrow in the project's Python, a parquet fixture
// written here loads as a suite in `kj problems` and `kj run`; without it, the clear "needs pyarrow" error. A
// missing file is exit code 2 either way.
#include "engine/worker/python_env.hpp"
#include "planning/orchestrator/problem_sources.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <sys/wait.h>
#include <vector>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace kj::test;

namespace {

// Runs the project's Python (the one `kj worker` embeds: $KJ_PYTHON, else the build's) with `args`; its
// output goes to `log`. Returns the exit code.
int run_python(const std::string& args, const fs::path& log) {
  const std::string command =
      "'" + kj::worker::python_executable() + "' " + args + " >'" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool python_has_pyarrow(const scratch_dir& dir) {
  return run_python("-c 'import pyarrow.parquet'", dir / "pyarrow-check.log") == 0;
}

} // namespace

TEST_CASE("ops6k source: a missing parquet file is exit code 2 with a message naming it") {
  scratch_dir dir;
  const std::string missing = (dir / "absent.parquet").string();
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"problems", "--ops6k", missing},
                                             {"run", "--ops6k", missing, "--candidates", "identity",
                                              "--device", "cpu", "--db", (dir / "kj.sqlite").string()}}) {
    const auto r = run_kj(args);
    INFO(args[0] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, missing));
    CHECK(contains(r.err, "no such file"));
  }
}

TEST_CASE("ops6k source: the parquet file loads as a suite with pyarrow, and is a clear error without it") {
  scratch_dir dir;
  const std::string python = kj::worker::python_executable();
  if (!python_has_pyarrow(dir)) {
    // Any existing file: pyarrow is needed before the file is looked at.
    const fs::path file = dir / "ops.parquet";
    write_file(file, "not read");
    const auto r = run_kj({"problems", "--ops6k", file.string()});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "reading " + file.string() + " needs pyarrow in the embedded Python"));
    CHECK(contains(r.err, "-m pip install pyarrow"));
    return;
  }

  REQUIRE(run_python("'" + (fixtures_dir() / "ops6k" / "make_parquet.py").string() + "' '" +
                         dir.path().string() + "'",
                     dir / "make_parquet.log") == 0);
  const std::string file = (dir / "ops.parquet").string();

  SECTION("kj problems lists every row with its input shapes") {
    const auto r = run_kj({"problems", "--ops6k", file});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "cuda-agent-ops-6k"));
    CHECK(contains(r.out, "3 problems"));
    CHECK(!contains(r.out, "builtin")); // --ops6k alone does not add the built-in suite
    const auto json_run = run_kj({"problems", "--ops6k", file, "--format", "json"});
    REQUIRE(json_run.exit_code == 0);
    const json rows = json::parse(json_run.out);
    REQUIRE(rows.size() == 3);
    const std::vector<std::string> names{"torch_relu", "torch_add", "torch_matmul_nn_Identity"};
    const std::vector<std::vector<std::vector<int>>> shapes{
        {{4, 16}}, {{4, 16}, {4, 16}}, {{8, 16}, {16, 4}}};
    for (std::size_t i = 0; i < rows.size(); ++i) {
      INFO(rows[i].dump());
      CHECK(rows[i]["suite"] == "cuda-agent-ops-6k");
      CHECK(rows[i]["level"] == 0);
      CHECK(rows[i]["id"] == static_cast<int>(i + 1));
      CHECK(rows[i]["name"] == names[i]);
      CHECK(rows[i]["error"] == "");
      std::vector<std::vector<int>> got;
      for (const auto& input : rows[i]["description"]["inputs"])
        got.push_back(input["shape"].get<std::vector<int>>());
      CHECK(got == shapes[i]); // each row described from its own code
    }
  }

  SECTION("kj run judges the rows --ids selects") {
    const std::string db = (dir / "kj.sqlite").string();
    const auto r = run_kj({"run", "--device", "cpu", "--ops6k", file, "--ids", "1-2", "--candidates",
                           "identity", "--no-timing", "--db", db, "--cache-dir", (dir / "cache").string()});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto results = run_kj({"results", "--db", db, "--format", "json"});
    REQUIRE(results.exit_code == 0);
    const json records = json::parse(results.out);
    REQUIRE(records.size() == 2);
    std::set<std::string> problems;
    for (const auto& record : records) {
      INFO(record.dump());
      CHECK(record["suite"] == "cuda-agent-ops-6k");
      CHECK(record["level"] == 0);
      CHECK(record["verdict"] == "correct");
      problems.insert(record["problem"].get<std::string>());
    }
    CHECK(problems == std::set<std::string>{"torch_relu", "torch_add"});

    // With the built-in suite as well, its examples cover none of the rows: candidates must be named.
    const auto mixed = run_kj({"run", "--device", "cpu", "--builtin", "--ops6k", file, "--no-timing", "--db",
                               db, "--cache-dir", (dir / "cache").string()});
    CHECK(mixed.exit_code == 2);
    CHECK(mixed.err.find("no candidates given") != std::string::npos);
  }

  SECTION("a row whose code is broken is an error that names the file and the row, the others load") {
    const std::string broken = (dir / "broken.parquet").string();
    const auto r = run_kj({"problems", "--ops6k", broken, "--format", "json"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const json rows = json::parse(r.out);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0]["error"] == "");
    CHECK(contains(rows[1]["error"].get<std::string>(), broken + "#row=2"));
    CHECK(contains(rows[1]["error"].get<std::string>(), "SyntaxError"));
  }

  SECTION("a selection that matches no row, a file without `code` and a file that is not parquet") {
    const auto none = run_kj({"problems", "--ops6k", file, "--ids", "7-9", "--no-shapes"});
    CHECK(none.exit_code == 2);
    CHECK(contains(none.err, "--ids selects none of the 3 rows of " + file));

    const std::string no_code = (dir / "no_code.parquet").string();
    const auto missing_column = run_kj({"problems", "--ops6k", no_code, "--no-shapes"});
    CHECK(missing_column.exit_code == 2);
    CHECK(contains(missing_column.err, no_code + " has no `code` column"));
    CHECK(contains(missing_column.err, "source, ops"));

    const fs::path text = dir / "not.parquet";
    write_file(text, "import torch\n");
    const auto not_parquet = run_kj({"problems", "--ops6k", text.string(), "--no-shapes"});
    CHECK(not_parquet.exit_code == 2);
    CHECK(contains(not_parquet.err, text.string() + " is not a readable parquet file"));
  }
}

TEST_CASE("ops6k source: problem names come from the operators, sanitised and bounded") {
  using kj::orchestrator::ops6k_problem_name;
  CHECK(ops6k_problem_name({"nn.Conv2d", "torch.relu"}) == "nn_Conv2d_torch_relu");
  CHECK(ops6k_problem_name({"F.gelu"}, std::string("Fused GELU (v2)")) == "Fused_GELU_v2");
  CHECK(ops6k_problem_name({"torch.add"}, std::string("")) == "torch_add");
  CHECK(ops6k_problem_name({}) == "row");
  CHECK(ops6k_problem_name({"..."}) == "row");
  const std::string long_name = ops6k_problem_name(std::vector<std::string>(20, "torch.matmul"));
  CHECK(long_name.size() <= 60);
  CHECK(long_name.back() != '_');
}
