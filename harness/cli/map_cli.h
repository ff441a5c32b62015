// The flags of `locklab map` and the command itself (harness/cli/map.h says what a map is).
// Exit status: 0 every run completed (violations are findings); 1 a run did not complete or the
// JSON could not be written; 2 bad input, one line naming the problem, before any run.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "harness/cli/map.h"

namespace locklab {

struct MapFlags {
  MapOptions o;
  std::string xs, curves;
  bool list = false;
  bool no_progress = false;
  bool quiet = false;
};

void AddMapFlags(CLI::App* app, MapFlags* f);
// `command` is the command line, kept in the JSON's context.
int MapCommand(MapFlags& f, const std::string& command);

// The `map` subcommand of `app`, its flags bound.
class MapCli {
 public:
  explicit MapCli(CLI::App& app);
  bool parsed() const { return sub_->parsed(); }
  int Run(const std::string& command) { return MapCommand(flags_, command); }

 private:
  CLI::App* sub_ = nullptr;
  MapFlags flags_;
};

}  // namespace locklab
