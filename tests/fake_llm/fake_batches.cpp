// The fake provider's batch endpoints, as the providers document them (and Gemini's batch mode,
// ai.google.dev/api/batch-api): Anthropic Message Batches
// (platform.claude.com/docs/en/build-with-claude/batch-processing: POST /v1/messages/batches, GET its status,
// GET its results_url as JSONL) and OpenAI's Batch API (platform.openai.com/docs/api-reference/batch: POST
// /v1/files with purpose "batch", POST /v1/batches, GET /v1/batches/{id}, GET /v1/files/{id}/content). Each
// item is answered like a request of its own (answers mode, documentation checks); a batch ends after a set
// number of polls.
#include "tests/fake_llm/fake_llm_server.hpp"
#include "tests/fake_llm/request_schema.hpp"

#include <fmt/core.h>
#include <httplib.h>
#include <sstream>

namespace kj::test {

using nlohmann::json;

json fake_llm_server::batch_item_answer(const std::string& provider, const std::string& model,
                                        const json& body) {
  received_request r{provider, model, "(batch)", {}, body.dump()};
  r.at_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_started).count();
  if (m_documented) r.violations = request_violations(m_fixtures, provider, r.model, body);
  {
    std::lock_guard<std::mutex> guard(m_lock);
    m_requests.push_back(r);
    m_counts[provider + "/" + r.model]++;
  }
  if (!r.violations.empty())
    return {{"status", 400},
            {"body", {{"error", {{"type", "invalid_request_error"}, {"message", r.violations.front()}}}}}};
  return folder_step(provider, r);
}

void fake_llm_server::add_batch_routes() {
  m_server->Post("/v1/messages/batches", [this](const httplib::Request& q, httplib::Response& s) {
    const json request = json::parse(q.body, nullptr, false);
    std::string lines;
    for (const json& item : request.value("requests", json::array())) {
      const json params = item.value("params", json::object());
      const json step = batch_item_answer("anthropic", params.value("model", ""), params);
      const json result = step.value("status", 200) == 200
                              ? json{{"type", "succeeded"}, {"message", step["body"]}}
                              : json{{"type", "errored"}, {"error", step["body"]}};
      lines += json{{"custom_id", item.value("custom_id", "")}, {"result", result}}.dump() + "\n";
    }
    const std::string id = fmt::format("msgbatch_fake{:04}", ++m_batch_submissions);
    {
      std::lock_guard<std::mutex> guard(m_lock);
      m_batches[id] = {"anthropic", lines, 0};
    }
    s.set_content(json{{"id", id}, {"type", "message_batch"}, {"processing_status", "in_progress"}}.dump(),
                  "application/json");
  });
  m_server->Get(R"(/v1/messages/batches/([^/]+))", [this](const httplib::Request& q, httplib::Response& s) {
    std::lock_guard<std::mutex> guard(m_lock);
    const auto it = m_batches.find(q.matches[1]);
    if (it == m_batches.end()) {
      s.status = 404;
      return s.set_content(R"({"type":"error","error":{"type":"not_found_error","message":"no such batch"}})",
                           "application/json");
    }
    ++m_batch_poll_count;
    const bool ended = ++it->second.polls >= m_batch_polls_needed;
    json body{
        {"id", it->first}, {"type", "message_batch"}, {"processing_status", ended ? "ended" : "in_progress"}};
    body["results_url"] =
        ended ? json(base_url("anthropic") + "/v1/messages/batches/" + it->first + "/results") : json();
    s.set_content(body.dump(), "application/json");
  });
  m_server->Get(R"(/v1/messages/batches/([^/]+)/results)",
                [this](const httplib::Request& q, httplib::Response& s) {
                  std::lock_guard<std::mutex> guard(m_lock);
                  const auto it = m_batches.find(q.matches[1]);
                  s.set_content(it == m_batches.end() ? "" : it->second.lines, "application/binary");
                });
  m_server->Post("/v1/files", [this](const httplib::Request& q, httplib::Response& s) {
    if (!q.has_file("file") || q.get_file_value("purpose").content != "batch") {
      s.status = 400;
      return s.set_content(
          R"({"error":{"message":"a file with purpose batch is expected","type":"invalid_request_error"}})",
          "application/json");
    }
    std::lock_guard<std::mutex> guard(m_lock);
    const std::string id = fmt::format("file-fake{:04}", m_files.size() + 1);
    m_files[id] = q.get_file_value("file").content;
    s.set_content(json{{"id", id}, {"object", "file"}, {"purpose", "batch"}}.dump(), "application/json");
  });
  m_server->Post("/v1/batches", [this](const httplib::Request& q, httplib::Response& s) {
    const json request = json::parse(q.body, nullptr, false);
    std::string input;
    {
      std::lock_guard<std::mutex> guard(m_lock);
      const auto it = m_files.find(request.value("input_file_id", ""));
      if (it != m_files.end()) input = it->second;
    }
    std::istringstream in(input);
    std::string lines;
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      const json item = json::parse(line, nullptr, false);
      if (item.is_discarded()) continue;
      const std::string provider = item.value("url", "") == "/v1/responses" ? "openai-responses" : "openai";
      const json body = item.value("body", json::object());
      const json step = batch_item_answer(provider, body.value("model", ""), body);
      const json response{{"status_code", step.value("status", 200)},
                          {"request_id", fmt::format("req_batch{}", ++n)},
                          {"body", step["body"]}};
      lines += json{{"id", fmt::format("batch_req_{}", n)},
                    {"custom_id", item.value("custom_id", "")},
                    {"response", response},
                    {"error", nullptr}}
                   .dump() +
               "\n";
    }
    const std::string id = fmt::format("batch_fake{:04}", ++m_batch_submissions);
    {
      std::lock_guard<std::mutex> guard(m_lock);
      m_batches[id] = {"openai", lines, 0};
    }
    s.set_content(json{{"id", id},
                       {"object", "batch"},
                       {"endpoint", request.value("endpoint", "")},
                       {"status", "validating"}}
                      .dump(),
                  "application/json");
  });
  m_server->Get(R"(/v1/batches/([^/]+))", [this](const httplib::Request& q, httplib::Response& s) {
    std::lock_guard<std::mutex> guard(m_lock);
    const auto it = m_batches.find(q.matches[1]);
    if (it == m_batches.end()) {
      s.status = 404;
      return s.set_content(R"({"error":{"message":"No batch found","type":"invalid_request_error"}})",
                           "application/json");
    }
    ++m_batch_poll_count;
    const bool ended = ++it->second.polls >= m_batch_polls_needed;
    json body{{"id", it->first}, {"object", "batch"}, {"status", ended ? "completed" : "in_progress"}};
    if (ended) {
      const std::string out = "file-out-" + it->first;
      m_files[out] = it->second.lines;
      body["output_file_id"] = out;
    }
    s.set_content(body.dump(), "application/json");
  });
  // Gemini: the requests inlined, an Operation polled until done, the answers inlined in request order
  // (without their metadata, as the API may return them).
  m_server->Post(R"(/v1beta/models/([^/:]+):batchGenerateContent)", [this](const httplib::Request& q,
                                                                           httplib::Response& s) {
    const json request = json::parse(q.body, nullptr, false);
    json answers = json::array();
    const json items =
        request.is_object() ? request["batch"]["inputConfig"]["requests"]["requests"] : json::array();
    for (const json& item : items) {
      // The item's model is the URL's.
      const json step =
          batch_item_answer("gemini", q.matches[1].str(), item.value("request", json::object()));
      answers.push_back(step.value("status", 200) == 200 ? json{{"response", step["body"]}}
                                                         : json{{"error", step["body"]["error"]}});
    }
    const std::string id = fmt::format("batches/fake{:04}", ++m_batch_submissions);
    {
      std::lock_guard<std::mutex> guard(m_lock);
      m_batches[id] = {"gemini", answers.dump(), 0};
    }
    s.set_content(json{{"name", id}, {"metadata", {{"state", "BATCH_STATE_PENDING"}}}}.dump(),
                  "application/json");
  });
  m_server->Get(R"(/v1beta/(batches/[^/]+))", [this](const httplib::Request& q, httplib::Response& s) {
    std::lock_guard<std::mutex> guard(m_lock);
    const auto it = m_batches.find(q.matches[1]);
    if (it == m_batches.end()) {
      s.status = 404;
      return s.set_content(R"({"error":{"code":404,"message":"batch not found","status":"NOT_FOUND"}})",
                           "application/json");
    }
    ++m_batch_poll_count;
    const bool ended = ++it->second.polls >= m_batch_polls_needed;
    json op{{"name", it->first},
            {"done", ended},
            {"metadata", {{"state", ended ? "BATCH_STATE_SUCCEEDED" : "BATCH_STATE_RUNNING"}}}};
    if (ended)
      op["response"] = {
          {"@type", "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput"},
          {"inlinedResponses", {{"inlinedResponses", json::parse(it->second.lines)}}}};
    s.set_content(op.dump(), "application/json");
  });
  m_server->Get(R"(/v1/files/([^/]+)/content)", [this](const httplib::Request& q, httplib::Response& s) {
    std::lock_guard<std::mutex> guard(m_lock);
    const auto it = m_files.find(q.matches[1]);
    if (it == m_files.end()) {
      s.status = 404;
      return s.set_content(R"({"error":{"message":"No such File object","type":"invalid_request_error"}})",
                           "application/json");
    }
    s.set_content(it->second, "application/octet-stream");
  });
}

} // namespace kj::test
