// Implements the fake LLM provider over cpp-httplib: scenario steps from fixtures, answers from a folder.
#include "tests/fake_llm/fake_llm_server.hpp"

#include "tests/fake_llm/event_stream.hpp"
#include "tests/fake_llm/request_schema.hpp"
#include "tests/fake_llm/scripted.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <fmt/core.h>
#include <fstream>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace kj::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& file) {
  json doc = json::parse(read_text(file), nullptr, false);
  if (doc.is_discarded() || !doc.contains("steps") || !doc["steps"].is_array() || doc["steps"].empty())
    throw std::runtime_error("fake LLM server: " + file.string() + " is not a scenario ({\"steps\": [...]})");
  return doc;
}

std::int64_t word_count(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  std::int64_t n = 0;
  while (in >> word)
    ++n;
  return n;
}

// Replaces placeholders in every string of `value`: whole-string numeric ones by numbers, others as text.
void fill(json& value, const std::map<std::string, std::string>& texts,
          const std::map<std::string, std::int64_t>& numbers) {
  if (value.is_object() || value.is_array()) {
    for (auto& child : value)
      fill(child, texts, numbers);
  } else if (value.is_string()) {
    std::string s = value.get<std::string>();
    if (const auto it = numbers.find(s); it != numbers.end()) {
      value = it->second;
      return;
    }
    for (const auto& [key, replacement] : texts)
      for (std::size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + replacement.size()))
        s.replace(at, key.size(), replacement);
    value = s;
  }
}

// Sends `body` with `status`: as its provider's event stream when the request asked for one and the answer
// is a success, else as JSON.
void send(const received_request& r, int status, const json& body, httplib::Response& res) {
  res.status = status;
  if (r.streamed && status >= 200 && status < 300)
    res.set_content(event_stream_of(r.provider, body), "text/event-stream");
  else
    res.set_content(body.dump(), "application/json");
}

// A 400 in the provider's documented error shape.
json invalid_request(const std::string& provider, const std::string& message) {
  if (provider == "anthropic")
    return {{"type", "error"}, {"error", {{"type", "invalid_request_error"}, {"message", message}}}};
  if (provider == "gemini")
    return {{"error", {{"code", 400}, {"message", message}, {"status", "INVALID_ARGUMENT"}}}};
  return {{"error",
           {{"message", message}, {"type", "invalid_request_error"}, {"param", nullptr}, {"code", nullptr}}}};
}

// One recorded step: explicit events (a documented stream), a body (streamed when asked for), a body as
// raw text, or a body cut off after some bytes.
void serve_step(const received_request& r, const json& step, httplib::Response& res) {
  res.status = step.value("status", 200);
  if (step.contains("headers"))
    for (const auto& [name, value] : step["headers"].items())
      res.set_header(name, value.get<std::string>());
  if (step.contains("events")) return res.set_content(event_stream_text(step["events"]), "text/event-stream");
  if (step.contains("body") && !step.contains("truncate_after"))
    return send(r, res.status, step["body"], res);
  const std::string body =
      step.contains("body_text") ? step["body_text"].get<std::string>() : step["body"].dump();
  if (step.contains("truncate_after")) { // announce the whole body, send a part, close the connection
    const std::size_t sent = std::min<std::size_t>(step["truncate_after"].get<std::size_t>(), body.size());
    res.set_content_provider(body.size(), "application/json",
                             [body, sent](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                               if (offset == 0) sink.write(body.data(), sent);
                               return false;
                             });
    return;
  }
  res.set_content(body, "application/json");
}

} // namespace

fake_llm_server::fake_llm_server(fs::path fixtures, fs::path answers, fs::path scripts, bool documented)
    : m_fixtures(std::move(fixtures)), m_answers(std::move(answers)), m_scripts(std::move(scripts)),
      m_documented(documented), m_server(std::make_unique<httplib::Server>()) {
  m_server->Post("/v1/messages",
                 [this](const httplib::Request& q, httplib::Response& s) { handle("anthropic", q, s); });
  m_server->Post(R"(/v1beta/models/([^/:]+):(generateContent|streamGenerateContent))",
                 [this](const httplib::Request& q, httplib::Response& s) { handle("gemini", q, s); });
  m_server->Post("/v1/chat/completions",
                 [this](const httplib::Request& q, httplib::Response& s) { handle("openai", q, s); });
  m_server->Post("/v1/responses", [this](const httplib::Request& q, httplib::Response& s) {
    handle("openai-responses", q, s);
  });
  add_batch_routes();
  m_server->Get("/_kj/requests", [this](const httplib::Request&, httplib::Response& s) {
    json list = json::array();
    for (const auto& r : requests())
      list.push_back({{"provider", r.provider},
                      {"model", r.model},
                      {"path", r.path},
                      {"headers", r.headers},
                      {"body", r.body},
                      {"streamed", r.streamed},
                      {"violations", r.violations}});
    s.set_content(list.dump(), "application/json");
  });
  m_port = m_server->bind_to_any_port("127.0.0.1");
  if (m_port <= 0) throw std::runtime_error("fake LLM server: cannot bind a port on 127.0.0.1");
  m_thread = std::thread([this] { m_server->listen_after_bind(); });
  // stop() before the listening loop has started would be lost, and the destructor would wait forever.
  for (int i = 0; i < 5000 && !m_server->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!m_server->is_running()) {
    m_server->stop();
    m_thread.detach(); // it never started listening; nothing of ours is left to it
    throw std::runtime_error("fake LLM server: the listening thread did not start");
  }
}

fake_llm_server::~fake_llm_server() {
  m_stopping = true;
  m_stop_signal.notify_all();
  m_server->stop();
  if (m_thread.joinable()) m_thread.join();
}

std::string fake_llm_server::base_url(const std::string& provider) const {
  return fmt::format("http://127.0.0.1:{}{}", m_port, provider.starts_with("openai") ? "/v1" : "");
}

std::vector<received_request> fake_llm_server::requests() const {
  std::lock_guard<std::mutex> guard(m_lock);
  return m_requests;
}

std::size_t fake_llm_server::count(const std::string& model) const {
  std::lock_guard<std::mutex> guard(m_lock);
  return static_cast<std::size_t>(std::count_if(m_requests.begin(), m_requests.end(),
                                                [&](const received_request& r) { return r.model == model; }));
}

std::vector<std::string> fake_llm_server::violations() const {
  std::lock_guard<std::mutex> guard(m_lock);
  std::vector<std::string> out;
  for (const auto& r : m_requests)
    for (const auto& v : r.violations)
      out.push_back(fmt::format("{} {}: {}", r.provider, r.model, v));
  return out;
}

bool fake_llm_server::reject_undocumented(const received_request& r, httplib::Response& res) const {
  if (r.violations.empty()) return false;
  std::string message = "kj fake provider (documentation mode): the request is not what the API reference "
                        "documents:";
  for (const auto& v : r.violations)
    message += "\n  " + v;
  send(r, 400, invalid_request(r.provider, message), res);
  return true;
}

void fake_llm_server::answer_scripted(const received_request& r, httplib::Response& res) const {
  scripted_answer answer;
  try {
    answer = scripted_reply(r.provider, r.model, json::parse(r.body), m_scripts);
  } catch (const std::exception& e) { // a broken script: the test sees the reason in kj's error
    answer = {500, {{"error", {{"type", "api_error"}, {"message", std::string("script: ") + e.what()}}}}};
  }
  send(r, answer.status, answer.body, res);
}

void fake_llm_server::wait(int milliseconds) {
  std::unique_lock<std::mutex> guard(m_lock);
  m_stop_signal.wait_for(guard, std::chrono::milliseconds(milliseconds),
                         [this] { return m_stopping.load(); });
}

void fake_llm_server::handle(const std::string& provider, const httplib::Request& req,
                             httplib::Response& res) {
  received_request r{provider, "", req.path, {}, req.body};
  r.at_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_started).count();
  for (const auto& [name, value] : req.headers) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    r.headers[lower] = value;
  }
  const json request = json::parse(req.body, nullptr, false);
  if (provider == "gemini") {
    r.model = req.matches[1];
    r.streamed = req.matches[2] == "streamGenerateContent" && req.get_param_value("alt") == "sse";
  } else if (request.is_object()) {
    r.model = request.value("model", "");
    r.streamed = request.contains("stream") && request["stream"] == true;
  }
  if (m_documented)
    r.violations = request.is_object() ? request_violations(m_fixtures, provider, r.model, request)
                                       : std::vector<std::string>{"the body is not a JSON object"};
  std::size_t index = 0;
  {
    std::lock_guard<std::mutex> guard(m_lock);
    m_requests.push_back(r);
    index = m_counts[provider + "/" + r.model]++;
  }
  if (reject_undocumented(r, res)) return;
  const fs::path scenario = m_fixtures / provider / (r.model + ".json");
  if (!fs::is_regular_file(scenario)) {
    if (!m_scripts.empty() && request.is_object() && request.contains("tools"))
      return answer_scripted(r, res);
    if (!m_answers.empty()) return answer_from_folder(provider, r, res);
    res.status = 404;
    res.set_content(json{{"error", {{"type", "not_found_error"}, {"message", "model: " + r.model}}}}.dump(),
                    "application/json");
    return;
  }
  const json doc = read_json(scenario);
  json step = doc["steps"][std::min(index, doc["steps"].size() - 1)];
  // {{API_KEY}}: the key the request carried, for scenarios of a server that quotes it back.
  std::string key = r.headers.count("x-api-key") ? r.headers.at("x-api-key") : "";
  if (r.headers.count("x-goog-api-key")) key = r.headers.at("x-goog-api-key");
  if (r.headers.count("authorization")) key = r.headers.at("authorization").substr(7); // "Bearer "
  fill(step, {{"{{API_KEY}}", key}}, {});
  if (step.contains("delay_ms")) wait(step["delay_ms"].get<int>());
  serve_step(r, step, res);
}

void fake_llm_server::answer_from_folder(const std::string& provider, const received_request& r,
                                         httplib::Response& res) {
  serve_step(r, folder_step(provider, r), res);
}

json fake_llm_server::folder_step(const std::string& provider, const received_request& r) {
  static const std::regex problem(R"(KernelBench level (\d+) problem (\d+))");
  std::smatch m;
  if (!std::regex_search(r.body, m, problem))
    return {{"status", 400},
            {"body",
             {{"error", {{"type", "invalid_request_error"}, {"message", "no KernelBench problem named"}}}}}};
  std::size_t sample = 0, id = 0;
  {
    std::lock_guard<std::mutex> guard(m_lock);
    sample = m_counts[fmt::format("{}/L{}P{}", provider, m[1].str(), m[2].str())]++;
    id = m_requests.size();
  }
  const fs::path file =
      m_answers / fmt::format("level_{}_problem_{}_sample_{}_kernel.py", m[1].str(), m[2].str(), sample);
  std::string text = "I could not find a faster formulation of this program, so I have no code to offer.";
  if (fs::is_regular_file(file)) {
    std::string code = read_text(file);
    if (!code.ends_with("\n")) code += "\n";
    text = "Here is a replacement with a hand-written kernel.\n\n```python\n" + code + "```\n";
  }
  const std::int64_t prompt_tokens = word_count(r.body);
  const std::int64_t cached = sample > 0 ? prompt_tokens / 2 : 0; // later samples hit the prefix cache
  json step = read_json(m_fixtures / provider / "_answer.json")["steps"][0];
  fill(step, {{"{{TEXT}}", text}, {"{{MODEL}}", r.model}, {"{{ID}}", fmt::format("fake{:06}", id)}},
       {{"{{PROMPT_TOKENS}}", prompt_tokens},
        {"{{UNCACHED_TOKENS}}", prompt_tokens - cached},
        {"{{CACHED_TOKENS}}", cached},
        {"{{COMPLETION_TOKENS}}", word_count(text)}});
  return step;
}

} // namespace kj::test
