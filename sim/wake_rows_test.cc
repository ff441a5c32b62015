#include "sim/wake_rows.h"

#include <bit>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace locklab::sim {
namespace {

// The simulator's bytes hang on these doubles: WakeRows must give exactly what the free functions
// give, whether its rows share their p values (one place per lookup) or not (each row alone).
TEST(WakeRows, GiveTheFreeFunctionsDoublesToTheBit) {
  const CostDist even{{{0, 21.1}, {0.25, 23.3}, {0.5, 24.2}, {0.75, 24.4}, {1, 426.4}}};
  const CostDist even2{{{0, 18.9}, {0.25, 28.9}, {0.5, 30.0}, {0.75, 30.0}, {1, 99.5}}};
  const CostDist flat_step{{{0, 5}, {0.25, 5}, {0.5, 7}, {0.5, 9}, {1, 9}}};
  const CostDist uneven{{{0, 3.1}, {0.3, 17.7}, {0.9, 40.3}, {1, 333.3}}};
  struct Table {
    std::vector<WakeRow> rows;
    bool shared;
  };
  const std::vector<Table> tables = {
      {{}, false},
      {{{37.3, even}}, true},
      {{{5, even}, {10, even2}, {50, even}, {50000, even2}}, true},
      {{{0, even}, {250, even2}}, true},
      {{{3, even}, {3, even2}, {77.7, even}}, true},
      {{{5, even}, {10, uneven}}, false},                 // another count of points
      {{{5, CostDist{{{0, 1}, {0.2, 2}, {0.5, 3}, {0.75, 4}, {1, 5}}}}, {10, even}}, false},  // other p
      {{{5, flat_step}, {10, CostDist{{{0, 1}, {0.25, 2}, {0.5, 3}, {0.5, 4}, {1, 5}}}}}, true},
      {{{5, CostDist{}}, {10, CostDist{}}}, false},       // no points: on time
  };
  const double idles[] = {-5, 0, 0.3, 3, 5, 7.5, 10, 37.3, 55.5, 250, 999.9, 1e5, 1e9};
  for (size_t t = 0; t < tables.size(); ++t) {
    const WakeRows wake(tables[t].rows);
    EXPECT_EQ(wake.shared_place(), tables[t].shared) << "table " << t;
    for (double idle : idles) {
      for (int k = -1; k <= 129; ++k) {
        const double u = k / 128.0 - (k == 128 ? 1e-12 : 0.0);
        const double late = WakeLateUs(tables[t].rows, idle, u);
        const double socket = SocketWakeLateUs(tables[t].rows, idle, u);
        ASSERT_EQ(std::bit_cast<uint64_t>(wake.LateUs(idle, u)), std::bit_cast<uint64_t>(late))
            << "table " << t << ", idle " << idle << " us, u " << u;
        ASSERT_EQ(std::bit_cast<uint64_t>(wake.SocketLateUs(idle, u)), std::bit_cast<uint64_t>(socket))
            << "table " << t << ", idle " << idle << " us, u " << u;
      }
    }
  }
}

}  // namespace
}  // namespace locklab::sim
