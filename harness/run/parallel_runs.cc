#include "harness/run/parallel_runs.h"

#include <algorithm>
#include <thread>

namespace locklab {

int DefaultJobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min<unsigned>(n, kMaxJobs));
}

}  // namespace locklab
