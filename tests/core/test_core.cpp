// core/ (kj_base): the hash that names sources, builds and stacks; the rows' time stamps; the names of
// verdicts and device kinds at the edges; kj's version string.
#include "core/device_kind.hpp"
#include "core/hashing.hpp"
#include "core/verdict.hpp"
#include "core/version.hpp"
#include "tests/support/catch_compat.hpp"

#include <chrono>
#include <regex>
#include <string>

TEST_CASE("sha256_hex is SHA-256 in lower-case hex") {
  CHECK(kj::core::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(kj::core::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("time stamps are ISO-8601 UTC with milliseconds") {
  const auto epoch = std::chrono::system_clock::time_point{} + std::chrono::milliseconds(1'234);
  CHECK(kj::core::iso8601_of(epoch) == "1970-01-01T00:00:01.234Z");
  CHECK(std::regex_match(kj::core::now_iso8601(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
}

TEST_CASE("every verdict and device kind is named and parsed back, and nothing else parses") {
  for (const auto name : kj::verdict_names) {
    const auto v = kj::parse_verdict(name);
    REQUIRE(v);
    CHECK(kj::to_string(*v) == name);
  }
  CHECK_FALSE(kj::parse_verdict("Correct"));
  for (const auto d : {kj::device_kind::cpu, kj::device_kind::cuda})
    CHECK(kj::parse_device_kind(kj::to_string(d)) == d);
  CHECK_FALSE(kj::parse_device_kind("auto"));
}

TEST_CASE("kj's version names the release and the source it was built from") {
  CHECK(std::regex_match(kj::version_string(), std::regex(R"(\d+\.\d+\.\d+\+.+)")));
}
