// While alive, asks the kernel to keep idle CPUs polling instead of halting: /dev/cpu_dma_latency
// held open with a 0 µs limit (the PM QoS interface; the request ends when the file closes, also
// when the process dies, so nothing outlives the benchmark). On a VM, waking a halted vCPU costs
// tens of µs per wake-up, which then dominates a one-client ping-pong: rates are about 3x lower
// and move by ±10% from run to run. The price: idle CPUs spin (100% busy) for as long as it is held.
// Needs root (the device is root-only); otherwise active() is false and why_not() says why.
#pragma once

#include <string>

namespace locklab {

class IdlePollHold {
 public:
  IdlePollHold();
  ~IdlePollHold();
  IdlePollHold(const IdlePollHold&) = delete;
  IdlePollHold& operator=(const IdlePollHold&) = delete;

  bool active() const { return fd_ >= 0; }
  const std::string& why_not() const { return why_not_; }

 private:
  int fd_ = -1;
  std::string why_not_;
};

}  // namespace locklab
