// Import adapters: matching candidate files to problems, and the identity producer.
#include "adapters/candidates.hpp"
#include "kernelbench/source_text.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <set>
#include <string>

using namespace kj;
using namespace kj::test;

namespace {

std::vector<kb::problem> two_problems() {
  kb::problem a;
  a.level = 1, a.number = 19, a.file_name = "19_ReLU.py", a.source = "class Model: pass\n";
  kb::problem b;
  b.level = 2, b.number = 3, b.file_name = "3_Fused.py", b.source = "class Model: pass\n";
  return {a, b};
}

} // namespace

TEST_CASE("KernelBench's generated candidate names parse") {
  int level = 0, problem = 0, sample = 0;
  REQUIRE(adapters::parse_generated_name("level_1_problem_19_sample_3_kernel.py", level, problem, sample));
  CHECK(level == 1);
  CHECK(problem == 19);
  CHECK(sample == 3);
  CHECK_FALSE(adapters::parse_generated_name("level_1_problem_19_kernel.py", level, problem, sample));
}

TEST_CASE("a candidate directory matches generated names and problem file names") {
  scratch_dir dir;
  write_file(dir / "level_1_problem_19_sample_0_kernel.py", "A");
  write_file(dir / "level_1_problem_19_sample_2_kernel.py", "B");
  write_file(dir / "3_Fused.py", "C");
  write_file(dir / "level_1_problem_42_sample_0_kernel.py", "D");
  write_file(dir / "random_name.py", "E");
  write_file(dir / "notes.txt", "F");
  const auto report = adapters::candidates_from_directory(dir.path(), two_problems());
  REQUIRE(report.candidates.size() == 3);
  CHECK(report.candidates[0].problem_index == 1); // 3_Fused.py sorts first
  CHECK(report.candidates[0].source == "C");
  CHECK(report.candidates[1].sample == 0);
  CHECK(report.candidates[2].sample == 2);
  CHECK(report.candidates[2].source == "B");
  CHECK(report.skipped.size() == 1);    // random_name.py
  CHECK(report.unselected.size() == 1); // problem 42
  CHECK_THROWS_AS(adapters::candidates_from_directory(dir / "missing", two_problems()), kb::source_error);
}

TEST_CASE("identity candidates reuse the problem's own Model") {
  const auto candidates = adapters::identity_candidates(two_problems());
  REQUIRE(candidates.size() == 2);
  CHECK(candidates[1].problem_index == 1);
  CHECK(candidates[0].producer == "identity");
  CHECK(candidates[0].source.find("class Model: pass") == 0);
  CHECK(candidates[0].source.find("ModelNew = Model") != std::string::npos);
}

TEST_CASE("every built-in example candidate names a built-in problem and states its expected verdict") {
  kb::source_options options;
  options.builtin = true;
  const auto problems = kb::load_problems(options);
  for (const char* device : {"cpu", "cuda"}) {
    const auto report =
        adapters::candidates_from_directory(adapters::examples_dir(device), problems, "examples");
    INFO(device);
    CHECK(report.skipped.empty());
    CHECK(report.unselected.empty());
    std::set<std::pair<int, std::string>> per_level;
    for (const auto& c : report.candidates) {
      const std::string first_line = c.source.substr(0, c.source.find('\n'));
      INFO(c.path.string());
      REQUIRE(first_line.rfind("# kj-expect: ", 0) == 0);
      per_level.insert({problems[c.problem_index].level, first_line.substr(13)});
    }
    for (int level = 1; level <= 3; ++level) {
      CHECK(per_level.count({level, "correct"}) == 1);
      CHECK(per_level.count({level, "incorrect"}) == 1);
    }
  }
}

TEST_CASE("a candidate file that is not UTF-8 is judged as text and keeps its bytes") {
  scratch_dir dir;
  const std::string latin1 = "# caf\xE9\nclass ModelNew: pass\n";
  write_file(dir / "level_1_problem_19_sample_0_kernel.py", latin1);
  const auto report = adapters::candidates_from_directory(dir.path(), two_problems(), "modelA");
  REQUIRE(report.candidates.size() == 1);
  const auto& c = report.candidates[0];
  CHECK(c.producer == "modelA");
  CHECK(kb::is_utf8(c.source));
  CHECK(c.source == "# caf\xEF\xBF\xBD\nclass ModelNew: pass\n");
  CHECK(c.bytes == latin1);
  CHECK(c.encoding_line == 1);
  CHECK(c.encoding_note.find("0xE9") != std::string::npos);
  // A UTF-8 file keeps no separate bytes.
  write_file(dir / "3_Fused.py", "class ModelNew: pass\n");
  const auto plain = adapters::candidates_from_directory(dir.path(), two_problems());
  REQUIRE(plain.candidates.size() == 2);
  CHECK(plain.candidates[0].bytes.empty());
  CHECK(plain.candidates[0].encoding_note.empty());
}

TEST_CASE("a candidates path may name one file: by its name, or any .py when one problem is selected") {
  scratch_dir dir;
  write_file(dir / "level_2_problem_3_sample_1_kernel.py", "A");
  write_file(dir / "my_kernel.py", "B");
  const auto named =
      adapters::candidates_from_directory(dir / "level_2_problem_3_sample_1_kernel.py", two_problems());
  REQUIRE(named.candidates.size() == 1);
  CHECK(named.candidates[0].problem_index == 1);
  CHECK(named.candidates[0].sample == 1);
  const auto one = adapters::candidates_from_directory(dir / "my_kernel.py", {two_problems()[0]});
  REQUIRE(one.candidates.size() == 1);
  CHECK(one.candidates[0].source == "B");
  CHECK_THROWS_AS(adapters::candidates_from_directory(dir / "my_kernel.py", two_problems()),
                  kb::source_error);
  // A file named for another problem than the one selected is refused, never judged against that one.
  try {
    adapters::candidates_from_directory(dir / "level_2_problem_3_sample_1_kernel.py", {two_problems()[0]});
    FAIL("a candidate named for level 2 problem 3 was judged against another problem");
  } catch (const kb::source_error& e) {
    CHECK(std::string(e.what()).find("named for level 2 problem 3, which is not selected") !=
          std::string::npos);
  }
  // So is a file named like another problem's KernelBench file.
  write_file(dir / "9_Other_Problem.py", "B");
  CHECK_THROWS_AS(adapters::candidates_from_directory(dir / "9_Other_Problem.py", {two_problems()[0]}),
                  kb::source_error);
}
