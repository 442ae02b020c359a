// The fake provider's scripted mode, for the built-in agent's tests: a request carrying tools is answered
// with the turn of a script that its conversation has reached, encoded in the request's wire format.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kj::test {

// A script is tests/fixtures/agent/<device>/[<model>/]level_<L>_problem_<N>.json (the model's folder first):
//   {"about": "...", "turns": [{"expect": ["text kj's last message must hold", ...], "thinking": "...",
//                               "text": "...", "calls": [{"tool": "write_file", "arguments": {...}}]}, ...]}
// The turn is 1 + the assistant messages of the conversation, plus the turns that ended in a rejected call
// (the last turn repeats). A turn {"finish": "MALFORMED_FUNCTION_CALL", "finish_message": "..."} is, for
// Gemini, a candidate without content that the provider rejected (kj must not send it back). An argument
// "content_file": "F" becomes "content": the text of F, next to the script. When an expectation is not met,
// or a thinking signature of an earlier turn did not come back, the reply is a text-only "SCRIPT MISMATCH"
// message naming what was missing (the test then fails on the transcript).
struct scripted_answer {
  int status = 200;
  nlohmann::json body;
};

// The whole file, or a runtime_error naming it (the fake server's scripts, replies and batches).
std::string read_text(const std::filesystem::path& file);

scripted_answer scripted_reply(const std::string& provider, const std::string& model,
                               const nlohmann::json& request, const std::filesystem::path& scripts);

} // namespace kj::test
