// Implements version_string: kj's version (CMake's project version) and the source tree's git SHA, read at
// every build (cmake/KjVersion.cmake).
#include "core/version.hpp"

#include "kj_git_sha.hpp"

namespace kj {

std::string version_string() {
  return std::string(KJ_VERSION) + "+" + KJ_GIT_SHA;
}

} // namespace kj
