// Compiled as part of kj_exec's layer (tests/structure/layer_probe/CMakeLists.txt), this upward include must
// not compile: harness/exec/ sees db, timing and base, never the orchestrator above it.
#include "harness/exec/messages.hpp"
#include "harness/orchestrator/run.hpp"
