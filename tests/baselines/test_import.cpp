// Importing KernelBench's results/timing JSONs (tests/fixtures/baselines/kb_timing, made-up numbers in their
// layout): rows marked imported with the hardware label, attached to known problems, never duplicated, and
// bad files named with the field at fault.
#include "planning/baselines/baselines.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

using namespace kj::test;
namespace fs = std::filesystem;

namespace {

std::string import_error(kj::db::store& store, const fs::path& path) {
  try {
    kj::baselines::import_kernelbench_json(store, path);
  } catch (const kj::kb::source_error& e) {
    return e.what();
  }
  return "<no error>";
}

} // namespace

TEST_CASE("KernelBench timing JSONs import as rows marked imported, once") {
  scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  kj::db::problem_record matmul{"builtin", "", 1, 1, "Matmul", "1_Matmul.py", "/x", "src", "", ""};
  const auto problem_id = store.upsert_problem(matmul);

  const fs::path folder = fixtures_dir() / "baselines" / "kb_timing";
  const auto first = kj::baselines::import_kernelbench_json(store, folder);
  CHECK(first.files == 2);
  CHECK(first.imported == 4);
  CHECK(first.skipped == 0);
  CHECK(first.matched_problems == 2); // 1_Matmul.py in both files

  const auto rows = store.baselines();
  REQUIRE(rows.size() == 4);
  for (const auto& r : rows) {
    CHECK(r.origin == "imported");
    CHECK(r.hardware == "H100_fixture");
    CHECK(r.stack_id == 0);
    CHECK(r.method == "kernelbench");
    CHECK(r.samples_ms.empty());
    CHECK(r.imported_from.find("kb_timing") != std::string::npos);
  }
  const auto& matmul_eager = rows[0]; // ordered by level, file name, mode
  CHECK(matmul_eager.file_name == "1_Matmul.py");
  CHECK(matmul_eager.mode == "compile-default");
  CHECK(matmul_eager.mean_ms == 1.2);
  CHECK(matmul_eager.headline_ms() == 1.2);
  CHECK(matmul_eager.problem_id == problem_id);
  CHECK(rows[1].mode == "eager");
  CHECK(rows[1].stdev_ms == 0.01);

  const auto again = kj::baselines::import_kernelbench_json(store, folder, "");
  CHECK(again.imported == 0);
  CHECK(again.skipped == 4);
  CHECK(store.baselines().size() == 4);

  const auto labelled = kj::baselines::import_kernelbench_json(
      store, folder / "H100_fixture" / "baseline_time_torch_compile_inductor_default.json", "my-H100");
  CHECK(labelled.imported == 1); // another label is another row
  CHECK(store.baselines().size() == 5);
}

TEST_CASE("a bad KernelBench timing file is refused, naming the file and the field") {
  scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  const fs::path file = dir / "baseline_time_torch.json";

  write_file(file, "{ not json");
  CHECK(import_error(store, file).find("not valid JSON") != std::string::npos);
  write_file(file, R"({"levelX": {}})");
  CHECK(import_error(store, file).find("key 'levelX' is not a level") != std::string::npos);
  write_file(file, R"({"level1": {"1_A.py": {"std": 0.1}}})");
  CHECK(import_error(store, file).find("[level1][1_A.py]: expected an object with a 'mean'") !=
        std::string::npos);
  write_file(file, R"({"level1": {"1_A.py": {"mean": "fast"}}})");
  CHECK(import_error(store, file).find("field 'mean' is \"fast\"") != std::string::npos);
  write_file(file, R"({"level1": {"1_A.py": {"mean": 1.0}, "2_B.py": {"mean": null}}})");
  CHECK(import_error(store, file).find("[level1][2_B.py]: field 'mean' is null") != std::string::npos);
  CHECK(import_error(store, dir / "missing").find("no such file or folder") != std::string::npos);
  fs::create_directories(dir / "empty");
  CHECK(import_error(store, dir / "empty").find("no KernelBench timing file") != std::string::npos);
  CHECK(store.baselines().empty()); // nothing half-imported
}
