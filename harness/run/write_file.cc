#include "harness/run/write_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace locklab {

Status WriteFileAtomic(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) return Status::Failed("cannot create directory " + p.parent_path().string() + ": " + ec.message());
  }
  // Same directory as the target, so rename() is atomic (no cross-filesystem move).
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return Status::Failed("cannot write " + tmp + ": " + std::strerror(errno));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    const Status failed = Status::Failed("cannot write " + tmp + ": " + std::strerror(wrote ? errno : write_errno));
    std::remove(tmp.c_str());
    return failed;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const Status failed = Status::Failed("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
    std::remove(tmp.c_str());
    return failed;
  }
  return Status::Ok();
}

}  // namespace locklab
