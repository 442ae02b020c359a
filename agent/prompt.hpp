// The agent's prompts: the system prompt (our skill document) and the task message for one problem.
#pragma once

#include "agent/agent_judge.hpp"
#include "core/precision.hpp"
#include "kernelbench/problems.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kj::agent {

// Bumped whenever the skill document or the task message changes shape; recorded with every trajectory.
inline constexpr const char* agent_prompt_version = "kj-agent-1";

struct task_facts {
  const kb::problem* problem = nullptr;
  std::string device;      // cpu or cuda
  std::string device_name; // the GPU or CPU
  kj::precision precision = kj::precision::fp32;
  std::map<std::string, std::int64_t> sizes; // module constants in effect
  std::vector<std::string> inputs;           // forward's arguments
  std::string baseline;                      // what speedups are measured against, e.g. compile-default
  std::string budget;                        // e.g. "200 turns, $5.00"
};

struct agent_prompt {
  std::string system;
  std::string task;
  std::string hash; // sha256 of both: the same prompt has the same hash in every run
};

// The skill document built into kj (agent/skill/SKILL.md).
std::string builtin_skill();

// `skill` "" means the built-in one.
agent_prompt make_prompt(const task_facts& facts, const std::string& skill = "");

} // namespace kj::agent
