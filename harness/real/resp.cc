#include "harness/real/resp.h"

#include <charconv>

namespace locklab {
namespace {

void AppendPrefixed(std::string* out, char prefix, size_t n) {
  char buf[24];
  buf[0] = prefix;
  const auto r = std::to_chars(buf + 1, buf + sizeof buf - 2, n);
  char* end = r.ptr;  // 20 digits at most: always fits
  *end++ = '\r';
  *end++ = '\n';
  out->append(buf, static_cast<size_t>(end - buf));
}

}  // namespace

void AppendRespArrayHeader(std::string* out, size_t count) { AppendPrefixed(out, '*', count); }

void AppendRespWord(std::string* out, std::string_view word) {
  AppendPrefixed(out, '$', word.size());
  out->append(word);
  out->append("\r\n", 2);
}

}  // namespace locklab
