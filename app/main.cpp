// Entry point of `kj`: parse the command line, run the chosen subcommand, map errors to exit codes.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "app/cli/project_config.hpp"
#include "app/cli/run_summary.hpp"
#include "app/cli/suggest.hpp"
#include "core/version.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/core.h>
#include <iostream>
#include <string>
#include <string_view>
#include <sys/prctl.h>
#include <system_error>
#include <utility>
#include <vector>

// A command's exit code, unless what it printed to standard output was lost (a full disk, /dev/full): then it
// failed, as the commands writing to a file (-o) already do.
namespace {
int written_out(int code) {
  errno = 0;
  std::cout.flush();
  const bool lost = std::fflush(stdout) != 0 || std::ferror(stdout) || std::cout.fail();
  if (!lost) return code;
  fmt::print(stderr, "kj: could not write all of its output to standard output{}\n",
             errno ? std::string(": ") + std::strerror(errno)
                   : std::string(" (a full disk or a closed file?)"));
  return code == 0 ? 2 : code;
}
} // namespace

int main(int argc, char** argv) {
  // kj and its judge workers hold what candidates must not read (API keys in the environment, the DB open):
  // not dumpable, so that processes of the same user without CAP_SYS_PTRACE cannot read /proc/<pid>/environ,
  // mem or fd. The runner (the candidate's own process) is exempt: it holds nothing.
  if (argc < 2 || std::string_view(argv[1]) != "runner") ::prctl(PR_SET_DUMPABLE, 0);
  // `kj run --config x.toml` reads as `kj --config x.toml run` (--config is kj's own option).
  std::vector<std::string> args = kj::cli::hoist_config_option({argv, argv + argc});
  std::vector<char*> hoisted;
  for (auto& arg : args)
    hoisted.push_back(arg.data());
  hoisted.push_back(nullptr);
  argv = hoisted.data();
  CLI::App app{"kerneljudge: verify and time GPU kernels against KernelBench references", "kj"};
  app.set_version_flag("--version", "kj " + kj::version_string());
  app.require_subcommand(1);
  // Project defaults from ./kj.toml; never for kj's own processes (a runner's folder is the candidate's).
  const bool internal =
      argc >= 2 && (std::string_view(argv[1]) == "runner" || std::string_view(argv[1]) == "worker");
  if (!internal) kj::cli::use_project_config(app);
  // Each subcommand registers its options; its action runs once the command line is parsed.
  std::vector<std::pair<std::string, kj::cli::action>> actions;
  for (const kj::cli::command& c : kj::cli::commands()) {
    actions.emplace_back(c.name, c.add(app, argc, argv));
    (void)app.get_subcommand(c.name); // the row's name is the one it registered (else CLI11 throws here)
  }
  if (const auto unknown = kj::cli::unknown_command(app, argc, argv)) {
    fmt::print(stderr, "kj: {}\n", *unknown);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return written_out(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return written_out(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return written_out(app.exit(e));
  } catch (const CLI::ParseError& e) {
    const std::string message = kj::cli::explain_parse_error(app, e, args);
    fmt::print(stderr, "kj: {}\nRun with --help for more information.\n", message);
    kj::cli::write_refused_summary(args, message); // --summary-json: written whatever stopped the run
    return 2;
  }
  try {
    for (const auto& [name, act] : actions)
      if (app.got_subcommand(name)) return written_out(act());
  } catch (const kj::cli::usage_error& e) {
    fmt::print(stderr, "kj: {}\n", kj::cli::attribute_to_config(app, e.what(), args));
    return 2;
  } catch (const kj::kb::source_error& e) {
    fmt::print(stderr, "kj: {}\n", e.what());
    return 2;
  } catch (const kj::db::db_error& e) {
    fmt::print(stderr, "kj: {}\n", e.what());
    return 2;
  } catch (const std::system_error& e) { // fmt::print's failed write to standard output
    if (std::string_view(e.what()).starts_with("cannot write to file")) {
      fmt::print(stderr, "kj: could not write all of its output to standard output: {}\n",
                 e.code().message());
      return 2;
    }
    fmt::print(stderr, "kj: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kj: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
