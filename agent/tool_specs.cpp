// The agent's tools as the model sees them: names, descriptions and JSON Schemas of their arguments.
#include "agent/tools.hpp"

namespace kj::agent {
namespace {

using nlohmann::json;

json object_schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

json string_property(const std::string& description) {
  return {{"type", "string"}, {"description", description}};
}

} // namespace

const std::vector<llm::tool_spec>& tool_specs() {
  static const std::vector<llm::tool_spec> specs{
      {"list_files", "List the files of the workspace with their sizes (model.py is read-only).",
       object_schema(json::object(), {})},
      {"read_file", "Read a text file of the workspace.",
       object_schema(
           {{"path", string_property("relative to the workspace, e.g. model.py or kernels/add.cu")}},
           {"path"})},
      {"write_file",
       "Create or replace a file of the workspace with `content` (folders are created). model.py cannot be "
       "written.",
       object_schema({{"path", string_property("relative to the workspace, e.g. model_new.py")},
                      {"content", string_property("the whole new text of the file")}},
                     {"path", "content"})},
      {"edit_file",
       "Replace the one occurrence of `old` in a file by `new` (exact text, whitespace included; refused "
       "when `old` occurs zero or several times).",
       object_schema({{"path", string_property("relative to the workspace")},
                      {"old", string_property("the exact text to replace, unique in the file")},
                      {"new", string_property("the replacement")}},
                     {"path", "old", "new"})},
      {"compile",
       "Build the workspace's extension (model_new.py with its load_inline sources, or kernels/ and "
       "binding.cpp) in kj's sandbox and return the compiler's errors, if any.",
       object_schema(json::object(), {})},
      {"verify",
       "Judge the workspace's ModelNew against model.py in kj's sandbox: the KernelBench-compatible verdict, "
       "the strict verdict (NaN, Inf, denormal, extreme and signed inputs, other sizes, determinism, input "
       "mutation, output checks) with the failing case classes and the first mismatch.",
       object_schema(json::object(), {})},
      {"profile",
       "Time the workspace's ModelNew against the PyTorch reference (eager, and torch.compile where kj has "
       "measured it) in kj's sandbox, with the kernel trace, the library share of its time and its distance "
       "from the hardware's speed of light. Also correctness, as verify. Before model_new.py exists it "
       "profiles the reference alone.",
       object_schema(json::object(), {})},
      {"submit",
       "End the task with the workspace as it is. kj keeps the best correct version you verified and "
       "profiled, and re-measures it.",
       object_schema(json::object(), {})},
  };
  return specs;
}

} // namespace kj::agent
