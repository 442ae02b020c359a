// Finding the candidate in a model's reply: the fenced code block that defines ModelNew.
#pragma once

#include <string>

namespace kj::adapters {

struct extraction {
  bool found = false;
  std::string code;   // the block's text when found
  std::string reason; // why nothing usable was found, for the no_code verdict's error
};

// The last complete ```python (or ```py, or unlabelled) block that defines `class ModelNew`: models that
// revise their answer put the final version last. A block left open (the reply was cut off) does not count.
// `stop_reason` ("max_tokens", ...) only sharpens the reason given when nothing is found.
extraction extract_code(const std::string& reply_text, const std::string& stop_reason = "");

} // namespace kj::adapters
