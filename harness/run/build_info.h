// What this build is and where it came from. Only build_info.cc sees the build's -D values, so a
// new commit recompiles one file, not every file that reports a version.
#pragma once

namespace locklab {

const char* ToolVersion();  // "0.1.0"
const char* GitSha();       // the commit built, 12 hex digits, or "unknown"
const char* SourceDir();    // the source tree (scenario files, peer drivers, experiments)
const char* BinaryDir();    // the build tree (the clock shim, installed peers)

}  // namespace locklab
