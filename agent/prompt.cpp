// Implements the prompts: the skill document as the system prompt, the problem and its facts as the task.
#include "agent/prompt.hpp"

#include "core/hashing.hpp"
#include "db/store.hpp"

#include <fmt/core.h>
#include <string_view>

namespace kj::agent {

extern const std::string_view agent_skill_text;

std::string builtin_skill() {
  return std::string(agent_skill_text);
}

agent_prompt make_prompt(const task_facts& f, const std::string& skill) {
  agent_prompt out;
  out.system = (skill.empty() ? builtin_skill() : skill) +
               "\n## This session\n\nYou talk to kerneljudge's agent harness. Call the tools to act; text "
               "without a tool call is read by no one. End with `submit`.\n";
  const kb::problem& p = *f.problem;
  std::string sizes, inputs;
  for (const auto& [name, value] : f.sizes)
    sizes += fmt::format("{}{} = {}", sizes.empty() ? "" : ", ", name, value);
  for (std::size_t i = 0; i < f.inputs.size(); ++i)
    inputs += fmt::format("{}#{} {}", i ? ", " : "", i, f.inputs[i]);
  const std::string extension =
      f.device == "cuda"
          ? "CUDA kernels (load_inline with cuda_sources, or kernels/*.cu with bindings)"
          : "C++ on the CPU (load_inline with cpp_sources only, or kernels/*.cpp with bindings); "
            "there is no GPU and no nvcc";
  out.task = fmt::format(
      "KernelBench level {} problem {} ({}): write model_new.py with a ModelNew faster than the Model of "
      "model.py.\n\n"
      "- Device: {} ({}); precision {}. Write {}.\n"
      "- Sizes in effect: {}.\n"
      "- forward's inputs: {}.\n"
      "- Speedups are judged against {}; correctness by both verdicts (see the skill document).\n"
      "- Budget: {}. The workspace holds model.py and an empty kernels/ folder.\n\n"
      "model.py:\n```python\n{}{}```\n",
      p.level, p.number, p.file_name, f.device, f.device_name, kj::name_of(f.precision), extension,
      sizes.empty() ? "the file's own" : sizes, inputs.empty() ? "(unknown)" : inputs, f.baseline, f.budget,
      p.source, p.source.ends_with('\n') ? "" : "\n");
  out.hash = core::sha256_hex(out.system + "\n\x1f\n" + out.task);
  return out;
}

} // namespace kj::agent
