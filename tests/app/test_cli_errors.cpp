// Bad input to the real `kj`: each gets exit code 2 and a message that names what is wrong.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <string>
#include <utility>
#include <vector>

using namespace kj::test;

TEST_CASE("kj rejects bad input with exit code 2 and a clear message") {
  scratch_dir dir;
  SECTION("unknown option") {
    const auto r = run_kj({"run", "--no-such-option"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "--no-such-option"));
    // a one-letter option gets no guess: every other letter is one keystroke away (review 12: "-k: -h?")
    const auto letter = run_kj({"results", "-k", "ReLU"});
    CHECK(letter.exit_code == 2);
    CHECK(contains(letter.err, "-k: kj results has no such option (kj results --help lists them)"));
    CHECK_FALSE(contains(letter.err, "did you mean -h"));
  }
  SECTION("missing KernelBench path") {
    const auto r = run_kj({"run", "--kernelbench", (dir / "nowhere").string(), "--candidates", "identity"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, (dir / "nowhere").string()));
    CHECK(contains(r.err, "does not exist"));
  }
  SECTION("a folder that is not a KernelBench checkout") {
    const auto r = run_kj({"problems", "--kernelbench", dir.path().string(), "--no-shapes"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "not a KernelBench checkout"));
  }
  SECTION("unwritable DB path") {
    const std::string db = (dir / "no-such-dir" / "sub" / "kj.sqlite").string();
    const auto r = run_kj({"run", "--db", db, "--device", "cpu", "--ids", "1"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, db));
  }
  SECTION("malformed id list") {
    const auto r = run_kj({"problems", "--ids", "10-1", "--no-shapes"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "10-1"));
  }
  SECTION("malformed --set") {
    const auto r = run_kj({"run", "--set", "batch_size", "--db", (dir / "kj.sqlite").string()});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "NAME=INTEGER"));
  }
  SECTION("a candidate directory that does not exist") {
    const auto r = run_kj({"run", "--device", "cpu", "--candidates", (dir / "missing").string(), "--db",
                           (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, (dir / "missing").string()));
  }
  SECTION("unknown protocol, precision or library policy") {
    for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
             {"--protocol", "kernelbox"}, {"--precision", "fp8"}, {"--library-policy", "forbid-some"}}) {
      const auto r = run_kj({"run", flag, value, "--db", (dir / "kj.sqlite").string()});
      INFO(flag << " " << value << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, flag));
      CHECK(contains(r.err, value));
    }
  }
  SECTION("resource limits that are not a size or a count") {
    for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
             {"--memory-limit", "-1"}, {"--memory-limit", "lots"}, {"--process-limit", "0"}}) {
      const auto r = run_kj({"run", flag, value, "--db", (dir / "kj.sqlite").string()});
      INFO(flag << " " << value << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, flag));
    }
  }
  SECTION("results of a DB that does not exist") {
    const auto r = run_kj({"results", "--db", (dir / "absent.sqlite").string()});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "absent.sqlite"));
  }
}

TEST_CASE("kj --version and --help describe the tool") {
  const auto version = run_kj({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(contains(version.out, "kj 0.1.0+"));
  for (const char* cmd : {"run", "problems", "results", "db"}) {
    const auto help = run_kj({cmd, "--help"});
    INFO(cmd);
    CHECK(help.exit_code == 0);
    CHECK(contains(help.out, "--"));
  }
  const auto run_help = run_kj({"run", "--help"});
  CHECK(contains(run_help.out, "--candidates"));
  CHECK(contains(run_help.out, "--kernelbench"));
  CHECK(contains(run_help.out, "--set"));
  CHECK(contains(run_help.out, "cuda-agent"));
  CHECK(contains(run_help.out, "--library-policy"));
}

TEST_CASE("output lost on standard output is a failure named on stderr, never exit 0 (review 11)") {
  // kj's own writers, fmt's (which throws) and CLI11's help alike (review 12: exit 1, and exit 0 for --help)
  for (const char* command : {"problems", "completion bash", "--help", "verified show"}) {
    const auto lost = run_program(
        {"/bin/sh", "-c", std::string("exec \"$0\" ") + command + " > /dev/full", kj_binary().string()});
    INFO(command);
    CHECK(lost.exit_code == 2);
    CHECK(contains(lost.err, "could not write all of its output to standard output"));
  }
}

TEST_CASE("kj db copy takes -o for its copy, as kj merge and kj report do (review 11 U11)") {
  scratch_dir dir;
  write_file(dir / "kj.sqlite", ""); // an empty file becomes a kj database
  REQUIRE(run_kj({"db", "migrate", "--db", (dir / "kj.sqlite").string()}).exit_code == 0);
  const auto copied =
      run_kj({"db", "copy", "--db", (dir / "kj.sqlite").string(), "-o", (dir / "c.sqlite").string()});
  CHECK(copied.exit_code == 0);
  CHECK(std::filesystem::exists(dir / "c.sqlite"));
}
