// Implements the did-you-mean suggestions and the rewording of CLI11's parse errors.
#include "app/cli/suggest.hpp"

#include "app/cli/project_config.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/core.h>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace kj::cli {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_group() != "") names.push_back(sub->get_name()); // hidden ones (worker, runner) left out
  return names;
}

// The deepest subcommand the user named (kj db info -> info), whose options an unexpected one is compared to.
const CLI::App* parsed_command(const CLI::App& app) {
  const CLI::App* current = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : current->get_subcommands())
      if (sub->parsed()) {
        current = sub, deeper = true;
        break;
      }
  }
  return current;
}

// "runs rm" for kj runs rm (the command's parents without kj itself).
std::string command_path(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* up = command.get_parent(); up && up->get_parent(); up = up->get_parent())
    path = up->get_name() + " " + path;
  return path;
}

std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const auto& l : option->get_lnames())
      names.push_back("--" + l);
    for (const auto& s : option->get_snames())
      names.push_back("-" + s);
  }
  return names;
}

// kj.toml's errors: an unknown key (CLI11: "INI was not able to parse run.devise") with its file:line and a
// guess among that command's options; a bad value the file gave an option ("--device: cpux not in ...") with
// the line that gave it, unless the command line gave that option too.
std::optional<std::string> explain_config_error(const CLI::App& app, const std::string& message,
                                                const std::vector<std::string>& args) {
  std::smatch m;
  static const std::regex config_key(R"(INI was not able to parse (\S+))"); // the key whole, any letters
  if (std::regex_search(message, m, config_key)) {
    std::string key = m[1].str();
    if (key.ends_with(".++")) key.resize(key.size() - 2); // CLI11's mark of a whole section: "Run.++"
    const std::string name = key.substr(key.rfind('.') + 1);
    const auto origin = config_origin_of(key);
    const std::string where = origin ? origin->where() : "kj.toml";
    if (name.empty()) // "[bogus]" with keys: CLI11 names the section only
      return fmt::format(
          "{}: unknown section [{}]: sections are named after kj's commands (run, report, ...)", where,
          key.substr(0, key.size() - 1));
    std::string text =
        fmt::format("{}: unknown key '{}' (keys are a command's long options without the "
                    "dashes, in a section named after the command, e.g. [run] device = \"cpu\")",
                    where, key);
    const std::string section = key.find('.') == std::string::npos ? "" : key.substr(0, key.find('.'));
    const auto commands =
        app.get_subcommands([&](const CLI::App* c) { return section.empty() || c->get_name() == section; });
    if (const CLI::App* command = section.empty() ? &app : commands.empty() ? nullptr : commands.front())
      if (const auto guess = nearest("--" + name, option_names(*command)))
        text += fmt::format("; did you mean {}?", guess->substr(2));
    return text;
  }
  const std::string attributed = attribute_to_config(app, message, args);
  if (attributed == message) return std::nullopt;
  return attributed;
}

} // namespace

std::string attribute_to_config(const CLI::App& app, const std::string& message,
                                const std::vector<std::string>& args) {
  // "--device: cpux not in {...}", "Could not convert: --quick = banana", "--verdict wrong: ..." (kj's own).
  static const std::regex option_named(R"(^(?:Could not convert: )?--([A-Za-z0-9_-]+)[: =])");
  std::smatch m;
  if (!std::regex_search(message, m, option_named)) return message;
  const std::string name = m[1].str();
  const bool on_command_line = std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
    return arg == "--" + name || arg.starts_with("--" + name + "=");
  });
  if (on_command_line) return message;
  // The command's own section first; else the one section that sets it (CLI11 reads every section's keys,
  // so [results] format = "csvx" breaks kj run too).
  const CLI::App* command = parsed_command(app);
  auto origin = config_origin_of(command == &app ? name : command->get_name() + "." + name);
  if (!origin) {
    const auto named = config_origins_named(name);
    if (named.size() == 1) origin = named.front();
  }
  if (!origin) return message;
  if (message.find("At Most 1 required but received") != std::string::npos &&
      origin->text.find('[') != std::string::npos) // a TOML array for an option that takes one value
    return fmt::format("{}: {}: --{} takes one value, not an array; write the list as one string, e.g. {} = "
                       "\"1-3,7\" as on the command line",
                       origin->where(), origin->text, name, name);
  return fmt::format("{}: {}: {}", origin->where(), origin->text, message);
}

std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& names) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(1, word.size() / 3) + 1;
  for (const auto& name : names) {
    const std::size_t d = edit_distance(word, name);
    const bool prefix = name.size() > word.size() && name.starts_with(word) && word.size() >= 2;
    if (d < best_distance || (prefix && !best)) {
      best = name;
      best_distance = prefix ? std::min(best_distance, d) : d;
    }
  }
  return best;
}

std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string word = argv[1];
  const std::vector<std::string> names = subcommand_names(app);
  if (word == "worker" || word == "runner" || std::find(names.begin(), names.end(), word) != names.end())
    return std::nullopt;
  const auto guess = nearest(word, names);
  return fmt::format("unknown command '{}'{}; `kj --help` lists the commands", word,
                     guess ? fmt::format(" (did you mean '{}'?)", *guess) : "");
}

std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& error,
                                const std::vector<std::string>& args) {
  std::string message = error.what();
  // CLI11's PositiveNumber/NonNegativeNumber print the largest double in full (309 digits).
  static const std::regex unbounded(R"(Value (-?[0-9.eE+-]+) not in range [0-9.]+ to [0-9]{100,}\.[0-9]+)");
  std::smatch m;
  if (std::regex_search(message, m, unbounded)) {
    const bool zero = std::atof(m[1].str().c_str()) == 0;
    message = std::string(m.prefix()) +
              fmt::format("must be {}, not {}", zero ? "greater than 0" : "0 or more", m[1].str()) +
              std::string(m.suffix());
  }
  if (auto config = explain_config_error(app, message, args)) return *config;
  // CLI11's "what is required" (a missing positional) and "--run: At Most 1 required but received 2".
  const CLI::App* command = parsed_command(app);
  static const std::regex positional(R"(^(\w+) is required$)");
  if (std::regex_search(message, m, positional))
    for (const CLI::Option* option : command->get_options())
      if (option->get_name() == m[1].str())
        message =
            fmt::format("kj {} needs {}: {}", command_path(*command), m[1].str(), option->get_description());
  static const std::regex at_most(R"(^(\S+): At Most 1 required but received (\d+))");
  if (std::regex_search(message, m, at_most))
    message =
        fmt::format("{} is given once here (it was given {} times){}", m[1].str(), m[2].str(),
                    m[1].str() == "--run" ? "; kj report takes several --run, kj compare two runs" : "");
  static const std::regex missing(R"(^(\S+) ?(\d+) required (\w+) missing)");
  if (std::regex_search(message, m, missing))
    message = fmt::format("{}needs a value ({})", m[1].str().empty() ? "" : m[1].str() + " ", m[3].str());
  // An unknown option, also where CLI11 first says that the required one it stands in for is missing
  // ("kj export --formt junit": "--format is required").
  const bool extras = dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr;
  if (extras || dynamic_cast<const CLI::RequiredError*>(&error)) {
    const auto options = option_names(*command);
    std::string guesses;
    for (const auto& extra : command->remaining())
      if (extra.starts_with("-")) {
        // a one-letter option is one keystroke from every other ("-k": "did you mean -h?"): no guess for it
        const bool letter = extra.size() == 2 && extra[1] != '-';
        const auto guess = letter ? std::nullopt : nearest(extra.substr(0, extra.find('=')), options);
        if (extras && letter)
          guesses += fmt::format("\n{}: kj {} has no such option (kj {} --help lists them)", extra,
                                 command_path(*command), command_path(*command));
        if (extras && guess) guesses += fmt::format("\n{}: did you mean {}?", extra, *guess);
        if (!extras)
          guesses +=
              fmt::format("\nunknown option {}{}", extra, guess ? "; did you mean " + *guess + "?" : "");
      }
    // The unknown option first: it is the mistake; the missing one follows from it.
    message = extras || guesses.empty() ? message + guesses : guesses.substr(1) + "\n(" + message + ")";
  }
  return message;
}

} // namespace kj::cli
