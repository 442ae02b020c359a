// The model capability table: what each model accepts, read from a data file (adapters/models.json, or
// $KJ_MODELS), dated and sourced like the prices: its API family, its output limit, the effort levels it
// takes and the output limit kj asks for when --max-tokens is not given. Pre-flight reads it to refuse an
// impossible request once, before any is sent; the OpenAI adapter reads it to choose between the Responses
// API and chat completions. A model with no row follows the documented rule of unknown_model().
#pragma once

#include "adapters/llm/conversation.hpp"

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::llm {

// A capability file that cannot be read or does not have the documented shape; names file and field.
class capability_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The wire format a model is spoken to in: Anthropic "messages", Gemini "generateContent", OpenAI
// "responses" or "chat" (chat completions, also every OpenAI-compatible server).
struct model_capability {
  std::vector<std::string> patterns; // shell globs over the model name
  std::string provider;              // anthropic, gemini, openai
  std::string api;
  std::optional<int> max_output;         // the most output tokens the model may be asked for
  std::optional<int> default_max_tokens; // what kj asks for when --max-tokens is not given
  std::vector<std::string> effort;       // the levels --effort may take; empty: the model takes none
  std::string effort_default;            // the model's own level when none is sent ("" when it has none)
  std::string source, checked;           // where the row comes from, and when it was checked (YYYY-MM-DD)
  bool known = true;                     // false: no row matched; the unknown-model rule filled it in
};

class capability_table {
public:
  // Throws capability_error naming the file and the field when it is unreadable or malformed.
  static capability_table load(const std::filesystem::path& path);
  // $KJ_MODELS when set, else the source tree's adapters/models.json.
  static std::filesystem::path default_path();
  // The table at default_path(), loaded once; throws capability_error as load() does.
  static const capability_table& standard();

  // The first row (in file order) of `provider` one of whose patterns matches; null when none.
  const model_capability* find(const std::string& provider, const std::string& model) const;
  // The row of the model, or the unknown-model rule's capability (docs/adapters.md): the provider's own API
  // (OpenAI: Responses for names that read as reasoning models, o-series and gpt-5 on, else chat
  // completions), no output limit known, every effort level the provider documents.
  model_capability of(const std::string& provider, const std::string& model) const;

  const std::string& date() const { return m_date; }
  const std::vector<model_capability>& rows() const { return m_rows; }

private:
  std::string m_date;
  std::vector<model_capability> m_rows;
};

// Throws llm_error(config), naming what the model allows and the row's source, for a request its row refuses:
// an effort level it lacks (or any, for a model that takes none), more output tokens than it can give. The
// providers call it first in encode(), so pre-flight and every call refuse alike; nothing is sent.
void require_capable(const std::string& provider, const request& r);

// The output limit to ask for: the request's own, else the row's default_max_tokens, else none.
std::optional<int> max_tokens_for(const std::string& provider, const request& r);

// The OpenAI API family of a request: its `api` when set ("responses" or "chat"), else the model's row or
// the unknown-model rule.
std::string openai_api(const request& r);

} // namespace kj::llm
