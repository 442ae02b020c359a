// The judge's reading of a candidate's numerics (engine/worker/candidate_numerics.hpp): the dtypes its
// forward made and the numerics flags it changed, against the run's precision.
#include "engine/worker/candidate_numerics.hpp"
#include "tests/support/catch_compat.hpp"

using kj::precision;
using kj::worker::candidate_numerics;
using kj::worker::lower_precision;
using nlohmann::json;

TEST_CASE("a forward narrower than the run's precision is named, and its numerics recorded") {
  const json bf16{{"bfloat16", {{"_to_copy", 2}, {"mm", 1}}}, {"float32", {{"add", 1}}}};
  CHECK(lower_precision(bf16, precision::fp32) ==
        "ModelNew.forward made bfloat16 tensors (_to_copy x2, mm x1) in an fp32 run");
  CHECK(candidate_numerics(bf16, json::object(), precision::fp32) == precision::bf16);
  // bf16 before fp16 when it made both; nothing narrower than a half-precision run's own
  const json both{{"float16", {{"mm", 1}}}, {"bfloat16", {{"mm", 1}}}};
  CHECK(candidate_numerics(both, json::object(), precision::fp32) == precision::bf16);
  CHECK(lower_precision(both, precision::fp16).empty());
  CHECK_FALSE(candidate_numerics(both, json::object(), precision::bf16).has_value());
  // a tf32 run keeps fp32 tensors: a bf16 forward is narrower
  CHECK(candidate_numerics(bf16, json::object(), precision::tf32) == precision::bf16);
}

TEST_CASE("TF32 turned on in an fp32 run is tf32 numerics, and none in another run or when left alone") {
  const json on{{"backends.cuda.matmul.allow_tf32", "False -> True"}};
  const json high{{"float32_matmul_precision", "highest -> high"}};
  const json off{{"backends.cuda.matmul.allow_tf32", "True -> False"}};
  CHECK(candidate_numerics(json::object(), on, precision::fp32) == precision::tf32);
  CHECK(candidate_numerics(json::object(), high, precision::fp32) == precision::tf32);
  CHECK_FALSE(candidate_numerics(json::object(), off, precision::fp32).has_value());
  CHECK_FALSE(candidate_numerics(json::object(), on, precision::bf16).has_value());
  CHECK_FALSE(candidate_numerics({{"float32", {{"mm", 1}}}}, json::object(), precision::fp32).has_value());
}
