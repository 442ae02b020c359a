// Implements selection: the fastest strictly correct profiled version, else the latest strictly correct one.
#include "agent/selection.hpp"

#include "agent/feedback.hpp"
#include "core/verdict.hpp"

namespace kj::agent {

std::optional<double> speedup(const db::evaluation_record& record, const speedup_basis& basis) {
  const headline h = headline_of(record);
  if (!h.candidate_ms || *h.candidate_ms <= 0 || !h.untrusted.empty()) return std::nullopt;
  const std::optional<double> base = basis.ms ? basis.ms : h.eager_ms;
  if (!base) return std::nullopt;
  return *base / *h.candidate_ms;
}

selection select_best(const std::vector<judged>& history, const speedup_basis& basis) {
  selection out;
  for (const judged& j : history) {
    if (j.kind != "profile" || !counted_correct(j.record.verdict, j.record.strict_verdict)) continue;
    const auto s = speedup(j.record, basis);
    if (!s) continue;
    if (!out.inloop_speedup || *s > *out.inloop_speedup) {
      out.best = &j;
      out.inloop_speedup = s;
    }
  }
  if (out.best) return out;
  for (auto it = history.rbegin(); it != history.rend(); ++it)
    if (counted_correct(it->record.verdict, it->record.strict_verdict)) {
      out.best = &*it;
      break;
    }
  return out;
}

} // namespace kj::agent
