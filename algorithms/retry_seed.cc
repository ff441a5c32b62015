// Seed 000's five ways of waiting between attempts (its load-test section), by their names:
//
//   No1: retry at once for the first barrier-ms of an acquisition, then yield before each try
//   No2: yield for the first barrier-ms, then sleep sleep-ms before each try
//   No3: sleep sleep-ms before each try (the seed's pick, 200 ms)
//   No4: the same with 2000 ms
//   No5: yield before each try
//
// Thread.yield() gives the CPU away for one time slice; here it is Env::Yield(): the client
// runs again after everything else that is ready now. "Retry at once" does not suspend at all.
#include <memory>

#include "algorithms/retry.h"

namespace locklab {
namespace {

class Seed : public RetryPolicy {
 public:
  enum class Kind { kNo1, kNo2, kSleep, kNo5 };
  Seed(Kind kind, int64_t barrier_ms, int64_t sleep_ms) : kind_(kind), barrier_us_(barrier_ms * 1000), sleep_ms_(sleep_ms) {}

  Task<void> Wait(Env& env, int, int64_t waited_us, int64_t) override {
    const bool past_barrier = waited_us > barrier_us_;
    switch (kind_) {
      case Kind::kNo1:
        if (past_barrier) co_await env.Yield();
        break;
      case Kind::kNo2:
        if (past_barrier) {
          co_await env.SleepMs(sleep_ms_);
        } else {
          co_await env.Yield();
        }
        break;
      case Kind::kSleep: co_await env.SleepMs(sleep_ms_); break;
      case Kind::kNo5: co_await env.Yield(); break;
    }
  }

 private:
  Kind kind_;
  int64_t barrier_us_;
  int64_t sleep_ms_;
};

RetryInfo Make(const char* name, const char* summary, Seed::Kind kind, std::vector<OptionSpec> options) {
  RetryInfo r;
  r.name = name;
  r.summary = summary;
  r.options = std::move(options);
  switch (kind) {
    case Seed::Kind::kNo1:
      r.make = [](const Options& o, const std::string&) -> std::unique_ptr<RetryPolicy> {
        return std::make_unique<Seed>(Seed::Kind::kNo1, RetryIntOption(o, "barrier-ms"), 0);
      };
      break;
    case Seed::Kind::kNo2:
      r.make = [](const Options& o, const std::string&) -> std::unique_ptr<RetryPolicy> {
        return std::make_unique<Seed>(Seed::Kind::kNo2, RetryIntOption(o, "barrier-ms"), RetryIntOption(o, "sleep-ms"));
      };
      break;
    case Seed::Kind::kSleep:
      r.make = [](const Options& o, const std::string&) -> std::unique_ptr<RetryPolicy> {
        return std::make_unique<Seed>(Seed::Kind::kSleep, 0, RetryIntOption(o, "sleep-ms"));
      };
      break;
    case Seed::Kind::kNo5:
      r.make = [](const Options&, const std::string&) -> std::unique_ptr<RetryPolicy> {
        return std::make_unique<Seed>(Seed::Kind::kNo5, 0, 0);
      };
      break;
  }
  return r;
}

}  // namespace

std::vector<RetryInfo> SeedRetryPolicies() {
  const OptionSpec barrier{"barrier-ms", "600", {}, "how long the first phase lasts, from the start of the acquisition"};
  return {
      Make("no1", "seed 000 No1: retry at once for barrier-ms, then yield before each try", Seed::Kind::kNo1, {barrier}),
      Make("no2", "seed 000 No2: yield for barrier-ms, then sleep sleep-ms before each try", Seed::Kind::kNo2,
           {barrier, {"sleep-ms", "200", {}, "sleep after the barrier"}}),
      Make("no3", "seed 000 No3 (its pick): sleep sleep-ms before each try", Seed::Kind::kSleep,
           {{"sleep-ms", "200", {}, "sleep between attempts"}}),
      Make("no4", "seed 000 No4: sleep sleep-ms (2 s) before each try", Seed::Kind::kSleep,
           {{"sleep-ms", "2000", {}, "sleep between attempts"}}),
      Make("no5", "seed 000 No5: yield before each try", Seed::Kind::kNo5, {}),
  };
}

}  // namespace locklab
