// WriteFileAtomic: a report, results or profile file is never half written.
#pragma once

#include <string>

#include "algorithms/status.h"

namespace locklab {

// Writes `text` to a temporary file beside `path` and renames it over `path` (creating the
// parent directories). Failed (nothing at `path` changed, the temporary removed) when any step
// fails; the message names the file and the reason.
Status WriteFileAtomic(const std::string& path, const std::string& text);

}  // namespace locklab
