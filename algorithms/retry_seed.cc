// The five ways of waiting between attempts of "The right way to implement a distributed lock
// with Redis, part 2" (its load-test section; document 000 in the README's "Sources"; the
// file's name keeps the older word "seed" for the source documents), by their names:
//
//   No1: retry at once for the first barrier-ms of an acquisition, then yield before each try
//   No2: yield for the first barrier-ms, then sleep sleep-ms before each try
//   No3: sleep sleep-ms before each try (the document's pick, 200 ms)
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

// One maker per kind (RetryInfo::make is a plain function pointer). An option a kind does not
// declare reads as 0, which is what that kind expects.
template <Seed::Kind K>
std::unique_ptr<RetryPolicy> MakeSeed(const Options& o, const std::string&) {
  return std::make_unique<Seed>(K, RetryIntOption(o, "barrier-ms"), RetryIntOption(o, "sleep-ms"));
}

template <Seed::Kind K>
RetryInfo Make(const char* name, const char* summary, std::vector<OptionSpec> options) {
  RetryInfo r;
  r.name = name;
  r.summary = summary;
  r.options = std::move(options);
  r.make = &MakeSeed<K>;
  return r;
}

}  // namespace

std::vector<RetryInfo> SeedRetryPolicies() {
  const OptionSpec barrier = OptionSpec::Int("barrier-ms", 600, 0, kMaxOptionMs,
                                             "how long the first phase lasts, from the start of the acquisition");
  return {
      Make<Seed::Kind::kNo1>("no1", "document 000's No1: retry at once for barrier-ms, then yield before each try",
                             {barrier}),
      Make<Seed::Kind::kNo2>("no2", "document 000's No2: yield for barrier-ms, then sleep sleep-ms before each try",
                             {barrier, OptionSpec::Int("sleep-ms", 200, 0, kMaxOptionMs, "sleep after the barrier")}),
      Make<Seed::Kind::kSleep>("no3", "document 000's No3 (its pick): sleep sleep-ms before each try",
                               {OptionSpec::Int("sleep-ms", 200, 0, kMaxOptionMs, "sleep between attempts")}),
      Make<Seed::Kind::kSleep>("no4", "document 000's No4: sleep sleep-ms (2 s) before each try",
                               {OptionSpec::Int("sleep-ms", 2000, 0, kMaxOptionMs, "sleep between attempts")}),
      Make<Seed::Kind::kNo5>("no5", "document 000's No5: yield before each try", {}),
  };
}

}  // namespace locklab
