// Implements evaluations_so_far.
#include "tests/acceptance/live_kj.hpp"

#include "db/sqlite.hpp"
#include "db/store.hpp"
#include "tests/support/paths.hpp"

namespace kj::test {

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
