// Implements version_string from the values CMake records at configure time.
#include "core/version.hpp"

namespace kj {

std::string version_string() {
  return std::string(KJ_VERSION) + "+" + KJ_GIT_SHA;
}

} // namespace kj
