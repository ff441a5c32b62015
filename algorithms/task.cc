#include "algorithms/task.h"

#include <new>

namespace locklab::detail {
namespace {

constexpr std::size_t kClassBytes = 64;  // frames are kept by size rounded up to this
constexpr std::size_t kClasses = 32;     // up to 2 KiB; bigger frames use operator new directly
constexpr std::size_t kMaxKept = 4096;   // free frames kept per class and thread

struct FreeFrameNode {
  FreeFrameNode* next;
};

// One thread's free frames. Trivially destructible, so it stays usable while the thread's other
// thread_local objects are destroyed; the Reaper returns the frames when the thread ends.
struct FramePool {
  FreeFrameNode* head[kClasses];
  std::size_t count[kClasses];
  bool closed;  // the thread is ending: frees go straight to the general allocator
};
thread_local FramePool pool{};

struct Reaper {
  void Arm() {}
  ~Reaper() {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (pool.head[c] != nullptr) {
        FreeFrameNode* n = pool.head[c];
        pool.head[c] = n->next;
        ::operator delete(n);
      }
      pool.count[c] = 0;
    }
    pool.closed = true;
  }
};
thread_local Reaper reaper;

std::size_t ClassOf(std::size_t bytes) { return (bytes + kClassBytes - 1) / kClassBytes - 1; }

}  // namespace

void* AllocateFrame(std::size_t bytes) {
  const std::size_t c = ClassOf(bytes);
  if (c >= kClasses) return ::operator new(bytes);
  FreeFrameNode* n = pool.head[c];
  if (n == nullptr) {
    reaper.Arm();  // constructs this thread's Reaper: the frames kept are freed when it ends
    return ::operator new((c + 1) * kClassBytes);
  }
  pool.head[c] = n->next;
  --pool.count[c];
  return n;
}

void FreeFrame(void* frame, std::size_t bytes) noexcept {
  const std::size_t c = ClassOf(bytes);
  if (c >= kClasses || pool.closed || pool.count[c] >= kMaxKept) {
    ::operator delete(frame);
    return;
  }
  pool.head[c] = new (frame) FreeFrameNode{pool.head[c]};
  ++pool.count[c];
}

}  // namespace locklab::detail
