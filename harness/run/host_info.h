// Facts about the machine and the moment, for the context blocks of real-backend reports,
// benchmarks, validation tables and cost profiles (never in simulator reports: they would
// break the same-seed-same-bytes rule).
#pragma once

#include <string>

namespace locklab {

std::string HostName();    // gethostname(), "" when it fails
std::string UtcNowText();  // now, ISO 8601 in UTC to the second: "2026-11-23T18:41:35Z"

}  // namespace locklab
