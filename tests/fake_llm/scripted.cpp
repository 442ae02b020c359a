// Implements the scripted mode: find the script and the turn, check expectations and returned signatures, and
// encode the turn as an Anthropic, Gemini or OpenAI reply.
#include "tests/fake_llm/scripted.hpp"

#include <cstdint>
#include <fmt/core.h>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace kj::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The Responses API's input items as turns: consecutive model items (an assistant message, reasoning, a
// function call) form one assistant turn, the others (a user message, a function call's output) a user turn.
json responses_turns(const json& input) {
  json turns = json::array();
  for (const json& item : input) {
    const std::string type = item.value("type", "message");
    const bool model =
        type == "reasoning" || type == "function_call" || item.value("role", "") == "assistant";
    const std::string role = model ? "assistant" : "user";
    if (turns.empty() || turns.back()["role"] != role)
      turns.push_back({{"role", role}, {"items", json::array()}});
    turns.back()["items"].push_back(item);
  }
  return turns;
}

json conversation(const std::string& provider, const json& request) {
  if (provider == "openai-responses")
    return request.contains("input") && request["input"].is_array() ? responses_turns(request["input"])
                                                                    : json::array();
  const char* key = provider == "gemini" ? "contents" : "messages";
  return request.contains(key) && request[key].is_array() ? request[key] : json::array();
}

bool is_assistant(const std::string& provider, const json& message) {
  return message.value("role", "") == (provider == "gemini" ? "model" : "assistant");
}

void collect_strings(const json& value, std::string& out) {
  if (value.is_string()) {
    out += value.get<std::string>() + "\n";
  } else if (value.is_object() || value.is_array()) {
    for (const auto& child : value)
      collect_strings(child, out);
  }
}

// Everything kj sent after the model's last turn: tool results and notes.
std::string last_message_text(const std::string& provider, const json& messages) {
  std::string out;
  for (const json& m : messages) {
    if (is_assistant(provider, m))
      out.clear();
    else
      collect_strings(m, out);
  }
  return out;
}

std::int64_t words(const std::string& text) {
  std::istringstream in(text);
  std::int64_t n = 0;
  for (std::string w; in >> w;)
    ++n;
  return n;
}

// What kj tells the model after a function call the provider rejected (agent/loop.cpp): each one means a
// `finish` step was played whose empty turn is not in the conversation.
constexpr const char* rejected_call_note = "kj: the provider rejected your last function call";

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++n;
  return n;
}

// The step to play (0-based): one per assistant message, plus the rejected calls that left none.
std::size_t position(const std::string& provider, const json& messages) {
  std::size_t assistants = 0;
  std::string users;
  for (const json& m : messages) {
    if (is_assistant(provider, m))
      ++assistants;
    else
      collect_strings(m, users);
  }
  return assistants + count_of(users, rejected_call_note);
}

// The signature of step k's thinking must come back in the assistant message played for it (steps that
// end with a rejected call leave no message).
std::string missing_signature(const std::string& provider, const json& messages, const json& turns) {
  std::size_t step = 0;
  for (const json& m : messages) {
    if (!is_assistant(provider, m)) continue;
    while (step + 1 < turns.size() && turns[step].contains("finish"))
      ++step;
    const json& played = turns[std::min(step, turns.size() - 1)];
    ++step;
    if (!played.contains("thinking") || provider == "openai") continue;
    // Responses: the reasoning item's encrypted content must come back (store: false keeps nothing).
    const std::string expected =
        (provider == "openai-responses" ? "kj-enc-" : "kj-sig-") + std::to_string(step);
    if (m.dump().find(expected) == std::string::npos)
      return fmt::format("the thinking signature {} of turn {} did not come back", expected, step);
  }
  return "";
}

json arguments_of(const json& call, const fs::path& dir) {
  json arguments = call.value("arguments", json::object());
  if (arguments.contains("content_file")) {
    arguments["content"] = read_text(dir / arguments["content_file"].get<std::string>());
    arguments.erase("content_file");
  }
  return arguments;
}

json responses_reply(const std::string& model, int turn, const std::string& thinking, const std::string& text,
                     const json& calls, std::int64_t prompt_tokens) {
  json output = json::array();
  if (!thinking.empty())
    output.push_back({{"type", "reasoning"},
                      {"id", fmt::format("rs_{}", turn)},
                      {"summary", json::array({{{"type", "summary_text"}, {"text", thinking}}})},
                      {"encrypted_content", fmt::format("kj-enc-{}", turn)}});
  if (!text.empty())
    output.push_back(
        {{"type", "message"},
         {"id", fmt::format("msg_{}", turn)},
         {"status", "completed"},
         {"role", "assistant"},
         {"content",
          json::array({{{"type", "output_text"}, {"text", text}, {"annotations", json::array()}}})}});
  for (std::size_t i = 0; i < calls.size(); ++i)
    output.push_back({{"type", "function_call"},
                      {"id", fmt::format("fc_{}_{}", turn, i)},
                      {"call_id", fmt::format("call_{}_{}", turn, i)},
                      {"name", calls[i]["name"]},
                      {"arguments", calls[i]["arguments"].dump()},
                      {"status", "completed"}});
  const std::int64_t reasoning = words(thinking), out_tokens = words(text) + reasoning + words(calls.dump());
  return {{"id", fmt::format("resp_script_{}", turn)},
          {"object", "response"},
          {"status", "completed"},
          {"model", model},
          {"output", output},
          {"usage",
           {{"input_tokens", prompt_tokens},
            {"input_tokens_details", {{"cached_tokens", 0}}},
            {"output_tokens", out_tokens},
            {"output_tokens_details", {{"reasoning_tokens", reasoning}}},
            {"total_tokens", prompt_tokens + out_tokens}}}};
}

json encode(const std::string& provider, const std::string& model, int turn, const std::string& thinking,
            const std::string& text, const json& calls, std::int64_t prompt_tokens) {
  const std::int64_t out_tokens = words(text) + words(thinking) + words(calls.dump());
  if (provider == "anthropic") {
    json content = json::array();
    if (!thinking.empty())
      content.push_back(
          {{"type", "thinking"}, {"thinking", thinking}, {"signature", fmt::format("kj-sig-{}", turn)}});
    if (!text.empty()) content.push_back({{"type", "text"}, {"text", text}});
    for (std::size_t i = 0; i < calls.size(); ++i)
      content.push_back({{"type", "tool_use"},
                         {"id", fmt::format("toolu_{}_{}", turn, i)},
                         {"name", calls[i]["name"]},
                         {"input", calls[i]["arguments"]}});
    return {{"id", fmt::format("msg_script_{}", turn)},
            {"type", "message"},
            {"role", "assistant"},
            {"model", model},
            {"content", content},
            {"stop_reason", calls.empty() ? "end_turn" : "tool_use"},
            {"usage",
             {{"input_tokens", prompt_tokens},
              {"output_tokens", out_tokens},
              {"cache_read_input_tokens", 0},
              {"cache_creation_input_tokens", 0}}}};
  }
  if (provider == "gemini") {
    json parts = json::array();
    if (!thinking.empty()) parts.push_back({{"text", thinking}, {"thought", true}});
    if (!text.empty()) parts.push_back({{"text", text}});
    // Gemini 3 signs the first function call of every turn (thought-signatures), thinking or not.
    for (std::size_t i = 0; i < calls.size(); ++i) {
      json part{{"functionCall", {{"name", calls[i]["name"]}, {"args", calls[i]["arguments"]}}}};
      if (i == 0) part["thoughtSignature"] = (thinking.empty() ? "kj-fc-" : "kj-sig-") + std::to_string(turn);
      parts.push_back(part);
    }
    return {{"candidates",
             json::array({{{"content", {{"role", "model"}, {"parts", parts}}}, {"finishReason", "STOP"}}})},
            {"usageMetadata", {{"promptTokenCount", prompt_tokens}, {"candidatesTokenCount", out_tokens}}},
            {"modelVersion", model},
            {"responseId", fmt::format("script-{}", turn)}};
  }
  if (provider == "openai-responses")
    return responses_reply(model, turn, thinking, text, calls, prompt_tokens);
  json message{{"role", "assistant"}, {"content", text.empty() ? json() : json(text)}};
  if (!thinking.empty()) message["reasoning_content"] = thinking;
  json tool_calls = json::array();
  for (std::size_t i = 0; i < calls.size(); ++i)
    tool_calls.push_back(
        {{"id", fmt::format("call_{}_{}", turn, i)},
         {"type", "function"},
         {"function", {{"name", calls[i]["name"]}, {"arguments", calls[i]["arguments"].dump()}}}});
  if (!tool_calls.empty()) message["tool_calls"] = tool_calls;
  return {{"id", fmt::format("chatcmpl-script-{}", turn)},
          {"object", "chat.completion"},
          {"model", model},
          {"choices", json::array({{{"index", 0},
                                    {"message", message},
                                    {"finish_reason", calls.empty() ? "stop" : "tool_calls"}}})},
          {"usage",
           {{"prompt_tokens", prompt_tokens},
            {"completion_tokens", out_tokens},
            {"total_tokens", prompt_tokens + out_tokens}}}};
}

} // namespace

scripted_answer scripted_reply(const std::string& provider, const std::string& model, const json& request,
                               const fs::path& scripts) {
  const std::string body = request.dump();
  std::smatch problem, device;
  static const std::regex problem_pattern(R"(KernelBench level (\d+) problem (\d+))");
  static const std::regex device_pattern(R"(Device: (cpu|cuda))");
  if (!std::regex_search(body, problem, problem_pattern) || !std::regex_search(body, device, device_pattern))
    return {400,
            {{"error", {{"type", "invalid_request_error"}, {"message", "no agent task in the request"}}}}};
  const std::string name = fmt::format("level_{}_problem_{}.json", problem[1].str(), problem[2].str());
  fs::path file = scripts / device[1].str() / model / name;
  if (!fs::is_regular_file(file)) file = scripts / device[1].str() / name;
  if (!fs::is_regular_file(file))
    return {404, {{"error", {{"type", "not_found_error"}, {"message", "no script " + file.string()}}}}};
  const json script = json::parse(read_text(file));
  const json& turns = script.at("turns");
  const json& messages = conversation(provider, request);
  const std::size_t index = std::min(position(provider, messages), turns.size() - 1);
  const int turn = static_cast<int>(index) + 1;
  const json& step = turns[index];
  const std::string seen = last_message_text(provider, messages);
  std::string mismatch = missing_signature(provider, messages, turns);
  for (const json& e : step.value("expect", json::array()))
    if (mismatch.empty() && seen.find(e.get<std::string>()) == std::string::npos)
      mismatch = fmt::format("expected '{}' in kj's last message, which was:\n{}", e.get<std::string>(),
                             seen.substr(0, 3000));
  const std::int64_t prompt_tokens = words(body);
  if (!mismatch.empty())
    return {200, encode(provider, model, turn, "",
                        fmt::format("SCRIPT MISMATCH at turn {} of {}: {}", turn, file.filename().string(),
                                    mismatch),
                        json::array(), prompt_tokens)};
  if (step.contains("finish") && provider == "gemini") // the provider rejects the model's own call
    return {200,
            {{"candidates", json::array({{{"finishReason", step["finish"]},
                                          {"finishMessage", step.value("finish_message", "")},
                                          {"index", 0}}})},
             {"usageMetadata", {{"promptTokenCount", prompt_tokens}, {"totalTokenCount", prompt_tokens}}},
             {"modelVersion", model},
             {"responseId", fmt::format("script-{}", turn)}}};
  json calls = json::array();
  for (const json& call : step.value("calls", json::array()))
    calls.push_back({{"name", call.at("tool")}, {"arguments", arguments_of(call, file.parent_path())}});
  return {200, encode(provider, model, turn, step.value("thinking", ""), step.value("text", ""), calls,
                      prompt_tokens)};
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("fake LLM server: cannot read " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace kj::test
