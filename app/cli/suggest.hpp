// Did-you-mean: the nearest known command or option to a mistyped one, and CLI11's messages made readable.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kj::cli {

// The name among `names` nearest to `word` (edit distance at most a third of its length, at least 1), or
// nullopt when none is that close.
std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& names);

// When argv[1] is not a subcommand (nor an option), the message to print: "unknown command 'rn'; did you
// mean 'run'?". nullopt when argv[1] is fine.
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv);

// A parse error's message with a did-you-mean for unexpected options ("--candidate: did you mean
// --candidates?"), numeric ranges of CLI11's unbounded checks said in words, and kj.toml's errors at their
// file:line (`args`: the command line, to tell a value the file gave from one the user typed).
// `message` (a parse error's or kj's own refusal of an option, "--verdict wrong: ...") with the kj.toml
// line that gave the option in front, when the file gave it and the command line did not.
std::string attribute_to_config(const CLI::App& app, const std::string& message,
                                const std::vector<std::string>& args);

std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& error,
                                const std::vector<std::string>& args);

} // namespace kj::cli
