// The price table: the shipped file loads, entries match by glob in file order, long-context tiers, and a
// broken file is refused with the field named.
#include "adapters/llm/prices.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

using namespace kj;
using namespace kj::test;

TEST_CASE("the shipped price table loads, carries its date and prices the models it names") {
  const auto table = llm::price_table::load(source_dir() / "adapters" / "prices.json");
  CHECK(table.date().size() == 10);
  CHECK_FALSE(table.entries().empty());
  for (const auto& e : table.entries()) {
    INFO(e.patterns[0]);
    CHECK_FALSE(e.source.empty());   // every price says where it comes from
    CHECK(e.checked.size() == 10);   // and when it was checked against it
    CHECK_FALSE(e.provider.empty()); // a row is for one provider's models
  }
  // The current models of each provider (issue 24), dated and dated models alike.
  for (const auto& [provider, model] :
       std::vector<std::pair<std::string, std::string>>{{"anthropic", "claude-opus-4-7"},
                                                        {"anthropic", "claude-sonnet-4-6"},
                                                        {"anthropic", "claude-haiku-4-5-20251001"},
                                                        {"gemini", "gemini-2.5-flash"},
                                                        {"gemini", "gemini-3-flash-preview"},
                                                        {"gemini", "gemini-3.1-pro-preview"},
                                                        {"openai", "gpt-5.5"},
                                                        {"openai", "gpt-5.4-mini"},
                                                        {"openai", "gpt-5"},
                                                        {"openai", "o3"},
                                                        {"openai", "o4-mini"}}) {
    INFO(model);
    CHECK(table.find(provider, model));
  }
  CHECK(table.find("openai", "gpt-5.4-mini")->base.input == Approx(0.75));     // not the gpt-5.4 row
  CHECK(table.find("gemini", "gemini-2.5-flash")->base.output == Approx(2.5)); // not gemini-2.5-pro's
  // Rows older than 90 days are the ones `kj costs` names.
  const auto stale = table.stale(90, "2027-06-01");
  CHECK(stale.size() == table.entries().size()); // by then every row is
  for (const auto& s : stale)
    CHECK(s.age_days > 90);
  CHECK(table.stale(90, "2026-12-04").empty()); // refreshed on 2026-12-04: none past 90 days
  CHECK(table.batch_factor() == Approx(0.5));   // the batch tier: half the standard price
  // Dated and undated ids; the more specific entry (opus 5.5) wins over the broader one (opus 5).
  const auto* opus55 = table.find("anthropic", "claude-opus-5-5");
  const auto* opus5 = table.find("anthropic", "claude-opus-5-20260724");
  REQUIRE(opus55);
  REQUIRE(opus5);
  CHECK(opus55->base.input == Approx(4.0));
  CHECK(opus5->base.input == Approx(5.0));
  CHECK(table.find("anthropic", "claude-sonnet-4-5-20250929"));
  CHECK(table.find("gemini", "gemini-3-pro-preview"));
  CHECK_FALSE(table.find("openai", "claude-opus-4-5")); // entries are for their provider
  CHECK_FALSE(table.find("openai", "Qwen/Qwen3-Coder-30B"));
}

TEST_CASE("cost is the four buckets at their prices, with the long-context tier above its threshold") {
  scratch_dir dir;
  write_file(dir / "p.json", R"({"date": "2026-01-02", "unit": "USD per 1M tokens", "models": [
    {"match": ["m-*"], "input": 2, "cache_read": 0.2, "cache_write": 2.5, "output": 10, "source": "test",
     "long_context": {"above_prompt_tokens": 1000, "input": 4, "cache_read": 0.4, "cache_write": 5, "output": 20}},
    {"match": ["m-*", "other"], "provider": "openai", "input": 99, "cache_read": 0, "cache_write": 0, "output": 0}]})");
  const auto table = llm::price_table::load(dir / "p.json");
  CHECK(table.date() == "2026-01-02");
  // 100 fresh, 200 cache read, 300 cache write (prompt 600 <= 1000), 50 out.
  const auto short_cost = table.cost("anthropic", "m-1", {100, 200, 300, 50});
  REQUIRE(short_cost);
  CHECK(*short_cost == Approx((100 * 2 + 200 * 0.2 + 300 * 2.5 + 50 * 10) / 1e6));
  // Prompt 1100 > 1000: every token at the long-context prices.
  const auto long_cost = table.cost("anthropic", "m-1", {600, 500, 0, 10});
  REQUIRE(long_cost);
  CHECK(*long_cost == Approx((600 * 4 + 500 * 0.4 + 10 * 20) / 1e6));
  // First match wins, whatever the provider of a later, narrower entry.
  CHECK(table.find("openai", "m-1")->base.input == Approx(2));
  CHECK(table.find("openai", "other")->base.input == Approx(99));
  CHECK_FALSE(table.cost("anthropic", "other", {1, 0, 0, 1}));
}

TEST_CASE("a broken price file is refused, naming the file and the field") {
  scratch_dir dir;
  const auto error_of = [&](const std::string& text) {
    write_file(dir / "bad.json", text);
    try {
      llm::price_table::load(dir / "bad.json");
    } catch (const llm::price_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("not json").find("the whole file: expected a JSON object") != std::string::npos);
  CHECK(error_of(R"({"unit": "USD per 1M tokens", "models": []})").find("date: expected") !=
        std::string::npos);
  CHECK(error_of(R"({"date": "2026-01-02", "unit": "USD per 1k tokens", "models": []})").find("unit") !=
        std::string::npos);
  const std::string negative = error_of(R"({"date": "2026-01-02", "unit": "USD per 1M tokens", "models": [
      {"match": ["x"], "input": -1, "cache_read": 0, "cache_write": 0, "output": 0}]})");
  CHECK(negative.find("bad.json: models[0].input: expected a non-negative number") != std::string::npos);
  CHECK(error_of(R"({"date": "2026-01-02", "unit": "USD per 1M tokens", "models": [{"input": 1}]})")
            .find("models[0].match") != std::string::npos);
  CHECK(error_of(R"({"date": "2026-01-02", "unit": "USD per 1M tokens", "models": [
      {"match": ["x"], "input": 1, "cache_read": 0, "cache_write": 0, "output": 0, "checked": "last week"}]})")
            .find("models[0].checked") != std::string::npos);
  CHECK_THROWS_AS(llm::price_table::load(dir / "missing.json"), llm::price_error);
}
