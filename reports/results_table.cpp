// Implements the results writers; every format carries the same fields.
#include "reports/results_table.hpp"

#include "reports/telling_line.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kj::reports {
namespace {

using nlohmann::json;

std::string first_line(const std::string& text, std::size_t width = std::string::npos) {
  std::string line = text.substr(0, text.find('\n'));
  // Tracebacks say most in their last line.
  const std::size_t last = text.find_last_not_of('\n');
  if (text.find('\n') != std::string::npos && last != std::string::npos) {
    const std::size_t start = text.rfind('\n', last);
    line = text.substr(start + 1, last - start);
  }
  return line.size() > width ? line.substr(0, width - 3) + "..." : line;
}

std::string ms_short(const std::optional<double>& v) {
  return v ? fmt::format("{:.4g}", *v) : "";
}

std::string candidate_label(const result_row& r) {
  if (r.candidate_path.empty()) return candidate_text(r); // "(identity)", as the exports and --collect-only
  const std::size_t slash = r.candidate_path.rfind('/');
  return slash == std::string::npos ? r.candidate_path : r.candidate_path.substr(slash + 1);
}

// The compiled baselines a CSV has a speedup column for (eager's is `speedup`).
const char* const compiled_modes[] = {"compile-default", "max-autotune", "max-autotune-no-cudagraphs",
                                      "reduce-overhead"};

// "incorrect (tolerance)", "runtime_error (out_of_memory)": the verdict with its reason.
std::string verdict_text(const result_row& r) {
  return r.reason.empty() ? name_of(r.verdict) : name_of(r.verdict) + " (" + r.reason + ")";
}

// "~" beside a speedup that may be noise: its interval includes 1, or the host moved (result_row::noise).
const char* noise_mark(const result_row& r, const stats::interval& ci) {
  return may_be_noise(r, ci) ? "~" : "";
}

std::string speedup_text(const result_row& r) {
  return r.speedup
             ? fmt::format("{:.3f}x{}{}", *r.speedup, noise_mark(r, r.speedup_ci), host_bound(r) ? "h" : "")
             : "";
}

std::string best_text(const result_row& r) {
  return r.speedup_best
             ? fmt::format("{:.3f}x{} {}", *r.speedup_best, noise_mark(r, r.speedup_best_ci), r.best_baseline)
             : "";
}

// The generating call's tokens (all input buckets / output), for LLM candidates.
std::string tokens_text(const result_row& r) {
  if (!r.output_tokens) return "";
  return fmt::format("{}/{}",
                     r.input_tokens.value_or(0) + r.cache_read_tokens.value_or(0) +
                         r.cache_write_tokens.value_or(0),
                     *r.output_tokens);
}

// The table's note: the error's telling line, else why the time is not trusted, else the findings. The
// narrow table cuts it at `width` characters; the wide one (width 0) never.
// The --set sizes as a user wrote them: {"batch_size":4} -> batch_size=4.
std::string sizes_text(const std::string& sizes) {
  const json parsed = json::parse(sizes, nullptr, false);
  if (!parsed.is_object()) return sizes;
  std::string out;
  for (const auto& [name, value] : parsed.items())
    out += (out.empty() ? "" : " ") + name + "=" + value.dump();
  return out;
}

std::string cause_note(const result_row& r, std::size_t width) {
  const std::size_t w = width ? width : std::string::npos;
  std::string note = telling_line(r.error, w);
  if (note.empty() && !r.unsound_problem.empty())
    note = (r.unsound_problem == r.verified_why ? "unsound problem, " : "unsound problem (kj audit): ") +
           first_line(r.unsound_problem, width ? width * 2 / 3 : std::string::npos);
  if (note.empty() && r.verified == "weak")
    note = "weak problem (KernelBench's rule accepts a null candidate), " +
           first_line(r.verified_why, width ? width * 2 / 3 : std::string::npos);
  if (note.empty() && r.verified == "changed") note = "problem changed since the verified set audited it";
  if (note.empty() && !r.untrusted.empty())
    note = "time not trusted: " + first_line(r.untrusted, width ? width * 2 / 3 : std::string::npos);
  if (note.empty() && !r.findings.empty()) note = "findings: " + r.findings;
  return note;
}

// The table's last column: the sizes it was judged at (--set), then what tells its verdict or doubt.
// The built-in suite runs on the CPU at its own smaller sizes (kernelbench/suite/cpu_sizes.json): those are
// the suite's, not a --set, and the table does not repeat them on every row.
bool suite_cpu_sizes(const result_row& r) {
  return r.suite == "builtin" && r.device == "cpu";
}

std::string note_of(const result_row& r, std::size_t width) {
  const std::string at = r.sizes.empty() || suite_cpu_sizes(r) ? "" : "at " + sizes_text(r.sizes);
  const std::size_t left = width && at.size() + 2 < width ? width - at.size() - 2 : width;
  const std::string cause = cause_note(r, left);
  return at.empty() ? cause : cause.empty() ? at : at + "; " + cause;
}

// Cuts text to `width` (0: never).
std::string cut(const std::string& text, std::size_t width) {
  return width ? text.substr(0, width) : text;
}

std::string number(const std::optional<double>& v) {
  return v ? fmt::format("{}", *v) : "";
}

std::string bound(const stats::interval& i, bool high) {
  return i.valid() ? fmt::format("{}", high ? i.high : i.low) : "";
}

std::string measured_csv(const std::optional<measured>& m) {
  if (!m) return ",,";
  return fmt::format("{},{},{}", m->samples_ms.size(), bound(m->ci_ms, false), bound(m->ci_ms, true));
}

} // namespace

bool verdict_matches(const result_row& row, const std::string& verdicts) {
  for (std::size_t start = 0; start <= verdicts.size();) {
    const std::size_t end = std::min(verdicts.find(',', start), verdicts.size());
    const std::string name = verdicts.substr(start, end - start);
    if (name == name_of(row.verdict) || (name == "failed" && row.judged() && !row.counted_correct()) ||
        (name == "passed" && row.counted_correct()) ||
        (name == "strict-fail" && row.strict_verdict == kj::strict_verdict::fail))
      return true;
    start = end + 1;
  }
  return false;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

namespace {

void write_aligned(const std::vector<result_row>& rows, std::ostream& out, bool wide) {
  const bool llm = std::any_of(rows.begin(), rows.end(), [](const result_row& r) { return r.output_tokens; });
  // The wide form sizes every column to its longest value and cuts nothing.
  std::size_t producer_w = 16, candidate_w = 40, strict_w = 26, problem_w = 30;
  if (wide)
    for (const auto& r : rows) {
      producer_w = std::max(producer_w, r.producer.size());
      candidate_w = std::max(candidate_w, candidate_label(r).size());
      strict_w = std::max(strict_w, r.strict_failed.size() + 6 + r.degenerate.size() + 3);
      problem_w = std::max(problem_w, r.problem_name.size());
    }
  const std::size_t note_w = wide ? 0 : 60;
  out << fmt::format("{:>2} {:>4} {:<{}} {:<{}} {:<{}} {:<28} {:<{}} {:>9} {:>9} {:>8} {:<24}  {}\n", "L",
                     "id", "problem", problem_w, "producer", producer_w, "candidate", candidate_w, "verdict",
                     "strict", strict_w, "cand ms", "ref ms", "speedup", "vs best baseline",
                     llm ? fmt::format("{:>13} {:>8}  error / findings", "tokens in/out", "cost $")
                         : "error / findings");
  for (const auto& r : rows) {
    std::string strict =
        r.strict_verdict == kj::strict_verdict::fail ? "fail: " + r.strict_failed : name_of(r.strict_verdict);
    const std::string degenerate = r.degenerate.empty() ? "" : " (degenerate)";
    strict =
        (wide ? strict : cut_list(strict, strict_w > degenerate.size() ? strict_w - degenerate.size() : 1)) +
        degenerate;
    std::string note = note_of(r, note_w);
    if (llm)
      note = fmt::format("{:>13} {:>8}  {}", tokens_text(r),
                         r.cost_usd ? fmt::format("{:.4f}", *r.cost_usd) : "", note);
    out << fmt::format("{:>2} {:>4} {:<{}} {:<{}} {:<{}} {:<28} {:<{}} {:>9} {:>9} {:>8} {:<24}  {}\n",
                       r.level, r.number, cut(r.problem_name, problem_w), problem_w,
                       cut(r.producer, producer_w), producer_w, cut(candidate_label(r), candidate_w),
                       candidate_w, verdict_text(r), strict, strict_w, ms_short(r.candidate_median_ms),
                       ms_short(r.reference_median_ms), speedup_text(r), best_text(r), note);
  }
  const bool marked = std::any_of(rows.begin(), rows.end(), [](const result_row& r) {
    return (r.speedup && may_be_noise(r, r.speedup_ci)) ||
           (r.speedup_best && may_be_noise(r, r.speedup_best_ci));
  });
  if (marked)
    out << "~ marks a speedup that may be noise: its 95% interval includes 1, the host's speed moved by more "
           "than 5% while it was timed, or it came from one timing round (--quick) (--verbose says which)\n";
  if (std::any_of(rows.begin(), rows.end(), [](const result_row& r) { return host_bound(r); }))
    out << fmt::format(
        "h marks a host-bound speedup: the candidate's kernels kept the GPU busy under {:.0f}% of "
        "its timed window, so it compares the host's launch speed in two processes, which moved "
        "by up to 35% between identical runs (docs/methodology.md)\n",
        100 * k_host_bound_share);
}

// The writers results_writers.cpp lists: the table cut to fit, the wide table, a block per evaluation
// (below), CSV and JSON.

// One block per evaluation with every field a person reads, the whole error text included.

} // namespace

void write_verbose(const std::vector<result_row>& rows, std::ostream& out) {
  for (const auto& r : rows) {
    out << fmt::format("== evaluation {}: L{} {} ({}), {} sample {}\n", r.evaluation_id, r.level,
                       r.problem_name, r.problem_file, r.producer, r.sample);
    out << fmt::format("   run {}  device {}  protocol {}  stack {}\n", r.run_uid, r.device, r.protocol,
                       r.stack_hash);
    if (!r.candidate_path.empty()) out << fmt::format("   candidate {}\n", r.candidate_path);
    if (!r.sizes.empty())
      out << fmt::format("   sizes {} ({})\n", sizes_text(r.sizes),
                         suite_cpu_sizes(r) ? "the built-in suite's CPU sizes, and any --set" : "--set");
    out << fmt::format("   verdict {}  strict {}{}\n", verdict_text(r),
                       r.strict_verdict == kj::strict_verdict::none ? "-" : name_of(r.strict_verdict),
                       r.strict_failed.empty() ? "" : " (failed: " + r.strict_failed + ")");
    if (r.candidate_median_ms)
      out << fmt::format("   candidate {} ms, reference {} ms, speedup {}, best baseline {}\n",
                         ms_short(r.candidate_median_ms), ms_short(r.reference_median_ms),
                         r.speedup ? speedup_text(r) : "-", best_text(r).empty() ? "-" : best_text(r));
    if (!r.noise.empty()) out << fmt::format("   speedup may be noise: {}\n", r.noise);
    if (!r.findings.empty()) out << fmt::format("   findings {}\n", r.findings);
    if (!r.untrusted.empty()) out << fmt::format("   time not trusted: {}\n", r.untrusted);
    if (r.numerics) out << fmt::format("   {}\n", numerics_text(r));
    if (!r.error.empty()) {
      out << "   error:\n";
      std::size_t start = 0;
      while (start < r.error.size()) {
        const std::size_t end = std::min(r.error.find('\n', start), r.error.size());
        out << "     " << r.error.substr(start, end - start) << "\n";
        start = end + 1;
      }
    }
  }
}

void write_table(const std::vector<result_row>& rows, std::ostream& out) {
  write_aligned(rows, out, false);
}

void write_wide(const std::vector<result_row>& rows, std::ostream& out) {
  write_aligned(rows, out, true);
}

void write_csv(const std::vector<result_row>& rows, std::ostream& out) {
  out << "evaluation_id,run,suite,level,problem_id,problem,candidate,producer,sample,device,verdict,error,"
         "candidate_median_ms,reference_median_ms,speedup,strict_verdict,strict_failed,findings,degenerate,"
         "library_share,best_baseline,speedup_best";
  for (const char* mode : compiled_modes)
    out << ",speedup_" << mode;
  out << ",candidate_samples,candidate_ci_low_ms,candidate_ci_high_ms,reference_samples,reference_ci_low_ms,"
         "reference_ci_high_ms,speedup_ci_low,speedup_ci_high,speedup_best_ci_low,speedup_best_ci_high,"
         "gpu_busy_share,stack,protocol,dtype,input_tokens,cache_read_tokens,cache_write_tokens,output_"
         "tokens,"
         "cost_usd,reason,device_peak_bytes,judge_device_bytes,runner_device_bytes,judge_rss_bytes,"
         "runner_rss_bytes,speedup_noisy,speedup_noise,sizes,format_version\n";
  for (const auto& r : rows) {
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", r.evaluation_id,
                       csv_field(r.run_uid), csv_field(r.suite), r.level, r.number, csv_field(r.problem_name),
                       csv_field(candidate_text(r)), csv_field(r.producer), r.sample, r.device,
                       name_of(r.verdict), csv_field(r.error), number(r.candidate_median_ms),
                       number(r.reference_median_ms), number(r.speedup), name_of(r.strict_verdict),
                       csv_field(r.strict_failed), csv_field(r.findings), csv_field(r.degenerate),
                       number(r.library_share), r.best_baseline, number(r.speedup_best));
    for (const char* mode : compiled_modes)
      out << "," << number(r.speedup_vs(mode));
    const auto count = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : ""; };
    const auto mem = [&](std::optional<std::int64_t> db::memory_record::*field) {
      return r.memory ? count((*r.memory).*field) : std::string();
    };
    out << fmt::format(
        ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        measured_csv(r.candidate), measured_csv(r.reference), bound(r.speedup_ci, false),
        bound(r.speedup_ci, true), bound(r.speedup_best_ci, false), bound(r.speedup_best_ci, true),
        number(r.gpu_busy_share), r.stack_hash, csv_field(r.protocol), kj::name_of(r.dtype),
        count(r.input_tokens), count(r.cache_read_tokens), count(r.cache_write_tokens),
        count(r.output_tokens), number(r.cost_usd), r.reason, mem(&db::memory_record::device_peak_bytes),
        mem(&db::memory_record::judge_device_bytes), mem(&db::memory_record::runner_device_bytes),
        mem(&db::memory_record::judge_rss_bytes), mem(&db::memory_record::runner_rss_bytes),
        r.speedup ? (may_be_noise(r) ? "true" : "false") : "", csv_field(r.noise),
        csv_field(r.sizes.empty() ? "" : sizes_text(r.sizes)), results_format_version);
  }
}

void write_json(const std::vector<result_row>& rows, std::ostream& out) {
  auto array = json::array();
  for (const auto& r : rows)
    array.push_back(result_json(r));
  out << array.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

} // namespace kj::reports
