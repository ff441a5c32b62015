// Reply: what a Redis node answered, or that no answer came in time.
//
// kTimeout is the third outcome (Jepsen's :info): the command may or may not have been
// executed. kError is a definite failure (the node said no, or could not be reached at all,
// so the command surely did not run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace locklab {

struct Reply {
  enum class Type : uint8_t { kNil, kInteger, kString, kStatus, kError, kArray, kTimeout };

  Type type = Type::kNil;
  int64_t integer = 0;
  std::string str;  // kString, kStatus, kError
  std::vector<Reply> elements;  // kArray

  static Reply Nil() { return Reply{}; }
  static Reply Int(int64_t v) { Reply r; r.type = Type::kInteger; r.integer = v; return r; }
  static Reply Str(std::string s) { Reply r; r.type = Type::kString; r.str = std::move(s); return r; }
  static Reply Status(std::string s) { Reply r; r.type = Type::kStatus; r.str = std::move(s); return r; }
  static Reply Error(std::string s) { Reply r; r.type = Type::kError; r.str = std::move(s); return r; }
  static Reply Timeout() { Reply r; r.type = Type::kTimeout; return r; }
  static Reply Array(std::vector<Reply> e = {}) { Reply r; r.type = Type::kArray; r.elements = std::move(e); return r; }

  bool is_nil() const { return type == Type::kNil; }
  bool is_int(int64_t v) const { return type == Type::kInteger && integer == v; }
  bool is_ok() const { return type == Type::kStatus && str == "OK"; }
  bool is_string() const { return type == Type::kString; }
  bool is_error() const { return type == Type::kError; }
  bool is_timeout() const { return type == Type::kTimeout; }

  bool operator==(const Reply&) const = default;
};

// A readable one-line form, e.g. (integer) 1, "abc", (nil), (error) ERR ..., for logs and tests.
std::string ToString(const Reply& r);
// The same text appended to *out.
void AppendTo(std::string* out, const Reply& r);

}  // namespace locklab
