// Facts about the machine and the moment, for the context blocks of real-backend reports,
// benchmarks, validation tables and cost profiles (never in simulator reports: they would
// break the same-seed-same-bytes rule).
#pragma once

#include <string>

namespace locklab {

std::string HostName();    // gethostname(), "" when it fails
std::string UtcNowText();  // now, ISO 8601 in UTC to the second: "2026-11-23T18:41:35Z"
// The 1, 5 and 15 minute load averages from /proc/loadavg ("0.42 0.20 0.18"); "" when unreadable.
// Real-backend figures depend on what else ran: a busy machine's figures are not a quiet one's.
std::string LoadAverageText();

}  // namespace locklab
