#include "algorithms/reply.h"

namespace locklab {

std::string ToString(const Reply& r) {
  switch (r.type) {
    case Reply::Type::kNil: return "(nil)";
    case Reply::Type::kInteger: return "(integer) " + std::to_string(r.integer);
    case Reply::Type::kString: return "\"" + r.str + "\"";
    case Reply::Type::kStatus: return r.str;
    case Reply::Type::kError: return "(error) " + r.str;
    case Reply::Type::kTimeout: return "(timeout)";
    case Reply::Type::kArray: {
      std::string s = "[";
      for (size_t i = 0; i < r.elements.size(); ++i) s += (i ? ", " : "") + ToString(r.elements[i]);
      return s + "]";
    }
  }
  return "?";
}

}  // namespace locklab
