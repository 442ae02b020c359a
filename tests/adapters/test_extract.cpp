// Finding the candidate in a reply: the fenced block that defines ModelNew, and why there is none.
#include "adapters/generate/extract.hpp"
#include "tests/support/catch_compat.hpp"

using kj::adapters::extract_code;

TEST_CASE("the code block that defines ModelNew is extracted, the last of several") {
  const std::string reply = "First the reference, for comparison:\n"
                            "```python\nclass Model(nn.Module):\n    pass\n```\n"
                            "A first try:\n```python\nclass ModelNew(nn.Module):\n    version = 1\n```\n"
                            "Better:\n```py\nclass ModelNew(nn.Module):\n    version = 2\n```\nDone.";
  const auto ex = extract_code(reply);
  REQUIRE(ex.found);
  CHECK(ex.code == "class ModelNew(nn.Module):\n    version = 2\n");
  CHECK(ex.reason.empty());
}

TEST_CASE("unlabelled and tilde fences count, other languages do not, indentation is allowed") {
  CHECK(extract_code("```\nclass ModelNew: pass\n```").code == "class ModelNew: pass\n");
  CHECK(extract_code("~~~python\r\nclass ModelNew: pass\r\n~~~\r\n").code == "class ModelNew: pass\n");
  CHECK(extract_code("  ```python\nclass ModelNew: pass\n  ```\n").found);
  // A C++ block that mentions ModelNew in a comment is not the candidate.
  const auto cpp = extract_code("```cpp\n// used by class ModelNew\nint f();\n```");
  CHECK_FALSE(cpp.found);
  CHECK(cpp.reason == "no Python code block in the reply defines class ModelNew");
}

TEST_CASE("a reply without usable code says why") {
  CHECK(extract_code("").reason == "the reply has no text");
  CHECK(extract_code("   \n", "refusal").reason == "the reply has no text (stop reason refusal)");
  CHECK(extract_code("I would fuse the loops.").reason == "the reply has no fenced code block");
  CHECK(extract_code("```python\nclass Model: pass\n```").reason ==
        "no Python code block in the reply defines class ModelNew");
  const std::string cut =
      "Here:\n```python\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        re";
  CHECK(extract_code(cut, "max_tokens").reason.find("cut off at the token limit") != std::string::npos);
  CHECK(extract_code(cut, "end_turn").reason == "the reply's code block defining ModelNew is never closed");
}
