// Implements the cost table and its JSON form.
#include "adapters/generate/accounting.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <string>
#include <vector>

namespace kj::adapters {
namespace {

std::string per(double cost, std::int64_t count) {
  return count > 0 ? fmt::format("{:.4f}", cost / static_cast<double>(count)) : "-";
}

nlohmann::json per_json(double cost, std::int64_t count) {
  return count > 0 ? nlohmann::json(cost / static_cast<double>(count)) : nlohmann::json();
}

// Whether one of the run's models is priced by `e`.
bool used_by(const llm::price_table& prices, const llm::price_entry& e,
             const std::vector<db::llm_cost_row>& rows) {
  for (const auto& r : rows)
    if (prices.find(r.provider, r.model) == &e) return true;
  return false;
}

} // namespace

void write_cost_table(const std::vector<db::llm_cost_row>& rows, std::ostream& out) {
  if (rows.empty()) return;
  out << fmt::format("{:<10} {:<28} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>7} {:>10} "
                     "{:>7} {:>10}\n",
                     "adapter", "model", "calls", "failed", "input", "cache rd", "cache wr", "output",
                     "reasoning", "cost $", "problems", "solved", "$/solved", "strict", "$/strict");
  for (const auto& r : rows) {
    out << fmt::format(
        "{:<10} {:<28} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10.4f} {:>8} {:>7} {:>10} {:>7} "
        "{:>10}\n",
        r.provider, r.model.substr(0, 28), r.calls, r.failed_calls, r.input_tokens, r.cache_read_tokens,
        r.cache_write_tokens, r.output_tokens, r.reasoning_tokens, r.cost_usd, r.problems, r.solved,
        per(r.cost_usd, r.solved), r.solved_strict, per(r.cost_usd, r.solved_strict));
    if (r.unpriced_calls > 0)
      out << fmt::format("  {} calls of {} have no price in the price table: their cost is not counted\n",
                         r.unpriced_calls, r.model);
    if (r.replayed_calls > 0)
      out << fmt::format(
          "  {} calls were answered from a recording: their cost was paid by the recorded run\n",
          r.replayed_calls);
    if (r.batch_calls > 0)
      out << fmt::format(
          "  {} calls were answered through the provider's batch API, priced at its batch tier\n",
          r.batch_calls);
  }
}

nlohmann::json cost_json(const std::vector<db::llm_cost_row>& rows) {
  auto array = nlohmann::json::array();
  for (const auto& r : rows)
    array.push_back({{"adapter", r.provider},
                     {"model", r.model},
                     {"calls", r.calls},
                     {"failed_calls", r.failed_calls},
                     {"unpriced_calls", r.unpriced_calls},
                     {"replayed_calls", r.replayed_calls},
                     {"batch_calls", r.batch_calls},
                     {"input_tokens", r.input_tokens},
                     {"cache_read_tokens", r.cache_read_tokens},
                     {"cache_write_tokens", r.cache_write_tokens},
                     {"output_tokens", r.output_tokens},
                     {"reasoning_tokens", r.reasoning_tokens}, // of output_tokens
                     {"cost_usd", r.cost_usd},
                     {"latency_ms", r.latency_ms},
                     {"problems", r.problems},
                     {"solved", r.solved},
                     {"cost_per_solved_usd", per_json(r.cost_usd, r.solved)},
                     {"solved_strict", r.solved_strict},
                     {"cost_per_solved_strict_usd", per_json(r.cost_usd, r.solved_strict)}});
  return array;
}

void write_price_age(const llm::price_table& prices, const std::vector<db::llm_cost_row>& rows,
                     std::ostream& out, int max_age_days, const std::string& today) {
  const auto stale = prices.stale(max_age_days, today);
  if (stale.empty()) return;
  out << fmt::format("\n{} of {} rows of the price table {} were checked more than {} days ago; check them "
                     "against their sources (* prices a model of this run):\n",
                     stale.size(), prices.entries().size(), prices.path().string(), max_age_days);
  for (const auto& s : stale)
    out << fmt::format("  {} {:<40} {:<9} checked {} ({} days ago) {}\n",
                       used_by(prices, *s.entry, rows) ? "*" : " ",
                       fmt::format("{}", fmt::join(s.entry->patterns, " ")).substr(0, 40), s.entry->provider,
                       s.entry->checked, s.age_days, s.entry->source);
}

nlohmann::json price_age_json(const llm::price_table& prices, const std::vector<db::llm_cost_row>& rows,
                              int max_age_days, const std::string& today) {
  auto stale = nlohmann::json::array();
  for (const auto& s : prices.stale(max_age_days, today))
    stale.push_back({{"match", s.entry->patterns},
                     {"provider", s.entry->provider},
                     {"checked", s.entry->checked},
                     {"age_days", s.age_days},
                     {"source", s.entry->source},
                     {"used_by_run", used_by(prices, *s.entry, rows)}});
  return {{"file", prices.path().string()},
          {"date", prices.date()},
          {"max_age_days", max_age_days},
          {"stale", stale}};
}

} // namespace kj::adapters
