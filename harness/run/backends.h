// Backends: which Runtime a RunSpec's `backend` names. The simulator ("sim") is always there;
// the real runtime lives above this layer (harness/real/) and is registered once, at start-up,
// by the program's main (FoundationDB picks g_network once in main the same way): RunOne stays
// free of hiredis, and the dependency arrows keep pointing one way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/run/runtime.h"

namespace locklab {

// Makes a runtime for `cfg`; `endpoints` are existing HOST:PORT servers (empty: start our own).
// A failed Status when it cannot (nothing left running).
using RuntimeMaker = Result<std::unique_ptr<Runtime>> (*)(const BackendConfig& cfg,
                                                          const std::vector<std::string>& endpoints);

// Registers (or replaces) the maker for `name`. Call before any run; not thread-safe.
void RegisterBackend(const std::string& name, RuntimeMaker make);
// The maker for `name`, or nullptr when no such backend is linked into this program.
RuntimeMaker FindBackend(const std::string& name);

}  // namespace locklab
