#include "sim/wake_rows.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
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
      {{{50, even}, {10, even2}, {100, even}}, true},     // falling idle times: walked from the first row
      {{{5, even}, {10, even2}, {10, even}, {20, even2}, {50, even}, {100, even2}, {200, even},
        {500, even2}, {1000, even}, {2000, even2}, {5000, even}, {10000, even2}, {50000, even}},
       true},  // a profile's shape, with a repeated idle time
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

// Idle times of every size and in any order (equal to a row's, NaN, infinite), over rows that
// rise or fall, must give the free functions' doubles: a lookup keeps nothing from the last.
TEST(WakeRows, IdleTimesInAnyOrderGiveTheFreeFunctionsDoubles) {
  const CostDist a{{{0, 21.1}, {0.25, 23.3}, {0.5, 24.2}, {0.75, 24.4}, {1, 426.4}}};
  const CostDist b{{{0, 18.9}, {0.25, 28.9}, {0.5, 30.0}, {0.75, 30.0}, {1, 99.5}}};
  const std::vector<std::vector<double>> tables = {
      {5, 10, 20, 50, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 50000},  // a profile's shape, a repeat
      {5, 10, 500, 20, 50, 100, 200, 50, 1000, 2000, 10000, 5000, 50000},  // falling here and there
  };
  for (const std::vector<double>& table : tables) {
    std::vector<WakeRow> rows;
    for (double idle : table) rows.push_back(WakeRow{idle, rows.size() % 2 == 0 ? a : b});
    const WakeRows wake(rows);
    ASSERT_TRUE(wake.shared_place());
    std::mt19937_64 gen(7);
    std::vector<double> idles = {std::nan(""), -std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::infinity(), -0.0};
    for (const WakeRow& r : rows) idles.push_back(r.idle_us);
    for (int k = 0; k < 400; ++k) idles.push_back(std::exp(std::uniform_real_distribution<double>(-2, 12)(gen)));
    for (int k = 0; k < 20'000; ++k) {
      const double idle = idles[gen() % idles.size()];
      const double u = std::uniform_real_distribution<double>(0, 1)(gen);
      const bool socket = gen() % 2 == 0;
      const double want = socket ? SocketWakeLateUs(rows, idle, u) : WakeLateUs(rows, idle, u);
      const double got = socket ? wake.SocketLateUs(idle, u) : wake.LateUs(idle, u);
      ASSERT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want))
          << "table " << table[2] << ", lookup " << k << ", idle " << idle << " us, u " << u
          << (socket ? ", socket" : "");
    }
  }
}

}  // namespace
}  // namespace locklab::sim
