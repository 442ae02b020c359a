// Implements the streams of the three wire formats from a complete body.
#include "tests/fake_llm/event_stream.hpp"

#include <string>
#include <vector>

namespace kj::test {
namespace {

using nlohmann::json;

std::string event(const std::string& name, const json& data) {
  std::string out;
  if (!name.empty()) out += "event: " + name + "\n";
  return out + "data: " + (data.is_string() ? data.get<std::string>() : data.dump()) + "\n\n";
}

// A text in two pieces (a reader that keeps only the last piece fails).
std::vector<std::string> pieces(const std::string& text) {
  if (text.size() < 2) return {text};
  return {text.substr(0, text.size() / 2), text.substr(text.size() / 2)};
}

std::string anthropic(const json& body) {
  json start = body;
  start["content"] = json::array();
  start["stop_reason"] = nullptr;
  start["usage"]["output_tokens"] = 1;
  std::string out = event("message_start", {{"type", "message_start"}, {"message", start}});
  out += event("ping", {{"type", "ping"}});
  int index = 0;
  for (const json& block : body.value("content", json::array())) {
    const std::string type = block.value("type", "");
    json opening = block;
    std::vector<json> deltas;
    if (type == "text") {
      opening["text"] = "";
      for (const std::string& p : pieces(block.value("text", "")))
        deltas.push_back({{"type", "text_delta"}, {"text", p}});
    } else if (type == "thinking") {
      opening["thinking"] = "";
      opening["signature"] = "";
      for (const std::string& p : pieces(block.value("thinking", "")))
        deltas.push_back({{"type", "thinking_delta"}, {"thinking", p}});
      deltas.push_back({{"type", "signature_delta"}, {"signature", block.value("signature", "")}});
    } else if (type == "tool_use") {
      opening["input"] = json::object();
      deltas.push_back({{"type", "input_json_delta"}, {"partial_json", ""}});
      for (const std::string& p : pieces(block.value("input", json::object()).dump()))
        deltas.push_back({{"type", "input_json_delta"}, {"partial_json", p}});
    }
    out += event("content_block_start",
                 {{"type", "content_block_start"}, {"index", index}, {"content_block", opening}});
    for (const json& d : deltas)
      out += event("content_block_delta", {{"type", "content_block_delta"}, {"index", index}, {"delta", d}});
    out += event("content_block_stop", {{"type", "content_block_stop"}, {"index", index++}});
  }
  out += event("message_delta", {{"type", "message_delta"},
                                 {"delta",
                                  {{"stop_reason", body.value("stop_reason", json())},
                                   {"stop_sequence", body.value("stop_sequence", json())}}},
                                 {"usage", body.value("usage", json::object())}});
  return out + event("message_stop", {{"type", "message_stop"}});
}

// One chunk per piece of each part; the last chunk carries finishReason and the final usage.
std::string gemini(const json& body) {
  std::string out;
  const json candidates = body.value("candidates", json::array());
  const json candidate = candidates.empty() ? json() : candidates[0];
  json common = json::object();
  for (const char* key : {"modelVersion", "responseId"})
    if (body.contains(key)) common[key] = body[key];
  if (candidate.is_object() && candidate.contains("content"))
    for (const json& part : candidate["content"].value("parts", json::array())) {
      std::vector<json> parts{part};
      if (part.contains("text") && part.size() == 1) {
        parts.clear();
        for (const std::string& p : pieces(part["text"].get<std::string>()))
          parts.push_back({{"text", p}});
      }
      for (const json& p : parts) {
        json chunk = common;
        chunk["candidates"] =
            json::array({{{"content", {{"role", "model"}, {"parts", json::array({p})}}}, {"index", 0}}});
        out += event("", chunk);
      }
    }
  json last = common;
  if (candidate.is_object()) {
    json final_candidate = candidate;
    final_candidate.erase("content");
    last["candidates"] = json::array({final_candidate});
  }
  for (const char* key : {"usageMetadata", "promptFeedback"})
    if (body.contains(key)) last[key] = body[key];
  return out + event("", last);
}

std::string openai(const json& body) {
  json common{{"id", body.value("id", "chatcmpl-fake")},
              {"object", "chat.completion.chunk"},
              {"created", body.value("created", 0)},
              {"model", body.value("model", "")}};
  const json choice = body["choices"][0];
  const json message = choice.value("message", json::object());
  const auto chunk = [&](const json& delta, const json& finish) {
    json c = common;
    c["choices"] = json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}});
    return event("", c);
  };
  std::string out = chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
  for (const char* key : {"reasoning_content", "reasoning"})
    if (message.contains(key) && message[key].is_string())
      for (const std::string& p : pieces(message[key].get<std::string>()))
        out += chunk({{key, p}}, nullptr);
  if (message.contains("content") && message["content"].is_string())
    for (const std::string& p : pieces(message["content"].get<std::string>()))
      out += chunk({{"content", p}}, nullptr);
  int index = 0;
  for (const json& call : message.value("tool_calls", json::array())) {
    out += chunk({{"tool_calls",
                   json::array({{{"index", index},
                                 {"id", call["id"]},
                                 {"type", "function"},
                                 {"function", {{"name", call["function"]["name"]}, {"arguments", ""}}}}})}},
                 nullptr);
    for (const std::string& p : pieces(call["function"]["arguments"].get<std::string>()))
      out += chunk({{"tool_calls", json::array({{{"index", index}, {"function", {{"arguments", p}}}}})}},
                   nullptr);
    ++index;
  }
  out += chunk(json::object(), choice.value("finish_reason", json()));
  if (body.contains("usage")) {
    json usage = common;
    usage["choices"] = json::array();
    usage["usage"] = body["usage"];
    out += event("", usage);
  }
  return out + event("", "[DONE]");
}

// The Responses API's typed events (responses-streaming): created, each output item added, its deltas and
// done, then the whole response in response.completed (or response.incomplete).
std::string responses(const json& body) {
  int sequence = 0;
  const auto typed = [&](const std::string& type, json data) {
    data["type"] = type;
    data["sequence_number"] = sequence++;
    return event(type, data);
  };
  json start = body;
  start["status"] = "in_progress";
  start["output"] = json::array();
  start["usage"] = nullptr;
  std::string out = typed("response.created", {{"response", start}});
  const json& items = body.value("output", json::array());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const json& item = items[i];
    const std::string type = item.value("type", "");
    json opening = item;
    if (type == "message") opening["content"] = json::array();
    if (type == "function_call") opening["arguments"] = "";
    if (type == "reasoning") opening["summary"] = json::array();
    out += typed("response.output_item.added", {{"output_index", i}, {"item", opening}});
    const json id = item.value("id", "");
    if (type == "message")
      for (const json& c : item.value("content", json::array()))
        for (const std::string& p : pieces(c.value("text", "")))
          out += typed("response.output_text.delta",
                       {{"item_id", id}, {"output_index", i}, {"content_index", 0}, {"delta", p}});
    if (type == "function_call")
      for (const std::string& p : pieces(item.value("arguments", "")))
        out += typed("response.function_call_arguments.delta",
                     {{"item_id", id}, {"output_index", i}, {"delta", p}});
    if (type == "reasoning")
      for (const json& s : item.value("summary", json::array()))
        for (const std::string& p : pieces(s.value("text", "")))
          out += typed("response.reasoning_summary_text.delta",
                       {{"item_id", id}, {"output_index", i}, {"summary_index", 0}, {"delta", p}});
    out += typed("response.output_item.done", {{"output_index", i}, {"item", item}});
  }
  return out + typed(body.value("status", "") == "incomplete" ? "response.incomplete" : "response.completed",
                     {{"response", body}});
}

} // namespace

std::string event_stream_of(const std::string& provider, const json& body) {
  if (provider == "anthropic") return anthropic(body);
  if (provider == "gemini") return gemini(body);
  if (provider == "openai-responses") return responses(body);
  return openai(body);
}

std::string event_stream_text(const json& events) {
  std::string out;
  for (const json& e : events)
    out += event(e.value("event", ""), e.at("data"));
  return out;
}

} // namespace kj::test
