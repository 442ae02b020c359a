// kj claims: a published set's claims beside a run's rows, with the reason kj names for every difference.
#include "reports/claims.hpp"
#include "tests/support/catch_compat.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

using kj::reports::result_row;
using nlohmann::json;

namespace {

result_row measured(int id, double eager, kj::verdict v = kj::verdict::correct,
                    kj::strict_verdict s = kj::strict_verdict::pass) {
  result_row r;
  r.level = 1, r.number = id, r.verdict = v, r.strict_verdict = s;
  r.problem_hash = "ref" + std::to_string(id), r.candidate_hash = "kernel" + std::to_string(id);
  r.baselines.push_back({"eager", {}, eager, {}});
  return r;
}

json claim(int id, double eager, bool kernel = true) {
  return {{"level", 1},
          {"problem_id", id},
          {"name", "P" + std::to_string(id)},
          {"reference", "identical"},
          {"reference_sha256", "ref" + std::to_string(id)},
          {"kernel_sha256", "kernel" + std::to_string(id)},
          {"kernel", kernel ? "written" : "missing"},
          {"claims", {{"eager", eager}, {"torch_compile", eager / 2}}}};
}

} // namespace

TEST_CASE("claims beside measurements: every difference has a reason kj names") {
  const json claims{{"format", "kj-claims-1"},
                    {"source", "CUDA-L1"},
                    {"gpu", "h100"},
                    {"rows",
                     {claim(1, 2.0), claim(2, 3.0, false), claim(3, 17.8), claim(4, 2.0), claim(5, 4.0),
                      claim(6, 1.5), claim(7, 2.0)}}};
  std::vector<result_row> rows{measured(1, 1.95), measured(3, 0.0, kj::verdict::incorrect),
                               measured(4, 2.0, kj::verdict::correct, kj::strict_verdict::fail),
                               measured(5, 1.0), measured(6, 1.5)};
  rows[1].reason = "mismatch", rows[1].error = "lazy output: not a tensor\nmore";
  rows[2].strict_failed = "random,distribution,inputs,output"; // an in-place relu_: the cause is named (U5)
  rows[4].problem_hash = "kernelbench-main";                   // judged on another reference
  const auto c = kj::reports::compare_claims(claims, rows, "r1", "NVIDIA H100 80GB HBM3");
  REQUIRE(c.rows.size() == 7);
  CHECK(c.rows[0].explanation == "agrees (within 10%)");
  CHECK(c.rows[1].explanation == "no kernel in the release: its 3.00x over eager has no code to check");
  CHECK(c.rows[2].explanation.starts_with("not counted correct: incorrect (mismatch): lazy output"));
  CHECK(c.rows[3].explanation.find("strict fails (random,distribution,inputs,output): it changes an input in "
                                   "place") != std::string::npos);
  CHECK(c.rows[4].explanation.starts_with("measured 0.25x of the claim"));
  CHECK(c.rows[4].explanation.find("claimed on") == std::string::npos); // h100 is the H100 it ran on
  CHECK(c.rows[5].explanation.starts_with("judged against another reference"));
  CHECK(c.rows[5].verdict.empty()); // not a judgement of the release's kernel: counted nowhere
  CHECK(c.rows[6].explanation == "not judged in this run");
  CHECK(*c.rows[0].claimed_compile == 1.0);

  std::ostringstream table;
  kj::reports::write_claims_table(c, table);
  INFO(table.str());
  // 7 rows, 6 kernels, 4 judged (1, 3, 4, 5), 2 counted correct (1, 5), 1 agreeing; geomean over 1, 5
  CHECK(table.str().find("all       7 rows    6 kernels    4 judged    2 correct    1 agree") !=
        std::string::npos);
  std::ostringstream md;
  kj::reports::write_claims_markdown(c, md);
  CHECK(md.str().find("| all | 7 | 6 | 4 | 2 | 1 |") != std::string::npos);
  CHECK(md.str().find("| correct/strict |") != std::string::npos);
  const auto j = kj::reports::claims_json(c);
  CHECK(j["rows"][2]["verdict"] == "incorrect");
  CHECK(j["levels"]["all"]["counted_correct"] == 2);
  CHECK(j["levels"]["L1"]["judged"] == 4);

  const auto elsewhere = kj::reports::compare_claims(claims, rows, "r1", "NVIDIA A100-SXM4-80GB");
  CHECK(elsewhere.rows[4].explanation.find("claimed on h100, measured on NVIDIA A100") != std::string::npos);
  CHECK(elsewhere.rows[0].explanation == "agrees (within 10%), though claimed on h100, measured on NVIDIA "
                                         "A100-SXM4-80GB");
  rows[0].sizes = R"({"dim":64})"; // judged at --set sizes: not the problem the claim is for
  const auto resized = kj::reports::compare_claims(claims, rows, "r1", "NVIDIA H100 80GB HBM3");
  CHECK(resized.rows[0].explanation.starts_with(
      "judged at other sizes than the release's (--set {\"dim\":64})"));
  json named = claims;
  named["rows"][0]["name"] = 5;
  CHECK_THROWS_AS(kj::reports::compare_claims(named, rows, "r1", ""), std::invalid_argument);
  CHECK_THROWS_AS(kj::reports::compare_claims(json{{"rows", json::array()}}, rows, "r1", ""),
                  std::invalid_argument);
}
