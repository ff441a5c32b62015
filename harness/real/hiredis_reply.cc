#include "harness/real/hiredis_reply.h"

#include <string>

namespace locklab {

Reply FromHiredis(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STRING: return Reply::Str(std::string(r->str, r->len));
    case REDIS_REPLY_STATUS: return Reply::Status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR: return Reply::Error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER: return Reply::Int(r->integer);
    case REDIS_REPLY_NIL: return Reply::Nil();
    case REDIS_REPLY_ARRAY: {
      Reply a = Reply::Array();
      a.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) a.elements.push_back(FromHiredis(r->element[i]));
      return a;
    }
    default: return Reply::Error("(unexpected hiredis reply type " + std::to_string(r->type) + ")");
  }
}

}  // namespace locklab
