// Implements the compile and verify texts from build records and evaluation records.
#include "agent/feedback.hpp"

#include "core/hashing.hpp"
#include "db/store.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kj::agent {
namespace {

using nlohmann::json;

const db::timing_record* timing_of(const db::evaluation_record& r, const std::string& subject) {
  for (const auto& t : r.timings)
    if (t.subject == subject) return &t;
  return nullptr;
}

std::optional<double> headline_ms(const db::timing_record& t) {
  const json params = json::parse(t.params_json.empty() ? "{}" : t.params_json, nullptr, false);
  const bool mean = params.is_object() && params.value("headline", "") == "mean";
  if (t.samples_ms.empty()) return std::nullopt;
  return mean ? t.mean_ms : t.median_ms;
}

// The compiler's diagnostics first (they are what the model needs: "file:line:col: error: ..."), else other
// lines naming an error (a Python traceback's), then the end of the log.
std::string build_errors(const std::string& log) {
  std::string diagnostics, others;
  int count = 0;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line) && count < 40;) {
    if (line.find("error:") != std::string::npos || line.find("error ") == 0) {
      diagnostics += line + "\n";
      ++count;
    } else if (line.find("error") != std::string::npos || line.find("Error") != std::string::npos) {
      others += line + "\n";
    }
  }
  const std::string first = diagnostics.empty() ? others : diagnostics;
  return clip(first.empty() ? log : first + "\n--- end of the build log ---\n" + log, 6000);
}

} // namespace

headline headline_of(const db::evaluation_record& r) {
  headline h;
  if (const auto* c = timing_of(r, "candidate")) {
    h.candidate_ms = headline_ms(*c);
    h.samples = c->samples_ms.size();
    h.method = c->method;
    h.clock = c->clock;
    const json params = json::parse(c->params_json.empty() ? "{}" : c->params_json, nullptr, false);
    h.statistic = params.is_object() && params.value("headline", "") == "mean" ? "mean" : "median";
    if (params.is_object() && !params.value("trusted", true))
      h.untrusted = params.value("untrusted_reason", std::string("kj's checks of its time failed"));
  }
  if (const auto* e = timing_of(r, "reference_eager")) h.eager_ms = headline_ms(*e);
  return h;
}

std::string short_hash(const std::string& source) {
  return core::sha256_hex(source).substr(0, 8);
}

std::string clip(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  const std::size_t head = limit / 3, tail = limit - head;
  return text.substr(0, head) + fmt::format("\n[... {} bytes left out ...]\n", text.size() - head - tail) +
         text.substr(text.size() - tail);
}

std::string compile_text(const std::optional<exec::build_record>& build, const std::string& hash) {
  if (!build)
    return fmt::format("compile {}: nothing to compile (no torch.utils.cpp_extension: it runs as plain "
                       "PyTorch)\n",
                       hash);
  if (build->end == exec::build_end::ok)
    return fmt::format("compile {}: ok ({})\n", hash,
                       build->cached ? "built before: the same sources"
                                     : fmt::format("{:.1f} s", build->seconds));
  return fmt::format("compile {}: {}{}\n{}\n", hash, exec::status_name(*build),
                     build->cached ? " (the same sources failed the same way before)" : "",
                     build_errors(build->log));
}

std::string verdict_summary(const db::evaluation_record& r) {
  std::string s = "compatible " + name_of(r.verdict);
  if (r.strict_verdict != strict_verdict::none)
    s += ", strict " + name_of(r.strict_verdict) +
         (r.strict_failed.empty() ? "" : " (" + r.strict_failed + ")");
  return s;
}

std::string correctness_text(const db::evaluation_record& r) {
  std::string out;
  int passed = 0;
  for (const auto& t : r.trials)
    passed += t.passed ? 1 : 0;
  out += fmt::format("compatible verdict: {}{} ({} of {} trials passed; protocol {})\n", name_of(r.verdict),
                     r.reason.empty() ? "" : " (" + r.reason + ")", passed, r.trials.size(), r.protocol);
  for (const auto& t : r.trials) {
    if (t.passed) continue;
    const json detail = json::parse(t.detail_json.empty() ? "{}" : t.detail_json, nullptr, false);
    out += fmt::format(
        "  first failing trial #{}: {} mismatches, max abs err {:.4g}{}\n", t.index, t.mismatches,
        t.max_abs_err,
        detail.is_object() && detail.contains("message") ? "; " + detail["message"].get<std::string>() : "");
    break;
  }
  if (!r.error.empty()) out += "error:\n" + clip(r.error, 4000) + "\n";
  if (r.strict_verdict == strict_verdict::none) return out;
  out += fmt::format("strict verdict: {}{}\n", name_of(r.strict_verdict),
                     r.strict_failed.empty() ? "" : "; failing case classes: " + r.strict_failed);
  std::map<std::string, int> passes;
  int listed = 0;
  for (const auto& c : r.cases) {
    if (c.status != case_status::fail) {
      ++passes[c.case_class];
      continue;
    }
    if (++listed > 8) continue;
    out += fmt::format("  {} #{}: {}\n", c.case_class, c.index, clip(c.message, 600));
  }
  if (listed > 8) out += fmt::format("  ... and {} more failing cases\n", listed - 8);
  std::string ok;
  for (const auto& [name, n] : passes)
    ok += (ok.empty() ? "" : ", ") + name;
  if (!ok.empty()) out += "passed or uninformative: " + ok + "\n";
  if (!r.degenerate.empty()) out += "note: the problem looks degenerate (" + r.degenerate + ")\n";
  for (const auto& f : r.findings)
    out += fmt::format("finding (not a verdict): {}{}: {}\n", f.kind,
                       f.line > 0 ? fmt::format(" at line {}", f.line) : std::string(), clip(f.excerpt, 160));
  return out;
}

std::string verify_text(const db::evaluation_record& r, const std::string& hash) {
  return fmt::format("verify {}: {}\n{}", hash, verdict_summary(r), correctness_text(r));
}

} // namespace kj::agent
