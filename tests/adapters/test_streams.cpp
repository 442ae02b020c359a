// Server-sent events as they arrive in pieces: the parser (line ends, comments, multi-line data, any split
// of the bytes) and the assemblers' handling of broken or cut streams, without a network.
#include "adapters/llm/provider.hpp"
#include "adapters/llm/stream.hpp"
#include "tests/support/catch_compat.hpp"

#include <string>
#include <vector>

using namespace kj;
using nlohmann::json;

namespace {

std::vector<llm::sse_event> parse(const std::string& text, std::size_t piece) {
  llm::sse_parser parser;
  std::vector<llm::sse_event> events;
  for (std::size_t at = 0; at < text.size(); at += piece)
    parser.feed(std::string_view(text).substr(at, piece),
                [&](const llm::sse_event& e) { events.push_back(e); });
  return events;
}

} // namespace

TEST_CASE("server-sent events are read whatever the split of the bytes and the line ends") {
  const std::string text = ": keep-alive comment\r\nevent: message_start\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n"
                           "data: [DONE]\n\nevent: ping\rdata: {}\r\rdata: unterminated";
  for (std::size_t piece : {1, 2, 3, 7, 1000}) {
    INFO(piece);
    const auto events = parse(text, piece);
    REQUIRE(events.size() == 3); // the last event never ended: not dispatched
    CHECK(events[0].event == "message_start");
    CHECK(events[0].data == "{\"a\":\n1}");
    CHECK((events[1].event.empty() && events[1].data == "[DONE]"));
    CHECK((events[2].event == "ping" && events[2].data == "{}"));
  }
}

TEST_CASE("assemblers refuse broken events and know a stream cut short") {
  const auto anthropic =
      llm::make_provider("anthropic", "http://x", "k")->assembler({"http://x/chat/completions", {}, {}});
  CHECK_THROWS_AS(anthropic->take({"content_block_start", R"({"type":"content_block_start","index":0,)"
                                                          R"("content_block":{"type":"text","text":""}})"}),
                  llm::malformed_response); // a block before message_start
  anthropic->take(
      {"message_start", R"({"type":"message_start","message":{"id":"m","content":[],"usage":{}}})"});
  anthropic->take({"content_block_start",
                   R"({"type":"content_block_start","index":0,)"
                   R"("content_block":{"type":"tool_use","id":"t","name":"f","input":{}}})"});
  anthropic->take({"content_block_delta",
                   R"({"type":"content_block_delta","index":0,)"
                   R"("delta":{"type":"input_json_delta","partial_json":"{\"a\": "}})"});
  anthropic->take({"content_block_stop", R"({"type":"content_block_stop","index":0})"});
  CHECK_THROWS_AS(anthropic->body(), llm::malformed_response); // the input pieces do not make JSON
  CHECK_FALSE(anthropic->complete());
  anthropic->take(
      {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{}})"});
  CHECK_THROWS_AS(anthropic->body(), llm::truncated_response); // cut by max_tokens: not a broken answer
  const auto gemini =
      llm::make_provider("gemini", "http://x", "k")->assembler({"http://x/chat/completions", {}, {}});
  gemini->take({"", R"({"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]}}]})"});
  CHECK_FALSE(gemini->complete()); // no finishReason yet
  try {
    gemini->take({"", R"({"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}})"});
    FAIL("no error");
  } catch (const llm::stream_error& e) {
    CHECK(e.kind() == llm::error_kind::rate_limit);
  }
  const auto openai =
      llm::make_provider("openai", "http://x", "")->assembler({"http://x/chat/completions", {}, {}});
  CHECK_THROWS_AS(openai->take({"", "not json"}), llm::malformed_response);
  try {
    openai->take({"", R"({"object":"error","message":"bad","type":"BadRequestError","code":400})"});
    FAIL("no error");
  } catch (const llm::stream_error& e) {
    CHECK(e.kind() == llm::error_kind::invalid_request);
  }
  openai->take({"", "[DONE]"});
  CHECK(openai->complete());
}
