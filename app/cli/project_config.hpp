// kj.toml: project defaults for any command's options (CLI11's TOML config, sections named after commands:
// `[run]` device = "cpu"). Precedence: command-line flags > environment variables > kj.toml > built-in
// defaults; a key the file sets for an option that an environment variable also sets (KJ_CACHE_DIR,
// KERNELBENCH_DIR, KJ_PRICES) gives way to the variable.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace kj::cli {

class project_config : public CLI::ConfigTOML {
public:
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;
};

// The option each environment variable stands for (its long name, without dashes).
const std::vector<std::pair<std::string, std::string>>& environment_options();

// Reads ./kj.toml (or --config FILE) into `app`'s options; an unknown key is an error naming it.
void use_project_config(CLI::App& app);

} // namespace kj::cli
