// Implements code-block extraction over the reply's lines.
#include "adapters/generate/extract.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

namespace kj::adapters {
namespace {

struct block {
  std::string language;
  std::string code;
  bool closed = false;
};

std::string trim(const std::string& text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin])))
    ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1])))
    --end;
  return text.substr(begin, end - begin);
}

// Fences are lines that start (after indentation) with ``` or ~~~; the text after an opening fence is the
// language. A closing fence uses the same characters.
std::vector<block> fenced_blocks(const std::string& text) {
  std::vector<block> blocks;
  std::istringstream in(text);
  std::string line, fence;
  block* open = nullptr;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string stripped = trim(line);
    const bool is_fence = stripped.rfind("```", 0) == 0 || stripped.rfind("~~~", 0) == 0;
    if (!open && is_fence) {
      fence = stripped.substr(0, 3);
      blocks.push_back({});
      open = &blocks.back();
      std::string language = trim(stripped.substr(3));
      std::transform(language.begin(), language.end(), language.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      open->language = language;
    } else if (open && is_fence && stripped.rfind(fence, 0) == 0 && trim(stripped.substr(3)).empty()) {
      open->closed = true;
      open = nullptr;
    } else if (open) {
      open->code += line + "\n";
    }
  }
  return blocks;
}

bool is_python_label(const std::string& language) {
  return language.empty() || language == "python" || language == "py" || language == "python3";
}

} // namespace

extraction extract_code(const std::string& reply_text, const std::string& stop_reason) {
  extraction out;
  if (trim(reply_text).empty()) {
    out.reason = "the reply has no text" + (stop_reason.empty() ? "" : " (stop reason " + stop_reason + ")");
    return out;
  }
  const std::vector<block> blocks = fenced_blocks(reply_text);
  const block* chosen = nullptr;
  bool open_with_model = false;
  for (const block& b : blocks) {
    if (!is_python_label(b.language) || b.code.find("class ModelNew") == std::string::npos) continue;
    if (b.closed)
      chosen = &b;
    else
      open_with_model = true;
  }
  if (chosen) {
    out.found = true;
    out.code = chosen->code;
    return out;
  }
  if (open_with_model)
    out.reason = stop_reason == "max_tokens" || stop_reason == "length" || stop_reason == "MAX_TOKENS"
                     ? "the reply was cut off at the token limit inside its code block (raise --max-tokens)"
                     : "the reply's code block defining ModelNew is never closed";
  else if (blocks.empty())
    out.reason = "the reply has no fenced code block";
  else
    out.reason = "no Python code block in the reply defines class ModelNew";
  return out;
}

} // namespace kj::adapters
