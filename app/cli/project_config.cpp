// Implements kj.toml (see project_config.hpp).
#include "app/cli/project_config.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace kj::cli {

const std::vector<std::pair<std::string, std::string>>& environment_options() {
  static const std::vector<std::pair<std::string, std::string>> options{
      {"KJ_CACHE_DIR", "cache-dir"}, {"KERNELBENCH_DIR", "kernelbench"}, {"KJ_PRICES", "prices"}};
  return options;
}

std::vector<CLI::ConfigItem> project_config::from_config(std::istream& input) const {
  std::vector<CLI::ConfigItem> items = CLI::ConfigTOML::from_config(input);
  // The environment outranks the file: its variable's option keeps the file's value out.
  std::erase_if(items, [](const CLI::ConfigItem& item) {
    return std::any_of(environment_options().begin(), environment_options().end(), [&](const auto& e) {
      const char* value = std::getenv(e.first.c_str());
      return item.name == e.second && value && *value;
    });
  });
  return items;
}

void use_project_config(CLI::App& app) {
  app.config_formatter(std::make_shared<project_config>());
  app.set_config("--config", "kj.toml",
                 "project defaults in TOML, one section per command (e.g. [run] device = \"cpu\"); read from "
                 "./kj.toml when it exists. Precedence: command-line flags > environment variables "
                 "(KJ_CACHE_DIR, KERNELBENCH_DIR, KJ_PRICES) > this file > built-in defaults");
  app.allow_config_extras(CLI::config_extras_mode::error);
}

} // namespace kj::cli
