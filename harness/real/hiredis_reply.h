// FromHiredis: a hiredis reply as locklab's Reply (the real runtime and the differential test).
#pragma once

#include <hiredis/hiredis.h>

#include "algorithms/reply.h"

namespace locklab {

// `r` must not be null (a null reply is a connection problem the caller decides about).
Reply FromHiredis(const redisReply* r);

}  // namespace locklab
