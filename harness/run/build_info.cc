#include "harness/run/build_info.h"

namespace locklab {

const char* ToolVersion() { return LOCKLAB_VERSION; }
const char* GitSha() { return LOCKLAB_GIT_SHA; }
const char* SourceDir() { return LOCKLAB_SOURCE_DIR; }
const char* BinaryDir() { return LOCKLAB_BINARY_DIR; }

}  // namespace locklab
