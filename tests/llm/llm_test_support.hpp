// Shared by the LLM tests: a client for the fake provider with fast retries, and an elapsed-time helper.
#pragma once

#include "adapters/llm/client.hpp"
#include "tests/fake_llm/fake_llm_server.hpp"
#include "tests/support/paths.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace kj::test {

inline std::filesystem::path llm_fixtures() {
  return fixtures_dir() / "llm";
}

// Retries fast (10 ms first backoff), three of them, and a 5 s limit per attempt.
inline llm::client_options fast_options() {
  llm::client_options o;
  o.retry.base_delay = std::chrono::milliseconds(10);
  o.retry.max_delay = std::chrono::milliseconds(100);
  o.retry.max_retries = 3;
  o.request_timeout = std::chrono::milliseconds(5000);
  o.connect_timeout = std::chrono::milliseconds(2000);
  return o;
}

inline std::unique_ptr<llm::client> client_for(const fake_llm_server& server, const std::string& provider,
                                               llm::client_options options = fast_options(),
                                               llm::exchange_log* log = nullptr,
                                               const llm::price_table* prices = nullptr,
                                               const std::string& key = "test-key-123") {
  return std::make_unique<llm::client>(llm::make_provider(provider, server.base_url(provider), key), options,
                                       log, prices);
}

inline llm::request ask(const std::string& model, const std::string& text = "Say hello.") {
  llm::request r;
  r.model = model;
  r.system = "You are terse.";
  r.messages.push_back(llm::message::user_text(text));
  r.max_tokens = 256;
  return r;
}

class stopwatch {
public:
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_start).count();
  }

private:
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

// `kj generate` against the fake provider's endpoint for `adapter`, into dir's kj.sqlite, with the test price
// table and short retries; `more` appended.
inline std::vector<std::string> generate_args(const fake_llm_server& server, const scratch_dir& dir,
                                              const std::string& adapter, const std::string& model,
                                              const std::vector<std::string>& more) {
  std::vector<std::string> args{"generate",
                                "--adapter",
                                adapter,
                                "--base-url",
                                server.base_url(adapter),
                                "--model",
                                model,
                                "--device",
                                "cpu",
                                "--db",
                                (dir / "kj.sqlite").string(),
                                "--prices",
                                (llm_fixtures() / "prices.json").string(),
                                "--retry-base",
                                "0.01"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

} // namespace kj::test
