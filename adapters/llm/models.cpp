// Implements the model table: versions read from model names.
#include "adapters/llm/models.hpp"

#include "adapters/llm/provider.hpp"

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

namespace kj::llm::models {

claude_controls claude(const std::string& model) {
  static const std::regex current(
      R"(^claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2}))?(?:[-@].*)?$)");
  static const std::regex legacy(R"(^claude-(\d+)(?:-(\d))?-(opus|sonnet|haiku).*$)");
  static const std::regex preview(R"(^claude-(fable|mythos)-.*$)");
  std::smatch m;
  int major = 0, minor = 0;
  std::string family;
  if (std::regex_match(model, m, current)) {
    family = m[1];
    major = std::stoi(m[2]);
    minor = m[3].matched ? std::stoi(m[3]) : 0;
  } else if (std::regex_match(model, m, legacy)) {
    major = std::stoi(m[1]);
    minor = m[2].matched ? std::stoi(m[2]) : 0;
    family = m[3];
  } else if (std::regex_match(model, m, preview)) {
    family = m[1]; // claude-mythos-preview: adaptive only
    major = 99;
  } else {
    return {}; // unknown: newer than this table, or a local alias
  }
  const int version = major * 10 + std::min(minor, 9);
  if (family == "fable" || family == "mythos" || version >= 47) return {false, true, true, false};
  if (version == 46) return {true, true, true, true};
  return {true, false, family == "opus" && version == 45, true};
}

gemini_thinking gemini(const std::string& model) {
  static const std::regex versioned(R"(^(?:models/)?gemini-(\d+)(?:\.\d+)?-.*$)");
  std::smatch m;
  if (!std::regex_match(model, m, versioned)) return gemini_thinking::either;
  return std::stoi(m[1]) >= 3 ? gemini_thinking::level : gemini_thinking::budget;
}

bool openai_reasoning(const std::string& model) {
  static const std::regex reasoning(R"(^(?:openai/)?(o\d+|gpt-5)([-.].*)?$)");
  return std::regex_match(model, reasoning);
}

bool openai_chat_refuses_tools_with_effort(const std::string& model) {
  static const std::regex refusing(R"(^(?:openai/)?gpt-5\.([2-9]|[1-9][0-9])([-.].*)?$)");
  return std::regex_match(model, refusing);
}

const std::vector<std::string>& effort_levels(const std::string& provider) {
  static const std::vector<std::string> none;
  const provider_entry* p = provider_named(provider);
  return p ? p->effort_levels : none;
}

} // namespace kj::llm::models
