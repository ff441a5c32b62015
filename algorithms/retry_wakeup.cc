// Policies whose waiters sleep until a release wakes them (filled in with the pub/sub and BLPOP
// primitives of Env).
#include "algorithms/retry.h"

namespace locklab {

std::vector<RetryInfo> WakeupRetryPolicies() { return {}; }

}  // namespace locklab
