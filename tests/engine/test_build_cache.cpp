// The build cache trusts a compiled build only while its folder holds what kj hashed after building it
// (engine/exec/build_cache.hpp): a file changed, added or removed afterwards makes it a miss, built again.
#include "engine/exec/build_cache.hpp"
#include "engine/exec/job_runner.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <fstream>

namespace fs = std::filesystem;

namespace {

const std::string k_key = "0123456789abcdef0123456789abcdef";

void put(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

} // namespace

TEST_CASE("a cached build is used while its files are what kj recorded, and built again once they change") {
  kj::test::scratch_dir dir;
  const kj::exec::build_cache cache(dir / "builds");
  const fs::path folder = cache.dir(k_key);
  put(folder / "ext" / "ops" / "ops.so", "the library kj built");
  put(folder / "ext" / "ops" / "main.cpp", "its source");
  kj::exec::build_record built{
      .key = k_key, .log = "log", .seconds = 1.0, .created_at = "2026-12-03T00:00:00Z"};
  built.content = kj::exec::build_content(folder);
  cache.store(built);
  REQUIRE(cache.lookup(k_key).has_value());
  CHECK(cache.lookup(k_key)->cached);

  put(folder / "ext" / "ops" / "ops.so", "a neighbour's replacement"); // changed after kj hashed it
  CHECK_FALSE(cache.lookup(k_key).has_value());
  put(folder / "ext" / "ops" / "ops.so", "the library kj built");
  REQUIRE(cache.lookup(k_key).has_value());
  put(folder / "ext" / "ops" / "extra.so", "one more library"); // added
  CHECK_FALSE(cache.lookup(k_key).has_value());
  fs::remove(folder / "ext" / "ops" / "extra.so");
  fs::create_symlink("/etc/passwd", folder / "ext" / "ops" / "link.so"); // a link counts as what it names
  CHECK_FALSE(cache.lookup(k_key).has_value());
  fs::remove(folder / "ext" / "ops" / "link.so");
  REQUIRE(cache.lookup(k_key).has_value());

  cache.forget(k_key); // a cached build that failed to load: its next use builds it again
  CHECK_FALSE(cache.lookup(k_key).has_value());
}

TEST_CASE("a build kept without a content hash is not trusted, its failures are") {
  kj::test::scratch_dir dir;
  const kj::exec::build_cache cache(dir / "builds");
  put(cache.dir(k_key) / "ext" / "ops" / "ops.so", "from a kj that hashed nothing");
  cache.store({.key = k_key, .seconds = 1.0}); // no content: an older cache's record
  CHECK_FALSE(cache.lookup(k_key).has_value());
  cache.store({.key = k_key,
               .end = kj::exec::build_end::failed,
               .failure = kj::verdict::compile_error,
               .log = "error: expected ';'",
               .seconds = 1.0}); // the candidate's own, final
  REQUIRE(cache.lookup(k_key).has_value());
  CHECK(status_name(*cache.lookup(k_key)) == "compile_error");
  cache.store(
      {.key = k_key, .end = kj::exec::build_end::failed, .failure = kj::verdict::timeout}); // not final
  CHECK(status_name(*cache.lookup(k_key)) == "compile_error"); // the final one stays
}

TEST_CASE("status.json's status is read back typed, and a name kj never writes is built again") {
  kj::test::scratch_dir dir;
  const kj::exec::build_cache cache(dir / "builds");
  cache.store({.key = k_key, .end = kj::exec::build_end::failed, .failure = kj::verdict::load_error});
  const auto loaded = cache.lookup(k_key);
  REQUIRE(loaded.has_value());
  CHECK(loaded->end == kj::exec::build_end::failed);
  CHECK(loaded->failure == kj::verdict::load_error);
  cache.store({.key = k_key, .end = kj::exec::build_end::deferred});
  CHECK(cache.lookup(k_key)->end == kj::exec::build_end::deferred);
  put(cache.dir(k_key) / "status.json", R"({"status": "linked"})"); // another tool's word
  CHECK_FALSE(cache.lookup(k_key).has_value());
}

TEST_CASE("a relative cache folder is made absolute: the sandbox binds it from another working folder") {
  const fs::path resolved = kj::exec::cache_dir_or_default("build/kj-cache");
  CHECK(resolved.is_absolute());
  CHECK(resolved == (fs::current_path() / "build" / "kj-cache").lexically_normal());
  CHECK(kj::exec::cache_dir_or_default("").is_absolute());
  CHECK(kj::exec::cache_dir_or_default("/tmp/x/../kj") == fs::path("/tmp/kj"));
}
