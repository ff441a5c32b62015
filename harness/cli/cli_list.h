// The text of `locklab list`: algorithms with their options, retry policies, workloads and
// every fault setting (fields with units, and the kinds of planned faults).
#pragma once

#include <string>

namespace locklab {

std::string ListText();
// The plan kinds alone, for `locklab run --help`.
std::string FaultKindsText(const std::string& indent);

}  // namespace locklab
