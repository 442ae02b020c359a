// Building blocks of kerneljudge's HTML pages: escaping (all model-written text goes through html_escape),
// JSON data islands safe inside <script>, the page frame and style, number formatting, and finding Chart.js.
#pragma once

#include "reports/stats.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kj::reports::html {

// Escapes & < > " ' so that the text is shown as text in an element or an attribute.
std::string escape(std::string_view text);

// <script type="application/json" id="ID">…</script> whose content cannot end the element or open a
// comment: <, > and & are written as \u003c, \u003e, \u0026 (JSON.parse reads them back unchanged).
std::string json_island(const nlohmann::json& value, const std::string& id);

// A fresh random token for a page's Content-Security-Policy: only <script nonce="…"> elements run, so that
// even a script that slipped past escaping would not (defence in depth; escape() is the protection).
std::string new_nonce();

// The opening of a page (doctype, charset, a CSP that allows no network and only scripts with the nonce,
// title, style) and its end.
std::string page_begin(const std::string& title, const std::string& nonce);
std::string page_end();

// Numbers for tables: "1.234x", "56.7%", "1.23 ms", "[1.10, 1.35]"; "—" for a missing value.
extern const char* const missing;
std::string ratio(const std::optional<double>& value);
std::string percent(const std::optional<double>& value);
std::string ms(const std::optional<double>& value);
std::string interval(const stats::interval& ci, bool as_percent = false);

struct chartjs {
  std::filesystem::path path; // empty when not found
  std::string text;
  std::vector<std::string> tried;
};

// Chart.js's UMD build: `requested` when given, else $KJ_CHARTJS, else the file CMake found, else the
// usual places of Debian's and Ubuntu's libjs-chart.js. Not found: an empty path and the places tried.
chartjs find_chartjs(const std::string& requested);

} // namespace kj::reports::html
