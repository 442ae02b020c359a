// kj_fake_llm: the tests' fake LLM provider as a program, for trying `kj run --adapter ...` offline by hand.
//   kj_fake_llm [--fixtures DIR] [--answers DIR] [--scripts DIR] [--lenient]
// Prints "port N" once listening on 127.0.0.1:N (a free port), then serves until SIGINT or SIGTERM.
#include "tests/fake_llm/fake_llm_server.hpp"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  std::string fixtures = KJ_SOURCE_DIR "/tests/fixtures/llm";
  std::string answers, scripts;
  bool documented = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--lenient") {
      documented = false;
    } else if ((arg == "--fixtures" || arg == "--answers" || arg == "--scripts") && i + 1 < argc) {
      (arg == "--fixtures" ? fixtures : arg == "--answers" ? answers : scripts) = argv[++i];
    } else {
      std::fprintf(
          stderr,
          "usage: kj_fake_llm [--fixtures DIR] [--answers DIR] [--scripts DIR] [--lenient]\n"
          "  scenarios: a model named <scenario> is answered from DIR/<provider>/<scenario>.json;\n"
          "  answers: other models get the candidate files of --answers for kerneljudge's prompt\n"
          "  scripts: requests with tools (kj agent) get the turns of DIR/<device>/[<model>/]"
          "level_L_problem_N.json\n"
          "  --lenient: accept requests the providers' documentation does not allow (default: 400)\n");
      return 2;
    }
  }
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr); // the server's threads inherit the mask
  try {
    kj::test::fake_llm_server server(fixtures, answers, scripts, documented);
    std::printf("port %d\n", server.port());
    std::fflush(stdout);
    int received = 0;
    sigwait(&stop_signals, &received);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kj_fake_llm: %s\n", e.what());
    return 1;
  }
  return 0;
}
