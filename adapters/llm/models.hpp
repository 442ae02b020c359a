// What an adapter must know of a model to send what its provider documents for it: which thinking controls
// a Claude model takes, whether a Gemini model thinks by level (Gemini 3) or by budget (2.5), whether an
// OpenAI model is a reasoning model. Read from the model's name; an unknown name is given the benefit of the
// doubt (every control allowed), since it may be newer than this table.
#pragma once

#include <string>
#include <vector>

namespace kj::llm::models {

// The thinking controls a Claude model accepts (platform.claude.com: extended-thinking, adaptive-thinking,
// effort, and the Opus 4.7 migration guide).
struct claude_controls {
  bool budget = true;   // thinking {type: "enabled", budget_tokens}: until 4.6 (deprecated there)
  bool adaptive = true; // thinking {type: "adaptive"}: 4.6 and later
  bool effort = true;   // output_config.effort: Opus 4.5, 4.6 and later
  bool sampling = true; // a custom temperature: refused from 4.7 on
};
claude_controls claude(const std::string& model);

// Gemini 3 and later take generationConfig.thinkingConfig.thinkingLevel; 2.5 takes thinkingBudget.
enum class gemini_thinking { budget, level, either };
gemini_thinking gemini(const std::string& model);

// o-series and gpt-5 models: max_completion_tokens, reasoning_effort, reasoning tokens in the usage.
bool openai_reasoning(const std::string& model);
// gpt-5.2 and later refuse function tools with reasoning_effort on chat completions ("Function tools with
// reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. Please use /v1/responses
// instead.").
bool openai_chat_refuses_tools_with_effort(const std::string& model);

// The documented values of --effort per provider: Anthropic's output_config.effort, Gemini's thinkingLevel,
// OpenAI's reasoning_effort.
const std::vector<std::string>& effort_levels(const std::string& provider);

} // namespace kj::llm::models
