// The one-shot prompt: it carries the reference source, the contract and one example for the device.
#include "adapters/generate/one_shot_prompt.hpp"
#include "tests/support/catch_compat.hpp"

using namespace kj;

TEST_CASE("the one-shot prompt names the problem, carries its source, and fits the device") {
  kb::problem p;
  p.level = 2;
  p.number = 7;
  p.file_name = "7_Conv_ReLU.py";
  p.source = "class Model(nn.Module):\n    UNIQUE_MARKER = 1\n";
  const auto cpu = adapters::one_shot_prompt(p, "cpu");
  const auto cuda = adapters::one_shot_prompt(p, "cuda");
  CHECK(cpu.user.find("KernelBench level 2 problem 7 (`7_Conv_ReLU.py`)") != std::string::npos);
  CHECK(cpu.user.find("UNIQUE_MARKER = 1") != std::string::npos);
  CHECK(cpu.user.find("class ModelNew(nn.Module)") != std::string::npos);
  CHECK(cpu.user.find("`cpp_sources` only, no CUDA") != std::string::npos);
  CHECK(cpu.user.find("__global__") == std::string::npos);
  CHECK(cuda.user.find("__global__") != std::string::npos);
  CHECK(cuda.user.find("cuda_sources") != std::string::npos);
  CHECK(cpu.hash.size() == 64);
  CHECK(cpu.hash == adapters::one_shot_prompt(p, "cpu").hash); // the same prompt, the same hash
  CHECK(cpu.hash != cuda.hash);
  CHECK_FALSE(cpu.system.empty());
}
