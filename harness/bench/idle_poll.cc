#include "harness/bench/idle_poll.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace locklab {

namespace {
constexpr const char* kDevice = "/dev/cpu_dma_latency";
}

IdlePollHold::IdlePollHold() {
  const int fd = open(kDevice, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    why_not_ = std::string("cannot open ") + kDevice + ": " + std::strerror(errno) +
               (errno == EACCES || errno == EPERM ? " (needs root)" : "");
    return;
  }
  const int32_t zero_us = 0;  // the kernel reads a binary s32
  if (write(fd, &zero_us, sizeof zero_us) != static_cast<ssize_t>(sizeof zero_us)) {
    why_not_ = std::string("cannot write ") + kDevice + ": " + std::strerror(errno);
    close(fd);
    return;
  }
  fd_ = fd;
}

IdlePollHold::~IdlePollHold() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace locklab
