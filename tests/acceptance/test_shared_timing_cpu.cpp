// KJ_TIMING_CPU=shared through the real `kj run` on the CPU (engine/worker/timing_cpus.hpp): the judge names
// one CPU for both subjects, the candidate's process pins its timing thread there, and both timings record
// it; a run without it records nothing of the kind.
#include "db/sqlite.hpp"
#include "tests/acceptance/kj_user.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

using kj::db::sqlite::connection;
using namespace kj::test;

namespace {

// "<timed CPU>/<cpu_pinned>" of a run's timing of `subject` ("-" for what it lacks).
std::string cpu_of(const user& u, const std::string& run, const std::string& subject) {
  auto c = connection::open(u.db(), connection::open_mode::read_only);
  return c.query_text(
      "SELECT coalesce(json_extract(t.params_json, '$.timing_cpus.timed'), '-') || '/' || "
      "coalesce(json_extract(t.params_json, '$.cpu_pinned'), '-') FROM timings t JOIN "
      "evaluations e ON e.id = t.evaluation_id JOIN runs r ON r.id = e.run_id WHERE r.run_uid = '" +
          run + "' AND t.subject = '" + subject + "'",
      "test query");
}

} // namespace

TEST_CASE("KJ_TIMING_CPU=shared times candidate and reference on one CPU, and says so in both timings") {
  scratch_dir dir;
  const std::vector<std::string> args{"--ids", "2", "--candidates", "builtin:identity", "--quick"};
  const user shared{dir, {{"KJ_TIMING_CPU", "shared"}}};
  std::vector<std::string> one = args;
  one.insert(one.end(), {"--run-id", "shared"});
  const auto r = shared.run(one);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string candidate = cpu_of(shared, "shared", "candidate");
  const std::string reference = cpu_of(shared, "shared", "reference_eager");
  INFO(candidate << " " << reference);
  CHECK(candidate.substr(0, 1) != "-");
  CHECK(candidate.ends_with("/1")); // the candidate's process pinned its timing thread
  CHECK(reference == candidate.substr(0, candidate.find('/')) + "/-"); // the reference on the same CPU
  const user plain{dir, {}};
  std::vector<std::string> two = args;
  two.insert(two.end(), {"--run-id", "plain"});
  REQUIRE(plain.run(two).exit_code == 0);
  CHECK(cpu_of(plain, "plain", "candidate") == "-/-");
  CHECK(cpu_of(plain, "plain", "reference_eager") == "-/-");
}
