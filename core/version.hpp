// The version of kerneljudge and the git SHA it was built from.
#pragma once

#include <string>

namespace kj {

std::string version_string(); // "0.1.0+<sha>"

} // namespace kj
