// JSON values written straight into a string, the bytes nlohmann's dump() gives for them, for the
// texts written without building their JSON (a timeline, a results line).
//
// Numbers are printed by nlohmann's own routine, and a string that needs escaping (a quote, a
// backslash, a control or non-ASCII byte) by nlohmann itself (its escapes, and its type_error for
// bad UTF-8), so the bytes are the library's; json_text_test.cc compares them.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace locklab::json_text {

// A string as dump() prints it: quoted as it is when no byte needs escaping (printable ASCII but
// '"' and '\\'), otherwise by nlohmann.
inline void AppendString(std::string_view s, std::string* out) {
  for (unsigned char ch : s) {
    if (ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\') {
      *out += nlohmann::json(s).dump();
      return;
    }
  }
  *out += '"';
  *out += s;
  *out += '"';
}

// An integer (signed or not) as dump() prints it.
template <typename Int>
void AppendInt(Int v, std::string* out) {
  std::array<char, 24> buf;
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out->append(buf.data(), static_cast<size_t>(r.ptr - buf.data()));
}

// A double as dump() prints it: "null" when not finite, else nlohmann's shortest digits.
inline void AppendDouble(double v, std::string* out) {
  if (!std::isfinite(v)) {
    *out += "null";
    return;
  }
  std::array<char, 64> buf;
  char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
  out->append(buf.data(), static_cast<size_t>(end - buf.data()));
}

// A compact object ({"key":value,...}, dump()'s form without indent), its members in the order
// they are added.
class CompactObject {
 public:
  CompactObject() { text_.reserve(512); }
  void String(const char* key, std::string_view v) { AppendString(v, Key(key)); }
  template <typename Int>
  void Integer(const char* key, Int v) { AppendInt(v, Key(key)); }
  void Double(const char* key, double v) { AppendDouble(v, Key(key)); }
  void Bool(const char* key, bool v) { *Key(key) += v ? "true" : "false"; }
  void Null(const char* key) { *Key(key) += "null"; }
  // The object's text: call once, last.
  std::string Close() {
    text_ += text_.empty() ? "{}" : "}";
    return std::move(text_);
  }

 private:
  std::string* Key(const char* key) {
    text_ += text_.empty() ? "{\"" : ",\"";
    text_ += key;  // keys are plain ASCII: no escaping
    text_ += "\":";
    return &text_;
  }
  std::string text_;
};

}  // namespace locklab::json_text
