#include "algorithms/reply.h"

namespace locklab {

std::string ToString(const Reply& r) {
  std::string s;
  AppendTo(&s, r);
  return s;
}

void AppendTo(std::string* out, const Reply& r) {
  switch (r.type) {
    case Reply::Type::kNil: *out += "(nil)"; return;
    case Reply::Type::kInteger: *out += "(integer) "; *out += std::to_string(r.integer); return;
    case Reply::Type::kString: *out += '"'; *out += r.str; *out += '"'; return;
    case Reply::Type::kStatus: *out += r.str; return;
    case Reply::Type::kError: *out += "(error) "; *out += r.str; return;
    case Reply::Type::kTimeout: *out += "(timeout)"; return;
    case Reply::Type::kArray: {
      *out += '[';
      for (size_t i = 0; i < r.elements.size(); ++i) {
        if (i > 0) *out += ", ";
        AppendTo(out, r.elements[i]);
      }
      *out += ']';
      return;
    }
  }
  *out += '?';
}

}  // namespace locklab
