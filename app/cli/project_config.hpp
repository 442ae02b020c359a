// kj.toml: project defaults for any command's options (CLI11's TOML config, sections named after commands:
// `[run]` device = "cpu"). Precedence: command-line flags > environment variables > kj.toml > built-in
// defaults; a key the file sets for an option that an environment variable also sets (KJ_CACHE_DIR,
// KERNELBENCH_DIR, KJ_PRICES) gives way to the variable.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kj::cli {

// Where a key of the file was set: "kj.toml:3: device = \"cpux\"".
struct config_origin {
  std::string file;
  int line = 0;
  std::string text; // the line as written, trimmed
  std::string where() const { return file + ":" + std::to_string(line); }
};

// Reads the file through CLI11's TOML reader after checking each line's shape itself (CLI11 takes a line
// without '=' for a flag and an unclosed quote for part of the value): a line that is neither a section, a
// comment nor `key = value`, a section given twice, or an unclosed quote is a ConfigError naming file:line.
class project_config : public CLI::ConfigTOML {
public:
  // Comments are taken out by check_lines, which knows quotes; CLI11's reader would cut "model#3" at '#'.
  explicit project_config(const CLI::App& app) : app_(&app) { comment('\x01'); }
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

private:
  const CLI::App* app_;
};

// The option each environment variable stands for (its long name, without dashes).
const std::vector<std::pair<std::string, std::string>>& environment_options();

// Reads ./kj.toml (or --config FILE) into `app`'s options; an unknown key is an error naming it.
void use_project_config(CLI::App& app);

// The line of the file read by this process that set `key` ("run.device"; a top-level key has no section).
std::optional<config_origin> config_origin_of(const std::string& key);

// Every line that set a key of this name, in any section.
std::vector<config_origin> config_origins_named(const std::string& name);

// `kj run --config x.toml` as `kj --config x.toml run`: --config is kj's, not a command's (CLI11 reads it
// before the command). Moves every --config given after the command to the front.
std::vector<std::string> hoist_config_option(const std::vector<std::string>& args);

} // namespace kj::cli
