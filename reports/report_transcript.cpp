// The agent trajectory section of an evaluation page: the transcript behind a `kj agent` result, rendered
// from agent_trajectories, agent_turns and agent_tool_calls. Everything the model wrote is escaped.
#include "reports/html.hpp"
#include "reports/report_sections.hpp"

#include <fmt/format.h>

namespace kj::reports::detail {

namespace {

constexpr std::size_t k_max_block =
    20'000; // characters of one argument or result shown; kj show --full has all

std::string block(const std::string& text) {
  if (text.size() <= k_max_block) return "<pre>" + html::escape(text) + "</pre>\n";
  return "<pre>" + html::escape(text.substr(0, k_max_block)) +
         fmt::format(
             "</pre>\n<p class=\"muted\">{} more characters: <code>kj show trajectory --full</code></p>\n",
             text.size() - k_max_block);
}

std::string money(const std::optional<double>& usd) {
  return usd ? fmt::format("${:.4f}", *usd) : std::string("no price");
}

std::string header(const db::trajectory_record& t) {
  const std::int64_t tokens = t.input_tokens + t.cache_read_tokens + t.cache_write_tokens + t.output_tokens;
  std::string out = fmt::format(
      "<p class=\"prov\">Trajectory {} (table <code>agent_trajectories</code>), attempt {} of "
      "<code>{}</code>: this evaluation is its re-measurement in a fresh worker on fresh inputs.</p>\n<table>"
      "<tr><th class=\"l\">ended</th><td class=\"l\">{} ({}) after {} turns, {:.1f} s</td></tr>"
      "<tr><th class=\"l\">tokens, cost</th><td class=\"l\">{} ({} input, {} cache read, {} cache write, {} "
      "output), {}</td></tr>",
      t.id, t.attempt, html::escape(t.producer), html::escape(t.status), html::escape(t.stop_detail), t.turns,
      t.wall_s, tokens, t.input_tokens, t.cache_read_tokens, t.cache_write_tokens, t.output_tokens,
      money(t.cost_usd));
  out += fmt::format("<tr><th class=\"l\">selected</th><td class=\"l\">{}</td></tr>",
                     t.selected_candidate_id
                         ? fmt::format("candidate {} (in-loop evaluation {})", t.selected_candidate_id,
                                       t.selected_evaluation_id)
                         : std::string("none passed both verdicts: the final version was re-measured"));
  out += fmt::format("<tr><th class=\"l\">speedup vs {}</th><td class=\"l\">{} in the loop, {} re-measured{}"
                     "</td></tr></table>\n",
                     html::escape(t.speedup_baseline), html::ratio(t.inloop_speedup),
                     html::ratio(t.remeasured_speedup),
                     t.inflation() ? fmt::format("; selection inflated it {:.2f}x", *t.inflation()) : "");
  return out;
}

std::string turn_html(const db::turn_record& turn, const std::vector<db::tool_call_record>& calls) {
  std::string out = fmt::format(
      "<h3>turn {}</h3>\n<p class=\"muted\">{} in + {} cached, {} out; {}; {:.1f} s; stop {}</p>\n",
      turn.turn, turn.input_tokens, turn.cache_read_tokens + turn.cache_write_tokens, turn.output_tokens,
      money(turn.cost_usd), turn.latency_ms / 1000, html::escape(turn.stop_reason));
  if (!turn.user_note.empty()) out += "<p><b>kj:</b> " + html::escape(turn.user_note) + "</p>\n";
  if (!turn.context_note.empty()) out += "<p class=\"muted\">[" + html::escape(turn.context_note) + "]</p>\n";
  if (!turn.thinking.empty())
    out += "<details><summary>thinking</summary>" + block(turn.thinking) + "</details>\n";
  if (!turn.text.empty()) out += block(turn.text);
  for (const auto& c : calls)
    out += fmt::format(
        "<details><summary><code>{}</code>{}: {}</summary>\n<p class=\"muted\">arguments</p>\n{}"
        "<p class=\"muted\">result ({:.1f} s{})</p>\n{}</details>\n",
        html::escape(c.tool), c.is_error ? " (error)" : "", html::escape(c.summary), block(c.arguments_json),
        c.seconds, c.evaluation_id ? fmt::format(", evaluation {}", c.evaluation_id) : "", block(c.result));
  return out;
}

} // namespace

std::string trajectory_section(const db::store& store, std::int64_t evaluation_id) {
  const auto id = store.trajectory_of_result(evaluation_id);
  if (!id) return "";
  const auto transcript = store.get_transcript(*id);
  if (!transcript) return "";
  const db::trajectory_record& t = transcript->trajectory;
  std::string out = header(t);
  out +=
      fmt::format("<details><summary>system prompt ({} characters)</summary>{}</details>\n"
                  "<details><summary>task ({} characters)</summary>{}</details>\n",
                  t.system_prompt.size(), block(t.system_prompt), t.task_prompt.size(), block(t.task_prompt));
  for (std::size_t i = 0; i < transcript->turns.size(); ++i)
    out += turn_html(transcript->turns[i], transcript->calls[i]);
  return out;
}

} // namespace kj::reports::detail
