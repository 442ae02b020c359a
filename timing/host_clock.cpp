// Implements host_now_ms.
#include "timing/host_clock.hpp"

namespace kj::timing {

double host_now_ms() {
  return std::chrono::duration<double, std::milli>(host_clock::now().time_since_epoch()).count();
}

} // namespace kj::timing
