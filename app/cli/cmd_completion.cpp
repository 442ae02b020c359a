// `kj completion bash|zsh`: a completion script made from the command line's own definition (every command
// and its options, as --help lists them), so that it never lags behind a new flag.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"

#include <fmt/core.h>
#include <memory>
#include <string>

namespace kj::cli {
namespace {

// kj's own processes (worker, runner) are no user's command.
bool internal(const CLI::App* command) {
  return command->get_name() == "worker" || command->get_name() == "runner";
}

std::string long_options(const CLI::App& command) {
  std::string out;
  for (const CLI::Option* option : command.get_options())
    for (const std::string& name : option->get_lnames())
      out += (out.empty() ? "--" : " --") + name;
  return out;
}

std::string bash_script(const CLI::App& app) {
  std::string commands, cases;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App* c) { return !internal(c); })) {
    commands += (commands.empty() ? "" : " ") + command->get_name();
    std::string words = long_options(*command);
    for (const CLI::App* sub : command->get_subcommands({})) // kj db info, kj runs rm
      words += " " + sub->get_name();
    cases += fmt::format("    {}) words=\"{}\" ;;\n", command->get_name(), words);
  }
  return std::string(R"SH(# kj completion (bash): eval "$(kj completion bash)", e.g. in ~/.bashrc
_kj() {
  local cur=${COMP_WORDS[COMP_CWORD]} words
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W ")SH") +
         commands + R"SH( --help --version" -- "$cur"))
    return
  fi
  case ${COMP_WORDS[1]} in
)SH" + cases +
         R"SH(    *) words="" ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$words --help" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(printf '%s\n' $words | grep -v '^-')" -- "$cur") $(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _kj kj
)SH";
}

} // namespace

action add_completion_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("completion", "Print a shell completion script for kj: eval \"$(kj completion "
                                       "bash)\" in ~/.bashrc, or the same with zsh in ~/.zshrc");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  return [&app, shell] {
    // zsh runs bash's completion functions through its bashcompinit layer
    if (*shell == "zsh")
      fmt::print("autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n");
    fmt::print("{}", bash_script(app));
    return 0;
  };
}

} // namespace kj::cli
