// Building the verified problem set's file from `kj audit --json` outputs (one per precision) and the public
// reports that name problems (kernelbench/verified/public_reports.json): `kj verified build`.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kj::kb {

struct verified_build_input {
  std::map<std::string, nlohmann::json> audits; // precision -> the `kj audit --json` array
  nlohmann::json public_reports = nlohmann::json::array();
  // (level, id, name) -> sha256 of the problem's source, for audits that carry none (older `kj audit --json`)
  std::map<std::tuple<int, int, std::string>, std::string> source_sha256;
  std::string version, kernelbench_commit, audited_on, command;
};

// Whether an audit's error is kj's own audit running out of memory (kj's limit, never the problem's flaw).
bool audit_out_of_memory(const std::string& error);

// One audit entry's standing: sound, weak (KernelBench's rule accepts zeros, a constant fill or the input),
// unsound, error (the problem's own: its import, inputs or Model raised) or unaudited (kj's audit ran out of
// memory: kj's failure, never the problem's), and why (one line each).
std::pair<std::string, std::vector<std::string>> audit_standing(const nlohmann::json& audit);

// Checks one `kj audit --json` file's entries (label names the file in messages): an array of objects with
// integer level and id (at least 1), a name, unsound, nulls, and KernelBench main's protocol at `precision`
// (fp32, bf16 or fp16); throws source_error naming the entry and the field.
void check_audit_entries(const nlohmann::json& audits, const std::string& label,
                         const std::string& precision);

// The set's document (format 1, kernelbench/verified.hpp reads it); throws source_error naming the audit
// file's entry that lacks a field, or a public report that names no problem.
nlohmann::json build_verified_set(const verified_build_input& input);

} // namespace kj::kb
