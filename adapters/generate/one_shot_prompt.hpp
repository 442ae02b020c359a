// kerneljudge's own one-shot prompt: the reference source, the ModelNew contract, one worked example.
#pragma once

#include "kernelbench/problems.hpp"

#include <string>

namespace kj::adapters {

// Bumped whenever the prompt's text changes, and recorded with every generation, so that results name it.
inline constexpr const char* prompt_version = "kj-oneshot-1";

struct prompt {
  std::string system;
  std::string user;
  std::string hash; // sha256 of system and user: the same prompt has the same hash in every run
};

// The prompt for one problem. `device` ("cpu" or "cuda") decides the kind of extension asked for: C++ through
// load_inline's cpp_sources on the CPU, CUDA through cuda_sources on a GPU.
prompt one_shot_prompt(const kb::problem& problem, const std::string& device);

} // namespace kj::adapters
