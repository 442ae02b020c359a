// The fake provider's streams: a complete response body told as the server-sent events its provider
// documents (what the real server would stream for it), and explicit event lists from fixtures.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kj::test {

// The body as its provider streams it: Anthropic's message_start / content_block_* / message_delta /
// message_stop events, Gemini's GenerateContentResponse chunks, OpenAI's chat.completion.chunk events and
// `data: [DONE]`. Text is cut into pieces so that a reader must join them.
std::string event_stream_of(const std::string& provider, const nlohmann::json& body);

// [{"event": "...", "data": {...} or "text"}, ...] as server-sent events.
std::string event_stream_text(const nlohmann::json& events);

} // namespace kj::test
