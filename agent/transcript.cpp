// Implements the text views: trajectory lines and tables, transcripts, one evaluation.
#include "agent/transcript.hpp"

#include "agent/feedback.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kj::agent {
namespace {

std::string problem_label(const db::store& store, std::int64_t problem_id) {
  const auto p = store.get_problem(problem_id);
  return p ? fmt::format("L{} {}", p->level, p->file_name) : fmt::format("problem {}", problem_id);
}

std::string candidate_label(const db::store& store, std::int64_t candidate_id) {
  const auto c = store.get_candidate(candidate_id);
  return c ? fmt::format("candidate {} ({})", candidate_id, c->source_hash.substr(0, 8))
           : fmt::format("candidate {}", candidate_id);
}

std::string speedup_text(const std::optional<double>& s) {
  return s ? fmt::format("{:.2f}x", *s) : std::string("-");
}

std::string first_lines(const std::string& text, std::size_t lines) {
  std::istringstream in(text);
  std::string out;
  std::size_t n = 0, total = 0;
  for (std::string line; std::getline(in, line); ++total)
    if (n < lines) {
      out += "    " + line + "\n";
      ++n;
    }
  if (total > n) out += fmt::format("    [... {} more lines; --full shows them]\n", total - n);
  return out;
}

std::string indent(const std::string& text) {
  return first_lines(text, std::string::npos);
}

} // namespace

std::string trajectory_line(const db::trajectory_record& t, const std::string& label) {
  std::string line =
      fmt::format("{} attempt {}: {} after {} turns, {} tokens, {}", label, t.attempt, t.status, t.turns,
                  t.input_tokens + t.cache_read_tokens + t.cache_write_tokens + t.output_tokens,
                  t.cost_usd ? fmt::format("${:.4f}", *t.cost_usd) : std::string("no price"));
  if (t.selected_candidate_id == 0) return line + "; no version passed both verdicts";
  line +=
      fmt::format("; selected candidate {}: {} in the loop, {} re-measured vs {}", t.selected_candidate_id,
                  speedup_text(t.inloop_speedup), speedup_text(t.remeasured_speedup), t.speedup_baseline);
  if (const auto inflation = t.inflation())
    line += fmt::format(" (selection inflated it {:.2f}x)", *inflation);
  return line;
}

void write_trajectory_table(const std::vector<db::trajectory_record>& trajectories, const db::store& store,
                            std::ostream& out) {
  if (trajectories.empty()) return;
  out << fmt::format("{:>5}  {:<32} {:>3}  {:<14} {:>5} {:>9} {:>9}  {:>7} {:>7} {:>7}  {}\n", "id",
                     "problem", "att", "status", "turns", "tokens", "cost $", "in-loop", "re-meas", "inflat",
                     "result");
  for (const auto& t : trajectories) {
    std::string result = "-";
    if (t.result_evaluation_id)
      if (const auto e = store.get_evaluation(t.result_evaluation_id)) result = verdict_summary(*e);
    out << fmt::format("{:>5}  {:<32} {:>3}  {:<14} {:>5} {:>9} {:>9}  {:>7} {:>7} {:>7}  {}\n", t.id,
                       problem_label(store, t.problem_id).substr(0, 32), t.attempt, t.status, t.turns,
                       t.input_tokens + t.cache_read_tokens + t.cache_write_tokens + t.output_tokens,
                       t.cost_usd ? fmt::format("{:.4f}", *t.cost_usd) : std::string("-"),
                       speedup_text(t.inloop_speedup), speedup_text(t.remeasured_speedup),
                       t.inflation() ? fmt::format("{:.2f}x", *t.inflation()) : std::string("-"), result);
  }
  out << "(speedups are against each trajectory's baseline; in-loop: as measured while the agent worked; "
         "re-meas: a fresh worker on fresh inputs; kj show trajectory ID prints one)\n";
}

void write_transcript(const db::trajectory_transcript& tr, const db::store& store, std::ostream& out,
                      const transcript_options& options) {
  const db::trajectory_record& t = tr.trajectory;
  out << fmt::format("trajectory {} of run {}: {} attempt {}, {}\n", t.id, t.run_id,
                     problem_label(store, t.problem_id), t.attempt, t.producer);
  out << fmt::format("status: {} ({}) after {} turns, {:.1f} s; started {}, finished {}\n", t.status,
                     t.stop_detail, t.turns, t.wall_s, t.started_at, t.finished_at);
  out << fmt::format("tokens: {} input, {} cache read, {} cache write, {} output; cost {}\n", t.input_tokens,
                     t.cache_read_tokens, t.cache_write_tokens, t.output_tokens,
                     t.cost_usd ? fmt::format("${:.4f}", *t.cost_usd) : std::string("no price"));
  if (t.selected_candidate_id)
    out << fmt::format("selected: {} (in-loop evaluation {}): {} vs {} in the loop\n",
                       candidate_label(store, t.selected_candidate_id), t.selected_evaluation_id,
                       speedup_text(t.inloop_speedup), t.speedup_baseline);
  else
    out << "selected: none (no version passed both verdicts)\n";
  if (t.final_candidate_id)
    out << fmt::format("final: {}{}\n", candidate_label(store, t.final_candidate_id),
                       t.final_evaluation_id
                           ? fmt::format(" (last judged in evaluation {})", t.final_evaluation_id)
                           : std::string(" (never judged in the loop)"));
  if (t.result_evaluation_id) {
    out << fmt::format("result: evaluation {} (a fresh worker on fresh inputs)", t.result_evaluation_id);
    if (const auto e = store.get_evaluation(t.result_evaluation_id)) out << ": " << verdict_summary(*e);
    if (t.remeasured_speedup)
      out << fmt::format(", {} vs {}", speedup_text(t.remeasured_speedup), t.speedup_baseline);
    if (const auto inflation = t.inflation())
      out << fmt::format("; selection inflated the speedup {:.2f}x ({} in the loop)", *inflation,
                         speedup_text(t.inloop_speedup));
    out << "\n";
  }
  out << fmt::format("workspace: {}\nprompt: {} (system {} chars, task {} chars)\n", t.workspace,
                     t.prompt_hash, t.system_prompt.size(), t.task_prompt.size());
  if (options.full)
    out << "--- system ---\n" << indent(t.system_prompt) << "--- task ---\n" << indent(t.task_prompt);
  for (std::size_t i = 0; i < tr.turns.size(); ++i) {
    const db::turn_record& turn = tr.turns[i];
    out << fmt::format("--- turn {} [{} in + {} cached, {} out; {}; {:.1f} s; stop {}] ---\n", turn.turn,
                       turn.input_tokens, turn.cache_read_tokens + turn.cache_write_tokens,
                       turn.output_tokens,
                       turn.cost_usd ? fmt::format("${:.4f}", *turn.cost_usd) : std::string("no price"),
                       turn.latency_ms / 1000, turn.stop_reason);
    if (!turn.user_note.empty()) out << "kj: " << turn.user_note << "\n";
    if (!turn.context_note.empty()) out << "[" << turn.context_note << "]\n";
    if (!turn.thinking.empty())
      out << "thinking:\n" << (options.full ? indent(turn.thinking) : first_lines(turn.thinking, 6));
    if (!turn.text.empty()) out << "assistant:\n" << indent(turn.text);
    for (const db::tool_call_record& c : tr.calls[i]) {
      std::string arguments = c.arguments_json;
      if (!options.full && arguments.size() > 300)
        arguments = arguments.substr(0, 300) + fmt::format("... ({} chars)", c.arguments_json.size());
      out << fmt::format("> {} {}{}\n", c.tool, arguments,
                         c.evaluation_id ? fmt::format("   [evaluation {}]", c.evaluation_id) : "");
      out << fmt::format("< {}{} ({:.1f} s)\n", c.is_error ? "error: " : "", c.summary, c.seconds);
      const std::string rest = c.result.substr(std::min(c.result.size(), c.summary.size() + 1));
      if (!rest.empty()) out << (options.full ? indent(rest) : first_lines(rest, options.result_lines));
    }
  }
}

void write_evaluation(std::int64_t id, const db::evaluation_record& e, const db::store& store,
                      std::ostream& out, bool with_source) {
  const auto run = store.get_run(e.run_id); // named as kj runs and --run name it, never by its row
  out << fmt::format("evaluation {} of run {}: {}, {}\n", id, run ? run->run_uid : std::to_string(e.run_id),
                     problem_label(store, e.problem_id), candidate_label(store, e.candidate_id));
  if (const auto c = store.get_candidate(e.candidate_id))
    out << fmt::format("producer {} sample {}{}\n", c->producer, c->sample,
                       c->path.empty() ? "" : ", " + c->path);
  if (const auto call = store.tool_call_of_evaluation(id))
    out << fmt::format("made in an agent's loop by `{}` (tool call {}); not a reported result\n", call->tool,
                       call->id);
  out << fmt::format("device {}, started {}, {:.1f} s{}\n", e.device, e.started_at, e.duration_s,
                     e.build_key.empty() ? "" : ", build " + e.build_key.substr(0, 16));
  out << correctness_text(e);
  for (const auto& t : e.timings) {
    const nlohmann::json params =
        nlohmann::json::parse(t.params_json.empty() ? "{}" : t.params_json, nullptr, false);
    const bool mean = params.is_object() && params.value("headline", "") == "mean";
    out << fmt::format("timing {:<18} {:<12} {:<10} {} {:.4g} ms over {} samples (min {:.4g}, max {:.4g})\n",
                       t.subject, t.method, t.clock, mean ? "mean" : "median", mean ? t.mean_ms : t.median_ms,
                       t.samples_ms.size(), t.min_ms, t.max_ms);
  }
  if (e.memory) {
    const auto gib = [](const std::optional<std::int64_t>& v) {
      return v ? fmt::format("{:.2f} GiB", static_cast<double>(*v) / (1ull << 30)) : std::string("-");
    };
    const db::memory_record& m = *e.memory;
    out << fmt::format(
        "memory: device peak {} (judge {}, runner {}), host peak judge {}, runner {}; budget {}\n",
        gib(m.device_peak_bytes), gib(m.judge_device_bytes), gib(m.runner_device_bytes),
        gib(m.judge_rss_bytes), gib(m.runner_rss_bytes), gib(m.budget_bytes));
  }
  if (!e.phases.empty()) {
    out << "phases:";
    for (const auto& p : e.phases)
      out << fmt::format(" {} {:.2f} s", p.phase, p.seconds);
    out << "\n";
  }
  if (with_source)
    if (const auto c = store.get_candidate(e.candidate_id)) out << "--- source ---\n" << c->source;
}

} // namespace kj::agent
