// Task<T>: a lazy coroutine. Nothing runs until it is co_awaited (or started by a runtime);
// when it finishes it resumes whoever awaited it (symmetric transfer, so long chains of
// awaits do not grow the stack).
//
// Ownership: a Task owns its coroutine frame and destroys it in its destructor. Destroying a
// suspended Task destroys the frame and, with it, every Task that frame was awaiting: this is
// how a runtime discards a crashed client. Exceptions are not used: an exception escaping a
// coroutine terminates the process.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <optional>
#include <utility>

namespace locklab {

template <typename T = void>
class Task;

namespace detail {

// Coroutine frames: a simulation starts and ends millions of small coroutines (an attempt, a
// wait), so their frames come from per-thread free lists by size (task.cc) instead of the
// general allocator. A frame may be freed on another thread than the one that made it.
void* AllocateFrame(std::size_t bytes);
void FreeFrame(void* frame, std::size_t bytes) noexcept;

// What every Task's promise shares: lazy start, and resuming the awaiting coroutine at the end.
struct PromiseBase {
  static void* operator new(std::size_t bytes) { return AllocateFrame(bytes); }
  static void operator delete(void* frame, std::size_t bytes) noexcept { FreeFrame(frame, bytes); }

  std::coroutine_handle<> continuation = std::noop_coroutine();

  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <typename P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      return h.promise().continuation;
    }
    void await_resume() noexcept {}
  };

  std::suspend_always initial_suspend() noexcept { return {}; }
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { std::terminate(); }
};

// The only part of a Task that depends on T: where co_return puts the value, and how the
// awaiter takes it. Task<void> gets return_void() and nothing to take.
template <typename T>
struct Promise : PromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  template <typename U>
  void return_value(U&& v) { value.emplace(std::forward<U>(v)); }
  T result() { return std::move(*value); }
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void result() noexcept {}
};

}  // namespace detail

template <typename T>
class Task {
 public:
  using promise_type = detail::Promise<T>;

  Task() = default;
  explicit Task(std::coroutine_handle<promise_type> h) : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() {
    if (h_) h_.destroy();
  }

  bool await_ready() const noexcept { return !h_ || h_.done(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h_.promise().continuation = awaiting;
    return h_;
  }
  // The co_returned value (nothing for Task<void>).
  T await_resume() { return h_.promise().result(); }

  // For runtimes: start a top-level task that nobody awaits.
  void Start() { h_.resume(); }
  bool done() const { return !h_ || h_.done(); }
  bool valid() const { return static_cast<bool>(h_); }
  std::coroutine_handle<> handle() const { return h_; }

 private:
  std::coroutine_handle<promise_type> h_;
};

namespace detail {

template <typename T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}

inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}

}  // namespace detail

}  // namespace locklab
