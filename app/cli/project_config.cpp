// Implements kj.toml (see project_config.hpp).
#include "app/cli/project_config.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/core.h>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

namespace kj::cli {
namespace {

// Filled by the one read of the file a process makes (CLI11 reads it once, before any command runs).
std::map<std::string, config_origin>& origins() {
  static std::map<std::string, config_origin> all;
  return all;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// Reads `text` as TOML quotes it: where its comment starts (a '#' outside quotes; npos: none) and whether a
// quote is still open there.
struct quote_scan {
  std::size_t comment = std::string::npos;
  bool open = false;
};
quote_scan scan_quotes(const std::string& text) {
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote && c == '\\' && quote == '"')
      ++i;
    else if (quote && c == quote)
      quote = 0;
    else if (!quote && (c == '"' || c == '\''))
      quote = c;
    else if (!quote && c == '#')
      return {i, false};
  }
  return {std::string::npos, quote != 0};
}

std::string without_comment(const std::string& line) {
  return line.substr(0, scan_quotes(line).comment);
}

bool closes_its_quotes(const std::string& value) {
  return !scan_quotes(value).open;
}

const char* const rule = "kj.toml is TOML: a section is [command], a key is option = value (docs/usage.md, "
                         "\"Project defaults\")";

// A value as TOML writes one: a quoted string, an array, true or false, a number (an inline table is left
// to the reader). `device = cpu` and `quick = yes` are not TOML.
bool toml_value(const std::string& value) {
  static const std::regex number(R"([+-]?(\d[\d_]*)(\.\d+)?([eE][+-]?\d+)?)");
  const char first = value.front();
  return first == '"' || first == '\'' || first == '[' || first == '{' || value == "true" ||
         value == "false" || std::regex_match(value, number);
}

// Checks each line and records where each key was set; throws CLI::ConfigError naming file:line. Returns
// the text without its comments (CLI11's reader takes `[run] # defaults` for a key).
std::string check_lines(const std::string& text, const std::string& file) {
  origins().clear();
  std::string section;
  int open_array = 0; // a multi-line array's first line while its ']' has not come yet
  std::istringstream lines(text);
  std::string raw, cleaned;
  for (int number = 1; std::getline(lines, raw); ++number) {
    const std::string line = trim(without_comment(raw));
    cleaned += line + "\n";
    const auto fail = [&](const std::string& what) {
      throw CLI::ConfigError(fmt::format("{}:{}: {}: {}", file, number, what, rule));
    };
    if (open_array) {
      if (line.find(']') != std::string::npos) open_array = 0;
      continue;
    }
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']' || line.starts_with("[[") || trim(line.substr(1, line.size() - 2)).empty())
        fail(fmt::format("'{}' is not a section", line));
      const std::string name = trim(line.substr(1, line.size() - 2));
      // A section's own line is kept under "name." (no key ends with a dot).
      if (const auto seen = origins().find(name + "."); seen != origins().end())
        fail(fmt::format("[{}] is given a second time (first at line {}); put all of its keys in one section",
                         name, seen->second.line));
      origins().emplace(name + ".", config_origin{file, number, line});
      section = name;
      continue;
    }
    const auto equals = line.find('=');
    if (equals == std::string::npos)
      fail(fmt::format("'{}' has no '=' (a key is option = value, e.g. level = 1)", line));
    const std::string key = trim(line.substr(0, equals)), value = trim(line.substr(equals + 1));
    if (key.empty()) fail(fmt::format("'{}' has no key before '='", line));
    if (value.empty()) fail(fmt::format("{} has no value after '='", key));
    if (!closes_its_quotes(value)) fail(fmt::format("the value of {} opens a quote it does not close", key));
    if (!toml_value(value))
      fail(fmt::format(
          "{} = {}: not a TOML value (a string is quoted: {} = \"{}\"; a switch is true or false)", key,
          value, key, value));
    if (value.front() == '[' && value.find(']') == std::string::npos) open_array = number;
    const std::string dotted = section.empty() ? key : section + "." + key;
    if (origins().contains(dotted))
      fail(fmt::format("{} is set a second time (first at line {})", key, origins().at(dotted).line));
    origins().emplace(dotted, config_origin{file, number, line});
  }
  if (open_array)
    throw CLI::ConfigError(fmt::format("{}:{}: an array whose ']' never comes", file, open_array));
  return cleaned;
}

// A switch is true or false: a quoted "yes" or "false" would be read as CLI11 reads words (a string "false"
// is false, "yes" true), which a TOML file does not mean.
void refuse_quoted_switches(const CLI::App& root, const std::vector<CLI::ConfigItem>& items) {
  for (const auto& item : items) {
    const CLI::App* app = &root;
    for (const auto& parent : item.parents) {
      if (!app) break;
      const auto named = app->get_subcommands([&](const CLI::App* a) { return a->get_name() == parent; });
      app = named.empty() ? nullptr : named.front();
    }
    const CLI::Option* option = app ? app->get_option_no_throw("--" + item.name) : nullptr;
    if (!option || option->get_expected_min() != 0) continue;
    std::string dotted;
    for (const auto& parent : item.parents)
      dotted += parent + ".";
    const auto origin = origins().find(dotted + item.name);
    if (origin == origins().end()) continue;
    const std::string value = trim(origin->second.text.substr(origin->second.text.find('=') + 1));
    if (!value.empty() && (value.front() == '"' || value.front() == '\''))
      throw CLI::ConfigError(fmt::format("{}: {} = {}: --{} is a switch: true or false, unquoted",
                                         origin->second.where(), item.name, value, item.name));
  }
}

} // namespace

const std::vector<std::pair<std::string, std::string>>& environment_options() {
  static const std::vector<std::pair<std::string, std::string>> options{
      {"KJ_CACHE_DIR", "cache-dir"}, {"KERNELBENCH_DIR", "kernelbench"}, {"KJ_PRICES", "prices"}};
  return options;
}

std::vector<CLI::ConfigItem> project_config::from_config(std::istream& input) const {
  const std::string text{std::istreambuf_iterator<char>(input), std::istreambuf_iterator<char>()};
  const CLI::Option* option = app_->get_config_ptr();
  std::istringstream checked(
      check_lines(text, option && option->count() ? option->as<std::string>() : "kj.toml"));
  std::vector<CLI::ConfigItem> read = CLI::ConfigTOML::from_config(checked);
  refuse_quoted_switches(*app_, read);
  // The environment outranks the file: its variable's option keeps the file's value out.
  std::erase_if(read, [](const CLI::ConfigItem& item) {
    return std::any_of(environment_options().begin(), environment_options().end(), [&](const auto& e) {
      const char* value = std::getenv(e.first.c_str());
      return item.name == e.second && value && *value;
    });
  });
  return read;
}

void use_project_config(CLI::App& app) {
  app.config_formatter(std::make_shared<project_config>(app));
  app.set_config("--config", "kj.toml",
                 "project defaults in TOML, one section per command (e.g. [run] device = \"cpu\"); read from "
                 "./kj.toml when it exists; may follow the command (kj run --config x.toml). Precedence: "
                 "command-line flags > environment variables (KJ_CACHE_DIR, KERNELBENCH_DIR, KJ_PRICES) > "
                 "this file > built-in defaults");
  app.allow_config_extras(CLI::config_extras_mode::error);
}

std::optional<config_origin> config_origin_of(const std::string& key) {
  const auto found = origins().find(key);
  if (found == origins().end()) return std::nullopt;
  return found->second;
}

std::vector<config_origin> config_origins_named(const std::string& name) {
  std::vector<config_origin> found;
  for (const auto& [key, origin] : origins())
    if (key == name || key.ends_with("." + name)) found.push_back(origin);
  return found;
}

std::vector<std::string> hoist_config_option(const std::vector<std::string>& args) {
  if (args.size() < 3 || args[1] == "runner" || args[1] == "worker") return args;
  std::vector<std::string> moved, rest{args[0]};
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") { // what follows is positional
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (i > 1 && args[i] == "--config" && i + 1 < args.size()) {
      moved.insert(moved.end(), {args[i], args[i + 1]});
      ++i;
    } else if (i > 1 && args[i].starts_with("--config=")) {
      moved.push_back(args[i]);
    } else {
      rest.push_back(args[i]);
    }
  }
  rest.insert(rest.begin() + 1, moved.begin(), moved.end());
  return rest;
}

} // namespace kj::cli
