// The static scan of candidate sources: each kind of finding, with its line, and none on plain code.
#include "planning/verify/static_scan.hpp"
#include "tests/support/catch_compat.hpp"

#include <set>

using kj::verify::scan_candidate;

namespace {
std::set<std::string> kinds(const std::string& source) {
  std::set<std::string> out;
  for (const auto& f : scan_candidate(source))
    out.insert(f.kind);
  return out;
}
} // namespace

TEST_CASE("the static scan names each suspicious pattern with its line") {
  const auto findings =
      scan_candidate("import torch\n\ndef forward(x):\n    return torch.nn.functional.relu(x)\n");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].kind == "torch_fallback");
  CHECK(findings[0].line == 4);
  CHECK(findings[0].excerpt == "return torch.nn.functional.relu(x)");

  CHECK(kinds("try:\n  y = ext.f(x)\nexcept Exception:\n  y = x\n") == std::set<std::string>{"try_except"});
  CHECK(kinds("t = threading.Thread(target=work)") == std::set<std::string>{"threads"});
  CHECK(kinds("s = torch.cuda.Stream()") == std::set<std::string>{"streams"});
  CHECK(kinds("torch.cuda.synchronize = lambda: None") == std::set<std::string>{"timer_patching"});
  CHECK(kinds("y = x.half()") == std::set<std::string>{"precision"});
  CHECK(kinds("torch.backends.cuda.matmul.allow_tf32 = True") == std::set<std::string>{"precision"});
  CHECK(kinds("for o in gc.get_objects():") == std::set<std::string>{"reference_access"});
  CHECK(kinds("@functools.lru_cache\n") == std::set<std::string>{"caching"});
  CHECK(kinds("y = at::matmul(a, b);") == std::set<std::string>{"torch_fallback"});
}

TEST_CASE("plain kernel code gives no findings") {
  const std::string source = R"(import torch
from torch.utils.cpp_extension import load_inline
src = "torch::Tensor relu(torch::Tensor x) { auto y = torch::empty_like(x); return y; }"
ext = load_inline(name="relu_ext", cpp_sources=src, functions=["relu"])
class ModelNew(torch.nn.Module):
    def forward(self, x):
        return ext.relu(x)
)";
  CHECK(scan_candidate(source).empty());
}
