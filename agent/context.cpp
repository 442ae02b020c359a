// Implements context management: the token estimate, eliding old material, dropping the oldest turns.
#include "agent/context.hpp"

#include <algorithm>
#include <fmt/core.h>

namespace kj::agent {
namespace {

constexpr std::size_t k_tool_spec_chars = 3000; // the tools' JSON Schemas, sent with every call
constexpr std::size_t k_keep_chars = 300;       // shorter texts are not worth eliding

std::size_t total_chars(const std::vector<llm::message>& messages, const std::string& system) {
  std::size_t n = system.size() + k_tool_spec_chars;
  for (const auto& m : messages)
    n += message_chars(m);
  return n;
}

// How many assistant turns come after message i.
std::vector<int> ages(const std::vector<llm::message>& messages) {
  std::vector<int> age(messages.size(), 0);
  int later = 0;
  for (std::size_t i = messages.size(); i-- > 0;) {
    age[i] = later;
    if (messages[i].who == llm::role::assistant) ++later;
  }
  return age;
}

// Cuts a long string argument (file contents) of an old tool call; true when something changed.
bool elide_arguments(nlohmann::json& arguments) {
  bool changed = false;
  if (!arguments.is_object()) return false;
  for (auto& [key, value] : arguments.items())
    if (value.is_string() && value.get<std::string>().size() > k_keep_chars) {
      value = fmt::format("[kj: {} characters elided to save context; the workspace holds the file's current "
                          "text: read_file shows it]",
                          value.get<std::string>().size());
      changed = true;
    }
  return changed;
}

// Elides what an old message carries beyond its gist; true when it changed.
bool elide(llm::message& m) {
  bool changed = false;
  if (m.who == llm::role::user) {
    for (auto& p : m.parts)
      if (p.type == llm::part::kind::tool_result && p.text.size() > k_keep_chars &&
          p.text.find("[kj: the rest of this output") == std::string::npos) {
        const std::string first = p.text.substr(0, p.text.find('\n'));
        p.text = fmt::format("{}\n[kj: the rest of this output ({} characters) was elided to save context; "
                             "call the tool again to see it]",
                             first.substr(0, k_keep_chars), p.text.size() - first.size());
        changed = true;
      }
    return changed;
  }
  const auto before = m.parts.size();
  std::erase_if(m.parts, [](const llm::part& p) { return p.type == llm::part::kind::thinking; });
  changed = m.parts.size() != before;
  for (auto& p : m.parts)
    if (p.type == llm::part::kind::tool_call) changed |= elide_arguments(p.arguments);
  if (changed) { // re-encoded from its parts from now on (they keep their signatures)
    m.raw = nullptr;
    m.raw_provider.clear();
  }
  return changed;
}

} // namespace

std::size_t message_chars(const llm::message& m) {
  if (!m.raw_provider.empty() && !m.raw.is_null()) return m.raw.dump().size();
  std::size_t n = 16;
  for (const auto& p : m.parts)
    n += p.text.size() + p.signature.size() + p.tool_name.size() + p.call_id.size() +
         (p.arguments.is_null() ? 0 : p.arguments.dump().size()) + 16;
  return n;
}

void context_manager::observe(const std::vector<llm::message>& sent, const std::string& system,
                              std::int64_t prompt_tokens) {
  const std::size_t chars = total_chars(sent, system);
  if (prompt_tokens > 0 && chars > 0)
    m_tokens_per_char = std::clamp(double(prompt_tokens) / double(chars), 0.05, 2.0);
}

std::int64_t context_manager::estimate(const std::vector<llm::message>& messages,
                                       const std::string& system) const {
  return static_cast<std::int64_t>(double(total_chars(messages, system)) * m_tokens_per_char);
}

bool context_manager::over(const std::vector<llm::message>& messages, const std::string& system,
                           double fraction) const {
  return double(estimate(messages, system)) > fraction * double(m_settings.window_tokens);
}

std::string context_manager::manage(std::vector<llm::message>& messages, const std::string& system) {
  if (!over(messages, system, m_settings.manage_at)) return "";
  const std::int64_t before = estimate(messages, system);
  int elided = 0;
  const std::vector<int> age = ages(messages);
  for (std::size_t i = 1; i < messages.size() && over(messages, system, m_settings.manage_at); ++i)
    if (age[i] >= m_settings.keep_turns && elide(messages[i])) ++elided;
  int dropped = 0;
  // The oldest (assistant, user) pairs after the task; an assistant turn and the results of its calls go
  // together, so that no result is left without its call.
  while (over(messages, system, m_settings.drop_at) && messages.size() > 3 &&
         ages(messages)[1] >= m_settings.keep_turns && messages[1].who == llm::role::assistant) {
    messages.erase(messages.begin() + 1, messages.begin() + 3);
    ++dropped;
  }
  if (dropped > 0) {
    auto& task = messages.front().parts;
    std::erase_if(task, [](const llm::part& p) { return p.text.starts_with("[kj: earlier turns"); });
    task.push_back(llm::part::make_text(
        "[kj: earlier turns were dropped to fit the context window; the workspace holds the latest code]"));
  }
  return fmt::format("context ~{} tokens of {}: {} old messages elided, {} old turns dropped; now ~{}",
                     before, m_settings.window_tokens, elided, dropped, estimate(messages, system));
}

std::optional<llm::context_editing> context_manager::provider_request() const {
  if (!m_settings.provider_editing) return std::nullopt;
  llm::context_editing e;
  e.trigger_tokens = static_cast<std::int64_t>(0.5 * double(m_settings.window_tokens));
  e.keep_tool_uses = std::max(3, 2 * m_settings.keep_turns);
  e.clear_at_least = std::min<std::int64_t>(10'000, m_settings.window_tokens / 10);
  return e;
}

} // namespace kj::agent
