// WriteFileAtomic: a report, results or profile file is never half written.
#pragma once

#include <cstdio>
#include <string>

#include "algorithms/status.h"

namespace locklab {

// Writes `text` to a temporary file beside `path` and renames it over `path` (creating the
// parent directories). Failed (nothing at `path` changed, the temporary removed) when any step
// fails; the message names the file and the reason.
Status WriteFileAtomic(const std::string& path, const std::string& text);

// The same for a file written piece by piece (a sweep's results, a line per run): Open writes
// to a temporary beside the path, Append adds to it, Commit flushes, fsyncs and renames it over
// the path. Until Commit a reader sees the old file (or none); a writer destroyed before
// Commit removes its temporary. Not thread-safe: one writer, one thread.
class AtomicFileWriter {
 public:
  AtomicFileWriter() = default;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();
  Status Open(const std::string& path);  // creates the parent directories
  Status Append(const std::string& text);
  Status Commit();

 private:
  void Abandon();
  std::string path_, tmp_;
  std::FILE* file_ = nullptr;
};

}  // namespace locklab
