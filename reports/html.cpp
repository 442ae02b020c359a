// Implements the HTML building blocks (see html.hpp).
#include "reports/html.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <sstream>

namespace kj::reports::html {

const char* const missing = "\u2014";

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string json_island(const nlohmann::json& value, const std::string& id) {
  // Invalid UTF-8 from a candidate's output is replaced rather than refused: a report must still be written.
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      safe += "\\u003c";
    else if (c == '>')
      safe += "\\u003e";
    else if (c == '&')
      safe += "\\u0026";
    else
      safe += c;
  }
  return fmt::format("<script type=\"application/json\" id=\"{}\">{}</script>\n", escape(id), safe);
}

std::string new_nonce() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}{:08x}", device(), device(), device());
}

std::string page_begin(const std::string& title, const std::string& nonce) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'nonce-{}'; style-src 'unsafe-inline'; img-src data:">
<title>{}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1.5em 2em; color: #1b1f24; }}
h1 {{ font-size: 1.5em; margin-bottom: 0.2em; }} h2 {{ font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccd; }}
table {{ border-collapse: collapse; margin: 0.6em 0; }}
th, td {{ border: 1px solid #d0d4da; padding: 2px 6px; text-align: right; vertical-align: top; }}
th {{ background: #eef1f5; position: sticky; top: 0; }} td.l, th.l {{ text-align: left; }}
tr.group td {{ background: #f7f8fa; font-weight: 600; }}
.muted {{ color: #6a737d; }} .ci {{ color: #6a737d; font-size: 0.85em; white-space: nowrap; }}
.void {{ color: #8a8f96; text-decoration: line-through; }}
.bad {{ color: #b31d28; font-weight: 600; }} .good {{ color: #22863a; font-weight: 600; }} .warn {{ color: #b08800; }}
.note {{ background: #fff8e1; border: 1px solid #f0d060; padding: 0.5em 0.8em; }}
.prov {{ font-size: 0.85em; color: #444; }} pre {{ background: #f6f8fa; padding: 0.6em; overflow-x: auto; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 1.5em; }} .chart {{ width: 580px; height: 320px; }}
code {{ font-size: 0.92em; }}
</style>
</head>
<body>
)",
                     escape(nonce), escape(title));
}

std::string page_end() {
  return "</body>\n</html>\n";
}

std::string ratio(const std::optional<double>& value) {
  return value ? fmt::format("{:.3f}\u00d7", *value) : missing;
}

std::string percent(const std::optional<double>& value) {
  return value ? fmt::format("{:.1f}%", 100 * *value) : missing;
}

std::string ms(const std::optional<double>& value) {
  return value ? fmt::format("{:.4g} ms", *value) : missing;
}

std::string interval(const stats::interval& ci, bool as_percent) {
  if (!ci.valid()) return "";
  if (as_percent) return fmt::format("[{:.1f}, {:.1f}]", 100 * ci.low, 100 * ci.high);
  return fmt::format("[{:.3f}, {:.3f}]", ci.low, ci.high);
}

namespace {

std::optional<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

chartjs find_chartjs(const std::string& requested) {
  std::vector<std::string> candidates;
  if (!requested.empty()) {
    candidates.push_back(requested);
  } else {
    if (const char* env = std::getenv("KJ_CHARTJS"); env && *env) candidates.emplace_back(env);
    if (std::string(KJ_CHARTJS_PATH).size()) candidates.emplace_back(KJ_CHARTJS_PATH);
    for (const char* dir : {"/usr/share/javascript/chart.js", "/usr/share/nodejs/chart.js/dist"})
      for (const char* name : {"chart.umd.min.js", "chart.umd.js", "chart.min.js", "Chart.min.js"})
        candidates.push_back(fmt::format("{}/{}", dir, name));
  }
  chartjs found;
  for (const auto& c : candidates) {
    found.tried.push_back(c);
    auto text = read_text(c);
    // Inlined into a <script> element, the file must not contain its end tag.
    if (text && !text->empty() && text->find("</script") == std::string::npos) {
      found.path = c;
      found.text = std::move(*text);
      return found;
    }
  }
  return found;
}

} // namespace kj::reports::html
