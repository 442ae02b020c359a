// The verified problem set's file: reading it (each malformed field named), a problem's standing by identity
// and source hash, and building it from `kj audit --json` outputs with the public reports attached.
#include "kernelbench/problems.hpp"
#include "kernelbench/verified.hpp"
#include "kernelbench/verified_build.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

using nlohmann::json;
using namespace kj::kb;
using namespace kj::test;

namespace {

json audit(int level, int id, const std::string& name, const std::string& sha, bool unsound, bool zeros_c,
           const std::string& error = "") {
  return {{"suite", "kernelbench"},
          {"protocol", "kernelbench-main"},
          {"level", level},
          {"id", id},
          {"name", name},
          {"sha256", sha},
          {"unsound", unsound},
          {"reasons", unsound ? "constant reference: its output is the same value everywhere" : ""},
          {"notes", zeros_c ? "KernelBench's rule accepts 'zeros'" : ""},
          {"nulls", {{"zeros", {{"compatible", zeros_c}, {"strict", false}}}}},
          {"error", error}};
}

// The message of what f throws ("no error" when it throws nothing).
template <typename F>
std::string message_of(F f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

verified_set write_and_load(const scratch_dir& dir, const json& doc) {
  write_file(dir / "set.json", doc.dump());
  return load_verified_set(dir / "set.json");
}

} // namespace

TEST_CASE("a built set gives each problem its standing per precision, with the public reports that name it") {
  verified_build_input in{.version = "t.1"};
  in.audits["fp32"] = json::array({audit(1, 1, "A", "aa", false, false), audit(1, 2, "B", "bb", false, true),
                                   audit(2, 3, "C", "cc", true, true),
                                   audit(2, 4, "D", "dd", false, false, "RuntimeError: boom")});
  in.audits["bf16"] = json::array({audit(1, 1, "A", "aa", false, true)});
  in.public_reports = json::array({{{"source", "PR #1"},
                                    {"claim", "constant"},
                                    {"problems", {{{"level", 2}, {"id", 3}}, {{"level", 1}, {"id", 1}}}}},
                                   {{"source", "issue #2"},
                                    {"precision", "bf16"},
                                    {"claim", "zeros"},
                                    {"problems", {{{"level", 1}, {"id", 1}}}}}});
  const json doc = build_verified_set(in);
  REQUIRE(doc["problems"].size() == 4);
  scratch_dir dir;
  const verified_set set = write_and_load(dir, doc);
  CHECK(set.version == "t.1");
  CHECK(set.status_of(1, 1, "A", "aa", kj::precision::fp32).status == "sound");
  CHECK(set.status_of(1, 1, "A", "aa", kj::precision::bf16).status == "weak");
  CHECK(set.status_of(1, 2, "B", "bb", kj::precision::fp32).status == "weak");
  CHECK(set.status_of(2, 3, "C", "cc", kj::precision::fp32).status == "unsound");
  CHECK(set.status_of(2, 3, "C", "cc", kj::precision::fp32).why.find("constant reference") !=
        std::string::npos);
  CHECK(set.status_of(2, 4, "D", "dd", kj::precision::fp32).status == "error");
  // fp16 was not audited: not verified there (never fp32's standing)
  CHECK(set.status_of(2, 3, "C", "cc", kj::precision::fp16).status == "unaudited");
  CHECK(set.status_of(2, 3, "C", "cc", kj::precision::fp16).why == "no fp16 audit of it in the set");
  // another source, or a problem not in the set
  CHECK(set.status_of(1, 1, "A", "edited", kj::precision::fp32).status == "changed");
  CHECK(set.status_of(3, 9, "Z", "zz", kj::precision::fp32).status == "absent");
  // the public reports: PR #1 agrees on C (unsound) and not on A (sound at fp32); issue #2 agrees at bf16
  const auto& a = set.problems[0];
  REQUIRE(a.public_reports.size() == 2);
  CHECK(a.public_reports[0] == "PR #1 (disagrees): constant");
  CHECK(a.public_reports[1] == "issue #2 (agrees): zeros");
  CHECK(set.problems[2].public_reports[0] == "PR #1 (agrees): constant");
}

TEST_CASE("an audit without sha256 is hashed from the checkout, else refused by name") {
  verified_build_input in{.version = "t.2"};
  json a = audit(1, 1, "A", "", false, false);
  a.erase("sha256");
  in.audits["fp32"] = json::array({a});
  CHECK(has(message_of([&] { build_verified_set(in); }), "L1 1_A carries no sha256"));
  in.source_sha256[{1, 1, "A"}] = "from-the-checkout";
  CHECK(build_verified_set(in)["problems"][0]["sha256"] == "from-the-checkout");
  in.public_reports =
      json::array({{{"source", "empty report"}, {"claim", "x"}, {"problems", json::array()}}});
  CHECK(has(message_of([&] { build_verified_set(in); }), "'empty report' names no problem"));
}

TEST_CASE("a malformed set file is refused with the file and the field") {
  scratch_dir dir;
  const auto error_of = [&](const std::string& text) {
    write_file(dir / "bad.json", text);
    return message_of([&] { load_verified_set(dir / "bad.json"); });
  };
  CHECK(has(message_of([&] { load_verified_set(dir / "absent.json"); }),
            "absent.json: cannot read the verified problem set"));
  CHECK(has(error_of("{"), "bad.json: not JSON"));
  CHECK(has(error_of("{\"format\": 2, \"version\": \"x\", \"problems\": []}"),
            "format 2 is not one this kj reads"));
  CHECK(has(error_of("{\"format\": 1, \"problems\": []}"), "has no \"version\""));
  CHECK(has(
      error_of(
          "{\"format\": 1, \"version\": \"x\", \"problems\": [{\"level\": 1, \"id\": 1, \"name\": \"A\"}]}"),
      "problems[0] has no \"sha256\""));
  CHECK(has(
      error_of("{\"format\": 1, \"version\": \"x\", \"problems\": [{\"level\": \"one\", \"id\": 1, \"name\": "
               "\"A\", \"sha256\": \"a\", \"audits\": {}}]}"),
      "problems[0].level is string, not the expected type"));
  CHECK(
      has(error_of(
              "{\"format\": 1, \"version\": \"x\", \"problems\": [{\"level\": 1, \"id\": 1, \"name\": \"A\", "
              "\"sha256\": \"a\", \"audits\": {\"fp32\": {\"status\": \"fine\"}}}]}"),
          "problems[0].audits.fp32.status is 'fine', not one of sound"));
}

TEST_CASE("an audit that ran out of memory is kj's failure: unaudited, never the problem's error") {
  verified_build_input in{.version = "t.3"};
  in.audits["fp32"] = json::array(
      {audit(1, 34, "InstanceNorm", "ii", false, false,
             "Traceback ...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 14.00 GiB."),
       audit(3, 33, "VanillaRNN", "vv", false, false,
             "RuntimeError: mat1 and mat2 must have the same dtype")});
  scratch_dir dir;
  const verified_set set = write_and_load(dir, build_verified_set(in));
  const auto oom = set.status_of(1, 34, "InstanceNorm", "ii", kj::precision::fp32);
  CHECK(oom.status == "unaudited");
  CHECK(has(oom.why, "kj's own limit, not the problem's"));
  CHECK(set.status_of(3, 33, "VanillaRNN", "vv", kj::precision::fp32).status == "error");
}

TEST_CASE("a KernelBench copy inside another repository is not at that repository's commit") {
  if (std::system("git --version >/dev/null 2>&1") != 0) return; // no git: nothing to check
  scratch_dir dir;
  const auto repo = dir.path();
  write_file(repo / ".gitignore", "ignored/\n");
  write_file(repo / "tracked" / "level1" / "1_A.py", "class Model: pass\n");
  write_file(repo / "ignored" / "level1" / "1_A.py", "class Model: pass\n");
  const std::string git = "git -C '" + repo.string() + "' ";
  REQUIRE(std::system((git + "init -q && " + git + "add -A && " + git +
                       "-c user.name=t -c user.email=t@t commit -qm t")
                          .c_str()) == 0);
  CHECK(git_commit_of(repo / "tracked").size() == 40);
  CHECK(git_commit_of(repo / "ignored").empty());
}

TEST_CASE("an audit file that is not what kj audit --json writes is refused by entry and field") {
  const json good = json::array({audit(1, 1, "A", "aa", false, false)});
  CHECK_NOTHROW(check_audit_entries(good, "f.json", "fp32"));
  const auto error_of = [](const json& entries, const std::string& precision = "fp32") {
    return message_of([&] { check_audit_entries(entries, "f.json", precision); });
  };
  CHECK(has(error_of(json::object()), "f.json: not a JSON array"));
  CHECK(has(error_of(json::array({1})), "f.json: [0] is not an object"));
  json a = audit(1, 1, "A", "aa", true, false);
  a.erase("unsound");
  CHECK(has(error_of(json::array({a})), "f.json: [0] has no \"unsound\""));
  a = audit(1, 1, "A", "aa", false, false);
  a["level"] = "1";
  CHECK(has(error_of(json::array({a})), "f.json: [0].level is string"));
  a = audit(1, 1, "A", "aa", false, false);
  a["nulls"] = json::array();
  CHECK(has(error_of(json::array({a})), "f.json: [0].nulls is array"));
  CHECK(has(error_of(good, "fp64"), "the precision 'fp64' is not fp32, tf32, bf16 or fp16"));
  CHECK(
      has(error_of(good, "bf16"), "audited under protocol 'kernelbench-main', not 'kernelbench-main-bf16'"));
}

TEST_CASE("a set file with a duplicate, an unknown precision or a mistyped public report is refused") {
  scratch_dir dir;
  const auto error_of = [&](const std::string& text) {
    write_file(dir / "bad.json", text);
    return message_of([&] { load_verified_set(dir / "bad.json"); });
  };
  const std::string p =
      R"({"level": 1, "id": 1, "name": "A", "sha256": "a", "audits": {"fp32": {"status": "sound"}}})";
  CHECK(has(error_of(R"({"format": 1, "version": "x", "problems": [)" + p + "," + p + "]}"),
            "is listed twice"));
  CHECK(has(
      error_of(
          R"({"format": 1, "version": "x", "problems": [{"level": 1, "id": 4.5, "name": "A", "sha256": "a",
            "audits": {}}]})"),
      "problems[0].id is the number 4.5"));
  CHECK(has(
      error_of(R"({"format": 1, "version": "x", "problems": [{"level": 1, "id": 1, "name": "A", "sha256": "a",
            "audits": {"fp64": {"status": "sound"}}}]})"),
      "'fp64' is not fp32, tf32, bf16 or fp16"));
  CHECK(has(
      error_of(R"({"format": 1, "version": "x", "problems": [{"level": 1, "id": 1, "name": "A", "sha256": "a",
            "audits": {}, "public": [{"source": 1}]}]})"),
      "problems[0].public[0].source is the number 1"));
  std::filesystem::create_directories(dir / "folder.json");
  CHECK(has(message_of([&] { load_verified_set(dir / "folder.json"); }), "folder.json: not a file"));
}
