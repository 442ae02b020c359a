// GPU (label `gpu`): `kj baselines --device cuda` on two built-in problems with eager, torch.compile default
// and max-autotune-no-cudagraphs: all measured with CUDA events (robust), compiled ones matching eager, then
// answered from the cache. Skipped when torch in kj's Python sees no CUDA device.
#include "db/store.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"

#include <nlohmann/json.hpp>

using namespace kj::test;

TEST_CASE("kj baselines on the GPU: eager and compiled modes with CUDA events, then from the cache",
          "[gpu][cuda]") {
  scratch_dir dir;
  const std::vector<std::string> args{"baselines",
                                      "--device",
                                      "cuda",
                                      "--level",
                                      "1",
                                      "--ids",
                                      "1-2",
                                      "--modes",
                                      "eager,compile-default,max-autotune-no-cudagraphs",
                                      "--max-time-ms",
                                      "300",
                                      "--db",
                                      (dir / "kj.sqlite").string(),
                                      "--cache-dir",
                                      (dir / "cache").string()};
  const auto r = run_kj(args, dir.path());
  if (no_cuda_device(r)) {
    skip_test("torch in kj's Python sees no CUDA device");
    return;
  }
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto store = kj::db::store::open_read_only(dir / "kj.sqlite");
  const auto rows = store.baselines();
  REQUIRE(rows.size() == 6);
  for (const auto& b : rows) {
    INFO(b.file_name << " " << b.mode << ": " << b.status << " " << b.error);
    CHECK(b.status == "ok");
    CHECK(b.device == "cuda");
    CHECK(b.clock == "cuda-event");
    CHECK(b.median_ms.value_or(0) > 0);
    CHECK(nlohmann::json::parse(b.params_json)["matches_eager"]["passed"] == true);
    if (b.mode != "eager") CHECK(b.compile_s.value_or(0) > 0);
  }
  const auto again = run_kj(args, dir.path());
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.find("(cached)") != std::string::npos);
  CHECK(again.err.find("compiling") == std::string::npos);
  CHECK(store.baselines().size() == 6);
}
