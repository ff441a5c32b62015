// ReadFileText: a file's text, or the reason a user can act on.
#include "harness/run/read_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "harness/testing/temp_dir_test.h"

namespace locklab {
namespace {

class ReadFile : public TempDirTest {
 protected:
  ReadFile() : TempDirTest("locklab_read_file_test") {}
  std::string Error(const std::string& path, std::uintmax_t max_bytes = kMaxReadFileBytes) {
    Result<std::string> r = ReadFileText(path, max_bytes);
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(r.status().invalid());
    return r.ok() ? "" : r.status().message();
  }
};

TEST_F(ReadFile, GivesTheTextOrSaysWhyNot) {
  std::filesystem::create_directories(dir_);
  std::ofstream(Path("a.json")) << "{\"clients\": 3}\n";
  Result<std::string> text = ReadFileText(Path("a.json"));
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "{\"clients\": 3}\n");
  EXPECT_EQ(Error(Path("missing.json")), Path("missing.json") + ": no such file");
  EXPECT_EQ(Error(dir_.string()), dir_.string() + ": a directory, not a file");
  EXPECT_EQ(Error(Path("a.json"), 4), Path("a.json") + ": larger than 4 bytes");
  EXPECT_TRUE(ReadFileText(Path("a.json"), 15).ok());  // exactly its 15 bytes: read
  // A device reads as what it gives (/dev/null: nothing), as a pipe from `<(...)` would.
  Result<std::string> null = ReadFileText("/dev/null");
  ASSERT_TRUE(null.ok()) << null.status().message();
  EXPECT_EQ(*null, "");
}

}  // namespace
}  // namespace locklab
