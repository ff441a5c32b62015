#include "harness/cli/merge_cli.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/cli/cli.h"
#include "harness/report/merge.h"
#include "harness/run/write_file.h"

namespace locklab {
namespace {

constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{4} << 30;  // one shard's output: 4 GiB

int Fail(int code, const std::string& msg) {
  std::string line = msg;
  for (char& c : line)
    if (c == '\n') c = ' ';
  std::fprintf(stderr, "locklab: merge: %s\n", line.c_str());
  return code;
}

}  // namespace

void AddMergeFlags(CLI::App* app, MergeFlags* f) {
  app->add_option("OUT", f->out, "the merged report or results file")->required()->type_name("FILE");
  app->add_option("IN", f->inputs, "the shards' outputs (all reports or all results), in any order")
      ->required()
      ->type_name("FILE");
  app->footer(
      "\nExample:\n"
      "  for i in 1 2 3; do locklab run --config sweep.json --shard $i/3 --out part-$i.json; done\n"
      "  locklab merge sweep.json part-*.json     (== locklab run --config sweep.json --out sweep.json)\n"
      "Exit status: 0 merged, 1 OUT could not be written, 2 bad input.\n");
}

int MergeCommand(const MergeFlags& f) {
  std::vector<MergeInput> inputs;
  for (const std::string& path : f.inputs) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) return Fail(kExitBadInput, path + ": " + ec.message());
    if (size > kMaxInputBytes) return Fail(kExitBadInput, path + ": larger than 4 GiB");
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return Fail(kExitBadInput, path + ": cannot be read");
    inputs.push_back({path, text.str()});
  }
  Result<std::string> merged = MergeShards(inputs);
  if (!merged.ok()) return Fail(kExitBadInput, merged.status().message());
  if (Status st = WriteFileAtomic(f.out, *merged); !st.ok()) return Fail(kExitInternal, st.message());
  std::printf("merged %zu inputs: %s\n", inputs.size(), f.out.c_str());
  return kExitOk;
}

}  // namespace locklab
