// The flags of `locklab study` and the command itself (harness/cli/study.h says what it runs).
// Exit status: 0 every run completed (violations are findings); 1 a run did not complete or the
// JSON could not be written; 2 bad input, one line naming the flag, before any run.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "harness/cli/study.h"

namespace locklab {

struct StudyFlags {
  StudyOptions o;
  std::string backends = "sim,redis";
  bool no_progress = false;
  bool quiet = false;
};

void AddStudyFlags(CLI::App* app, StudyFlags* f);
// `command` is the command line, kept in the JSON's context.
int StudyCommand(StudyFlags& f, const std::string& command);

}  // namespace locklab
