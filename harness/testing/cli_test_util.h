// Test helpers for the command line, in process: run `locklab ARGS...` and read what it wrote.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"

namespace locklab {

// CliMain with "locklab" prepended; returns its exit code.
inline int Cli(std::vector<std::string> args) {
  args.insert(args.begin(), "locklab");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return CliMain(static_cast<int>(args.size()), argv.data());
}

// The whole file ("" when it cannot be read).
inline std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace locklab
