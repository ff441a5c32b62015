// The main of every GoogleTest binary: the real backend is registered once, as locklab's own
// main does (harness/run/backends.h), so that tests can run a RunSpec on either backend.
#include <gtest/gtest.h>

#include "harness/real/redis_runtime.h"

int main(int argc, char** argv) {
  locklab::RegisterRedisBackend();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
