// What the candidates' sandbox exposes read-only must hold no results, candidates or cache of kj's: `kj run`
// refuses them there with exit code 2, naming both paths, before it opens anything.
#include "engine/exec/sandbox.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>

using namespace kj::test;
namespace fs = std::filesystem;

TEST_CASE("exposed_under finds the exposed folder or file that holds a path") {
  const std::vector<fs::path> exposed{"/usr", "/opt/torch/.venv", "/srv/kj/bin/kj"};
  CHECK(kj::exec::exposed_under("/usr/local/kj.sqlite", exposed) == "/usr");
  CHECK(kj::exec::exposed_under("/opt/torch/.venv/lib/x", exposed) == "/opt/torch/.venv");
  CHECK(kj::exec::exposed_under("/opt/torch/.venvx/kj.sqlite", exposed).empty()); // a name, not a prefix
  CHECK(kj::exec::exposed_under("/srv/kj/bin/kj.sqlite", exposed).empty());       // beside kj, not in it
  CHECK(kj::exec::exposed_under("/srv/kj/bin/kj", exposed) == "/srv/kj/bin/kj");
  CHECK(kj::exec::exposed_under("/usr/../tmp/kj.sqlite", exposed).empty()); // taken canonical
}

TEST_CASE("kj run refuses a results DB, a candidates folder or a cache the sandbox exposes") {
  if (kj::exec::sandbox_kind() != "bwrap") {
    skip_test("no namespace sandbox on this machine: every path is readable, nothing is refused");
    return;
  }
  scratch_dir dir;
  const std::string cache = (dir / "cache").string();
  SECTION("--db under a system folder") {
    const auto r = run_kj({"run", "--device", "cpu", "--builtin", "--ids", "1", "--candidates", "identity",
                           "--db", "/etc/kj-exposed-test.sqlite", "--cache-dir", cache});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "/etc/kj-exposed-test.sqlite"));
    CHECK(contains(r.err, "lies under /etc"));
    CHECK_FALSE(fs::exists("/etc/kj-exposed-test.sqlite")); // refused before it was opened
  }
  SECTION("the cache folder under a system folder") {
    const auto r = run_kj({"run", "--device", "cpu", "--builtin", "--ids", "1", "--candidates", "identity",
                           "--db", (dir / "kj.sqlite").string(), "--cache-dir", "/opt/kj-exposed-cache"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "cache folder"));
    CHECK(contains(r.err, "lies under /opt"));
  }
  SECTION("--db in Python's own folders (exposed for the interpreter)") {
    const fs::path site = fs::path(KJ_TEST_PYTHON).parent_path().parent_path();
    fs::remove(site / "kj-exposed-test.sqlite");
    const auto r = run_kj({"run", "--device", "cpu", "--builtin", "--ids", "1", "--candidates", "identity",
                           "--db", (site / "kj-exposed-test.sqlite").string(), "--cache-dir", cache});
    CHECK_FALSE(fs::exists(site / "kj-exposed-test.sqlite"));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "kj-exposed-test.sqlite"));
    CHECK(contains(r.err, "sandbox exposes"));
  }
  SECTION("the cache folder in Python's own folders: refused, and nothing made there") {
    const fs::path site = fs::path(KJ_TEST_PYTHON).parent_path().parent_path();
    const fs::path made = site / "kj-exposed-cache-test";
    fs::remove_all(made);
    const auto r = run_kj({"run", "--device", "cpu", "--builtin", "--ids", "1", "--candidates", "identity",
                           "--db", (dir / "kj.sqlite").string(), "--cache-dir", (made / "cache").string()});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "sandbox exposes"));
    CHECK_FALSE(fs::exists(made)); // the probe's folders went with the refusal
  }
}
