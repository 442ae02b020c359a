// Issue 34's conveniences through the real `kj`: kj.toml (and its precedence), --collect-only,
// --summary-json, kj doctor and the shell completion.
#include "db/sqlite.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using namespace kj::test;
using nlohmann::json;

namespace {

command_result kj_in(const scratch_dir& dir, std::vector<std::string> args,
                     std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), kj_binary().string());
  if (const char* cache = std::getenv("KJ_CACHE_DIR"); cache && *cache && !env.contains("KJ_CACHE_DIR"))
    env.emplace("KJ_CACHE_DIR", cache);
  const auto r = run_program(args, dir.path(), env);
  INFO(args[1] << ": " << r.err);
  return r;
}

} // namespace

TEST_CASE("kj.toml sets a command's defaults, and flags and environment variables outrank it") {
  scratch_dir dir;
  write_file(dir / "kj.toml", "[run]\ndevice = \"cpu\"\nlevel = \"1\"\nids = \"2-3\"\ncandidates = "
                              "\"builtin:identity\"\ncollect-only = true\ncache-dir = \"" +
                                  (dir / "from-file").string() + "\"\n");
  // KJ_CACHE_DIR outranks the file's cache-dir: the file's folder is never made.
  kj_in(dir, {"run"}, {{"KJ_CACHE_DIR", (dir / "from-env").string()}});
  CHECK(fs::exists(dir / "from-env"));
  CHECK_FALSE(fs::exists(dir / "from-file"));
  const auto from_file = kj_in(dir, {"run"}, {{"KJ_CACHE_DIR", ""}}); // no variable: the file's folder
  REQUIRE(from_file.exit_code == 0);
  CHECK(contains(from_file.out, "2 candidate(s) for 2 of 2 selected problems on cpu"));
  CHECK(fs::exists(dir / "from-file"));
  const auto flag = kj_in(dir, {"run", "--ids", "2"});
  CHECK(contains(flag.out, "1 candidate(s) for 1 of 1 selected problems"));
  write_file(dir / "kj.toml", "[run]\ndevise = \"cpu\"\n");
  const auto typo = kj_in(dir, {"run"});
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.err, "kj.toml:2: unknown key 'run.devise'"));
  CHECK(contains(typo.err, "did you mean device?"));
  write_file(dir / "kj.toml", "[run\ndevice = \"cpu\"\n"); // not TOML: the file and the rule are named
  const auto broken = kj_in(dir, {"run"});
  CHECK(broken.exit_code == 2);
  CHECK(contains(broken.err, "kj.toml:1: '[run' is not a section: kj.toml is TOML"));
  // Each line's shape is checked, and an error names file:line.
  const std::vector<std::pair<std::string, std::string>> broken_files{
      {"[run]\nlevel 1\n", "kj.toml:2: 'level 1' has no '='"},
      {"[run]\nids = [1,2]\n", "kj.toml:2: ids = [1,2]: --ids takes one value, not an array"}, // review 11 U7
      {"[run]\ndevice = \"cpu\n", "kj.toml:2: the value of device opens a quote it does not close"},
      {"[run]\ndevice = \"cpu\"\n\n[run]\nlevel = \"1\"\n",
       "kj.toml:4: [run] is given a second time (first at line 1)"},
      {"[run]\ndevice = \"cpu\"\ndevice = \"cuda\"\n",
       "kj.toml:3: device is set a second time (first at line 2)"},
      {"# defaults\n[run]\ndevise = \"cpu\"\n", "kj.toml:3: unknown key 'run.devise'"},
      // a key with a letter outside ASCII: named whole at its line, its (valid) section never called unknown
      {"[run]\nlevel = \"1\"\ndevic\u00e9 = \"cpu\"\n", "kj.toml:3: unknown key 'run.devic\u00e9'"},
      {"[run]\nlevel = \"1\"\n[report]\n\u00f6ut = \"r\"\n", "kj.toml:4: unknown key 'report.\u00f6ut'"},
      // a section no command has, named as a section at its line (any letters, nested or not)
      {"[Run]\nlevel = \"1\"\n", "kj.toml:1: unknown section [Run]"},
      {"[run]\nlevel = \"1\"\n[r\u00fcn]\nx = 1\n", "kj.toml:3: unknown section [r\u00fcn]"},
      {"[run]\nlevel = \"1\"\n[run.extra]\nx = 1\n", "kj.toml:3: unknown section [run.extra]"},
      {"[run]\ndevice = \"cpux\"\n", "kj.toml:2: device = \"cpux\": --device"},
      {"[run]\nquick = yes\n", "kj.toml:2: quick = yes: not a TOML value"},
      {"[run]\nquick = \"yes\"\n", "kj.toml:2: quick = \"yes\": --quick is a switch: true or false"},
      // CLI11 reads every section: another command's bad value stops this one, and is named at its line.
      {"[run]\ndevice = \"cpu\"\n[results]\nformat = \"csvx\"\n", "kj.toml:4: format = \"csvx\": --format"}};
  for (const auto& [text, expected] : broken_files) {
    write_file(dir / "kj.toml", text);
    const auto r = kj_in(dir, {"run", "--collect-only"});
    INFO(text);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, expected));
  }
  // A bad value typed on the command line is the command line's, even where the file sets the option too.
  write_file(dir / "kj.toml", "[run]\ndevice = \"cpux\"\n");
  const auto typed = kj_in(dir, {"run", "--device", "gpux", "--collect-only"});
  CHECK(typed.exit_code == 2);
  CHECK_FALSE(contains(typed.err, "kj.toml:"));
  fs::remove(dir / "kj.toml");
  const auto missing = kj_in(dir, {"--config", "nowhere.toml", "runs"});
  CHECK(missing.exit_code == 2);
  // A '#' inside a quoted string is the string's, not a comment.
  write_file(dir / "kj.toml", "[run]\nproducer = \"model#3\"\n");
  CHECK(contains(kj_in(dir, {"run", "--device", "cpu", "--level", "1", "--ids", "2", "--candidates",
                             "builtin:identity", "--collect-only"})
                     .out,
                 "(model#3)"));
  // A comment after a section's name is TOML.
  write_file(dir / "kj.toml", "# defaults\n[run] # for kj run\ndevice = \"cpu\" # no GPU here\n");
  CHECK(
      kj_in(dir, {"run", "--level", "1", "--ids", "2", "--candidates", "builtin:identity", "--collect-only"})
          .exit_code == 0);
  fs::remove(dir / "kj.toml");
  // --config may follow the command, as every other option does.
  write_file(dir / "other.toml",
             "[run]\ndevice = \"cpu\"\nlevel = \"1\"\nids = \"2\"\ncandidates = \"builtin:identity\"\n");
  const auto after = kj_in(dir, {"run", "--config", "other.toml", "--collect-only"});
  CHECK(after.exit_code == 0);
  CHECK(contains(after.out, "1 candidate(s) for 1 of 1 selected problems on cpu"));
}

TEST_CASE("kj run refuses a --set that no selected problem assigns, and an open id range") {
  scratch_dir dir;
  const auto typo = kj_in(dir, {"run", "--device", "cpu", "--level", "1", "--ids", "2", "--candidates",
                                "builtin:identity", "--set", "batch_sise=4", "--collect-only"});
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.err, "--set batch_sise: no selected problem assigns batch_sise at its top level"));
  const auto fine = kj_in(dir, {"run", "--device", "cpu", "--level", "1", "--ids", "2", "--candidates",
                                "builtin:identity", "--set", "dim=64", "--collect-only"});
  CHECK(fine.exit_code == 0);
  const auto not_a_name = kj_in(dir, {"run", "--device", "cpu", "--set", "a.b=4", "--collect-only"});
  CHECK(not_a_name.exit_code == 2);
  CHECK(contains(not_a_name.err, "expected NAME=INTEGER"));
  const auto open_range =
      kj_in(dir, {"run", "--device", "cpu", "--level", "1", "--ids", "1-", "--collect-only"});
  CHECK(open_range.exit_code == 2);
  CHECK(contains(open_range.err, "range '1-' in '1-' needs both ends"));
  const auto twice =
      kj_in(dir, {"run", "--device", "cpu", "--set", "dim=64", "--set", "dim=32", "--collect-only"});
  CHECK(twice.exit_code == 2);
  CHECK(contains(twice.err, "--set dim=32: dim is given twice (--set dim=64 before it)"));
  const auto flag_taken = kj_in(dir, {"run", "--device", "cpu", "--ids", "--collect-only"});
  CHECK(flag_taken.exit_code == 2);
  CHECK(contains(flag_taken.err, "'--collect-only' is an option, not numbers"));
  const auto rerun = kj_in(dir, {"run", "--device", "cpu", "--rerun-failed", "--collect-only"});
  CHECK(rerun.exit_code == 2);
  CHECK(contains(rerun.err, "--collect-only with --rerun-failed"));
  const auto no_db = kj_in(dir, {"run", "--device", "cpu", "--rerun-failed", "--db", "nothing-here.sqlite"});
  CHECK(no_db.exit_code == 2);
  CHECK(contains(no_db.err, "--rerun-failed: there is no database at nothing-here.sqlite"));
  CHECK_FALSE(fs::exists(dir / "nothing-here.sqlite"));
  CHECK_FALSE(fs::exists(dir / "nothing-here.sqlite.lock"));
  // kj problems takes --set by the same rule.
  const auto shown =
      kj_in(dir, {"problems", "--level", "1", "--ids", "2", "--set", "batch_sise=4", "--no-shapes"});
  CHECK(shown.exit_code == 2);
  CHECK(contains(shown.err, "no selected problem assigns batch_sise"));
}

TEST_CASE("kj run --collect-only shows what would be judged and records nothing") {
  scratch_dir dir;
  const auto r = kj_in(dir, {"run", "--device", "cpu", "--candidates",
                             (source_dir() / "examples" / "candidates" / "cpu").string(), "--level", "1",
                             "--collect-only"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "9 candidate(s) for 5 of 6 selected problems on cpu, 9 to build"));
  CHECK(contains(r.out, "problems without a candidate: L1 6 MaxPool2d"));
  CHECK_FALSE(fs::exists(dir / "kj.sqlite"));
  // --shard: each shard shows its own part, and the parts add up to the plan.
  int total = 0;
  for (const char* part : {"1/3", "2/3", "3/3"}) {
    const auto shard = kj_in(dir, {"run", "--device", "cpu", "--candidates",
                                   (source_dir() / "examples" / "candidates" / "cpu").string(), "--level",
                                   "1", "--shard", part, "--collect-only"});
    REQUIRE(shard.exit_code == 0);
    CHECK(contains(shard.err, fmt::format("shard {}: ", part)));
    CHECK(contains(shard.err, "of the plan's 9 candidates"));
    const auto at = shard.out.find("--collect-only: ");
    REQUIRE(at != std::string::npos);
    total += std::stoi(shard.out.substr(at + 16));
  }
  CHECK(total == 9);
  CHECK_FALSE(fs::exists(dir / "kj.sqlite"));
}

TEST_CASE("kj run --summary-json writes the run's outcome for CI, also when the run is refused") {
  scratch_dir dir;
  const auto ok = kj_in(dir, {"run", "--device", "cpu", "--level", "1", "--ids", "2", "--candidates",
                              "builtin:identity", "--no-timing", "--summary-json", "s.json"});
  REQUIRE(ok.exit_code == 0);
  const json s = json::parse(read_file(dir / "s.json"));
  CHECK(s["exit_code"] == 0);
  CHECK(s["status"] == "finished");
  CHECK(s["evaluations"] == 1);
  CHECK(s["verdicts"]["correct"] == 1);
  CHECK(s["counted_correct"] == 1);
  CHECK(s["rows"][0]["problem"] == "GELU");
  const auto refused =
      kj_in(dir, {"run", "--device", "cpu", "--candidates", "nowhere", "--summary-json", "refused.json"});
  CHECK(refused.exit_code == 2);
  const json r = json::parse(read_file(dir / "refused.json"));
  CHECK(r["exit_code"] == 2);
  CHECK(r["error"] == "--candidates nowhere: no such folder or file");
  CHECK(r["status"].is_null());
  CHECK(r["run"].is_null()); // never recorded: no id to look up
  // Refused by CLI11 itself (a value not among the choices): the command never ran, the summary is written.
  const auto parse =
      kj_in(dir, {"run", "--device", "cpu", "--protocol", "kernelbox", "--summary-json", "p.json"});
  CHECK(parse.exit_code == 2);
  REQUIRE(fs::exists(dir / "p.json"));
  CHECK(json::parse(read_file(dir / "p.json"))["exit_code"] == 2);
  CHECK(contains(json::parse(read_file(dir / "p.json"))["error"].get<std::string>(), "kernelbox"));
  // Refused while its options are read (a reversed range), and by a database that is not kj's: still written.
  const auto range = kj_in(dir, {"run", "--device", "cpu", "--ids", "10-1", "--summary-json", "range.json"});
  CHECK(range.exit_code == 2);
  CHECK(contains(json::parse(read_file(dir / "range.json"))["error"].get<std::string>(),
                 "range '10-1' in '10-1' ends before it starts"));
  kj::db::sqlite::connection::open(dir / "foreign.sqlite",
                                   kj::db::sqlite::connection::open_mode::read_write_create)
      .exec("CREATE TABLE runs (x); CREATE TABLE evaluations (y)", "another tool's tables");
  const auto foreign = kj_in(dir, {"run", "--device", "cpu", "--ids", "2", "--candidates", "builtin:identity",
                                   "--db", "foreign.sqlite", "--summary-json", "foreign.json"});
  CHECK(foreign.exit_code == 2);
  const json f = json::parse(read_file(dir / "foreign.json"));
  CHECK(contains(f["error"].get<std::string>(), "is not a kerneljudge database"));
  CHECK(f["evaluations"] == 0);
  const auto unwritable =
      kj_in(dir, {"run", "--device", "cpu", "--level", "1", "--ids", "2", "--candidates", "builtin:identity",
                  "--summary-json", (dir / "no" / "s.json").string()});
  CHECK(unwritable.exit_code == 2);
  CHECK(contains(unwritable.err, "does not exist"));
  CHECK(json::parse(read_file(dir / "s.json"))["evaluations"] == 1); // nothing was judged for it
}

TEST_CASE("kj doctor checks the machine and says what to do, and the completion script completes") {
  scratch_dir dir;
  const auto doctor = kj_in(dir, {"doctor"});
  CHECK(doctor.exit_code == 0);
  CHECK(contains(doctor.out, "python and torch"));
  CHECK(contains(doctor.out, "C++ compiler"));
  CHECK(contains(doctor.out, "0 failed"));
  // the first look it suggests is the README's ten-second one, not the 24 examples' compiles (review 11 U6)
  CHECK(contains(doctor.out, "--candidates builtin:identity --quick"));
  const auto broken = kj_in(dir, {"doctor"}, {{"KJ_PYTHON", "/nowhere/python3"}});
  CHECK(broken.exit_code == 1);
  CHECK(contains(broken.out, "FAIL"));
  // A database whose folder does not exist: kj run refuses it, so the doctor fails it.
  const auto no_folder = kj_in(dir, {"doctor", "--db", (dir / "nowhere" / "kj.sqlite").string()});
  CHECK(no_folder.exit_code == 1);
  CHECK(contains(no_folder.out, "does not exist"));
  const auto bash = run_program({"bash", "-c",
                                 "eval \"$(" + kj_binary().string() +
                                     " completion bash)\"; COMP_WORDS=(kj run --collect); COMP_CWORD=2; _kj; "
                                     "echo \"${COMPREPLY[@]}\"; COMP_WORDS=(kj doc); COMP_CWORD=1; _kj; echo "
                                     "\"${COMPREPLY[@]}\""},
                                dir.path());
  CHECK(bash.out == "--collect-only\ndoctor\n");
  CHECK(contains(kj_in(dir, {"completion", "zsh"}).out, "bashcompinit"));
  CHECK_FALSE(contains(kj_in(dir, {"completion", "bash"}).out, " worker"));
}
