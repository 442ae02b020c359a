// OpenAI's Responses API (POST {base}/responses), the API of OpenAI's reasoning models with tools: the body,
// the answer and its stream. Stateless (store: false): each turn's output items, reasoning items with their
// encrypted content included, travel back in the next request's input. openai.cpp chooses it per model.
#pragma once

#include "adapters/llm/conversation.hpp"
#include "adapters/llm/stream.hpp"

#include <memory>
#include <nlohmann/json.hpp>

namespace kj::llm::responses {

// The tag of an assistant message decoded from a Responses answer: its `raw` is the answer's output items.
inline constexpr const char* raw_tag = "openai-responses";

// The request body; refuses nothing (require_capable does, before).
nlohmann::json encode(const request& r);
// Throws malformed_response when the body is not a documented response, truncated_response when the output
// limit cut a function call's arguments.
reply decode(const nlohmann::json& body);
// Whether a body is a Responses answer ("object": "response").
bool is_response(const nlohmann::json& body);
// Reads response.* events (platform.openai.com/docs/api-reference/responses-streaming) into the response.
std::unique_ptr<stream_assembler> make_assembler();

} // namespace kj::llm::responses
