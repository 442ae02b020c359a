// Implements keep_verified and mark_verified: the verified set applied to problems and to result rows.
#include "planning/orchestrator/verified_problems.hpp"

#include "core/hashing.hpp"
#include "db/store.hpp"

#include <fmt/core.h>
#include <iostream>
#include <map>

namespace kj::orchestrator {
namespace {

bool applies(const std::string& suite, const std::string& kb_version) {
  return suite == "kernelbench" && kb_version == "main";
}

} // namespace

std::vector<kb::problem> keep_verified(std::vector<kb::problem> problems, const kb::source_options& options) {
  const auto file = options.verified_file.empty() ? kb::default_verified_file() : options.verified_file;
  const kb::verified_set set = kb::load_verified_set(file);
  std::map<std::string, int> left_out; // status -> count
  std::vector<kb::problem> kept;
  for (auto& p : problems) {
    if (!applies(p.suite, p.kb_version)) {
      ++left_out["not KernelBench main (another suite, --kb-version or a single file)"];
      continue;
    }
    const auto st = set.status_of(p.level, p.number, p.name, core::sha256_hex(p.source), options.precision);
    if (st.status == "sound")
      kept.push_back(std::move(p));
    else
      ++left_out[st.status];
  }
  std::string why;
  for (const auto& [status, n] : left_out)
    why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, status);
  if (kept.empty())
    throw kb::source_error(
        fmt::format("--problems verified: none of the {} selected problems is sound in the "
                    "verified set {} ({}): {}",
                    problems.size(), set.version, file.string(), why));
  fmt::print(stderr, "kj: --problems verified: {} of {} problems (verified set {} at {}){}{}\n", kept.size(),
             problems.size(), set.version, kj::name_of(options.precision),
             why.empty() ? "" : "; left out: " + why, why.empty() ? "" : " (kj verified show says why)");
  return kept;
}

void mark_verified(std::vector<reports::result_row>& rows, const kb::verified_set& set) {
  for (auto& r : rows) {
    if (!applies(r.suite, r.kb_version)) continue;
    const auto st = set.status_of(r.level, r.number, r.problem_name, r.problem_hash, r.dtype);
    r.verified = st.status;
    if (st.status == "sound") continue;
    r.verified_why = fmt::format("verified set {}{}: {}", set.version,
                                 st.precision.empty() ? "" : ", " + st.precision, st.why);
    if (r.unsound_problem.empty() && st.status == "unsound") r.unsound_problem = r.verified_why;
  }
}

void keep_verified_rows(std::vector<reports::result_row>& rows) {
  std::erase_if(rows, [](const reports::result_row& r) { return r.verified != "sound"; });
}

} // namespace kj::orchestrator
