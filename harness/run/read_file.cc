#include "harness/run/read_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace locklab {

namespace {

std::string SizeText(std::uintmax_t bytes) {
  constexpr std::uintmax_t kGiB = std::uintmax_t{1} << 30, kMiB = std::uintmax_t{1} << 20;
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

Result<std::string> ReadFileText(const std::string& path, std::uintmax_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return Status::Invalid(path + ": no such file");
  if (fs::is_directory(st)) return Status::Invalid(path + ": a directory, not a file");
  if (fs::is_regular_file(st) && fs::file_size(path, ec) > max_bytes && !ec)
    return Status::Invalid(path + ": larger than " + SizeText(max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid(path + ": cannot read (" + std::strerror(errno) + ")");
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {  // bounded: a pipe's bytes up to max_bytes
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) return Status::Invalid(path + ": larger than " + SizeText(max_bytes));
  }
  if (in.bad()) return Status::Invalid(path + ": cannot read (" + std::strerror(errno) + ")");
  return text;
}

}  // namespace locklab
