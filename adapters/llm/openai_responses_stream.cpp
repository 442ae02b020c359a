// Assembles a Responses API stream (platform.openai.com/docs/api-reference/responses-streaming): typed
// events (response.created, response.output_item.added/done, response.output_text.delta, ...) with a
// sequence_number; the last one, response.completed or response.incomplete, carries the whole response,
// usage included. response.failed and `error` events are the stream's errors. The output items kj saw done
// fill in a final response that came without them.
#include "adapters/llm/json_fields.hpp"
#include "adapters/llm/openai_responses.hpp"

#include <map>

namespace kj::llm::responses {
namespace {

using nlohmann::json;

class assembler final : public stream_assembler {
public:
  void take(const sse_event& event) override {
    const json data = event_json(event);
    const std::string type = fields::text(data, "type");
    if (type == "error")
      throw stream_error(stream_error_kind(data),
                         fields::text(data, "code").empty()
                             ? fields::text(data, "message")
                             : fields::text(data, "code") + ": " + fields::text(data, "message"));
    if (type == "response.failed") {
      const json& response = fields::object(data, "response");
      const json* error = fields::find(response, "error");
      throw stream_error(error ? stream_error_kind(*error) : error_kind::server,
                         "the response failed: " +
                             (error ? fields::text(*error, "message") : "no error given"));
    }
    if (type == "response.output_item.done")
      m_items[fields::count(data, "output_index")] = fields::object(data, "item");
    if (type == "response.completed" || type == "response.incomplete") {
      m_body = fields::object(data, "response");
      m_done = true;
    }
  }

  bool complete() const override { return m_done; }

  json body() const override {
    json out = m_body;
    if ((!out.contains("output") || out["output"].empty()) && !m_items.empty()) {
      out["output"] = json::array();
      for (const auto& [index, item] : m_items)
        out["output"].push_back(item);
    }
    return out;
  }

private:
  json m_body = json::object();
  std::map<std::int64_t, json> m_items;
  bool m_done = false;
};

} // namespace

std::unique_ptr<stream_assembler> make_assembler() {
  return std::make_unique<assembler>();
}

} // namespace kj::llm::responses
