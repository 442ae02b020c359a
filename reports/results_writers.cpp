// The output formats of `kj results`, one table from name to writer: --format's choices, its help and
// write_results all read it. A new format is a writer in a file of its own and a line here.
#include "reports/results_table.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace kj::reports {

// The writers (results_table.cpp, results_markdown.cpp).
void write_table(const std::vector<result_row>& rows, std::ostream& out);
void write_wide(const std::vector<result_row>& rows, std::ostream& out);
void write_verbose(const std::vector<result_row>& rows, std::ostream& out);
void write_json(const std::vector<result_row>& rows, std::ostream& out);
void write_csv(const std::vector<result_row>& rows, std::ostream& out);
void write_markdown(const std::vector<result_row>& rows, std::ostream& out);

const std::vector<results_writer>& results_writers() {
  static const std::vector<results_writer> writers{
      {"table", "one line per evaluation, long texts cut", write_table},
      {"wide", "the table with nothing cut", write_wide},
      {"verbose", "a block per evaluation with its whole error", write_verbose},
      {"json", "every field, for scripts, with format_version", write_json, true},
      {"csv", "every field, for scripts, with format_version", write_csv, true},
      {"markdown", "a GitHub-flavoured table for a pull request or an issue", write_markdown},
  };
  return writers;
}

const results_writer& results_writer_named(const std::string& name) {
  std::string names;
  for (const auto& w : results_writers()) {
    if (w.name == name) return w;
    names += (names.empty() ? "" : ", ") + std::string(w.name);
  }
  throw std::invalid_argument(fmt::format("unknown format '{}' (expected one of: {})", name, names));
}

void write_results(const std::vector<result_row>& rows, const std::string& format, std::ostream& out) {
  results_writer_named(format).write(rows, out);
}

} // namespace kj::reports
