// Compiled as part of kj_exec's layer (tests/structure/layer_probe/CMakeLists.txt), this upward include must
// not compile: engine/exec/ sees timing and core, never the orchestrator above it.
#include "engine/exec/messages.hpp"
#include "planning/orchestrator/run.hpp"
