// TempDirTest: a GoogleTest fixture with a fresh, empty directory of its own (removed before and
// after each test). Name it per fixture so parallel test binaries never share one.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace locklab {

class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()))) {}
  void SetUp() override { std::filesystem::remove_all(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& file) const { return (dir_ / file).string(); }
  std::filesystem::path dir_;
};

}  // namespace locklab
