// Record and replay through the DB: every exchange stored without secrets and keyed by its request content;
// a replay answers offline with the same replies; a request not recorded is a clear error.
#include "db/store.hpp"
#include "llm_test_support.hpp"
#include "tests/support/catch_compat.hpp"

using namespace kj;
using namespace kj::test;

namespace {

struct recorded_store {
  scratch_dir dir;
  db::store store = db::store::open(dir / "kj.sqlite");
  std::int64_t run = store.create_run({"rec", "", "running", "cpu", "kj test", "0", "{}", 0});
  std::mutex lock;
};

} // namespace

TEST_CASE("exchanges are recorded whole, without the key, and replayed offline") {
  fake_llm_server server(llm_fixtures());
  recorded_store db;
  const auto prices = llm::price_table::load(source_dir() / "adapters" / "prices.json");
  auto live = llm::store_exchange_log::live(db.store, db.lock, db.run);
  auto c = client_for(server, "anthropic", fast_options(), &live, &prices, "sk-ant-SECRET-KEY");
  const auto request = ask("rate_limited");
  const auto first = c->complete(request, {"L1/1 sample 0", 0});
  const auto second = c->complete(ask("success"), {"L1/1 sample 1", 1});
  CHECK(first.exchange_id > 0);
  CHECK_FALSE(first.replayed);
  CHECK_FALSE(first.cost_usd); // "rate_limited" is not a priced model

  const std::string body = llm::make_provider("anthropic", "http://x", "k")->encode(request).body.dump();
  const auto x =
      db.store.find_llm_exchange(db.run, llm::request_hash("anthropic", "rate_limited", body), 0, true);
  REQUIRE(x);
  CHECK(x->ok);
  CHECK(x->attempts == 2);
  CHECK(nlohmann::json::parse(x->attempts_json)[0]["status"] == 429);
  CHECK(x->request_id == "req_018EeWyXxfu5pfWkrYcMdjWG");
  CHECK(x->input_tokens == 21);
  CHECK(x->cache_write_tokens == 1536);
  CHECK(x->endpoint == server.base_url("anthropic") + "/v1/messages");
  CHECK(x->request_json.find("sk-ant-SECRET-KEY") == std::string::npos);
  CHECK(x->response_body.find("Hello") != std::string::npos);

  // Replay: no key, no network; the same replies; the server is not asked again.
  const std::size_t asked = server.requests().size();
  auto replay_log = llm::store_exchange_log::replay(db.store, db.lock, db.run);
  auto options = fast_options();
  options.replay_only = true;
  llm::client replay(llm::make_provider("anthropic", "", "", true), options, &replay_log, &prices);
  const auto again = replay.complete(request, {"L1/1 sample 0", 0});
  CHECK(again.replayed);
  CHECK(again.text() == first.text());
  CHECK(again.request_id == first.request_id);
  CHECK(again.tokens.cache_read == first.tokens.cache_read);
  CHECK(replay.complete(ask("success"), {"L1/1 sample 1", 1}).text() == second.text());
  CHECK(server.requests().size() == asked);
  try {
    replay.complete(ask("success", "another question"), {"L1/2 sample 0", 0});
    FAIL("an unrecorded request was answered");
  } catch (const llm::llm_error& e) {
    CHECK(e.kind() == llm::error_kind::not_recorded);
    CHECK(std::string(e.what()).find("the recording has no answer to this request (L1/2 sample 0") !=
          std::string::npos);
  }
  // The same request with another sample number is another question too.
  CHECK_THROWS_AS(replay.complete(ask("success"), {"L1/1 sample 5", 5}), llm::llm_error);
}

TEST_CASE("failed exchanges are recorded too: a replay fails the same way, a resumed live run asks again") {
  fake_llm_server server(llm_fixtures());
  recorded_store db;
  auto live = llm::store_exchange_log::live(db.store, db.lock, db.run);
  auto c = client_for(server, "openai", fast_options(), &live, nullptr, "sk-openai-SECRET");
  CHECK_THROWS_AS(c->complete(ask("unauthorized"), {"", 0}), llm::llm_error);
  auto replay_log = llm::store_exchange_log::replay(db.store, db.lock, db.run);
  auto options = fast_options();
  options.replay_only = true;
  llm::client replay(llm::make_provider("openai", "", ""), options, &replay_log, nullptr);
  try {
    replay.complete(ask("unauthorized"), {"", 0});
    FAIL("the recorded failure was not replayed");
  } catch (const llm::llm_error& e) {
    CHECK(e.kind() == llm::error_kind::auth);
    CHECK(std::string(e.what()).find("HTTP 401 invalid_request_error: Incorrect API key provided.") !=
          std::string::npos);
  }
  // A resumed live run reuses its successful exchanges and asks again for failed ones.
  c->complete(ask("success"), {"", 0});
  const std::size_t asked = server.requests().size();
  CHECK(c->complete(ask("success"), {"", 0}).replayed);
  CHECK(server.requests().size() == asked);
  CHECK_THROWS_AS(c->complete(ask("unauthorized"), {"", 0}), llm::llm_error);
  CHECK(server.requests().size() == asked + 1);
}
