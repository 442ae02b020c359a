// Implements start_kj and evaluations_so_far.
#include "tests/acceptance/live_kj.hpp"

#include "db/sqlite.hpp"
#include "db/store.hpp"
#include "tests/support/paths.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace kj::test {

pid_t start_kj(const std::vector<std::string>& args, const std::filesystem::path& log) {
  const std::string binary = kj_binary().string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

std::int64_t evaluations_so_far(const std::filesystem::path& db, const std::string& run_id) {
  using kj::db::sqlite::connection;
  try {
    auto c = connection::open(db, connection::open_mode::read_only);
    auto count = c.prepare(
        "SELECT count(*) FROM evaluations e JOIN runs r ON r.id = e.run_id WHERE r.run_uid = ?", "poll");
    count.bind_all(run_id);
    count.step();
    return count.column_int64(0);
  } catch (const kj::db::db_error&) {
    return -1;
  }
}

} // namespace kj::test
