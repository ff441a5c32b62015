#include "harness/run/backends.h"

#include <map>

#include "harness/run/sim_runtime.h"

namespace locklab {
namespace {

Result<std::unique_ptr<Runtime>> MakeSim(const BackendConfig& cfg, const std::vector<std::string>&) {
  return MakeSimRuntime(cfg, cfg.trace_commands);
}

std::map<std::string, RuntimeMaker>& Registry() {
  static std::map<std::string, RuntimeMaker> makers{{"sim", &MakeSim}};
  return makers;
}

}  // namespace

void RegisterBackend(const std::string& name, RuntimeMaker make) { Registry()[name] = make; }

RuntimeMaker FindBackend(const std::string& name) {
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : it->second;
}

}  // namespace locklab
