// The hostile corpus's checks: row expectations, leftovers, secrets, the listener, the DB's integrity.
#include "tests/acceptance/hostile_checks.hpp"

#include "db/sqlite.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstdlib>
#include <fstream>
#include <map>
#include <netinet/in.h>
#include <poll.h>
#include <set>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::test::hostile {
namespace {

bool compiles(const fs::path& file) {
  const std::string text = read_file(file);
  return text.find("load_inline") != std::string::npos || text.find("cpp_extension") != std::string::npos;
}

std::string expand(std::string path, const fs::path& home, const fs::path& cwd, const fs::path& cache) {
  for (const auto& [name, value] :
       {std::pair<std::string, fs::path>{"$HOME", home}, {"$CWD", cwd}, {"$KJ_CACHE_DIR", cache}})
    if (path.rfind(name, 0) == 0) path = value.string() + path.substr(name.size());
  return path;
}

std::vector<std::string> strings_of(const json& entry, const char* key) {
  const json& expect = entry.at("expect");
  return expect.contains(key) ? expect.at(key).get<std::vector<std::string>>() : std::vector<std::string>{};
}

// Every process's command line, NULs as spaces.
std::vector<std::string> command_lines() {
  std::vector<std::string> lines;
  for (const auto& p : fs::directory_iterator("/proc")) {
    std::ifstream in(p.path() / "cmdline", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(text.begin(), text.end(), '\0', ' ');
    if (!text.empty()) lines.push_back(text);
  }
  return lines;
}

// A secret verbatim, or as the decimal character codes the shape channel uses ("115, 107, 45, ...").
std::vector<std::string> secret_forms(const json& manifest) {
  std::vector<std::string> forms;
  for (const auto& canary : manifest.at("defaults").at("secret_canaries")) {
    const std::string s = canary.get<std::string>();
    forms.push_back(s);
    std::string codes;
    for (unsigned char c : s)
      codes += (codes.empty() ? "" : ", ") + std::to_string(c);
    forms.push_back(codes);
  }
  return forms;
}

} // namespace

fs::path root() {
  return fixtures_dir() / "hostile";
}

json manifest(const fs::path& corpus) {
  return json::parse(read_file(corpus / "manifest.json"));
}

// Attacks that kj's design leaves with nothing to trigger on: the candidate then does honest work, and an
// honest verdict (correct / strict pass, with whatever its honest speed is) is what a secure judge records.
// The manifest was written against a judge where they fired.
const std::map<std::string, std::string> k_inert = {
    {"phase_switch_stack_inspect", "timed calls come from kj's C++ loop in the runner: no Python frame looks "
                                   "like a timer, so it always computes"},
    {"os_exit0_in_timing",
     "every timed call gets fresh inputs: no input repeats five times, so it never exits"},
    {"kill_parent",
     "the runner's parent is its PID namespace's first process, which signals from inside cannot "
     "kill, and no other process of kj's is visible: it computes"}};

std::vector<std::string> select(const fs::path& corpus, const json& manifest, const std::string& device) {
  const char* all_env = std::getenv("KJ_HOSTILE_ALL");
  const bool all = device == "cuda" || (all_env && std::string(all_env) == "1");
  std::set<std::string> ci_attacks;
  if (manifest.contains("ci_attacks"))
    for (const auto& a : manifest.at("ci_attacks").at("attacks"))
      ci_attacks.insert(a.get<std::string>());
  const bool subset = !all && !ci_attacks.empty();
  std::vector<std::string> files;
  for (const auto& [file, entry] : manifest.at("files").items()) {
    if (file.rfind(device + "/", 0) != 0) continue;
    const std::string attack = entry.at("attack");
    if (attack == "bystander") {
      if (all || !subset || file.find("level_3") == std::string::npos) files.push_back(file);
    } else if (device == "cuda" || (!compiles(corpus / file) && (!subset || ci_attacks.count(attack)))) {
      files.push_back(file);
    }
  }
  return files;
}

listener::listener() {
  m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(m_fd, 16) != 0 || ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("the hostile test's listener could not start");
  m_port = ntohs(addr.sin_port);
  m_thread = std::thread([this] {
    while (!m_stop) {
      pollfd p{m_fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int c = ::accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++m_connections;
      ::close(c);
    }
  });
}

listener::~listener() {
  m_stop = true;
  m_thread.join();
  ::close(m_fd);
}

environment::environment(const json& manifest, const fs::path& home, const fs::path& cache, int port,
                         int oom_cap_gb) {
  std::vector<std::pair<std::string, std::string>> values = {
      {"HOME", home.string()},
      {"KJ_CACHE_DIR", cache.string()},
      {"KJ_HOSTILE_PORT", std::to_string(port)},
      {"KJ_HOSTILE_OOM_CAP_GB", std::to_string(oom_cap_gb)},
      {"KJ_HOSTILE_FORK_CAP", "32"},
      {"KJ_HOSTILE_STOP_SECONDS", "5"},
      {"KJ_HOSTILE_DAEMON_SECONDS", "5"}};
  for (const auto& [name, value] : manifest.at("defaults").at("secret_env").items())
    values.emplace_back(name, value.get<std::string>());
  for (const auto& [name, value] : values) {
    const char* old = std::getenv(name.c_str());
    m_saved.emplace_back(name, old ? old : "\x01");
    ::setenv(name.c_str(), value.c_str(), 1);
  }
}

environment::~environment() {
  for (const auto& [name, old] : m_saved)
    old == "\x01" ? ::unsetenv(name.c_str()) : ::setenv(name.c_str(), old.c_str(), 1);
}

void remove_markers(const json& manifest, const std::vector<std::string>& files, const fs::path& home,
                    const fs::path& cwd, const fs::path& cache) {
  for (const auto& f : files)
    for (const auto& path : strings_of(manifest.at("files").at(f), "no_file"))
      fs::remove_all(expand(path, home, cwd, cache));
}

int check_after_s(const json& manifest, const std::vector<std::string>& files) {
  // The guards above shorten the daemons' delays to 5 s: a few seconds past them is enough.
  int wait = 0;
  for (const auto& f : files)
    if (manifest.at("files").at(f).at("expect").contains("check_after_s")) wait = 8;
  return wait;
}

void check_row(const json& entry, const std::string& file, const json& rows) {
  const std::string name = fs::path(file).filename().string();
  const auto row = std::find_if(rows.begin(), rows.end(), [&](const json& r) {
    return fs::path(r.at("candidate").get<std::string>()).filename() == name;
  });
  INFO(file << " (" << entry.at("attack").get<std::string>() << ")");
  REQUIRE(row != rows.end());
  INFO(row->dump());
  const json& expect = entry.at("expect");
  if (const auto inert = k_inert.find(entry.at("attack")); inert != k_inert.end()) {
    INFO("inert under kj: " << inert->second);
    CHECK(((row->at("verdict") == "correct" && row->at("strict_verdict") == "pass") ||
           row->at("strict_verdict") == "fail"));
    return;
  }
  const auto allowed = expect.at("verdicts").get<std::vector<std::string>>();
  CHECK(std::count(allowed.begin(), allowed.end(), row->at("verdict").get<std::string>()) == 1);
  if (expect.at("strict") != "any") CHECK(row->at("strict_verdict") == expect.at("strict"));
  for (const auto& cls : strings_of(entry, "strict_classes"))
    CHECK(list_contains(row->at("strict_failed").get<std::string>(), cls));
  for (const auto& kind : strings_of(entry, "findings"))
    CHECK(list_contains(row->at("findings").get<std::string>(), kind));
  if (expect.contains("speedup_range")) { // a bystander's honest speed, kept beside the attacks
    const auto range = expect.at("speedup_range").get<std::vector<double>>();
    const std::string untrusted = row->value("untrusted", std::string());
    if (row->at("speedup").is_null()) {
      // A loaded host (CI runs two tests at once): when the host probe saw the machine's speed move by more
      // than 10% across both sides' rounds, kj credits no speedup at all (docs/usage.md). Any other missing
      // speedup is a bystander harmed.
      CHECK(untrusted.find("host's speed moved") != std::string::npos);
    } else if (row->value("speedup_noisy",
                          false)) { // the host moved (marked `~`): its interval must still admit it
      const auto ci = row->at("speedup_ci").get<std::vector<double>>();
      CHECK((ci.at(1) >= range.at(0) && ci.at(0) <= range.at(1)));
    } else {
      CHECK(row->at("speedup").get<double>() >= range.at(0));
      CHECK(row->at("speedup").get<double>() <= range.at(1));
    }
  }
  if (expect.value("speedup_credited", true) == false && row->at("verdict") == "correct" &&
      row->at("strict_verdict") == "pass" && !row->at("speedup").is_null()) {
    const json& cap = expect.at("max_speedup");
    CHECK((!cap.is_null() && row->at("speedup").get<double>() <= cap.get<double>()));
  }
}

void check_leftovers(const json& entry, const std::string& file, const fs::path& home, const fs::path& cwd,
                     const fs::path& cache) {
  INFO(file << " (" << entry.at("attack").get<std::string>() << ")");
  for (const auto& path : strings_of(entry, "no_file")) {
    INFO("a file outside scratch: " << expand(path, home, cwd, cache));
    CHECK_FALSE(fs::exists(expand(path, home, cwd, cache)));
  }
  const auto lines = command_lines();
  for (const auto& needle : strings_of(entry, "no_process"))
    for (const auto& line : lines) {
      INFO("a process outlived its job: " << line);
      CHECK(line.find(needle) == std::string::npos);
    }
}

void check_no_secret(const json& manifest, const std::vector<fs::path>& places, const std::string& printed) {
  const auto forms = secret_forms(manifest);
  auto check_text = [&](const std::string& where, const std::string& text) {
    for (const auto& form : forms) {
      INFO("a planted secret reached " << where);
      CHECK(text.find(form) == std::string::npos);
    }
  };
  check_text("kj's output", printed);
  auto check_file = [&](const fs::path& p) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) < (64u << 20))
      check_text(p.string(), read_file(p));
  };
  for (const auto& place : places) {
    if (place == "/tmp") { // only what the attacks name: /tmp/kj-hostile-*
      for (const auto& e : fs::directory_iterator("/tmp"))
        if (e.path().filename().string().rfind("kj-hostile-", 0) == 0) check_file(e.path());
      continue;
    }
    if (fs::is_directory(place))
      for (const auto& e :
           fs::recursive_directory_iterator(place, fs::directory_options::skip_permission_denied))
        check_file(e.path());
    else
      check_file(place);
  }
}

void check_db(const fs::path& db, double max_mb) {
  auto c = kj::db::sqlite::connection::open(db, kj::db::sqlite::connection::open_mode::read_only);
  CHECK(c.query_text("PRAGMA integrity_check", "check the DB") == "ok");
  CHECK(c.query_int64("SELECT count(*) FROM sqlite_master WHERE name LIKE 'kj_hostile%'",
                      "look for tables") == 0);
  CHECK(static_cast<double>(fs::file_size(db)) < max_mb * 1024 * 1024);
}

} // namespace kj::test::hostile
