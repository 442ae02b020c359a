// Implements the documented rules per provider. The model lists are transcribed from the providers' pages
// (not from kj's adapters/llm/models.cpp), so that the two are checked against each other.
#include "tests/fake_llm/documented_rules.hpp"

#include <cstddef>
#include <fmt/core.h>
#include <regex>
#include <set>
#include <string>

namespace kj::test {
namespace {

using nlohmann::json;

bool matches(const std::string& model, const char* pattern) {
  return std::regex_match(model, std::regex(pattern));
}

std::set<std::string> ids_of(const json& items, const char* type, const char* id_field) {
  std::set<std::string> ids;
  if (!items.is_array()) return ids;
  for (const json& block : items)
    if (block.is_object() && block.value("type", "") == type) ids.insert(block.value(id_field, ""));
  return ids;
}

// platform.claude.com/docs/en/build-with-claude/extended-thinking, .../adaptive-thinking,
// .../about-claude/models/migration-guide (Claude Opus 4.7), .../agents-and-tools/tool-use/implement-tool-use
void anthropic_rules(const std::string& model, const json& body, std::vector<std::string>& out) {
  const char* adaptive_only = R"(claude-(opus-4-[789]|opus-[5-9]|sonnet-[5-9]|haiku-[5-9]|fable|mythos).*)";
  const char* before_adaptive =
      R"(claude-(3-.*|(opus|sonnet|haiku)-4-[0-5]([-@].*)?|(opus|sonnet)-4-2025.*))";
  const json thinking = body.value("thinking", json::object());
  const std::string type = thinking.value("type", "");
  if (type == "enabled" && thinking.value("budget_tokens", 0) >= body.value("max_tokens", 0))
    out.push_back("thinking.budget_tokens must be less than max_tokens (extended-thinking)");
  if (type == "enabled" && matches(model, adaptive_only))
    out.push_back(model + " rejects thinking.type \"enabled\": only adaptive thinking (adaptive-thinking)");
  if (type == "adaptive" && matches(model, before_adaptive))
    out.push_back(model + " does not support adaptive thinking (adaptive-thinking)");
  if ((type == "enabled" || type == "adaptive") && body.contains("temperature"))
    out.push_back("thinking is not compatible with temperature modifications (extended-thinking)");
  if (body.contains("temperature") && matches(model, adaptive_only))
    out.push_back(model + ": `temperature` is deprecated for this model (migration guide, Opus 4.7)");
  const json& messages = body.value("messages", json::array());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const json content = messages[i].value("content", json::array());
    if (messages[i].value("role", "") == "user" && content.is_array()) {
      bool seen_other = false; // tool_result blocks come first in a user turn
      for (const json& block : content) {
        const bool result = block.value("type", "") == "tool_result";
        if (result && seen_other)
          out.push_back(
              fmt::format("messages[{}]: a tool_result after other content (implement-tool-use)", i));
        seen_other |= !result;
      }
    }
    if (messages[i].value("role", "") != "assistant") continue;
    const auto calls = ids_of(content, "tool_use", "id");
    const auto answers = i + 1 < messages.size() ? ids_of(messages[i + 1].value("content", json::array()),
                                                          "tool_result", "tool_use_id")
                                                 : calls;
    if (answers != calls)
      out.push_back(fmt::format("messages[{}]: each tool_use must be answered by a tool_result in the next "
                                "user message (implement-tool-use)",
                                i));
  }
}

// ai.google.dev/gemini-api/docs/thinking, .../function-calling, .../thought-signatures
void gemini_rules(const std::string& model, const json& body, std::vector<std::string>& out) {
  const json config = body.value("generationConfig", json::object()).value("thinkingConfig", json::object());
  if (config.contains("thinkingLevel") && config.contains("thinkingBudget"))
    out.push_back("thinkingLevel and thinkingBudget cannot be used in the same request (thinking)");
  const json& contents = body.value("contents", json::array());
  const bool gemini3 = matches(model, R"(gemini-[3-9].*)");
  for (std::size_t i = 0; i < contents.size(); ++i) {
    if (contents[i].value("role", "") != "model") continue;
    int calls = 0;
    bool first_signed = true;
    for (const json& part : contents[i].value("parts", json::array()))
      if (part.contains("functionCall")) {
        if (calls++ == 0) first_signed = part.contains("thoughtSignature");
      }
    if (gemini3 && calls > 0 && !first_signed)
      out.push_back(fmt::format("contents[{}]: the first functionCall part must carry its thoughtSignature "
                                "(thought-signatures)",
                                i));
    int responses = 0;
    if (i + 1 < contents.size())
      for (const json& part : contents[i + 1].value("parts", json::array()))
        responses += part.contains("functionResponse") ? 1 : 0;
    if (calls > 0 && i + 1 < contents.size() && responses != calls)
      out.push_back(fmt::format("contents[{}]: {} function calls answered by {} functionResponse parts "
                                "(function-calling)",
                                i, calls, responses));
  }
}

// platform.openai.com/docs/guides/reasoning, .../api-reference/chat/create
void openai_rules(const std::string& model, const json& body, std::vector<std::string>& out) {
  const bool reasoning = matches(model, R"((o[1-9]|gpt-5)([-.].*)?)");
  if (reasoning && body.contains("max_tokens"))
    out.push_back("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                  "'max_completion_tokens' instead.");
  if (reasoning && body.contains("temperature") && body["temperature"] != 1)
    out.push_back("Unsupported value: 'temperature' does not support this value with this model. Only the "
                  "default (1) value is supported.");
  // Reported for gpt-5.2 and later (openai/openai-python and openai/codex issues, 2026: "Function tools with
  // reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. Please use /v1/responses
  // instead.")
  if (matches(model, R"(gpt-5\.([2-9]|[1-9][0-9]).*)") && body.contains("tools") &&
      body.contains("reasoning_effort"))
    out.push_back(fmt::format("Function tools with reasoning_effort are not supported for {} in "
                              "/v1/chat/completions. Please use /v1/responses instead.",
                              model));
  if (body.contains("stream_options") && body.value("stream", false) != true)
    out.push_back("The 'stream_options' parameter is only allowed when 'stream' is enabled.");
  const json& messages = body.value("messages", json::array());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].value("role", "") != "assistant" || !messages[i].contains("tool_calls")) continue;
    std::set<std::string> calls, answers;
    for (const json& call : messages[i]["tool_calls"])
      calls.insert(call.value("id", ""));
    for (std::size_t j = i + 1; j < messages.size() && messages[j].value("role", "") == "tool"; ++j)
      answers.insert(messages[j].value("tool_call_id", ""));
    if (calls != answers)
      out.push_back(
          fmt::format("messages[{}]: an assistant message with 'tool_calls' must be followed by tool "
                      "messages responding to each 'tool_call_id'",
                      i));
  }
}

// platform.openai.com/docs/guides/reasoning ("keeping reasoning items in context"),
// .../guides/function-calling,
// .../api-reference/responses/create (openai-openapi 2.3.0, 2026-08-21)
void responses_rules(const std::string& model, const json& body, std::vector<std::string>& out) {
  const bool reasoning = matches(model, R"((o[1-9]|gpt-5)([-.].*)?)");
  const bool stateless = body.contains("store") && body["store"] == false;
  if (reasoning && body.contains("temperature") &&
      body.value("reasoning", json::object()).value("effort", "") != "none")
    out.push_back("Unsupported parameter: 'temperature' is not supported with this model.");
  if (!reasoning && body.contains("reasoning"))
    out.push_back(
        fmt::format("Unsupported parameter: 'reasoning.effort' is not supported with the model {}.", model));
  const json input = body.value("input", json::array());
  if (!input.is_array()) return;
  std::set<std::string> calls;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const json& item = input[i];
    const std::string type = item.is_object() ? item.value("type", "") : "";
    if (type == "reasoning" && stateless && !item.contains("encrypted_content"))
      out.push_back(
          fmt::format("Item with id '{}' not found. Items are not persisted when `store` is set to "
                      "false. Try again with `store` set to true, or remove this item from your input.",
                      item.value("id", "")));
    if (type == "function_call") calls.insert(item.value("call_id", ""));
    if (type == "function_call_output" && !calls.count(item.value("call_id", "")))
      out.push_back(fmt::format("input[{}]: No tool call found for function call output with call_id {}.", i,
                                item.value("call_id", "")));
  }
}

} // namespace

std::vector<std::string> documented_rule_violations(const std::string& provider, const std::string& model,
                                                    const json& body) {
  std::vector<std::string> out;
  if (!body.is_object()) return {"the request body is not a JSON object"};
  if (provider == "anthropic") anthropic_rules(model, body, out);
  if (provider == "gemini") gemini_rules(model, body, out);
  if (provider == "openai") openai_rules(model, body, out);
  if (provider == "openai-responses") responses_rules(model, body, out);
  return out;
}

} // namespace kj::test
