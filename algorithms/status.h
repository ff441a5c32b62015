// Status and Result<T>: errors as values (LevelDB's Status is the model). A Status is a code and
// a one-line message; an ok Status holds no string (a null pointer), so making, copying and
// returning it allocates nothing. A Result<T> is a T or the Status saying why there is none.
//
// Codes say what the caller should do: kInvalid is bad input (the CLI exits 2 before any work),
// kFailed is a run or a backend that could not complete (exit 1).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace locklab {

class [[nodiscard]] Status {
 public:
  enum class Code : unsigned char { kOk, kInvalid, kFailed };

  Status() = default;  // ok
  Status(const Status& o) : code_(o.code_), message_(o.message_ ? new std::string(*o.message_) : nullptr) {}
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  static Status Ok() { return Status(); }
  static Status Invalid(std::string message) { return Status(Code::kInvalid, std::move(message)); }
  static Status Failed(std::string message) { return Status(Code::kFailed, std::move(message)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  bool invalid() const { return code_ == Code::kInvalid; }
  // "" when ok.
  const std::string& message() const {
    static const std::string kNone;
    return message_ ? *message_ : kNone;
  }
  // ok(); when not ok, the message is also copied into *why (for a caller, or a test, that
  // keeps the message in a string of its own).
  bool ok(std::string* why) const {
    if (!ok()) *why = message();
    return ok();
  }
  // The same code with "context: " in front of the message (no-op when ok).
  Status Prefixed(const std::string& context) const {
    return ok() ? Status() : Status(code_, context + ": " + message());
  }

 private:
  Status(Code code, std::string message)
      : code_(code), message_(std::make_unique<std::string>(std::move(message))) {}
  Code code_ = Code::kOk;
  std::unique_ptr<std::string> message_;  // null when ok
};

// Inside a function returning Status or Result<T>: returns the status of `expr` when it is not ok.
#define LOCKLAB_RETURN_IF_ERROR(expr)                                      \
  do {                                                                     \
    if (::locklab::Status status_ = (expr); !status_.ok()) return status_; \
  } while (0)

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit, so `return value;` works
  Result(Status status) : status_(std::move(status)) {}  // must not be ok
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  // ok(); when not ok, the message is also copied into *why.
  bool ok(std::string* why) const { return ok() || status_.ok(why); }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace locklab
