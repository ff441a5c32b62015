#include "harness/run/write_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <unistd.h>

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

AtomicFileWriter::~AtomicFileWriter() { Abandon(); }

void AtomicFileWriter::Abandon() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  std::remove(tmp_.c_str());
}

Status AtomicFileWriter::Open(const std::string& path) {
  namespace fs = std::filesystem;
  Abandon();
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) return Status::Failed("cannot create directory " + p.parent_path().string() + ": " + ec.message());
  }
  path_ = path;
  tmp_ = path + ".tmp";
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (file_ == nullptr) return Status::Failed("cannot write " + tmp_ + ": " + std::strerror(errno));
  return Status::Ok();
}

Status AtomicFileWriter::Append(const std::string& text) {
  if (file_ == nullptr) return Status::Failed("cannot write " + path_ + ": not open");
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    const Status failed = Status::Failed("cannot write " + tmp_ + ": " + std::strerror(errno));
    Abandon();
    return failed;
  }
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  if (file_ == nullptr) return Status::Failed("cannot write " + path_ + ": not open");
  const bool synced = std::fflush(file_) == 0 && ::fsync(fileno(file_)) == 0;
  const int sync_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!synced || !closed) {
    std::remove(tmp_.c_str());
    return Status::Failed("cannot write " + tmp_ + ": " + std::strerror(synced ? errno : sync_errno));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const Status failed = Status::Failed("cannot rename " + tmp_ + " to " + path_ + ": " + std::strerror(errno));
    std::remove(tmp_.c_str());
    return failed;
  }
  return Status::Ok();
}

}  // namespace locklab
