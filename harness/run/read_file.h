// ReadFileText: a file a user names (a config, a history, a recorded report), read whole, or the
// reason it cannot be, in words the user can act on.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/status.h"

namespace locklab {

inline constexpr std::uintmax_t kMaxReadFileBytes = std::uintmax_t{1} << 30;  // 1 GiB

// The whole of the file at `path` (a pipe or device too, as `<(...)` gives: read to its end).
// Otherwise Invalid, with the message "PATH: REASON": "no such file", "a directory, not a
// file", "larger than N GiB" (more than max_bytes), or "cannot read (the system's reason)".
Result<std::string> ReadFileText(const std::string& path, std::uintmax_t max_bytes = kMaxReadFileBytes);

}  // namespace locklab
