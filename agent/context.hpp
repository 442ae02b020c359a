// Context management: keeps the conversation under the model's window. Old tool outputs are cut to their
// summary line, old file contents in tool arguments and old thinking are elided, and as a last resort the
// oldest turns are dropped; the latest turns stay whole, and the workspace always holds the latest code.
// Where the provider offers it (Anthropic), its own context editing is asked for as well.
#pragma once

#include "adapters/llm/conversation.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kj::agent {

struct context_settings {
  std::int64_t window_tokens = 128'000; // the model's context window (CUDA Agent used 128k)
  double manage_at = 0.6;               // start eliding above this fraction of the window
  double drop_at = 0.85;                // drop whole old turns above this fraction (after eliding)
  int keep_turns = 3;                   // the latest assistant turns (and their results) stay whole
  bool provider_editing = true;         // ask the provider to clear old tool results (Anthropic)
};

class context_manager {
public:
  explicit context_manager(context_settings settings) : m_settings(settings) {}

  // Learns tokens per character from a call whose prompt (usage: input + cache read + cache write) is known.
  void observe(const std::vector<llm::message>& sent, const std::string& system, std::int64_t prompt_tokens);
  // The prompt's size in tokens, estimated from its characters.
  std::int64_t estimate(const std::vector<llm::message>& messages, const std::string& system) const;
  // Shrinks `messages` until the estimate is under the thresholds; returns what was done ("" nothing).
  std::string manage(std::vector<llm::message>& messages, const std::string& system);
  // The provider-side context editing to request (none when switched off).
  std::optional<llm::context_editing> provider_request() const;

  const context_settings& settings() const { return m_settings; }

private:
  bool over(const std::vector<llm::message>& messages, const std::string& system, double fraction) const;
  context_settings m_settings;
  double m_tokens_per_char = 0.3; // until a call tells; code and JSON run at about 0.25-0.35
};

// The characters a message puts on the wire (its provider encoding when it keeps one).
std::size_t message_chars(const llm::message& m);

} // namespace kj::agent
