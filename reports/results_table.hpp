// Writers for `kj results`: an aligned table for people, JSON and CSV for scripts.
#pragma once

#include "db/store.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace kj::reports {

enum class results_format { table, json, csv };

// Throws std::invalid_argument for anything but "table", "json" or "csv".
results_format parse_results_format(const std::string& name);

void write_results(const std::vector<db::result_row>& rows, results_format format, std::ostream& out);

// RFC 4180 quoting of one CSV field.
std::string csv_field(const std::string& text);

} // namespace kj::reports
