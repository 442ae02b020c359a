// Implements the two batch APIs (platform.claude.com/docs/en/build-with-claude/batch-processing;
// platform.openai.com/docs/guides/batch and api-reference/batch).
#include "adapters/llm/batch.hpp"

#include "adapters/llm/json_fields.hpp"

#include <fmt/core.h>
#include <sstream>

namespace kj::llm {
namespace {

using nlohmann::json;

http_response call(const provider& p, std::string method, const std::string& url, std::string body,
                   std::vector<std::string> headers = {"content-type: application/json"},
                   std::vector<form_part> form = {}) {
  http_request r;
  r.method = std::move(method);
  r.url = url;
  r.headers = std::move(headers);
  for (std::string& h : p.auth_headers())
    r.headers.push_back(std::move(h));
  r.body = std::move(body);
  r.form = std::move(form);
  r.total_timeout = std::chrono::minutes(10);
  return http_post(r);
}

// A non-2xx answer (or none) to a batch call: the provider's own error, named.
json ok_json(const provider& p, const http_response& r, const std::string& what) {
  if (!r.transport_error.empty())
    throw llm_error(p.name(), error_kind::transport,
                    fmt::format("{}: {}: {}", p.name(), what, r.transport_error));
  if (r.status < 200 || r.status >= 300) {
    const failure f = p.decode_failure(r);
    throw llm_error(p.name(), f.kind, fmt::format("{}: {}: HTTP {} {}", p.name(), what, r.status, f.message),
                    r.status, f.request_id);
  }
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded())
    throw llm_error(p.name(), error_kind::malformed, p.name() + ": " + what + ": not JSON");
  return body;
}

std::vector<json> jsonl(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(json::parse(line));
  return lines;
}

class anthropic_batches final : public batch_api {
public:
  explicit anthropic_batches(const provider& p) : m_p(p) {}

  std::string submit(const std::vector<batch_item>& items) override {
    json requests = json::array();
    for (const batch_item& i : items)
      requests.push_back({{"custom_id", i.custom_id}, {"params", i.wire.body}});
    const json r = ok_json(m_p,
                           call(m_p, "POST", m_p.base_url() + "/v1/messages/batches",
                                json{{"requests", requests}}.dump(), items.front().wire.headers),
                           "submit a message batch");
    return fields::text(r, "id");
  }

  batch_status poll(const std::string& id) override {
    const json r =
        ok_json(m_p, call(m_p, "GET", m_p.base_url() + "/v1/messages/batches/" + id, "", m_version),
                "poll message batch " + id);
    batch_status s{id, fields::text(r, "processing_status")};
    s.ended = s.status == "ended";
    s.results = fields::text(r, "results_url");
    if (const json* counts = fields::find(r, "request_counts")) s.detail = counts->dump();
    return s;
  }

  std::vector<batch_answer> answers(const batch_status& s) override {
    const http_response r = call(m_p, "GET", s.results, "", m_version);
    if (r.status < 200 || r.status >= 300) (void)ok_json(m_p, r, "read the results of batch " + s.id);
    std::vector<batch_answer> out;
    for (const json& line : jsonl(r.body)) {
      batch_answer a{fields::text(line, "custom_id")};
      const json& result = fields::object(line, "result");
      const std::string type = fields::text(result, "type");
      a.ok = type == "succeeded";
      a.status = a.ok ? 200 : 0;
      if (a.ok) a.body = fields::object(result, "message");
      if (type == "errored") a.error = fields::object(result, "error").dump();
      if (type == "canceled" || type == "expired") a.error = "the batch request was " + type;
      out.push_back(std::move(a));
    }
    return out;
  }

private:
  const provider& m_p;
  std::vector<std::string> m_version{"anthropic-version: 2023-06-01"};
};

class openai_batches final : public batch_api {
public:
  explicit openai_batches(const provider& p) : m_p(p) {}

  std::string submit(const std::vector<batch_item>& items) override {
    const std::string endpoint = items.front().wire.url.substr(m_p.base_url().size() - 3); // "/v1/..."
    std::string lines;
    for (const batch_item& i : items)
      lines += json{{"custom_id", i.custom_id}, {"method", "POST"}, {"url", endpoint}, {"body", i.wire.body}}
                   .dump() +
               "\n";
    const json file =
        ok_json(m_p,
                call(m_p, "POST", m_p.base_url() + "/files", "", {},
                     {{"purpose", "batch"}, {"file", lines, "kj-batch.jsonl", "application/jsonl"}}),
                "upload the batch input file");
    const json batch = ok_json(m_p,
                               call(m_p, "POST", m_p.base_url() + "/batches",
                                    json{{"input_file_id", fields::text(file, "id")},
                                         {"endpoint", endpoint},
                                         {"completion_window", "24h"}}
                                        .dump()),
                               "create the batch");
    return fields::text(batch, "id");
  }

  batch_status poll(const std::string& id) override {
    const json r =
        ok_json(m_p, call(m_p, "GET", m_p.base_url() + "/batches/" + id, "", {}), "poll batch " + id);
    batch_status s{id, fields::text(r, "status")};
    s.ended =
        s.status == "completed" || s.status == "failed" || s.status == "expired" || s.status == "cancelled";
    s.results = fields::text(r, "output_file_id");
    s.errors = fields::text(r, "error_file_id");
    if (const json* counts = fields::find(r, "request_counts")) s.detail = counts->dump();
    if (const json* errors = fields::find(r, "errors")) s.detail += " " + errors->dump();
    return s;
  }

  std::vector<batch_answer> answers(const batch_status& s) override {
    std::vector<batch_answer> out;
    for (const std::string& file : {s.results, s.errors}) {
      if (file.empty()) continue;
      const http_response r = call(m_p, "GET", m_p.base_url() + "/files/" + file + "/content", "", {});
      if (r.status < 200 || r.status >= 300) (void)ok_json(m_p, r, "read batch output file " + file);
      for (const json& line : jsonl(r.body)) {
        batch_answer a{fields::text(line, "custom_id")};
        if (const json* response = fields::find(line, "response")) {
          a.status = static_cast<long>(fields::count(*response, "status_code"));
          a.request_id = fields::text(*response, "request_id");
          a.body = response->value("body", json());
        }
        a.ok = a.status >= 200 && a.status < 300;
        if (!a.ok)
          a.error = line.contains("error") && !line["error"].is_null() ? line["error"].dump() : a.body.dump();
        out.push_back(std::move(a));
      }
    }
    return out;
  }

private:
  const provider& m_p;
};

// Gemini's batch mode (ai.google.dev/api/batch-api; ai.google.dev/gemini-api/docs/batch-mode): POST
// /v1beta/models/{model}:batchGenerateContent with the requests inlined, an Operation named batches/{id},
// polled at GET /v1beta/batches/{id} until `done` (metadata.state BATCH_STATE_SUCCEEDED, _FAILED, _CANCELLED,
// _EXPIRED); the answers inlined in response.inlinedResponses, in the order of the requests. A response's
// metadata is not always returned (discuss.ai.google.dev, 2026): the i-th answer is then the i-th item's.
class gemini_batches final : public batch_api {
public:
  explicit gemini_batches(const provider& p) : m_p(p) {}

  std::string submit(const std::vector<batch_item>& items) override {
    json requests = json::array();
    for (const batch_item& i : items)
      requests.push_back({{"request", i.wire.body}, {"metadata", {{"key", i.custom_id}}}});
    // The model is the request URL's: .../models/{model}:generateContent.
    const std::string url = items.front().wire.url;
    const std::string model_url = url.substr(0, url.rfind(':'));
    const json body{
        {"batch",
         {{"displayName", "kerneljudge"}, {"inputConfig", {{"requests", {{"requests", requests}}}}}}}};
    const json op =
        ok_json(m_p, call(m_p, "POST", model_url + ":batchGenerateContent", body.dump()), "submit a batch");
    return fields::text(op, "name"); // batches/{id}
  }

  batch_status poll(const std::string& id) override {
    const json op = ok_json(m_p, call(m_p, "GET", m_p.base_url() + "/v1beta/" + id, "", {}), "poll " + id);
    const json* meta = fields::find(op, "metadata");
    batch_status s{id, meta ? fields::text(*meta, "state") : ""};
    s.ended = op.value("done", false);
    if (s.ended) m_last = op;
    if (meta && fields::find(*meta, "batchStats")) s.detail = (*meta)["batchStats"].dump();
    return s;
  }

  std::vector<batch_answer> answers(const batch_status&) override {
    const json* response = fields::find(m_last, "response");
    const json* inlined = response ? fields::find(*response, "inlinedResponses") : nullptr;
    if (inlined && inlined->is_object()) inlined = fields::find(*inlined, "inlinedResponses");
    std::vector<batch_answer> out;
    if (!inlined || !inlined->is_array()) return out;
    for (std::size_t i = 0; i < inlined->size(); ++i) {
      const json& item = (*inlined)[i];
      const json* meta = fields::find(item, "metadata");
      batch_answer a{meta && meta->contains("key") ? fields::text(*meta, "key") : item_id(i)};
      a.ok = item.contains("response");
      a.status = a.ok ? 200 : 0;
      if (a.ok)
        a.body = item["response"];
      else
        a.error = item.value("error", json()).dump();
      out.push_back(std::move(a));
    }
    return out;
  }

private:
  const provider& m_p;
  json m_last;
};

} // namespace

std::string item_id(std::size_t index) {
  return fmt::format("kj-{}", index);
}

std::unique_ptr<batch_api> make_batch_api(const provider& wire) {
  if (wire.name() == "anthropic") return std::make_unique<anthropic_batches>(wire);
  if (wire.name() == "openai") return std::make_unique<openai_batches>(wire);
  if (wire.name() == "gemini") return std::make_unique<gemini_batches>(wire);
  throw llm_error(wire.name(), error_kind::config, fmt::format("{}: no batch API", wire.name()));
}

} // namespace kj::llm
