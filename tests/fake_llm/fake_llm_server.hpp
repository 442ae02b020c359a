// A fake LLM provider on 127.0.0.1 for the tests: it speaks the Anthropic, Gemini and OpenAI wire formats
// from fixtures transcribed from the providers' documentation (tests/fixtures/llm), and in "answers" mode
// replies to kerneljudge's own prompt with the candidate files of a folder, so that `kj run --adapter ...`
// can be exercised end to end offline; in "scripts" mode it plays the built-in agent's model turn by turn
// (`kj agent` offline). In documentation mode (the default) it checks every request against the provider's
// documented request schema and rules and answers a violation as the real server would, with a 400; a
// request that asks for a stream gets its answer as the provider's server-sent events.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
struct Request;
struct Response;
} // namespace httplib

namespace kj::test {

struct received_request {
  std::string provider; // anthropic, gemini, openai (chat completions), openai-responses (/v1/responses)
  std::string model;
  std::string path;
  std::map<std::string, std::string> headers; // lower-case names
  std::string body;
  bool streamed = false;               // the request asked for server-sent events
  std::vector<std::string> violations; // of the documented request schema and rules (documentation mode)
  double at_ms = 0;                    // [ms] when it arrived, since the server started (pacing tests)
};

class fake_llm_server {
public:
  // Scenarios: a request whose model is `<name>` is answered from `fixtures/<provider>/<name>.json`, one step
  // per request (the last step repeats). Any other model is answered from `answers` (when given): the
  // candidate file level_L_problem_N_sample_K_kernel.py for the K-th request naming "level L problem N", or a
  // reply without code when there is no such file.
  // With `scripts` (tests/fixtures/agent), a request that carries tools and has no scenario is answered by
  // the built-in agent's scripts (tests/fake_llm/scripted.hpp).
  explicit fake_llm_server(std::filesystem::path fixtures, std::filesystem::path answers = {},
                           std::filesystem::path scripts = {}, bool documented = true);
  ~fake_llm_server();
  fake_llm_server(const fake_llm_server&) = delete;
  fake_llm_server& operator=(const fake_llm_server&) = delete;

  int port() const { return m_port; }
  // The base URL each adapter takes with --base-url: the host for anthropic and gemini, host + /v1 for
  // openai.
  std::string base_url(const std::string& provider) const;
  std::vector<received_request> requests() const;
  // Batches (Anthropic Message Batches, OpenAI Batch API): one ends after this many polls (default 2).
  void set_batch_polls(int polls) { m_batch_polls_needed = polls; }
  std::size_t batch_submissions() const { return m_batch_submissions; }
  std::size_t batch_polls() const { return m_batch_poll_count; }
  std::size_t count(const std::string& model) const; // requests received for a model
  // Every violation of the documented request shapes received so far, as "<provider> <model>: <what>".
  std::vector<std::string> violations() const;

private:
  void handle(const std::string& provider, const httplib::Request& req, httplib::Response& res);
  bool reject_undocumented(const received_request& r, httplib::Response& res) const;
  void answer_scripted(const received_request& r, httplib::Response& res) const;
  void answer_from_folder(const std::string& provider, const received_request& r, httplib::Response& res);
  // The answers mode's step for a request: {"status", "body", ...}; a 400 step when no problem is named.
  nlohmann::json folder_step(const std::string& provider, const received_request& r);
  void add_batch_routes(); // fake_batches.cpp
  // A batch item as a request of its own: recorded, checked in documentation mode, answered from the folder.
  nlohmann::json batch_item_answer(const std::string& provider, const std::string& model,
                                   const nlohmann::json& body);
  void wait(int milliseconds);

  std::filesystem::path m_fixtures, m_answers, m_scripts;
  std::chrono::steady_clock::time_point m_started = std::chrono::steady_clock::now();
  bool m_documented = true;
  std::unique_ptr<httplib::Server> m_server;
  std::thread m_thread;
  int m_port = 0;
  mutable std::mutex m_lock;
  std::vector<received_request> m_requests;
  std::map<std::string, std::size_t> m_counts; // by provider/model, and by provider/"L<l>P<n>" in answer mode
  struct fake_batch {
    std::string provider; // anthropic, openai or gemini
    std::string lines;    // the answers' JSONL (Gemini: their JSON array)
    int polls = 0;
  };
  std::map<std::string, fake_batch> m_batches;
  std::map<std::string, std::string> m_files; // OpenAI files by id
  std::atomic<int> m_batch_polls_needed{2};
  std::atomic<std::size_t> m_batch_submissions{0}, m_batch_poll_count{0};
  std::condition_variable m_stop_signal;
  std::atomic<bool> m_stopping{false};
};

} // namespace kj::test
