// Context management: old tool outputs cut to their summary line, old file contents and thinking elided (the
// turn then re-encoded from its parts), the oldest turns dropped in (call, results) pairs, the latest kept.
#include "agent/context.hpp"
#include "tests/support/catch_compat.hpp"

using namespace kj;
using llm::message;
using llm::part;

namespace {

// A task, then `turns` x (assistant: thinking + write_file of a big file; user: a long tool result).
std::vector<message> conversation(int turns) {
  std::vector<message> m{message::user_text("KernelBench level 1 problem 2: the task")};
  for (int t = 1; t <= turns; ++t) {
    message a;
    a.who = llm::role::assistant;
    part thinking;
    thinking.type = part::kind::thinking;
    thinking.text = std::string(2000, 't');
    thinking.signature = "sig-" + std::to_string(t);
    a.parts.push_back(thinking);
    a.parts.push_back(part::make_tool_call("call" + std::to_string(t), "write_file",
                                           {{"path", "model_new.py"}, {"content", std::string(4000, 'c')}}));
    a.raw_provider = "anthropic"; // as the provider sent it: the same content in its own blocks
    a.raw = nlohmann::json::array(
        {{{"type", "thinking"}, {"thinking", thinking.text}, {"signature", thinking.signature}},
         {{"type", "tool_use"},
          {"id", "call" + std::to_string(t)},
          {"name", "write_file"},
          {"input", a.parts[1].arguments}}});
    message u;
    u.parts.push_back(part::make_tool_result("call" + std::to_string(t), "write_file",
                                             "verify abc: summary line " + std::to_string(t) + "\n" +
                                                 std::string(4000, 'r')));
    m.push_back(a);
    m.push_back(u);
  }
  return m;
}

} // namespace

TEST_CASE("below the threshold nothing changes") {
  agent::context_manager ctx({.window_tokens = 1'000'000});
  auto m = conversation(5);
  const auto before = m.size();
  CHECK(ctx.manage(m, "system").empty());
  CHECK(m.size() == before);
  CHECK(m[1].raw_provider == "anthropic");
}

TEST_CASE("above it, old results keep their summary line, old arguments and thinking go, the latest stay") {
  // 10 turns of ~10k characters each: ~30k tokens at 0.3 tokens per character; a 40k window manages at 24k.
  agent::context_manager ctx({.window_tokens = 40'000, .keep_turns = 3});
  auto m = conversation(10);
  const auto before = ctx.estimate(m, "system");
  const std::string note = ctx.manage(m, "system");
  INFO(note);
  CHECK(note.find("elided") != std::string::npos);
  CHECK(ctx.estimate(m, "system") < before);
  CHECK(ctx.estimate(m, "system") <= 24'000);
  // The oldest turn: its result is its summary plus a note, its call's content elided, its thinking gone, and
  // it is encoded from its parts now.
  CHECK(m[2].parts[0].text.starts_with("verify abc: summary line 1\n[kj: the rest of this output"));
  CHECK(m[1].parts.size() == 1);
  CHECK(m[1].parts[0].arguments["content"].get<std::string>().starts_with("[kj: 4000 characters elided"));
  CHECK(m[1].parts[0].arguments["path"] == "model_new.py");
  CHECK(m[1].raw.is_null());
  CHECK(m[1].raw_provider.empty());
  // The last three turns are whole.
  for (std::size_t i = m.size() - 6; i < m.size(); ++i) {
    INFO(i);
    if (m[i].who == llm::role::assistant)
      CHECK(m[i].raw_provider == "anthropic");
    else
      CHECK(m[i].parts[0].text.size() > 4000);
  }
}

TEST_CASE("when eliding is not enough, the oldest (call, results) pairs are dropped and the task says so") {
  agent::context_manager ctx({.window_tokens = 8'000, .keep_turns = 2});
  auto m = conversation(8);
  const std::string note = ctx.manage(m, "system");
  INFO(note);
  CHECK(note.find("turns dropped") != std::string::npos);
  CHECK(note.find(" 0 old turns dropped") == std::string::npos);
  REQUIRE(m.size() >= 5);
  CHECK(m.size() % 2 == 1); // the task, then whole pairs
  CHECK(m[0].parts.back().text.find("earlier turns were dropped") != std::string::npos);
  for (std::size_t i = 1; i < m.size(); i += 2) {
    REQUIRE(m[i].who == llm::role::assistant);
    REQUIRE(m[i + 1].who == llm::role::user);
    CHECK(m[i].parts.back().call_id == m[i + 1].parts[0].call_id); // every result keeps its call
  }
  CHECK(m[m.size() - 1].parts[0].call_id == "call8");
}

TEST_CASE("the estimate learns tokens per character from a call's reported prompt size") {
  agent::context_manager ctx({});
  const auto m = conversation(2);
  const auto guess = ctx.estimate(m, "system");
  ctx.observe(m, "system", guess / 2);
  CHECK(ctx.estimate(m, "system") == Approx(guess / 2).margin(2));
  REQUIRE(ctx.provider_request());
  CHECK(ctx.provider_request()->trigger_tokens == 64'000);
  agent::context_manager off({.provider_editing = false});
  CHECK_FALSE(off.provider_request());
}
