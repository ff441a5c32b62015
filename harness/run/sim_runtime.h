// SimRuntime: the Runtime interface over the deterministic simulator (sim/simulator.h).
// Executed commands and faults go into the history in true (virtual) time.
#pragma once

#include <memory>
#include <string>

#include "harness/run/runtime.h"

namespace locklab {

// `trace_commands`: record every executed command in the history (timelines); off for
// benchmarks. Never fails for a valid config.
std::unique_ptr<Runtime> MakeSimRuntime(const BackendConfig& cfg, bool trace_commands = true);

}  // namespace locklab
