// Problem discovery: KernelBench checkout layout, id selections, single files, the built-in suite.
#include "kernelbench/problems.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <set>

using namespace kj::kb;
using namespace kj::test;

namespace {

void make_checkout(const scratch_dir& dir) {
  for (const char* f :
       {"level1/1_Square_matmul_.py", "level1/2_ReLU.py", "level1/19_ReLU.py", "level1/notes.txt",
        "level1/helper.py", "level2/1_Conv2D_ReLU_BiasAdd.py", "level3/1_MLP.py"})
    write_file(dir.path() / "KernelBench" / f, "class Model: pass\n");
}

} // namespace

TEST_CASE("id lists parse ranges and single ids") {
  const id_set ids = id_set::parse("1-3,19,7-7");
  CHECK(ids.values() == std::vector<int>{1, 2, 3, 7, 19});
  CHECK(ids.contains(2));
  CHECK_FALSE(ids.contains(4));
  for (const char* bad : {"", "1-", "a", "3-1", "1,,2", "-1"}) {
    INFO(bad);
    CHECK_THROWS_AS(id_set::parse(bad), std::invalid_argument);
  }
  // An open end is named as such, never as an empty id.
  for (const char* open : {"1-", "-5"}) {
    INFO(open);
    std::string message;
    try {
      id_set::parse(open);
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    CHECK(message.find("needs both ends") != std::string::npos);
  }
}

TEST_CASE("problem file names give the id and the name") {
  int number = 0;
  std::string name;
  REQUIRE(parse_problem_file_name("19_ReLU.py", number, name));
  CHECK(number == 19);
  CHECK(name == "ReLU");
  REQUIRE(parse_problem_file_name("1_Square_matrix_multiplication_.py", number, name));
  CHECK(name == "Square_matrix_multiplication_");
  CHECK_FALSE(parse_problem_file_name("helper.py", number, name));
  CHECK_FALSE(parse_problem_file_name("x1_ReLU.py", number, name));
  CHECK_FALSE(parse_problem_file_name("1_ReLU.txt", number, name));
}

TEST_CASE("a KernelBench checkout loads by level and id") {
  scratch_dir dir;
  make_checkout(dir);
  source_options options;
  options.kernelbench_dir = dir.path();
  SECTION("everything, sorted by level and id, non-problem files ignored") {
    const auto problems = load_problems(options);
    REQUIRE(problems.size() == 5);
    CHECK(problems[0].file_name == "1_Square_matmul_.py");
    CHECK(problems[1].number == 2);
    CHECK(problems[2].number == 19);
    CHECK(problems[3].level == 2);
    CHECK(problems[4].level == 3);
    CHECK(problems[0].suite == "kernelbench");
    CHECK(problems[0].source == "class Model: pass\n");
  }
  SECTION("a level and an id range") {
    options.levels = {1};
    options.ids = id_set::parse("2-19");
    const auto problems = load_problems(options);
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].key() == "L1/2_ReLU.py");
  }
  SECTION("the inner KernelBench folder works too") {
    options.kernelbench_dir = dir.path() / "KernelBench";
    CHECK(load_problems(options).size() == 5);
  }
  SECTION("a missing level is an error naming the folder") {
    options.levels = {4};
    CHECK_THROWS_AS(load_problems(options), source_error);
  }
  SECTION("a selection that matches nothing is an error") {
    options.ids = id_set::parse("500");
    CHECK_THROWS_AS(load_problems(options), source_error);
  }
  SECTION("an unknown KernelBench version is an error") {
    options.kb_version = "v9";
    CHECK_THROWS_AS(load_problems(options), source_error);
  }
}

TEST_CASE("bad KernelBench paths give errors that name the path") {
  scratch_dir dir;
  source_options options;
  options.kernelbench_dir = dir / "missing";
  try {
    load_problems(options);
    FAIL("expected source_error");
  } catch (const source_error& e) {
    CHECK(std::string(e.what()).find((dir / "missing").string()) != std::string::npos);
  }
}

TEST_CASE("single problem files take their level from a levelN parent folder") {
  scratch_dir dir;
  write_file(dir / "level2/7_Fused.py", "x = 1\n");
  source_options options;
  options.files = {dir / "level2/7_Fused.py"};
  const auto problems = load_problems(options);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].suite == "file");
  CHECK(problems[0].level == 2);
  CHECK(problems[0].number == 7);
  options.files = {dir / "nope.py"};
  CHECK_THROWS_AS(load_problems(options), source_error);
}

TEST_CASE("the built-in suite has at least 12 problems over three levels, each with CPU sizes") {
  source_options options;
  options.builtin = true;
  const auto problems = load_problems(options);
  CHECK(problems.size() >= 12);
  std::set<int> levels;
  for (const auto& p : problems) {
    INFO(p.key());
    levels.insert(p.level);
    CHECK(p.suite == "builtin");
    CHECK_FALSE(p.cpu_overrides.empty());
    CHECK(p.source.find("class Model") != std::string::npos);
    CHECK(p.source.find("def get_inputs") != std::string::npos);
  }
  CHECK(levels == std::set<int>{1, 2, 3});
}
